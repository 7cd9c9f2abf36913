/**
 * The Partner API's error mapping, the one place where its failures become RFC 9457 problem details
 * (application/problem+json): domain errors, request decoding errors, bodies refused
 * (src/http/requestBody.ts), unknown routes and methods (src/http/routing.ts) and defects. Status,
 * `type` slug and title come from the error's class (`problemType` in src/domain/errors.ts); only
 * what a problem adds for its kind (`invalid_params`, `scope`, `retry_after`, headers) is here.
 * Installed by the partner API alone (src/partner/Http.ts), inside the middleware every API shares
 * (src/http/apiApp.ts: request id, bodies, 405, access log).
 */
import { HttpApiError, HttpServerError, HttpServerResponse } from "@effect/platform"
import { Cause, Effect, Option, Predicate, Schema } from "effect"
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnreachable } from "../db/unreachable.js"
import {
  DailyLimitReached,
  Forbidden,
  IdempotencyInProgress,
  IdempotencyMismatch,
  InvalidRequest,
  NotFound,
  NotPossible,
  type ProblemType,
  problemTypeOf,
  problemTypeOfClass,
  RateLimited,
  Unauthorized,
  Unavailable
} from "../domain/errors.js"
import type { ErrorMapping } from "../http/apiApp.js"
import { clipEchoes, echo } from "../http/echo.js"
import { BodyTooLarge, MalformedBody, UnsupportedMediaType } from "../http/requestBody.js"
import { MethodNotAllowed, quotablePath } from "../http/routing.js"
import { urlCarriesSecretKey } from "./auth/apiKey.js"

export const PROBLEM_CONTENT_TYPE = "application/problem+json"

/** Problem body as documented in the OpenAPI document (components.schemas.Problem). */
export const Problem = Schema.Struct({
  type: Schema.String.annotations({
    description: "URI reference naming the problem type (see /api/v1/docs/errors.md)."
  }),
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
  retry_after: Schema.optional(Schema.Int).annotations({
    description: "Present on 429, and on a 503 that says when to retry: seconds to wait (as `Retry-After`)."
  }),
  limit: Schema.optional(Schema.String).annotations({
    description: "Present on a daily write limit 429: which limit (checkins, payment_links, cancels, reschedules)."
  })
}).annotations({ identifier: "Problem", title: "Problem details (RFC 9457)" })
export type Problem = typeof Problem.Type

/** A defect: the one problem type without an error class (nothing about it is the client's). */
export const INTERNAL: ProblemType = {
  status: 500,
  slug: "internal",
  title: "Internal error",
  description: "Unexpected failure on our side; quote `request_id`."
}

/** How a request that does not decode (HttpApi's own 400) is shown: as InvalidRequest. */
export const DECODE_ERROR = problemTypeOfClass(InvalidRequest)

/** An unknown path (the router's RouteNotFound) is shown as NotFound. */
const NO_ROUTE = problemTypeOfClass(NotFound)

/** Every problem type the partner API answers; docs/api/errors.md has a row and a section for each. */
export const PROBLEM_TYPES: ReadonlyArray<ProblemType> = [
  ...[
    InvalidRequest,
    MalformedBody,
    Unauthorized,
    Forbidden,
    NotFound,
    MethodNotAllowed,
    IdempotencyInProgress,
    BodyTooLarge,
    UnsupportedMediaType,
    IdempotencyMismatch,
    NotPossible,
    RateLimited,
    DailyLimitReached,
    Unavailable
  ].map(problemTypeOfClass),
  INTERNAL
]

const typeUri = (type: ProblemType) => `/api/v1/docs/errors.md#${type.slug}`

/** A problem as answered: its type, its body, and the headers that go with it. */
export interface RenderedProblem {
  readonly type: ProblemType
  readonly body: Problem
  readonly headers: Record<string, string>
}

/** Every `detail` is cut to a bounded length (src/http/echo.ts): a last guard for details that quote input. */
const render = (
  type: ProblemType,
  requestId: string,
  detail: string,
  extra: Partial<Problem> = {},
  headers: Record<string, string> = {}
): RenderedProblem => ({
  type,
  body: {
    type: typeUri(type),
    title: type.title,
    status: type.status,
    detail: clipEchoes(detail),
    request_id: requestId,
    ...extra
  },
  headers
})

export const problemResponse = (problem: RenderedProblem) =>
  HttpServerResponse.unsafeJson(problem.body, {
    status: problem.type.status,
    contentType: PROBLEM_CONTENT_TYPE,
    headers: problem.headers
  })

