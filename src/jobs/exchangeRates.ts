/**
 * The exchange-rate schedule (docs/exchange-rates.md): on weekdays after Norges Bank publishes
 * (~16:00 Oslo; EXCHANGE_RATES_CRON, default 15:30 and 17:30 UTC) the last EXCHANGE_RATES_REFRESH_DAYS
 * days are fetched again (a rate published late, or a day the ECB filled in while Norges Bank was
 * down, is picked up by the next run), and on an empty table EXCHANGE_RATES_BACKFILL_DAYS days first.
 * Each run once across all instances, recorded in job_runs.
 */
import { ClusterCron } from "@effect/cluster"
import { Effect, Layer } from "effect"
import { ExchangeRatesConfig } from "../rates/config.js"
import { DailyRates } from "../rates/DailyRates.js"
import { recordedRun } from "./runs.js"

export const EXCHANGE_RATES = "exchange-rates"

/** One run: the backfill when the table is empty, then the recent days. */
export const refreshExchangeRates = Effect.gen(function*() {
  const rates = yield* DailyRates
  const config = yield* ExchangeRatesConfig
  const backfill = yield* rates.backfillIfEmpty(config.backfillDays)
  const recent = yield* rates.refreshRecent(config.refreshDays)
  return { backfill, recent }
})

export const exchangeRatesJob = (config: Pick<ExchangeRatesConfig, "cron">) =>
  ClusterCron.make({
    name: EXCHANGE_RATES,
    cron: config.cron,
    execute: recordedRun(EXCHANGE_RATES, () => refreshExchangeRates),
    // The next run is at most a day away and fetches the same days again.
    skipIfOlderThan: "2 hours"
  })

/** The job with its schedule from EXCHANGE_RATES_CRON. */
export const exchangeRatesJobLive = Layer.unwrapEffect(Effect.map(ExchangeRatesConfig, exchangeRatesJob))
