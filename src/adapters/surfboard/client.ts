/**
 * One call to Surfboard's API: the credential headers, a timeout per attempt, retries with
 * exponential backoff and jitter for safe calls only (the GETs), a span `Surfboard.<operation>` per
 * call, and every failure turned into the port's two errors:
 * - `PaymentProviderUnavailable`: timeout, connection refused or reset, 5xx, 429, or a body that
 *   does not parse;
 * - `PaymentProviderRejected`: any other 4xx (and a 2xx whose envelope says ERROR), with a reason
 *   (rejection.ts).
 *
 * A call that can move money (create an order, void, cancel) carries our idempotency reference in
 * the `Idempotency-Key` header and is sent exactly once: it is never retried here, even on a
 * timeout, because the adapter cannot know whether the provider acted. The caller retries it with
 * the same reference, which is what makes the retry safe.
 *
 * The API key and secret are unwrapped only to build the request; their header names are redacted
 * in the HttpClient's traces and logs, and error details carry only the status and the answer's
 * message.
 */
import { Headers, HttpClient, HttpClientRequest } from "@effect/platform"
import { Duration, Effect, Option, ParseResult, Redacted, Schedule, Schema } from "effect"
import {
  type PaymentAccount,
  type PaymentProviderError,
  PaymentProviderRejected,
  PaymentProviderUnavailable
} from "../../ports/PaymentProvider.js"
import {
  API_KEY_HEADER,
  API_SECRET_HEADER,
  Envelope,
  ErrorBody,
  IDEMPOTENCY_HEADER,
  MERCHANT_ID_HEADER,
  REDACTED_HEADERS
} from "./dialect.js"
import { rejectionReason } from "./rejection.js"

export interface SurfboardHttpOptions {
  /** Time allowed for one attempt, answer body included. */
  readonly timeout: Duration.DurationInput
  /** Retries after the first attempt, for safe calls (GETs) only. */
  readonly retries: number
  /** First backoff delay; doubled each retry, with jitter. */
  readonly retryBase: Duration.DurationInput
}

export const defaultHttpOptions: SurfboardHttpOptions = { timeout: "15 seconds", retries: 2, retryBase: "200 millis" }

