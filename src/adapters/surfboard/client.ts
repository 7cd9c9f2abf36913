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
import { HttpClient } from "@effect/platform"
import { Effect, Option, ParseResult, Redacted, Schema } from "effect"
import { taggedAnswer, withAnswerSpan } from "../../observability/answerSpan.js"
import {
  type PaymentAccount,
  type PaymentProviderError,
  PaymentProviderRejected,
  PaymentProviderUnavailable
} from "../../ports/PaymentProvider.js"
import { excerpt, type JsonHttpOptions, makeJsonHttp, parseJson } from "../jsonHttp.js"
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

export type SurfboardHttpOptions = JsonHttpOptions

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

export const makeSurfboardHttp = (options: SurfboardHttpOptions) =>
  Effect.map(HttpClient.HttpClient, (client) => {
    const forAccount = (account: PaymentAccount) =>
      makeJsonHttp<PaymentProviderError>(client, "Surfboard", options, {
        unavailable: (operation, reason, detail) =>
          new PaymentProviderUnavailable({ accountId: account.id, operation, reason, detail }),
        isUnavailable: (error) => error._tag === "PaymentProviderUnavailable",
        reasonOf: (error) => error.reason,
        tagOf: (error) => error._tag
      }, REDACTED_HEADERS)

    /** The call's `data`, decoded with `schema`; retried on Unavailable when it is a read. */
    const request = <A, I>(
      account: PaymentAccount,
      call: SurfboardCall,
      schema: Schema.Schema<A, I>
    ): Effect.Effect<A, PaymentProviderError> => {
      const http = forAccount(account)
      const fields = { accountId: account.id, operation: call.operation }
      const badResponse = (detail: string) =>
        new PaymentProviderUnavailable({ ...fields, reason: "bad_response", detail })
      const headers: Record<string, string> = {
        [API_KEY_HEADER]: Redacted.value(account.apiKey),
        [API_SECRET_HEADER]: Redacted.value(account.apiSecret),
        [MERCHANT_ID_HEADER]: account.merchantId
      }
      if (call.idempotencyReference !== undefined) headers[IDEMPOTENCY_HEADER] = call.idempotencyReference
      const sent = http.send({
        operation: call.operation,
        method: call.method,
        url: `${account.baseUrl.replace(/\/+$/, "")}${call.path}`,
        headers,
        body: call.body
      })
      const once = Effect.flatMap(sent, ({ status, text }): Effect.Effect<A, PaymentProviderError> => {
        const json = parseJson(text)
        if (status >= 200 && status < 300) {
          if (Option.isNone(json)) return Effect.fail(badResponse("the answer is not JSON"))
          return Schema.decodeUnknown(Envelope(schema))(json.value).pipe(
            Effect.mapError((error) => badResponse(excerpt(ParseResult.TreeFormatter.formatErrorSync(error)))),
            Effect.flatMap((envelope): Effect.Effect<A, PaymentProviderError> => {
              if (envelope.status.toUpperCase() !== "SUCCESS") {
                return Effect.fail(
                  new PaymentProviderRejected({
                    ...fields,
                    reason: "invalid",
                    detail: envelope.message ?? `status ${envelope.status}`
                  })
                )
              }
              if (envelope.data !== undefined) return Effect.succeed(envelope.data)
              // Some answers carry no data (DELETE /orders/:id): fine when the schema expects none.
              return Schema.decodeUnknown(schema)(undefined).pipe(
                Effect.mapError(() => badResponse("the answer has no data"))
              )
            })
          )
        }
        const failure = http.serverFailure(call.operation, status, text)
        if (Option.isSome(failure)) return Effect.fail(failure.value)
        const errorBody = Option.getOrNull(Option.flatMap(json, Schema.decodeUnknownOption(ErrorBody)))
        return Effect.fail(
          new PaymentProviderRejected({
            ...fields,
            reason: rejectionReason(status, errorBody),
            detail: errorBody?.message ? `HTTP ${status}: ${excerpt(errorBody.message)}` : `HTTP ${status}`
          })
        )
      })
      // Only reads are retried. A call that can move money is sent once: whether the provider acted
      // on a lost answer is unknown here, and the caller's retry with the same idempotency reference
      // is what keeps money from moving twice.
      return http.policy(once, {
        operation: call.operation,
        safe: call.idempotencyReference === undefined && call.method === "GET",
        attributes: {
          "surfboard.account_id": account.id,
          "surfboard.merchant_id": account.merchantId,
          "http.request.method": call.method,
          "http.route": call.route,
          "surfboard.moves_money": call.idempotencyReference !== undefined,
          ...(call.idempotencyReference !== undefined
            ? { "surfboard.idempotency_reference": call.idempotencyReference }
            : {})
        }
      })
    }

    return { request }
  })

export type SurfboardHttp = Effect.Effect.Success<ReturnType<typeof makeSurfboardHttp>>

/**
 * The span of one port operation, `PaymentProvider.<name>`, with the account's ids and `attributes`.
 * A rejection (declined, invalid …) is the provider's answer: the span ends OK (answerSpan.ts).
 */
export const operationSpan = (name: string, account: PaymentAccount, attributes: Record<string, unknown> = {}) =>
  withAnswerSpan(
    `PaymentProvider.${name}`,
    { attributes: { "surfboard.account_id": account.id, "surfboard.merchant_id": account.merchantId, ...attributes } },
    taggedAnswer("PaymentProviderRejected"),
    () => "PaymentProviderRejected"
  )
