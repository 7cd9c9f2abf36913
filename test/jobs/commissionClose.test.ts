/**
 * The commission-close job as the service schedules it: a ClusterCron run on the instance's cluster
 * runner, recorded in job_runs, issuing the previous month's documents per legal entity; one entity
 * failing is counted in the run's summary and never fails the run; a second run issues nothing again.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Context, Effect, Layer, Schedule } from "effect"
import { layerFromUrl } from "../../src/db/Database.js"
import { monthOf, previousMonth } from "../../src/invoices/rules.js"
import { COMMISSION_CLOSE } from "../../src/jobs/commissionClose.js"
import { documentsOf, payoutAccount, sale } from "../support/invoices.js"
import { jobsInstance } from "../support/jobs.js"
import { freshDatabase } from "../support/server.js"

layer(Layer.empty, { excludeTestServices: true, timeout: 120_000 })("commission-close job", (it) => {
  it.scoped("issues the month just ended per legal entity, once; a failing entity is reported, the run is ok", () =>
    Effect.gen(function*() {
      const url = yield* freshDatabase
      const sql = Context.get(yield* Layer.build(layerFromUrl(url, 2)), SqlClient.SqlClient)
      const [good, bad] = yield* sql<{ id: string }>`
        INSERT INTO operators (name) VALUES ('Good Tours'), ('Bad Tours') RETURNING id`
      const at = `${previousMonth(monthOf(new Date()))}-01T00:00:01Z`
      yield* Effect.provideService(
        Effect.gen(function*() {
          yield* payoutAccount("M-GOOD", [good!.id])
          yield* payoutAccount("M-BAD", [bad!.id])
          yield* sale(good!.id, at, 1000)
          yield* sale(bad!.id, at, 2000)
        }),
        SqlClient.SqlClient,
        sql
      )
      yield* Layer.build(jobsInstance(url, undefined, {
        COMMISSION_CLOSE_CRON: "*/2 * * * * *",
        CRASH_AT: "commission-close.after_number:M-BAD"
      }))
      const runs = yield* sql<{ outcome: string; summary: any }>`
        SELECT outcome, summary FROM job_runs WHERE job = ${COMMISSION_CLOSE} AND outcome <> 'running'
        ORDER BY scheduled_for`.pipe(
        Effect.filterOrFail((rows) => rows.length >= 2),
        Effect.retry(Schedule.spaced("500 millis").pipe(Schedule.intersect(Schedule.recurs(60))))
      )
      expect(runs.every((r) => r.outcome === "ok"), JSON.stringify(runs)).toBe(true)
      expect(runs[0]!.summary).toMatchObject({
        entities: 2,
        failed: 1,
        documents: 1,
        failures: [{ merchant: "M-BAD" }]
      })
      // The good entity's month is issued once; the failing one's stays open (and keeps failing here).
      expect(runs[1]!.summary).toMatchObject({ entities: 2, failed: 1, documents: 0 })
      const docs = yield* Effect.provideService(documentsOf("M-GOOD"), SqlClient.SqlClient, sql)
      expect(docs.map((d) => [d.number, d.net_minor])).toEqual([["INV-000001", 1000]])
      expect(yield* Effect.provideService(documentsOf("M-BAD"), SqlClient.SqlClient, sql)).toEqual([])
    }))
})
