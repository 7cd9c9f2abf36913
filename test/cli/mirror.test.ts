/**
 * `accounts`, `mirror` and `tours refresh-season` end to end: real CLI processes on a test database,
 * against a Bókun sandbox running in this process.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { layerFromUrl } from "../../src/db/Database.js"
import { localDayAt } from "../../src/domain/localDay.js"
import { BokunSandbox, BokunSandboxLive } from "../../src/sandbox/bokun/index.js"
import { smallVendor } from "../sandbox/env.js"
import { cli, json } from "../support/cli.js"
import { freshDatabase } from "../support/server.js"

class DatabaseUrl extends Effect.Tag("test/DatabaseUrl")<DatabaseUrl, string>() {}

const env = Layer.unwrapEffect(
  Effect.map(
    freshDatabase,
    (url) =>
      Layer.mergeAll(BokunSandboxLive(), Layer.succeed(DatabaseUrl, url)).pipe(Layer.provideMerge(layerFromUrl(url, 2)))
  )
)

const run = (db: string, ...args: Array<string>) => Effect.promise(() => cli(db, ...args))
const fails = (db: string, ...args: Array<string>) =>
  Effect.promise(() => cli(db, ...args).then(() => "", (e: Error) => e.message))

layer(env, { excludeTestServices: true, timeout: 180_000 })("CLI: booking-system accounts and the mirror", (it) => {
  it.effect(
    "creates and links accounts, maps a tour, refreshes the mirror on demand and lists the runs",
    () =>
      Effect.gen(function*() {
        const db = yield* DatabaseUrl
        const sql = yield* SqlClient.SqlClient
        const sandbox = yield* BokunSandbox
        const vendor = yield* sandbox.createVendor(smallVendor("Nordic Kayak Bókun"))
        const today = localDayAt("Europe/Oslo", new Date())
        yield* sandbox.generateBookings({ vendorId: vendor.id, from: today, to: today, seed: 1, fullDays: [today] })

        const { id: op } = json(
          yield* run(db, "operators", "create", "--name", "Nordic Kayak AS", "--timezone", "Europe/Oslo")
        )
        const { id: account } = json(
          yield* run(
            db,
            "accounts",
            "create",
            "--name",
            "Nordic Kayak Bókun",
            "--base-url",
            sandbox.baseUrl,
            "--access-key",
            vendor.accessKey,
            "--secret-key",
            vendor.secretKey,
            "--service-channel",
            String(vendor.serviceChannelId)
          )
        )
        expect(yield* run(db, "accounts", "link", "--operator", op, "--account", account)).toContain("linked")
        const [tour] = yield* sql<{ id: string }>`
        INSERT INTO tours (operator_id, title, status, timezone, currency)
        VALUES (${op}, 'Harbour Cruise', 'published', 'Europe/Oslo', 'NOK') RETURNING id`
        expect(yield* run(db, "accounts", "map-tour", "--tour", tour!.id, "--product", String(vendor.products[0]!.id)))
          .toContain("mapped")
        const listed = json(yield* run(db, "accounts", "list"))
        expect(listed).toMatchObject([{
          id: account,
          kind: "bokun",
          name: "Nordic Kayak Bókun",
          operators: ["Nordic Kayak AS"]
        }])
        expect(JSON.stringify(listed)).not.toContain(vendor.secretKey)

        const summary = json(yield* run(db, "mirror", "refresh", "--days", "1"))
        expect(summary).toMatchObject({ kind: "manual", accounts: 1, ok: 1, failed: 0 })
        expect(summary.inserted).toBeGreaterThan(0)
        const [{ rows }] = (yield* sql<{ rows: number }>`
        SELECT count(*)::int AS rows FROM manifest_rows WHERE operator_id = ${op} AND tour_id = ${
          tour!.id
        } AND departure_date = ${today}::date`) as unknown as [{ rows: number }]
        expect(rows).toBe(summary.inserted)

        // The catalogue's season, now: the tour is known. It had no pricing categories: the same run
        // takes them (and the rates, rating, ...) from the booking system first, so it has a price.
        const season = json(yield* run(db, "tours", "refresh-season"))
        expect(season).toMatchObject({
          tours: 1,
          known: 1,
          unknown: 0,
          facts_updated: 1,
          results: [{ tour_id: tour!.id, known: true, from_price_minor: 49900, facts: "updated" }]
        })
        expect(season.results[0].next_available_date).toEqual(expect.any(String))

        // The booking system down: the command says which account failed and exits non-zero.
        yield* sandbox.faults.set({ down: true })
        const error = yield* fails(db, "mirror", "refresh", "--account", account, "--days", "1")
        expect(error).toContain("1 of 1 accounts failed")
        expect(yield* fails(db, "tours", "refresh-season", "--tour", tour!.id)).toContain("1 of 1 tours not known")
        yield* sandbox.faults.reset

        const runs = json(yield* run(db, "mirror", "runs", "--limit", "5"))
        expect(runs.map((r: any) => r.outcome)).toEqual(["failed", "ok"])
        expect(runs[0]).toMatchObject({ account: "Nordic Kayak Bókun", kind: "manual", date_from: today })
        expect(runs[0].error).toContain("BookingSystemUnavailable")
        expect(runs[1].inserted).toBe(summary.inserted)
      }),
    180_000
  ) // several CLI processes, each a cold Node start: about 35 s alone, much more under load
})
