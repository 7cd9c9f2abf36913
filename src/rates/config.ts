import { Config, Option } from "effect"
import { cronSetting } from "../lib/settings.js"

/**
 * Exchange rates (src/adapters/norgesBank/, src/rates/, src/jobs/exchangeRates.ts, docs/exchange-rates.md):
 * where Norges Bank's and the ECB's data APIs are, how calls are timed, and when rates are fetched.
 */
export const ExchangeRatesConfig = Config.all({
  /**
   * Norges Bank's open data API (default https://data.norges-bank.no). Unset in demo mode: the
   * rates sandbox the demo starts.
   */
  norgesBankUrl: Config.option(Config.string("EXCHANGE_RATES_NORGES_BANK_URL")).pipe(
    Config.map(Option.filter((url) => url.trim() !== ""))
  ),
  /** The ECB data API, the fallback (default https://data-api.ecb.europa.eu); as above in demo mode. */
  ecbUrl: Config.option(Config.string("EXCHANGE_RATES_ECB_URL")).pipe(
    Config.map(Option.filter((url) => url.trim() !== ""))
  ),
  /** Time allowed for one attempt of one call, answer included. */
  timeoutMs: Config.integer("EXCHANGE_RATES_TIMEOUT_MS").pipe(Config.withDefault(10_000)),
  /** Retries per source after the first attempt, before the fallback (or the failure). */
  retries: Config.integer("EXCHANGE_RATES_RETRIES").pipe(Config.withDefault(2)),
  /**
   * When the rates of the last EXCHANGE_RATES_REFRESH_DAYS days are fetched (UTC): after Norges
   * Bank publishes (~16:00 Oslo) and again later for a late rate; weekdays.
   */
  cron: cronSetting("EXCHANGE_RATES_CRON", "30 15,17 * * 1-5"),
  /** Days each scheduled run fetches again, today included. */
  refreshDays: Config.integer("EXCHANGE_RATES_REFRESH_DAYS").pipe(Config.withDefault(10)),
  /** Days fetched when the table is empty (a first start). */
  backfillDays: Config.integer("EXCHANGE_RATES_BACKFILL_DAYS").pipe(Config.withDefault(400)),
  /** Currencies fetched (NOK needs none). */
  currencies: Config.array(Config.string(), "EXCHANGE_RATES_CURRENCIES").pipe(
    Config.withDefault(["EUR", "USD", "SEK", "DKK", "GBP"]),
    Config.map((list) => list.map((c) => c.trim().toUpperCase()).filter((c) => /^[A-Z]{3}$/.test(c) && c !== "NOK"))
  )
})

export type ExchangeRatesConfig = Config.Config.Success<typeof ExchangeRatesConfig>
