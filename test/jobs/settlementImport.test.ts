/**
 * The settlement-import job as the service runs it (JobsLive: a ClusterCron singleton recorded in
 * job_runs), on its schedule: a run is recorded with its per-merchant outcomes, and a merchant the
 * service cannot read (no provider partner) is a failed merchant, not a failed run. The import's own
 * behaviour is tested against the sandbox in test/settlements/settlementImport.test.ts.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { layerFromUrl } from "../../src/db/Database.js"
import { SETTLEMENT_IMPORT } from "../../src/jobs/settlementImport.js"
import { Operators } from "../../src/operators/Operators.js"
import { makeWorld } from "../support/fixtures.js"
import { jobsInstance } from "../support/jobs.js"
import { freshDatabase } from "../support/server.js"

layer(Layer.empty, { excludeTestServices: true, timeout: 120_000 })("settlement-import job", (it) => {
  it.scoped("runs on its schedule, recorded in job_runs; a merchant that cannot be read fails alone", () =>
    Effect.gen(function*() {
      const url = yield* freshDatabase
      const context = yield* Layer.build(Operators.Default.pipe(Layer.provideMerge(layerFromUrl(url, 3))))
      const sql = Context.get(context, SqlClient.SqlClient)
      const w = yield* makeWorld.pipe(Effect.provide(context))
      yield* sql`INSERT INTO operator_payment_accounts (operator_id, merchant_id) VALUES (${w.alpha}, 'm-no-partner')`
      yield* Layer.build(jobsInstance(url, undefined, { SETTLEMENT_IMPORT_CRON: "*/2 * * * * *" }))

      let runs: ReadonlyArray<{ outcome: string; summary: any }> = []
      for (let i = 0; i < 60 && runs.length === 0; i++) {
        yield* Effect.sleep("500 millis")
        runs = yield* sql<{ outcome: string; summary: any }>`
          SELECT outcome, summary FROM job_runs WHERE job = ${SETTLEMENT_IMPORT} AND finished_at IS NOT NULL`
      }
      expect(runs.length).toBeGreaterThan(0)
      expect(runs[0]!.outcome).toBe("ok")
      expect(runs[0]!.summary).toEqual(expect.objectContaining({ merchants: 1, failed: 1, payouts: 0 }))
      expect(runs[0]!.summary.results[0]).toEqual(
        expect.objectContaining({
          merchantId: "m-no-partner",
          outcome: "failed",
          error: expect.stringMatching(/partner/)
        })
      )
      const [state] = yield* sql<{ last_outcome: string }>`
        SELECT last_outcome FROM settlement_merchants WHERE merchant_id = 'm-no-partner'`
      expect(state!.last_outcome).toBe("failed")
    }))
})
