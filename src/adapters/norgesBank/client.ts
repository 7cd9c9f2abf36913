/**
 * One call to a rate source (Norges Bank or the ECB): a timeout per attempt, retries with
 * exponential backoff and jitter (every call is a read), a span `ExchangeRates.<operation>` per
 * call, and every failure turned into the port's two errors:
 * - `ExchangeRatesUnavailable`: timeout, connection refused or reset, 5xx, 429;
 * - `ExchangeRatesBadResponse`: an answer that does not parse, or a 4xx other than 404.
 * A 404 is SDMX's "no results" (both sources answer it for a range with no observation): the
 * answer is then empty. The transport, retries and spans are the adapters' shared ones
 * (../jsonHttp.ts); the answer is read as text (SDMX-JSON or CSV) and each call says what it accepts.
 */
import type { HttpClient } from "@effect/platform"
import { Effect, Either, Option } from "effect"
import {
  ExchangeRatesBadResponse,
  type ExchangeRatesError,
  ExchangeRatesUnavailable,
  type RateSource
} from "../../ports/ExchangeRates.js"
import { excerpt, type JsonHttpOptions, makeJsonHttp } from "../jsonHttp.js"

export type RatesHttpOptions = JsonHttpOptions

export interface RatesCall<A> {
  readonly source: RateSource
  /** Names the span `ExchangeRates.<operation>` and the errors. */
  readonly operation: string
  readonly baseUrl: string
  /** The path with its query string, as sent. */
  readonly path: string
  readonly accept: string
  /** The body of a 2xx (a 404 gives ""), parsed; Left: why it is a bad response. */
  readonly parse: (text: string) => Either.Either<A, string>
}

export const makeRatesHttp = (client: HttpClient.HttpClient, options: RatesHttpOptions) => {
  const http = (source: RateSource) =>
    makeJsonHttp<ExchangeRatesError>(client, "ExchangeRates", options, {
      unavailable: (operation, reason, detail) =>
        reason === "bad_response"
          ? new ExchangeRatesBadResponse({ source, operation, detail })
          : new ExchangeRatesUnavailable({ source, operation, reason, detail }),
      isUnavailable: (error) => error._tag === "ExchangeRatesUnavailable",
      reasonOf: (error) => (error._tag === "ExchangeRatesUnavailable" ? error.reason : "bad_response"),
      tagOf: (error) => error._tag
    }, [])

  const request = <A>(call: RatesCall<A>): Effect.Effect<A, ExchangeRatesError> => {
    const { policy, send, serverFailure } = http(call.source)
    const fields = { source: call.source, operation: call.operation }
    const raw = `${call.baseUrl.replace(/\/+$/, "")}${call.path}`
    const once = Effect.gen(function*() {
      const { status, text } = yield* send({
        operation: call.operation,
        method: "GET",
        url: raw,
        headers: { accept: call.accept }
      })
      if ((status >= 200 && status < 300) || status === 404) {
        const parsed = call.parse(status === 404 ? "" : text)
        return yield* Either.match(parsed, {
          onLeft: (detail) => Effect.fail(new ExchangeRatesBadResponse({ ...fields, detail: excerpt(detail) })),
          onRight: (value) => Effect.succeed(value)
        })
      }
      const failure = serverFailure(call.operation, status, text)
      if (Option.isSome(failure)) return yield* Effect.fail(failure.value)
      return yield* Effect.fail(new ExchangeRatesBadResponse({ ...fields, detail: `HTTP ${status}: ${excerpt(text)}` }))
    })
    return policy(once, {
      operation: call.operation,
      safe: true,
      attributes: { "exchange_rates.source": call.source, "http.request.method": "GET", "url.full": raw }
    })
  }

  return { request }
}
