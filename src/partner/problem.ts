/**
 * The Partner API's error mapping, the one place where its failures become RFC 9457 problem details
 * (application/problem+json): domain errors, request decoding errors, bodies refused
 * (src/http/requestBody.ts), unknown routes and methods (src/http/routing.ts) and defects. Installed
 * by the partner API alone (src/partner/Http.ts), inside the middleware every API shares
 * (src/http/apiApp.ts: request id, bodies, 405, access log).
 */
import { HttpApiError, HttpServerError, HttpServerResponse } from "@effect/platform"
import { Cause, Effect, Option, Schema } from "effect"
import type { ErrorMapping } from "../http/apiApp.js"
import { clipEchoes, echo } from "../http/echo.js"
import { urlCarriesSecretKey } from "./auth/apiKey.js"
import {
  DailyLimitReached,
  Forbidden,
  IdempotencyInProgress,
  IdempotencyMismatch,
  InvalidRequest,
  NotFound,
  NotPossible,
  RateLimited,
  Unauthorized,
  Unavailable
} from "../domain/errors.js"
import { BodyTooLarge, MalformedBody, UnsupportedMediaType } from "../http/requestBody.js"
import { MethodNotAllowed, quotablePath } from "../http/routing.js"

export const PROBLEM_CONTENT_TYPE = "application/problem+json"

/** Problem body as documented in the OpenAPI document (components.schemas.Problem). */
export const Problem = Schema.Struct({
  type: Schema.String.annotations({ description: "URI reference naming the problem type (see /api/v1/docs/errors.md)." }),
  title: Schema.String,
  status: Schema.Int,
  detail: Schema.String.annotations({
    description: "What went wrong with this request, in English. Quotes at most 64 characters of any value sent " +
      "(then `… (N characters)`); at most about 500 characters."
  }),
  request_id: Schema.String.annotations({ description: "Also sent as the `X-Request-Id` response header." }),
  invalid_params: Schema.optional(
    Schema.Array(Schema.Struct({ name: Schema.String, reason: Schema.String }))
  ).annotations({ description: "Present on 400: each offending parameter or field and the rule it breaks." }),
  scope: Schema.optional(Schema.String).annotations({ description: "Present on 403: the scope the key lacks." }),
  retry_after: Schema.optional(Schema.Int).annotations({ description: "Present on 429: seconds to wait (as `Retry-After`)." }),
  limit: Schema.optional(Schema.String).annotations({
    description: "Present on a daily write limit 429: which limit (checkins, payment_links, cancels, reschedules)."
  })
}).annotations({ identifier: "Problem", title: "Problem details (RFC 9457)" })
export type Problem = typeof Problem.Type

interface ProblemSpec {
  readonly status: number
  readonly slug: string
  readonly title: string
}

export const PROBLEM_TYPES = {
  invalid: { status: 400, slug: "invalid-request", title: "Invalid request" },
  unauthorized: { status: 401, slug: "unauthorized", title: "Unauthorized" },
  forbidden: { status: 403, slug: "missing-scope", title: "Missing scope" },
  notFound: { status: 404, slug: "not-found", title: "Not found, or not yours" },
  methodNotAllowed: { status: 405, slug: "method-not-allowed", title: "Method not allowed" },
  payloadTooLarge: { status: 413, slug: "payload-too-large", title: "Body too large" },
  unsupportedMediaType: { status: 415, slug: "unsupported-media-type", title: "Body is not JSON" },
  rateLimited: { status: 429, slug: "rate-limited", title: "Too many requests" },
  internal: { status: 500, slug: "internal", title: "Internal error" },
  idempotencyInProgress: { status: 409, slug: "idempotency-in-progress", title: "Request with this Idempotency-Key still running" },
  idempotencyMismatch: { status: 422, slug: "idempotency-key-reused", title: "Idempotency-Key used for a different request" },
  notPossible: { status: 422, slug: "not-possible", title: "Not possible" },
  dailyLimitReached: { status: 429, slug: "daily-limit-reached", title: "Daily write limit reached" },
  unavailable: { status: 503, slug: "unavailable", title: "Dependency unavailable" }
} as const satisfies Record<string, ProblemSpec>

const typeUri = (spec: ProblemSpec) => `/api/v1/docs/errors.md#${spec.slug}`

/** Every `detail` is cut to a bounded length (src/http/echo.ts): a last guard for details that quote input. */
const respond = (
  spec: ProblemSpec,
  requestId: string,
  detail: string,
  extra: Partial<Problem> = {},
  headers: Record<string, string> = {}
) =>
  HttpServerResponse.unsafeJson(
    { type: typeUri(spec), title: spec.title, status: spec.status, detail: clipEchoes(detail), request_id: requestId, ...extra },
    { status: spec.status, contentType: PROBLEM_CONTENT_TYPE, headers }
  )

