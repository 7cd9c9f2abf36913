/**
 * Every failure a Partner API client can see, as tagged errors. Each class says once how it is
 * shown (`problemType`): its HTTP status and OpenAPI description (declared on the endpoints, so the
 * OpenAPI document lists every status), its problem `type` slug and title. The partner API maps them
 * in one place (src/partner/problem.ts) to RFC 9457 problem details, reading all four from the class.
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { Option, Schema, SchemaAST } from "effect"

/**
 * How a failure is shown to a Partner API client: the HTTP status, the problem `type` slug (the
 * anchor of its section in docs/api/errors.md), the problem `title` (fixed per type) and the
 * description the OpenAPI document gives the answer.
 */
export interface ProblemType {
  readonly status: number
  readonly slug: string
  readonly title: string
  readonly description: string
}

const ProblemTypeId: unique symbol = Symbol.for("svc/domain/errors/ProblemType")

/** The annotations of an error class that is shown as `type` (status and description for HttpApi too). */
export const problemType = <A>(type: ProblemType): Schema.Annotations.Schema<A> => ({
  ...HttpApiSchema.annotations<A>({ status: type.status, description: type.description }),
  [ProblemTypeId]: type
})

/** The problem type of a schema (an error class, or a member of an endpoint's errors), if it has one. */
export const problemTypeOfAst = (ast: SchemaAST.AST): ProblemType | undefined =>
  Option.getOrUndefined(
    SchemaAST.getAnnotation<ProblemType>(ast, ProblemTypeId).pipe(
      Option.orElse(() =>
        ast._tag === "Transformation" ? SchemaAST.getAnnotation<ProblemType>(ast.to, ProblemTypeId) : Option.none()
      )
    )
  )

/** The class of an error when it is a schema class (Schema.TaggedError), else undefined. */
const classOf = (error: unknown): Schema.Schema.Any | undefined => {
  const cls: unknown = typeof error === "object" && error !== null ? error.constructor : undefined
  return Schema.isSchema(cls) ? cls : undefined
}

/** The problem type of an error, read from its class. */
export const problemTypeOf = (error: unknown): ProblemType | undefined => {
  const cls = classOf(error)
  return cls === undefined ? undefined : problemTypeOfAst(cls.ast)
}

/** The problem type written on an error class; a class without one is a programming error. */
export const problemTypeOfClass = (cls: Schema.Schema.Any): ProblemType => {
  const type = problemTypeOfAst(cls.ast)
  if (type === undefined) throw new Error(`${String(cls)} has no problem type (problemType annotations)`)
  return type
}

/** The HTTP status written on an error's class (HttpApiSchema annotations; 500 without one, as HttpApi does). */
export const statusOf = (error: unknown): number => {
  const cls = classOf(error)
  return cls === undefined ? 500 : HttpApiSchema.getStatusError(cls)
}

export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()(
  "InvalidRequest",
  {
    detail: Schema.String,
    /** The offending parameter or body field, when there is one. */
    field: Schema.optional(Schema.String)
  },
  problemType({
    status: 400,
    slug: "invalid-request",
    title: "Invalid request",
    description: "A parameter or the body breaks a rule (`invalid_params` names them)."
  })
) {}

export class Unauthorized extends Schema.TaggedError<Unauthorized>()(
  "Unauthorized",
  { detail: Schema.String },
  problemType({
    status: 401,
    slug: "unauthorized",
    title: "Unauthorized",
    description: "Missing, malformed, unknown, expired or revoked key, or no operator left for the key."
  })
) {}

export class Forbidden extends Schema.TaggedError<Forbidden>()(
  "Forbidden",
  { detail: Schema.String, scope: Schema.String },
  problemType({
    status: 403,
    slug: "missing-scope",
    title: "Missing scope",
    description: "The key lacks the scope this endpoint needs (`scope` names it)."
  })
) {}

export class NotFound extends Schema.TaggedError<NotFound>()(
  "NotFound",
  { detail: Schema.String },
  problemType({
    status: 404,
    slug: "not-found",
    title: "Not found, or not yours",
    description: "Not found, or not yours (also a `partner_id` outside the key's operators)."
  })
) {}

export class RateLimited extends Schema.TaggedError<RateLimited>()(
  "RateLimited",
  { detail: Schema.String, retryAfterSeconds: Schema.Int },
  problemType({
    status: 429,
    slug: "rate-limited",
    title: "Too many requests",
    description: "The key's rate limit is reached; `Retry-After` says how many seconds to wait."
  })
) {}

/** Writes: an earlier request with the same Idempotency-Key is still running. */
export class IdempotencyInProgress extends Schema.TaggedError<IdempotencyInProgress>()(
  "IdempotencyInProgress",
  { detail: Schema.String },
  problemType({
    status: 409,
    slug: "idempotency-in-progress",
    title: "Request with this Idempotency-Key still running",
    description: "An earlier request with this Idempotency-Key is still running; retry shortly with the same key."
  })
) {}

/** Writes: the Idempotency-Key was first used for a different request (method, path or body). */
export class IdempotencyMismatch extends Schema.TaggedError<IdempotencyMismatch>()(
  "IdempotencyMismatch",
  { detail: Schema.String },
  problemType({
    status: 422,
    slug: "idempotency-key-reused",
    title: "Idempotency-Key used for a different request",
    description: "This Idempotency-Key was used for a different request within 24 hours; use a new key."
  })
) {}

/** Writes: the action is not possible for this booking or manifest row in its current state. */
export class NotPossible extends Schema.TaggedError<NotPossible>()(
  "NotPossible",
  { detail: Schema.String },
  problemType({
    status: 422,
    slug: "not-possible",
    title: "Not possible",
    description: "The action is not possible for this booking or row."
  })
) {}

/** Writes: the key's daily limit for this kind of write is used up until the next UTC midnight. */
export class DailyLimitReached extends Schema.TaggedError<DailyLimitReached>()(
  "DailyLimitReached",
  {
    detail: Schema.String,
    /** Which limit: checkins, payment_links, cancels or reschedules. */
    limit: Schema.String,
    retryAfterSeconds: Schema.Int
  },
  problemType({
    status: 429,
    slug: "daily-limit-reached",
    title: "Daily write limit reached",
    description:
      "The key's daily limit for this write is reached (`limit` names it); `Retry-After` counts the seconds " +
      "to the next UTC midnight."
  })
) {}

/** Writes: a system the action depends on did not answer; retry with the same Idempotency-Key. */
export class Unavailable extends Schema.TaggedError<Unavailable>()(
  "Unavailable",
  { detail: Schema.String },
  problemType({
    status: 503,
    slug: "unavailable",
    title: "Dependency unavailable",
    description: "A system the request depends on did not answer; nothing was kept. Retry shortly (a write with the " +
      "same Idempotency-Key)."
  })
) {}

export const notYours = (what: string) => new NotFound({ detail: `${what} not found, or not yours` })
