/**
 * The analytics rollups' job as the service runs it (JobsLive: a ClusterCron run recorded in
 * job_runs): events written while the service runs reach the daily table with nobody doing anything.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { layerFromUrl } from "../../src/db/Database.js"
import { ANALYTICS_ROLLUPS } from "../../src/jobs/analyticsRollups.js"
import { Operators } from "../../src/operators/Operators.js"
import { insertEvents, visitor } from "../analytics/support.js"
import { makeWorld } from "../support/fixtures.js"
import { jobsInstance } from "../support/jobs.js"
import { freshDatabase } from "../support/server.js"
import { createSite } from "../support/tours.js"

layer(Layer.empty, { excludeTestServices: true, timeout: 120_000 })("analytics rollups job", (it) => {
  it.scoped("runs on its schedule, recorded in job_runs, and takes in the events written meanwhile", () =>
    Effect.gen(function*() {
      const url = yield* freshDatabase
      const context = yield* Layer.build(Operators.Default.pipe(Layer.provideMerge(layerFromUrl(url, 3))))
      const sql = Context.get(context, SqlClient.SqlClient)
      const w = yield* makeWorld.pipe(Effect.provide(context))
      const site = yield* createSite(w.alpha, "Jobs").pipe(Effect.provide(context))
      yield* Layer.build(jobsInstance(url, undefined, { ANALYTICS_ROLLUP_CRON: "*/2 * * * * *" }))

      const at = new Date().toISOString()
      yield* insertEvents([{ at, site, visitor: visitor() }, { at, site, visitor: visitor() }]).pipe(
        Effect.provide(context)
      )
      let visitors = 0
      for (let i = 0; i < 60 && visitors < 2; i++) {
        yield* Effect.sleep("500 millis")
        const rows = yield* sql<{ visitors: number }>`SELECT visitors FROM analytics_site_daily WHERE site_id = ${site}`
        visitors = rows[0]?.visitors ?? 0
      }
      expect(visitors).toBe(2)
      const runs = yield* sql<{ outcome: string; summary: { events: number } }>`
        SELECT outcome, summary FROM job_runs WHERE job = ${ANALYTICS_ROLLUPS} AND finished_at IS NOT NULL`
      expect(runs.length).toBeGreaterThan(0)
      expect(runs.every((r) => r.outcome === "ok")).toBe(true)
      expect(runs.some((r) => r.summary.events >= 2)).toBe(true)
    }))
})
