/**
 * The season job as the service runs it (JobsLive: a ClusterCron run recorded in job_runs) against
 * the Bókun sandbox over HTTP: one account's booking system down never stops another's tours.
 */
import { NodeHttpClient } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { bookingSystemLayer } from "../../src/adapters/BookingSystemLive.js"
import { layerFromUrl } from "../../src/db/Database.js"
import { TOUR_SEASON } from "../../src/jobs/tourSeason.js"
import { Operators } from "../../src/operators/Operators.js"
import { startSandbox } from "../../src/sandbox/bokun/index.js"
import { smallVendor, TEST_ADAPTER } from "../sandbox/env.js"
import { makeWorld } from "../support/fixtures.js"
import { freePort } from "../support/globalSetup.js"
import { jobsInstance } from "../support/jobs.js"
import { freshDatabase } from "../support/server.js"
import { createSite, insertLinkedTour, linkSandboxAccount, seasonRow } from "../support/tours.js"

const bookingSystem = bookingSystemLayer(TEST_ADAPTER).pipe(Layer.provide(NodeHttpClient.layer))

layer(Layer.empty, { excludeTestServices: true, timeout: 120_000 })("tour season job", (it) => {
  it.scoped("refreshes every linked tour on schedule; an account that is down leaves the others known", () =>
    Effect.gen(function*() {
      const url = yield* freshDatabase
      const context = yield* Layer.build(Operators.Default.pipe(Layer.provideMerge(layerFromUrl(url, 3))))
      const sql = Context.get(context, SqlClient.SqlClient)
      const sandbox = yield* startSandbox({ port: 0 }).pipe(Effect.provide(context))

      const setup = Effect.gen(function*() {
        const w = yield* makeWorld
        const site = yield* createSite(w.alpha, "Alpha")
        const up = yield* sandbox.createVendor(smallVendor(`Up ${w.tag}`))
        const down = yield* sandbox.createVendor(smallVendor(`Down ${w.tag}`))
        yield* linkSandboxAccount(w.alpha, sandbox.baseUrl, up)
        yield* linkSandboxAccount(w.beta, sandbox.baseUrl, down)
        const betaSite = yield* createSite(w.beta, "Beta")
        const good = yield* insertLinkedTour({ operatorId: w.alpha, sites: [site], product: up.products[0]! })
        const bad = yield* insertLinkedTour({ operatorId: w.beta, sites: [betaSite], product: down.products[0]! })
        const bad2 = yield* insertLinkedTour({
          operatorId: w.beta,
          title: "Second",
          sites: [betaSite],
          product: down.products[0]!
        })
        return { good, bad, bad2, down }
      }).pipe(Effect.provide(context))
      const s = yield* setup
      yield* sandbox.faults.set({ down: true }, { vendorId: s.down.id })

      const port = yield* Effect.promise(() => freePort())
      yield* Layer.build(
        jobsInstance(url, port, { TOUR_SEASON_CRON: "*/2 * * * * *", TOUR_SEASON_TIMEOUT_MS: "1500" }, bookingSystem)
      )

      let runs: ReadonlyArray<{ outcome: string; summary: any }> = []
      for (let i = 0; i < 60 && runs.length === 0; i++) {
        yield* Effect.sleep("500 millis")
        runs = yield* sql<{ outcome: string; summary: any }>`
          SELECT outcome, summary FROM job_runs WHERE job = ${TOUR_SEASON} AND finished_at IS NOT NULL ORDER BY started_at`
      }
      expect(runs.length).toBeGreaterThan(0)
      expect(runs[0]).toEqual({
        outcome: "ok",
        summary: {
          tours: 3,
          known: 1,
          unknown: 2,
          skipped: 1,
          accounts: 2,
          accounts_failed: 1,
          dropped: 0,
          facts_updated: 1,
          facts_missing: 0
        }
      })
      const good = (yield* seasonRow(s.good).pipe(Effect.provide(context)))!
      expect(good).toMatchObject({ known: true, from_price_minor: 49900, from_price_currency: "NOK" })
      expect(good.next_available_date).not.toBeNull()
      // Never computed and not answering: no row, which reads as not known.
      expect(yield* seasonRow(s.bad).pipe(Effect.provide(context))).toBeUndefined()
      expect(yield* seasonRow(s.bad2).pipe(Effect.provide(context))).toBeUndefined()
    }))
})