const fieldOf = (path: ReadonlyArray<PropertyKey>) => echo(path.map(String).join("."))

/** What a problem adds for its kind of error: parameters at fault, the scope, when to retry, headers. */
const extrasOf = (error: unknown): readonly [Partial<Problem>, Record<string, string>] => {
  if (error instanceof InvalidRequest) {
    return [error.field ? { invalid_params: [{ name: error.field, reason: clipEchoes(error.detail) }] } : {}, {}]
  }
  if (error instanceof MalformedBody) return [{ invalid_params: [{ name: "body", reason: error.detail }] }, {}]
  if (error instanceof Unauthorized) return [{}, { "WWW-Authenticate": `Bearer realm="partner-api"` }]
  if (error instanceof Forbidden) return [{ scope: error.scope }, {}]
  if (error instanceof MethodNotAllowed) return [{}, { Allow: error.allow.join(", ") }]
  if (error instanceof RateLimited) {
    return [{ retry_after: error.retryAfterSeconds }, { "Retry-After": String(error.retryAfterSeconds) }]
  }
  if (error instanceof DailyLimitReached) {
    return [
      { retry_after: error.retryAfterSeconds, limit: error.limit },
      { "Retry-After": String(error.retryAfterSeconds) }
    ]
  }
  return [{}, {}]
}

/**
 * The problem one failure (a domain error or a platform error) is shown as; undefined for a failure
 * that is not a client's (answered as `internal`).
 */
export const problemFor = (
  error: unknown,
  requestId: string,
  method: string,
  url: string
): RenderedProblem | undefined => {
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
    return render(DECODE_ERROR, requestId, detail, { invalid_params: params })
  }
  if (error instanceof HttpServerError.RouteNotFound) {
    return render(NO_ROUTE, requestId, `no endpoint ${echo(method)} ${quotablePath(url)}`)
  }
  const type = problemTypeOf(error)
  if (type === undefined || !Predicate.hasProperty(error, "detail") || typeof error.detail !== "string") {
    return undefined
  }
  const [extra, headers] = extrasOf(error)
  return render(type, requestId, error.detail, extra, headers)
}

/** The database did not answer (src/db/unreachable.ts): the 503 `unavailable` problem, with `Retry-After`. */
export const databaseUnavailableProblem = (requestId: string) =>
  render(
    problemTypeOfClass(Unavailable),
    requestId,
    "the service's database did not answer; nothing was kept. Retry shortly (a write with the same Idempotency-Key)",
    { retry_after: DATABASE_RETRY_AFTER_SECONDS },
    { "Retry-After": String(DATABASE_RETRY_AFTER_SECONDS) }
  )

/**
 * The problem a failed request's cause is shown as: its failure's, or 503 when the database did not
 * answer (a defect at the repository edge, or a failure); undefined for a defect (answered `internal`).
 */
export const problemForCause = (
  cause: Cause.Cause<unknown>,
  requestId: string,
  method: string,
  url: string
): RenderedProblem | undefined => {
  const failure = Cause.failureOption(cause)
  const mapped = Option.isSome(failure) ? problemFor(failure.value, requestId, method, url) : undefined
  return mapped ?? (isDatabaseUnreachable(cause) ? databaseUnavailableProblem(requestId) : undefined)
}

/** The `internal` problem of a defect: nothing about it is the client's. */
export const internalProblem = (requestId: string) =>
  render(INTERNAL, requestId, "something went wrong on our side; quote the request_id if it persists")

/**
 * Runs a partner request: refuses a secret key in the URL, maps every failure to its problem,
 * answers a defect 500 without internals (logged with the request id).
 */
export const answerProblems: ErrorMapping = (app, request, requestId) =>
  urlCarriesSecretKey(request.url)
    ? Effect.succeed(
      problemResponse(
        render(
          DECODE_ERROR,
          requestId,
          "a secret key must never be sent in the URL (URLs end up in logs); send it as `Authorization: Bearer ...` and rotate this key"
        )
      )
    )
    : app.pipe(
      Effect.catchAllCause((cause) => {
        if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
        const mapped = problemForCause(cause, requestId, request.method, request.url)
        if (mapped) {
          // A defect answered 503 is the database not answering: worth a line, not an alert per request.
          return Cause.isDie(cause)
            ? Effect.logWarning("database did not answer", cause).pipe(Effect.as(problemResponse(mapped)))
            : Effect.succeed(problemResponse(mapped))
        }
        return Effect.logError("request failed unexpectedly", cause).pipe(
          Effect.as(problemResponse(internalProblem(requestId)))
        )
      })
    )
