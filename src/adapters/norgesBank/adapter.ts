/**
 * The ExchangeRates port over Norges Bank's open data API, with the ECB's euro reference rates as
 * the fallback when Norges Bank does not answer (docs/exchange-rates.md). One request per source
 * for the whole range, whatever its length: a 400-day backfill is one call.
 *
 * Norges Bank is the source of record (the rates Norwegian accounts use). Only when it is
 * unavailable (timeout, 5xx, connection) or answers something unreadable is the ECB asked; its NOK
 * cross rates (NOK per euro ÷ units per euro) differ from Norges Bank's in the fourth digit or so,
 * and each stored rate says which source it came from.
 */
import { HttpClient } from "@effect/platform"
import { Effect, Either } from "effect"
import { annotateSpan } from "../../observability/spanFn.js"
import { type ExchangeRatesClient, type RatesQuery } from "../../ports/ExchangeRates.js"
import { parseJson } from "../jsonHttp.js"
import { makeRatesHttp, type RatesHttpOptions } from "./client.js"
import { ecbPath, norgesBankPath, parseEcbCsv, parseSdmxJson, wantedCurrencies } from "./dialect.js"

export const NORGES_BANK_URL = "https://data.norges-bank.no"
export const ECB_URL = "https://data-api.ecb.europa.eu"

export interface ExchangeRatesAdapterOptions extends RatesHttpOptions {
  /** Norges Bank's base URL (the path `/api/data/EXR/…` is appended). */
  readonly norgesBankUrl: string
  /** The ECB data API's base URL (the path `/service/data/EXR/…` is appended). */
  readonly ecbUrl: string
}

export const defaultAdapterOptions: ExchangeRatesAdapterOptions = {
  norgesBankUrl: NORGES_BANK_URL,
  ecbUrl: ECB_URL,
  timeout: "10 seconds",
  retries: 2,
  retryBase: "500 millis"
}

export const makeExchangeRatesAdapter = (options: ExchangeRatesAdapterOptions) =>
  Effect.map(HttpClient.HttpClient, (client): ExchangeRatesClient => {
    const http = makeRatesHttp(client, options)

    const fromNorgesBank = (currencies: ReadonlyArray<string>, query: RatesQuery) =>
      http.request({
        source: "norges_bank",
        operation: "norgesBank.rates",
        baseUrl: options.norgesBankUrl,
        path: norgesBankPath(currencies, query.from, query.to),
        accept: "application/vnd.sdmx.data+json, application/json",
        parse: (text) => {
          if (text.trim() === "") return Either.right([])
          const json = parseJson(text)
          return json._tag === "None" ? Either.left("the answer is not JSON") : parseSdmxJson(json.value, currencies)
        }
      })

    const fromEcb = (currencies: ReadonlyArray<string>, query: RatesQuery) =>
      http.request({
        source: "ecb",
        operation: "ecb.rates",
        baseUrl: options.ecbUrl,
        path: ecbPath(currencies, query.from, query.to),
        accept: "text/csv",
        parse: (text) => parseEcbCsv(text, currencies)
      })

    const dailyRates = Effect.fn("ExchangeRates.dailyRates")(function*(query: RatesQuery) {
      yield* annotateSpan({ "exchange_rates.from": query.from, "exchange_rates.to": query.to })
      const currencies = wantedCurrencies(query)
      if (currencies.length === 0 || query.from > query.to) return []
      return yield* fromNorgesBank(currencies, query).pipe(
        Effect.catchAll((error) =>
          Effect.logWarning(
            `Norges Bank did not answer (${error._tag}: ${error.detail}); reading the ECB's reference rates`
          ).pipe(Effect.zipRight(fromEcb(currencies, query)))
        )
      )
    })

    return { dailyRates }
  })
