/**
 * One signed call to Bókun's REST API: signing, a timeout per attempt, retries with exponential
 * backoff and jitter for safe calls only (GETs and read-only searches; never a write), a span
 * `Bokun.<operation>` per call, and every failure turned into the port's two errors:
 * - `BookingSystemUnavailable`: timeout, connection refused or reset, 5xx, 429, or a body that does
 *   not parse;
 * - `BookingSystemRejected`: any other 4xx, with a reason (rejection.ts).
 * Credentials are unwrapped only to sign; the signing headers are redacted from traces and logs.
 */
import { HttpClient } from "@effect/platform"
import { Effect, Option, ParseResult, Redacted, Schema } from "effect"
import {
  type BookingSystemAccount,
  type BookingSystemError,
  BookingSystemRejected,
  BookingSystemUnavailable
} from "../../ports/BookingSystem.js"
import { excerpt, type JsonHttpOptions, makeJsonHttp, parseJson } from "../jsonHttp.js"
import { ErrorBody } from "./dialect.js"
import { rejectionReason } from "./rejection.js"
import { REDACTED_HEADERS, signedHeaders } from "./signing.js"

export type BokunHttpOptions = JsonHttpOptions

export const defaultHttpOptions: BokunHttpOptions = { timeout: "10 seconds", retries: 2, retryBase: "200 millis" }

export interface BokunCall {
  /** Names the span `Bokun.<operation>` and the errors. */
  readonly operation: string
  readonly method: "GET" | "POST"
  /** The path template, for spans (no ids): `/booking.json/booking/{confirmationCode}`. */
  readonly route: string
  /** The path with its query string, as sent. */
  readonly path: string
  readonly body?: unknown
  /** Safe to repeat: GETs and read-only searches. Writes are never retried. */
  readonly safe: boolean
  readonly headers?: Record<string, string>
}

export const makeBokunHttp = (options: BokunHttpOptions) =>
  Effect.map(HttpClient.HttpClient, (client) => {
    const forAccount = (account: BookingSystemAccount) =>
      makeJsonHttp<BookingSystemError>(client, "Bokun", options, {
        unavailable: (operation, reason, detail) =>
          new BookingSystemUnavailable({ accountId: account.id, operation, reason, detail }),
        isUnavailable: (error) => error._tag === "BookingSystemUnavailable",
        reasonOf: (error) => error.reason,
        tagOf: (error) => error._tag
      }, REDACTED_HEADERS)

    /** The call, decoded with `schema`; retried on Unavailable when safe. */
    const request = <A, I>(
      account: BookingSystemAccount,
      call: BokunCall,
      schema: Schema.Schema<A, I>
    ): Effect.Effect<A, BookingSystemError> => {
      const http = forAccount(account)
      const fields = { accountId: account.id, operation: call.operation }
      const url = `${account.baseUrl.replace(/\/+$/, "")}${call.path}`
      const signed = Effect.clockWith((clock) => clock.currentTimeMillis).pipe(
        Effect.flatMap((now) => {
          // The signature covers the path and query exactly as sent.
          const parsed = URL.canParse(url) ? new URL(url) : undefined
          const headers = parsed === undefined ? {} : signedHeaders({
            accessKey: Redacted.value(account.accessKey),
            secretKey: Redacted.value(account.secretKey),
            method: call.method,
            pathAndQuery: parsed.pathname + parsed.search,
            epochMillis: now
          })
          return http.send({
            operation: call.operation,
            method: call.method,
            url,
            headers: { ...call.headers, ...headers },
            body: call.body
          })
        })
      )
      const once = Effect.flatMap(signed, ({ status, text }): Effect.Effect<A, BookingSystemError> => {
        if (status >= 200 && status < 300) {
          return Option.match(parseJson(text), {
            onNone: () =>
              Effect.fail(
                new BookingSystemUnavailable({ ...fields, reason: "bad_response", detail: "the answer is not JSON" })
              ),
            onSome: (json) =>
              Schema.decodeUnknown(schema)(json).pipe(
                Effect.mapError((error) =>
                  new BookingSystemUnavailable({
                    ...fields,
                    reason: "bad_response",
                    detail: excerpt(ParseResult.TreeFormatter.formatErrorSync(error))
                  })
                )
              )
          })
        }
        const failure = http.serverFailure(call.operation, status, text)
        if (Option.isSome(failure)) return Effect.fail(failure.value)
        const errorBody = Option.getOrNull(Option.flatMap(parseJson(text), Schema.decodeUnknownOption(ErrorBody)))
        return Effect.fail(
          new BookingSystemRejected({
            ...fields,
            reason: rejectionReason(status, errorBody),
            detail: errorBody?.message ?? `HTTP ${status}`
          })
        )
      })
      return http.policy(once, {
        operation: call.operation,
        safe: call.safe,
        attributes: {
          "bokun.account_id": account.id,
          "http.request.method": call.method,
          "http.route": call.route,
          "bokun.safe": call.safe
        }
      })
    }

    return { request }
  })

export type BokunHttp = Effect.Effect.Success<ReturnType<typeof makeBokunHttp>>