export interface SurfboardCall {
  /** Names the span `Surfboard.<operation>` and the errors. */
  readonly operation: string
  readonly method: "GET" | "POST" | "PUT" | "DELETE"
  /** The path template, for spans (no ids): `/orders/{orderId}/status`. */
  readonly route: string
  /** The path as sent. */
  readonly path: string
  readonly body?: unknown
  /**
   * Our idempotency reference: set on every call that can move money, which then is never retried
   * here (the caller retries with the same reference). Unset only on reads, which are retried.
   */
  readonly idempotencyReference?: string
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

const isRetryable = (error: PaymentProviderError) =>
  error._tag === "PaymentProviderUnavailable" && error.reason !== "bad_response"

/** Header names never printed or traced: the platform's defaults plus Surfboard's credential headers. */
const REDACTED_NAMES: ReadonlyArray<string> = ["authorization", "cookie", "set-cookie", "x-api-key", ...REDACTED_HEADERS]

export const makeSurfboardHttp = (options: SurfboardHttpOptions) =>
  Effect.map(HttpClient.HttpClient, (http) => {
    const retryPolicy = Schedule.exponential(options.retryBase, 2).pipe(
      Schedule.jittered,
      Schedule.intersect(Schedule.recurs(options.retries))
    )

    /** Sends the call once; answers the status and the raw body text. */
    const attempt = (account: PaymentAccount, call: SurfboardCall) =>
      Effect.gen(function*() {
        const unavailable = (reason: string, detail: string) =>
          new PaymentProviderUnavailable({ accountId: account.id, operation: call.operation, reason, detail })
        const url = yield* Effect.try({
          try: () => new URL(`${account.baseUrl.replace(/\/+$/, "")}${call.path}`),
          catch: () => unavailable("connection", "the account's base URL is not a valid URL")
        })
        const headers: Record<string, string> = {
          [API_KEY_HEADER]: Redacted.value(account.apiKey),
          [API_SECRET_HEADER]: Redacted.value(account.apiSecret),
          [MERCHANT_ID_HEADER]: account.merchantId,
          accept: "application/json"
        }
        if (call.idempotencyReference !== undefined) headers[IDEMPOTENCY_HEADER] = call.idempotencyReference
        let request = HttpClientRequest.make(call.method)(url, { headers })
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
            new PaymentProviderUnavailable({
              accountId: account.id,
              operation: call.operation,
              reason: "timeout",
              detail: `no answer within ${Duration.format(options.timeout)}`
            })
        })
      )

    /** The call's `data`, decoded with `schema`; retried on Unavailable when it is a read. */
    const request = <A, I>(
      account: PaymentAccount,
      call: SurfboardCall,
      schema: Schema.Schema<A, I>
    ): Effect.Effect<A, PaymentProviderError> => {
      const fields = { accountId: account.id, operation: call.operation }
      const badResponse = (detail: string) => new PaymentProviderUnavailable({ ...fields, reason: "bad_response", detail })
      const once = Effect.flatMap(attempt(account, call), ({ status, text }): Effect.Effect<A, PaymentProviderError> => {
        const json = parseJson(text)
        if (status >= 200 && status < 300) {
          if (Option.isNone(json)) return Effect.fail(badResponse("the answer is not JSON"))
          return Schema.decodeUnknown(Envelope(schema))(json.value).pipe(
            Effect.mapError((error) => badResponse(excerpt(ParseResult.TreeFormatter.formatErrorSync(error)))),
            Effect.flatMap((envelope): Effect.Effect<A, PaymentProviderError> => {
              if (envelope.status.toUpperCase() !== "SUCCESS") {
                return Effect.fail(new PaymentProviderRejected({
                  ...fields,
                  reason: "invalid",
                  detail: envelope.message ?? `status ${envelope.status}`
                }))
              }
              if (envelope.data !== undefined) return Effect.succeed(envelope.data)
              // Some answers carry no data (DELETE /orders/:id): fine when the schema expects none.
              return Schema.decodeUnknown(schema)(undefined).pipe(Effect.mapError(() => badResponse("the answer has no data")))
            })
          )
        }
        if (status >= 500 || status === 429) {
          return Effect.fail(new PaymentProviderUnavailable({
            ...fields,
            reason: status === 429 ? "rate_limited" : "http_5xx",
            detail: `HTTP ${status}: ${excerpt(text)}`
          }))
        }
        const errorBody = Option.getOrNull(Option.flatMap(json, Schema.decodeUnknownOption(ErrorBody)))
        return Effect.fail(new PaymentProviderRejected({
          ...fields,
          reason: rejectionReason(status, errorBody),
          detail: errorBody?.message ? `HTTP ${status}: ${excerpt(errorBody.message)}` : `HTTP ${status}`
        }))
      })
      // Only reads are retried. A call that can move money is sent once: whether the provider acted
      // on a lost answer is unknown here, and the caller's retry with the same idempotency reference
      // is what keeps money from moving twice.
      const retried = call.idempotencyReference === undefined && call.method === "GET" && options.retries > 0
        ? once.pipe(
          Effect.tapError((error) =>
            isRetryable(error) ? Effect.logDebug(`Surfboard.${call.operation}: ${error.reason}, retrying`) : Effect.void
          ),
          Effect.retry({ schedule: retryPolicy, while: isRetryable })
        )
        : once
      return retried.pipe(
        Effect.tapError((error) => Effect.annotateCurrentSpan("surfboard.error", `${error._tag}:${error.reason}`)),
        Effect.locally(Headers.currentRedactedNames, REDACTED_NAMES),
        Effect.withSpan(`Surfboard.${call.operation}`, {
          kind: "client",
          attributes: {
            "surfboard.account_id": account.id,
            "surfboard.merchant_id": account.merchantId,
            "http.request.method": call.method,
            "http.route": call.route,
            "surfboard.moves_money": call.idempotencyReference !== undefined,
            ...(call.idempotencyReference !== undefined ? { "surfboard.idempotency_reference": call.idempotencyReference } : {})
          }
        })
      )
    }

    return { request }
  })

export type SurfboardHttp = Effect.Effect.Success<ReturnType<typeof makeSurfboardHttp>>
