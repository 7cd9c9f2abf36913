/**
 * The ExchangeRates port's implementation: Norges Bank with the ECB as fallback
 * (src/adapters/norgesBank/). Needs an HttpClient (e.g. NodeHttpClient.layer).
 *
 * Where the sources are: EXCHANGE_RATES_NORGES_BANK_URL and EXCHANGE_RATES_ECB_URL; unset, the
 * public APIs, except in demo mode (DEMO_DATA, on by default with the embedded database), where the
 * rates sandbox is started in-process for the life of the service and serves both (src/demo/rates.ts).
 */
import { Effect, Layer, Option } from "effect"
import { demoRatesSandbox } from "../demo/rates.js"
import { ExchangeRates } from "../ports/ExchangeRates.js"
import { ExchangeRatesConfig } from "../rates/config.js"
import {
  defaultAdapterOptions,
  type ExchangeRatesAdapterOptions,
  makeExchangeRatesAdapter
} from "./norgesBank/adapter.js"

export type ExchangeRatesOptions = Partial<ExchangeRatesAdapterOptions>

/** The port with explicit options (tests: the sandbox's URL, short timeouts and backoff). */
export const exchangeRatesLayer = (options: ExchangeRatesOptions = {}) =>
  Layer.effect(ExchangeRates, makeExchangeRatesAdapter({ ...defaultAdapterOptions, ...options }))

/** The port configured from the EXCHANGE_RATES_* settings (the demo's sandbox when unset in demo mode). */
export const ExchangeRatesLive = Layer.unwrapScoped(
  Effect.gen(function*() {
    const config = yield* ExchangeRatesConfig
    const sandbox = Option.isNone(config.norgesBankUrl) || Option.isNone(config.ecbUrl)
      ? yield* demoRatesSandbox
      : Option.none()
    const fallback = (url: string) => Option.getOrElse(sandbox, () => url)
    return exchangeRatesLayer({
      norgesBankUrl: Option.getOrElse(config.norgesBankUrl, () => fallback(defaultAdapterOptions.norgesBankUrl)),
      ecbUrl: Option.getOrElse(config.ecbUrl, () => fallback(defaultAdapterOptions.ecbUrl)),
      timeout: `${config.timeoutMs} millis`,
      retries: config.retries
    })
  })
)
