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
      const runs = yield* sql<{ started_at: Date; outcome: string }>`
        SELECT started_at, outcome FROM job_runs WHERE job = ${MIRROR_NEAR_TERM} ORDER BY started_at`
      // About 6 slots of 2 s passed. Had each instance run the schedule, every slot would show two
      // runs a few hundred milliseconds apart.
      expect(runs.length, JSON.stringify(runs)).toBeGreaterThanOrEqual(3)
      expect(runs.length).toBeLessThanOrEqual(7)
      for (let i = 1; i < runs.length; i++) {
        expect(runs[i]!.started_at.getTime() - runs[i - 1]!.started_at.getTime()).toBeGreaterThanOrEqual(1000)
      }
      expect(runs.every((r) => r.outcome === "ok")).toBe(true)
    }))
})
