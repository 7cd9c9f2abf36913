/**
 * The rates sandbox plus the ExchangeRates port pointed at it (both sources on the sandbox's base
 * URL) over real HTTP, with short timeouts and backoff so fault tests stay quick.
 */
import { NodeHttpClient } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { exchangeRatesLayer, type ExchangeRatesOptions } from "../../../src/adapters/ExchangeRatesLive.js"
import { RatesSandboxLive, RatesSandboxService } from "../../../src/sandbox/rates/index.js"

export const TEST_RATES: ExchangeRatesOptions = { timeout: "400 millis", retries: 1, retryBase: "10 millis" }

export const ratesEnv = (options: ExchangeRatesOptions = TEST_RATES) =>
  Layer.unwrapEffect(
    Effect.map(RatesSandboxService, (sandbox) =>
      exchangeRatesLayer({ ...options, norgesBankUrl: sandbox.baseUrl, ecbUrl: sandbox.baseUrl }))
  ).pipe(
    Layer.provideMerge(RatesSandboxLive()),
    Layer.provideMerge(NodeHttpClient.layer)
  )

/** The UTC day `days` from today. */
export const dayFromToday = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10)
