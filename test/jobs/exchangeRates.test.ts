/**
 * The exchange-rate job as the service schedules it: a ClusterCron run on the instance's cluster
 * runner, recorded in job_runs, reading the rates sandbox over HTTP. The first run on an empty table
 * backfills 400 days; later runs fetch the recent days again and store nothing new.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Context, Effect, Layer, Schedule } from "effect"
import { layerFromUrl } from "../../src/db/Database.js"
import { EXCHANGE_RATES } from "../../src/jobs/exchangeRates.js"
import { ExchangeRates } from "../../src/ports/ExchangeRates.js"
import { ratesEnv } from "../adapters/norgesBank/env.js"
import { jobsInstance } from "../support/jobs.js"
import { freshDatabase } from "../support/server.js"

layer(ratesEnv(), { excludeTestServices: true, timeout: 120_000 })("exchange-rates job", (it) => {
  it.scoped("runs on its schedule: a 400-day backfill on the empty table, then re-runs that store nothing new", () =>
    Effect.gen(function*() {
      const url = yield* freshDatabase
      const sql = Context.get(yield* Layer.build(layerFromUrl(url, 2)), SqlClient.SqlClient)
      const sources = Layer.succeed(ExchangeRates, yield* ExchangeRates)
      yield* Layer.build(jobsInstance(url, undefined, { EXCHANGE_RATES_CRON: "*/2 * * * * *" }, undefined, sources))
      const runs = yield* sql<{ outcome: string; summary: any }>`
        SELECT outcome, summary FROM job_runs WHERE job = ${EXCHANGE_RATES} AND outcome <> 'running'
        ORDER BY scheduled_for`.pipe(
        Effect.filterOrFail((rows) => rows.length >= 2),
        Effect.retry(Schedule.spaced("500 millis").pipe(Schedule.intersect(Schedule.recurs(60))))
      )
      expect(runs.every((r) => r.outcome === "ok"), JSON.stringify(runs)).toBe(true)
      expect(runs[0]!.summary.backfill.backfilled).toBe(true)
      expect(runs[0]!.summary.backfill.stored).toBeGreaterThan(5 * 250)
      expect(runs[1]!.summary.backfill.backfilled).toBe(false)
      expect(runs[1]!.summary.recent.stored).toBe(0)
      const [{ n }] = (yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM exchange_rates`) as unknown as [
        { n: number }
      ]
      expect(n).toBe(runs[0]!.summary.backfill.stored)
    }))
})
