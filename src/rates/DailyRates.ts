/**
 * The daily exchange rates the service converts with (docs/exchange-rates.md): fetched through the
 * ExchangeRates port (Norges Bank, the ECB as fallback) and stored per currency and banking day
 * (`exchange_rates`, DailyRatesRepo). Conversion happens at read time (`table` + rules.ts
 * `convertMinor`), at the rate of the day or the latest earlier banking day within the lookback, so
 * a rate stored late needs no rebuild of anything.
 */
import { Clock, Effect } from "effect"
import { annotateSpan } from "../observability/spanFn.js"
import { ExchangeRates } from "../ports/ExchangeRates.js"
import { ExchangeRatesConfig } from "./config.js"
import { DailyRatesRepo } from "./DailyRatesRepo.js"
import { addDays, DEFAULT_LOOKBACK_DAYS, makeRateTable, type RateTable } from "./rules.js"

export interface RefreshResult {
  readonly from: string
  readonly to: string
  /** Rates the sources answered. */
  readonly fetched: number
  /** Rows inserted or changed (0 on a re-run that found nothing new). */
  readonly stored: number
  /** Which sources answered: norges_bank, ecb, or none (the range had no rate yet). */
  readonly sources: ReadonlyArray<string>
}

const todayUtc = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString().slice(0, 10))

export class DailyRates extends Effect.Service<DailyRates>()("Rates/DailyRates", {
  effect: Effect.gen(function*() {
    const repo = yield* DailyRatesRepo
    const port = yield* ExchangeRates
    const config = yield* ExchangeRatesConfig

    /**
     * The stored rates of `currencies` for [from − lookback, to], as a table that answers any day
     * of [from, to] (NOK is always 1 and needs no row).
     */
    const table = Effect.fn("DailyRates.table")(function*(query: {
      readonly currencies: ReadonlyArray<string>
      readonly from: string
      readonly to: string
      readonly lookbackDays?: number
    }) {
      const lookbackDays = query.lookbackDays ?? DEFAULT_LOOKBACK_DAYS
      const currencies = [...new Set(query.currencies.map((c) => c.trim().toUpperCase()))].filter((c) => c !== "NOK")
      if (currencies.length === 0) return makeRateTable([], lookbackDays)
      const rows = yield* repo.range({ currencies, from: addDays(query.from, -lookbackDays), to: query.to })
      return makeRateTable(rows, lookbackDays) satisfies RateTable
    })

    /** Fetches the rates of [from, to] (the configured currencies, or those given) and upserts them. */
    const refresh = Effect.fn("DailyRates.refresh")(function*(query: {
      readonly from: string
      readonly to: string
      readonly currencies?: ReadonlyArray<string>
    }) {
      const rates = yield* port.dailyRates({
        currencies: query.currencies ?? config.currencies,
        from: query.from,
        to: query.to
      })
      const stored = yield* repo.upsert(rates)
      const result: RefreshResult = {
        from: query.from,
        to: query.to,
        fetched: rates.length,
        stored,
        sources: [...new Set(rates.map((r) => r.source))].sort()
      }
      yield* annotateSpan({ "rates.fetched": result.fetched, "rates.stored": result.stored })
      return result
    })

    /** The last `days` days, today (UTC) included. */
    const refreshRecent = Effect.fn("DailyRates.refreshRecent")(function*(days: number) {
      const today = yield* todayUtc
      return yield* refresh({ from: addDays(today, -(Math.max(1, days) - 1)), to: today })
    })

    /** On an empty table: the last `days` days in one request per source; otherwise nothing. */
    const backfillIfEmpty = Effect.fn("DailyRates.backfillIfEmpty")(function*(days: number = config.backfillDays) {
      if (!(yield* repo.isEmpty())) return { backfilled: false as const }
      return { backfilled: true as const, ...(yield* refreshRecent(days)) }
    })

    return { table, refresh, refreshRecent, backfillIfEmpty }
  }),
  dependencies: [DailyRatesRepo.Default]
}) {}