const fieldOf = (path: ReadonlyArray<PropertyKey>) => echo(path.map(String).join("."))

/** Maps one failure (domain error or platform error) to its problem response. */
export const problemFor = (error: unknown, requestId: string, method: string, url: string) => {
  if (error instanceof InvalidRequest) {
    return respond(PROBLEM_TYPES.invalid, requestId, error.detail,
      error.field ? { invalid_params: [{ name: error.field, reason: clipEchoes(error.detail) }] } : {})
  }
  if (error instanceof HttpApiError.HttpApiDecodeError) {
    // One entry per parameter. An optional parameter's union adds "Expected undefined" beside the
    // real rule, and a literal union one issue per member: keep the most specific message.
    const byName = new Map<string, string>()
    for (const issue of error.issues) {
      const name = fieldOf(issue.path) || "body"
      const known = byName.get(name)
      // Schema messages quote what was sent (`actual "…"`): cut, never echoed whole.
      if (known === undefined || known.startsWith("Expected undefined")) byName.set(name, clipEchoes(issue.message))
    }
    const params = [...byName].map(([name, reason]) => ({ name, reason }))
    const detail = params.map((p) => `${p.name}: ${p.reason}`).join("; ") || error.message
    return respond(PROBLEM_TYPES.invalid, requestId, detail, { invalid_params: params })
  }
  if (error instanceof Unauthorized) {
    return respond(PROBLEM_TYPES.unauthorized, requestId, error.detail, {}, {
      "WWW-Authenticate": `Bearer realm="partner-api"`
    })
  }
  if (error instanceof Forbidden) return respond(PROBLEM_TYPES.forbidden, requestId, error.detail, { scope: error.scope })
  if (error instanceof NotFound) return respond(PROBLEM_TYPES.notFound, requestId, error.detail)
  if (error instanceof HttpServerError.RouteNotFound) {
    return respond(PROBLEM_TYPES.notFound, requestId, `no endpoint ${echo(method)} ${quotablePath(url)}`)
  }
  if (error instanceof MethodNotAllowed) {
    return respond(PROBLEM_TYPES.methodNotAllowed, requestId, error.detail, {}, { Allow: error.allow.join(", ") })
  }
  if (error instanceof MalformedBody) {
    return respond(PROBLEM_TYPES.invalid, requestId, error.detail, { invalid_params: [{ name: "body", reason: error.detail }] })
  }
  if (error instanceof BodyTooLarge) return respond(PROBLEM_TYPES.payloadTooLarge, requestId, error.detail)
  if (error instanceof UnsupportedMediaType) return respond(PROBLEM_TYPES.unsupportedMediaType, requestId, error.detail)
  if (error instanceof RateLimited) {
    return respond(PROBLEM_TYPES.rateLimited, requestId, error.detail, { retry_after: error.retryAfterSeconds }, {
      "Retry-After": String(error.retryAfterSeconds)
    })
  }
  if (error instanceof IdempotencyInProgress) return respond(PROBLEM_TYPES.idempotencyInProgress, requestId, error.detail)
  if (error instanceof IdempotencyMismatch) return respond(PROBLEM_TYPES.idempotencyMismatch, requestId, error.detail)
  if (error instanceof NotPossible) return respond(PROBLEM_TYPES.notPossible, requestId, error.detail)
  if (error instanceof DailyLimitReached) {
    return respond(PROBLEM_TYPES.dailyLimitReached, requestId, error.detail, {
      retry_after: error.retryAfterSeconds,
      limit: error.limit
    }, { "Retry-After": String(error.retryAfterSeconds) })
  }
  if (error instanceof Unavailable) return respond(PROBLEM_TYPES.unavailable, requestId, error.detail)
  return undefined
}

/**
 * Runs a partner request: refuses a secret key in the URL, maps every failure to its problem,
 * answers a defect 500 without internals (logged with the request id).
 */
export const answerProblems: ErrorMapping = (app, request, requestId) =>
  urlCarriesSecretKey(request.url)
    ? Effect.succeed(respond(PROBLEM_TYPES.invalid, requestId,
      "a secret key must never be sent in the URL (URLs end up in logs); send it as `Authorization: Bearer ...` and rotate this key"))
    : app.pipe(
      Effect.catchAllCause((cause) => {
        if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
        const failure = Cause.failureOption(cause)
        const mapped = Option.isSome(failure)
          ? problemFor(failure.value, requestId, request.method, request.url)
          : undefined
        if (mapped) return Effect.succeed(mapped)
        return Effect.logError("request failed unexpectedly", cause).pipe(
          Effect.as(respond(PROBLEM_TYPES.internal, requestId, "something went wrong on our side; quote the request_id if it persists"))
        )
      })
    )
