/**
 * The daily rates on real PostgreSQL through the real adapter and the rates sandbox over HTTP: the
 * job's run (recorded in job_runs) backfills 400 days on an empty table in one request per source
 * and is a no-op when run again; a rate held back (late) is bridged by the day before and stored by
 * the next run once published; the ECB's fallback rates are stored as such, replaced by Norges Bank's
 * later and never the other way round.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import { layerFromUrl } from "../../src/db/Database.js"
import { EXCHANGE_RATES, refreshExchangeRates } from "../../src/jobs/exchangeRates.js"
import { recordedRun } from "../../src/jobs/runs.js"
import { DailyRates } from "../../src/rates/DailyRates.js"
import { addDays, convertMinor } from "../../src/rates/rules.js"
import { isBankingDay, nokPerUnit, RatesSandboxService } from "../../src/sandbox/rates/index.js"
import { dayFromToday, ratesEnv } from "../adapters/norgesBank/env.js"
import { freshDatabase } from "../support/server.js"

const env = Layer.unwrapEffect(
  Effect.map(freshDatabase, (url) =>
    DailyRates.Default.pipe(
      Layer.provideMerge(ratesEnv()),
      Layer.provideMerge(layerFromUrl(url, 4)),
      Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["LOG_LEVEL", "Warning"]]))))
    ))
).pipe(Layer.orDie)

const CURRENCIES = ["DKK", "EUR", "GBP", "SEK", "USD"]

const bankingDaysBack = (days: number) => {
  const today = dayFromToday(0)
  const list: Array<string> = []
  for (let i = days - 1; i >= 0; i--) {
    const d = addDays(today, -i)
    if (isBankingDay(d)) list.push(d)
  }
  return list
}

const runJob = recordedRun(EXCHANGE_RATES, () => refreshExchangeRates)

const lastRun = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(
    sql<{ outcome: string; summary: any }>`
      SELECT outcome, summary FROM job_runs WHERE job = ${EXCHANGE_RATES} ORDER BY started_at DESC LIMIT 1`,
    (rows) => rows[0]!
  ))

const stored = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) =>
    sql<{ currency: string; day: string; nok_per_unit: string; source: string; fetched_at: Date }>`
    SELECT currency, day::text AS day, nok_per_unit::text AS nok_per_unit, source, fetched_at
    FROM exchange_rates ORDER BY currency, day`
)

layer(env, { excludeTestServices: true, timeout: 120_000 })("daily exchange rates", (it) => {
  it.effect("the job backfills 400 days on an empty table in one request per source; a re-run changes nothing", () =>
    Effect.gen(function*() {
      const sandbox = yield* RatesSandboxService
      yield* sandbox.faults.reset
      yield* runJob
      const first = yield* lastRun
      expect(first.outcome).toBe("ok")
      expect(first.summary.backfill.backfilled).toBe(true)
      const days = bankingDaysBack(400)
      const rows = yield* stored
      expect(rows.map((r) => `${r.currency} ${r.day}`)).toEqual(
        CURRENCIES.flatMap((c) => days.map((d) => `${c} ${d}`))
      )
      for (const r of rows) {
        expect(Number(r.nok_per_unit), `${r.currency} ${r.day}`).toBe(nokPerUnit(r.currency.trim(), r.day))
        expect(r.source).toBe("norges_bank")
      }
      // The backfill and the recent days: two requests in all, none to the fallback.
      expect(yield* sandbox.requests.count({ scope: "norges_bank" })).toBe(2)
      expect(yield* sandbox.requests.count({ scope: "ecb" })).toBe(0)

      yield* runJob
      const second = yield* lastRun
      expect(second.outcome).toBe("ok")
      expect(second.summary.backfill.backfilled).toBe(false)
      expect(second.summary.recent.stored).toBe(0)
      expect(second.summary.recent.fetched).toBeGreaterThan(0)
      const again = yield* stored
      expect(again).toEqual(rows) // not even fetched_at moved
      expect(yield* sandbox.requests.count({ scope: "norges_bank" })).toBe(3)
    }))

  it.effect("a late rate: held back, the day uses the day before; released, the next run stores it and the day uses it", () =>
    Effect.gen(function*() {
      const sandbox = yield* RatesSandboxService
      const rates = yield* DailyRates
      const sql = yield* SqlClient.SqlClient
      yield* sandbox.faults.reset
      const days = bankingDaysBack(10)
      const late = days.at(-1)!
      const before = days.at(-2)!
      yield* sql`DELETE FROM exchange_rates WHERE day = ${late}::date`
      yield* sandbox.hold(late)
      yield* runJob
      expect((yield* lastRun).outcome).toBe("ok")
      expect((yield* stored).filter((r) => r.day === late)).toEqual([])
      const bridged = yield* rates.table({ currencies: ["EUR"], from: late, to: late })
      expect(bridged.nokPerUnit("EUR", late), "the latest earlier banking day").toBe(nokPerUnit("EUR", before))
      expect(convertMinor(bridged, 10_000, "EUR", "NOK", late)).toBe(Math.round(10_000 * nokPerUnit("EUR", before)!))

      yield* sandbox.release(late)
      yield* runJob
      const run = yield* lastRun
      expect(run.outcome).toBe("ok")
      expect(run.summary.recent.stored).toBe(CURRENCIES.length)
      const table = yield* rates.table({ currencies: ["EUR", "SEK"], from: late, to: late })
      expect(table.nokPerUnit("EUR", late)).toBe(nokPerUnit("EUR", late))
      expect(table.nokPerUnit("SEK", late)).toBe(nokPerUnit("SEK", late))
      expect(table.nokPerUnit("NOK", late)).toBe(1)
    }))

  it.effect("Norges Bank down: the ECB's rates are stored as 'ecb' for missing days only, and Norges Bank's replace them later", () =>
    Effect.gen(function*() {
      const sandbox = yield* RatesSandboxService
      const rates = yield* DailyRates
      const sql = yield* SqlClient.SqlClient
      yield* sandbox.faults.reset
      const days = bankingDaysBack(10)
      const missing = days.at(-3)!
      yield* sql`DELETE FROM exchange_rates WHERE day = ${missing}::date`
      const kept = yield* stored
      yield* sandbox.faults.set({ down: true }, "norges_bank")
      const fallback = yield* rates.refreshRecent(10)
      expect(fallback.sources).toEqual(["ecb"])
      expect(fallback.stored, "only the missing day's rates; Norges Bank's stay").toBe(CURRENCIES.length)
      const withEcb = yield* stored
      expect(withEcb.filter((r) => r.source === "ecb").map((r) => r.day)).toEqual(CURRENCIES.map(() => missing))
      expect(withEcb.filter((r) => r.day !== missing)).toEqual(kept)

      yield* sandbox.faults.reset
      const back = yield* rates.refreshRecent(10)
      expect(back.sources).toEqual(["norges_bank"])
      expect(back.stored).toBe(CURRENCIES.length)
      const after = yield* stored
      expect(after.filter((r) => r.source === "ecb")).toEqual([])
      expect(after.filter((r) => r.day === missing).map((r) => Number(r.nok_per_unit))).toEqual(
        CURRENCIES.map((c) => nokPerUnit(c, missing))
      )
    }))

  it.effect("both sources failing: the run is recorded failed and nothing stored changes", () =>
    Effect.gen(function*() {
      const sandbox = yield* RatesSandboxService
      const before = yield* stored
      yield* sandbox.faults.set({ errorRate: 1, errorStatus: 503 })
      yield* runJob
      const run = yield* lastRun
      expect(run.outcome).toBe("failed")
      expect(JSON.stringify(run.summary)).toContain("ExchangeRatesUnavailable")
      expect(yield* stored).toEqual(before)
      yield* sandbox.faults.reset
    }))
})
