/**
 * Two instances on one database, each running the job scheduler on its own cluster runner: every
 * scheduled run of the mirror refresh happens once, on one of them.
 */
import { expect, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { ConfigProvider, Context, Effect, Layer } from "effect"
import { layerFromUrl } from "../../src/db/Database.js"
import { JobsLive } from "../../src/jobs/index.js"
import { MIRROR_NEAR_TERM } from "../../src/jobs/mirrorRefresh.js"
import { BookingSystem } from "../../src/ports/BookingSystem.js"
import { BookingSystemAccounts } from "../../src/services/BookingSystemAccounts.js"
import { Mirror } from "../../src/services/Mirror.js"
import { freePort } from "../support/globalSetup.js"
import { freshDatabase } from "../support/server.js"

const unusedBookingSystem = Layer.succeed(
  BookingSystem,
  new Proxy({} as BookingSystem["Type"], { get: () => () => Effect.dieMessage("no account is linked in this test") })
)

const instance = (databaseUrl: string, clusterPort: number) =>
  JobsLive.pipe(
    Layer.provide(Mirror.Default),
    Layer.provide(BookingSystemAccounts.Default),
    Layer.provide(unusedBookingSystem),
    Layer.provide(layerFromUrl(databaseUrl, 4)),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries({
      CLUSTER_PORT: String(clusterPort),
      CLUSTER_POLL_SECONDS: "0.5",
      MIRROR_NEAR_TERM_CRON: "*/2 * * * * *",
      LOG_LEVEL: "Warning"
    })))))
  )

layer(Layer.empty, { excludeTestServices: true, timeout: 120_000 })("scheduled jobs", (it) => {
  it.scoped("run once per schedule across two instances on one database", () =>
    Effect.gen(function*() {
      const url = yield* freshDatabase
      const [portA, portB] = yield* Effect.promise(() => Promise.all([freePort(), freePort()]))
      yield* Layer.build(instance(url, portA!))
      yield* Layer.build(instance(url, portB!))
      yield* Effect.sleep("12 seconds")

      const sql = Context.get(yield* Layer.build(layerFromUrl(url, 2)), SqlClient.SqlClient)
      const runs = yield* sql<{ scheduled_for: Date | null; duplicates: number; outcome: string; instance: string }>`
        SELECT scheduled_for, duplicate_deliveries AS duplicates, outcome, instance
        FROM job_runs WHERE job = ${MIRROR_NEAR_TERM} ORDER BY scheduled_for`
      // About 6 slots of 2 s passed, each run once (one row per slot: the unique index on the slot).
      expect(runs.length, JSON.stringify(runs)).toBeGreaterThanOrEqual(3)
      expect(runs.every((r) => r.scheduled_for !== null)).toBe(true)
      // The cluster schedules each slot on one instance: a second delivery of a slot is rare (an
      // instance joining moves shards). Had each instance scheduled the job itself, every slot
      // would have been delivered twice.
      const duplicates = runs.reduce((n, r) => n + r.duplicates, 0)
      expect(duplicates, JSON.stringify(runs)).toBeLessThanOrEqual(Math.floor(runs.length / 3))
      expect(runs.every((r) => r.outcome === "ok")).toBe(true)
    }))
})
