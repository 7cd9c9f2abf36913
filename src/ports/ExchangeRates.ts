/**
 * Where the service reads exchange rates: daily reference rates against the Norwegian krone (NOK),
 * one per banking day and currency (Norges Bank's open data API today, the ECB's euro reference
 * rates when Norges Bank does not answer; the rates sandbox speaks both dialects). docs/exchange-rates.md.
 *
 * Conventions:
 * - Currencies are ISO 4217 alpha codes (`EUR`, `USD`, `SEK`); NOK itself is never asked for (its
 *   rate is 1).
 * - Days are ISO dates (`2026-11-26`), the banking day a rate is for; a range is inclusive. Only
 *   banking days have rates: a weekend or holiday in the range simply has none.
 * - `nokPerUnit` is NOK for ONE unit of the currency, whatever unit the source quotes (Norges Bank
 *   quotes SEK, DKK, JPY … per 100).
 * - A range with no published rate at all (a weekend, or days not published yet) answers an empty
 *   list, not an error.
 * - `ExchangeRatesUnavailable`: no source answered in time, answered 5xx/429, or the connection
 *   failed (worth retrying later). `ExchangeRatesBadResponse`: a source answered something this
 *   service cannot read (a changed format, a 4xx other than "no results"): retrying as is will not help.
 */
import { Context, Data, type Effect } from "effect"

export type RateSource = "norges_bank" | "ecb"

export interface DailyRate {
  readonly currency: string
  /** The banking day the rate is for (ISO date). */
  readonly day: string
  /** NOK for one unit of `currency`. */
  readonly nokPerUnit: number
  readonly source: RateSource
}

export interface RatesQuery {
  /** The currencies wanted (NOK is ignored). */
  readonly currencies: ReadonlyArray<string>
  /** First and last day, inclusive (ISO dates). */
  readonly from: string
  readonly to: string
}

export class ExchangeRatesUnavailable extends Data.TaggedError("ExchangeRatesUnavailable")<{
  readonly source: RateSource
  readonly operation: string
  /** timeout, http_5xx, rate_limited, connection */
  readonly reason: string
  readonly detail: string
}> {
  override get message() {
    return `${this.source} ${this.operation}: ${this.reason}: ${this.detail}`
  }
}

export class ExchangeRatesBadResponse extends Data.TaggedError("ExchangeRatesBadResponse")<{
  readonly source: RateSource
  readonly operation: string
  readonly detail: string
}> {
  override get message() {
    return `${this.source} ${this.operation}: bad response: ${this.detail}`
  }
}

export type ExchangeRatesError = ExchangeRatesUnavailable | ExchangeRatesBadResponse

export interface ExchangeRatesClient {
  /**
   * Every published rate of `currencies` in [from, to], from Norges Bank, or from the ECB when
   * Norges Bank does not answer (one request per source for the whole range). Fails only when no
   * source gave an answer; the error is the last source's.
   */
  readonly dailyRates: (query: RatesQuery) => Effect.Effect<ReadonlyArray<DailyRate>, ExchangeRatesError>
}

export class ExchangeRates extends Context.Tag("Ports/ExchangeRates")<ExchangeRates, ExchangeRatesClient>() {}
