/**
 * One signed call to Bókun's REST API: signing, a timeout per attempt, retries with exponential
 * backoff and jitter for safe calls only (GETs and read-only searches; never a write), a span
 * `Bokun.<operation>` per call, and every failure turned into the port's two errors:
 * - `BookingSystemUnavailable`: timeout, connection refused or reset, 5xx, 429, or a body that does
 *   not parse;
 * - `BookingSystemRejected`: any other 4xx, with a reason (rejection.ts).
 * Credentials are unwrapped only to sign; the signing headers are redacted from traces and logs.
 */
import { Headers, HttpClient, HttpClientRequest } from "@effect/platform"
import { Duration, Effect, Option, ParseResult, Redacted, Schedule, Schema } from "effect"
import {
  type BookingSystemAccount,
  type BookingSystemError,
  BookingSystemRejected,
  BookingSystemUnavailable
} from "../../ports/BookingSystem.js"
import { ErrorBody } from "./dialect.js"
import { rejectionReason } from "./rejection.js"
import { REDACTED_HEADERS, signedHeaders } from "./signing.js"

export interface BokunHttpOptions {
  /** Time allowed for one attempt, answer body included. */
  readonly timeout: Duration.DurationInput
  /** Retries after the first attempt, for safe calls only. */
  readonly retries: number
  /** First backoff delay; doubled each retry, with jitter. */
  readonly retryBase: Duration.DurationInput
}

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

const excerpt = (text: string) => (text.length > 200 ? `${text.slice(0, 200)}…` : text)

const parseJson = (text: string): Option.Option<unknown> => {
  if (text.trim() === "") return Option.some(null)
  try {
    return Option.some(JSON.parse(text))
  } catch {
    return Option.none()
  }
}

const isRetryable = (error: BookingSystemError) =>
  error._tag === "BookingSystemUnavailable" && error.reason !== "bad_response"

/** Header names never printed or traced: the platform's defaults plus Bókun's signing headers. */
const REDACTED_NAMES: ReadonlyArray<string> = ["authorization", "cookie", "set-cookie", "x-api-key", ...REDACTED_HEADERS]

export const makeBokunHttp = (options: BokunHttpOptions) =>
  Effect.map(HttpClient.HttpClient, (http) => {
    const retryPolicy = Schedule.exponential(options.retryBase, 2).pipe(
      Schedule.jittered,
      Schedule.intersect(Schedule.recurs(options.retries))
    )

    /** Sends the call once; answers the status and the raw body text. */
    const attempt = (account: BookingSystemAccount, call: BokunCall) =>
      Effect.gen(function*() {
        const unavailable = (reason: string, detail: string) =>
          new BookingSystemUnavailable({ accountId: account.id, operation: call.operation, reason, detail })
        const url = `${account.baseUrl.replace(/\/+$/, "")}${call.path}`
        const parsed = yield* Effect.try({
          try: () => new URL(url),
          catch: () => unavailable("connection", "the account's base URL is not a valid URL")
        })
        const now = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
        const headers = signedHeaders({
          accessKey: Redacted.value(account.accessKey),
          secretKey: Redacted.value(account.secretKey),
          method: call.method,
          pathAndQuery: parsed.pathname + parsed.search,
          epochMillis: now
        })
        let request = HttpClientRequest.make(call.method)(parsed, {
          headers: { ...call.headers, ...headers, accept: "application/json" }
        })
        if (call.body !== undefined) request = HttpClientRequest.bodyUnsafeJson(request, call.body)
        const response = yield* http.execute(request).pipe(
          Effect.catchAll((error) => Effect.fail(unavailable("connection", `${error.reason}: request failed`)))
        )
        const text = yield* response.text.pipe(
          Effect.catchAll(() => Effect.fail(unavailable("connection", "the answer was cut off")))
        )
        yield* Effect.annotateCurrentSpan("http.response.status_code", response.status)
        return { status: response.status, text }
      }).pipe(
        Effect.timeoutFail({
          duration: options.timeout,
          onTimeout: () =>
            new BookingSystemUnavailable({
              accountId: account.id,
              operation: call.operation,
              reason: "timeout",
              detail: `no answer within ${Duration.format(options.timeout)}`
            })
        })
      )

    /** The call, decoded with `schema`; retried on Unavailable when safe. */
    const request = <A, I>(
      account: BookingSystemAccount,
      call: BokunCall,
      schema: Schema.Schema<A, I>
    ): Effect.Effect<A, BookingSystemError> => {
      const once = Effect.flatMap(attempt(account, call), ({ status, text }): Effect.Effect<A, BookingSystemError> => {
        const fields = { accountId: account.id, operation: call.operation }
        if (status >= 200 && status < 300) {
          return Option.match(parseJson(text), {
            onNone: () => Effect.fail(new BookingSystemUnavailable({ ...fields, reason: "bad_response", detail: "the answer is not JSON" })),
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
        if (status >= 500 || status === 429) {
          return Effect.fail(new BookingSystemUnavailable({
            ...fields,
            reason: status === 429 ? "rate_limited" : "http_5xx",
            detail: `HTTP ${status}: ${excerpt(text)}`
          }))
        }
        const body = Option.flatMap(parseJson(text), Schema.decodeUnknownOption(ErrorBody))
        const errorBody = Option.getOrNull(body)
        return Effect.fail(new BookingSystemRejected({
          ...fields,
          reason: rejectionReason(status, errorBody),
          detail: errorBody?.message ?? `HTTP ${status}`
        }))
      })
      const retried = call.safe && options.retries > 0
        ? once.pipe(
          Effect.tapError((error) =>
            isRetryable(error) ? Effect.logDebug(`Bokun.${call.operation}: ${error.reason}, retrying`) : Effect.void
          ),
          Effect.retry({ schedule: retryPolicy, while: isRetryable })
        )
        : once
      return retried.pipe(
        Effect.tapError((error) => Effect.annotateCurrentSpan("bokun.error", `${error._tag}:${error.reason}`)),
        Effect.locally(Headers.currentRedactedNames, REDACTED_NAMES),
        Effect.withSpan(`Bokun.${call.operation}`, {
          kind: "client",
          attributes: {
            "bokun.account_id": account.id,
            "http.request.method": call.method,
            "http.route": call.route,
            "bokun.safe": call.safe
          }
        })
      )
    }

    return { request }
  })

export type BokunHttp = Effect.Effect.Success<ReturnType<typeof makeBokunHttp>>
