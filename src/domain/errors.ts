/**
 * Every failure a client can see, as tagged errors. The HTTP layer maps them in one place
 * (src/http/problem.ts) to RFC 9457 problem details; the status annotations declare them
 * on the endpoints so the OpenAPI document lists every status.
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { Schema } from "effect"

export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()(
  "InvalidRequest",
  {
    detail: Schema.String,
    /** The offending parameter or body field, when there is one. */
    field: Schema.optional(Schema.String)
  },
  HttpApiSchema.annotations({ status: 400, description: "Invalid request: a parameter or the body breaks a rule." })
) {}

export class Unauthorized extends Schema.TaggedError<Unauthorized>()(
  "Unauthorized",
  { detail: Schema.String },
  HttpApiSchema.annotations({
    status: 401,
    description: "Missing, malformed, unknown, expired or revoked key, or no operator left for the key."
  })
) {}

export class Forbidden extends Schema.TaggedError<Forbidden>()(
  "Forbidden",
  { detail: Schema.String, scope: Schema.String },
  HttpApiSchema.annotations({ status: 403, description: "The key lacks the scope this endpoint needs." })
) {}

export class NotFound extends Schema.TaggedError<NotFound>()(
  "NotFound",
  { detail: Schema.String },
  HttpApiSchema.annotations({
    status: 404,
    description: "Not found, or not yours (also a `partner_id` outside the key's operators)."
  })
) {}

export class RateLimited extends Schema.TaggedError<RateLimited>()(
  "RateLimited",
  { detail: Schema.String, retryAfterSeconds: Schema.Int },
  HttpApiSchema.annotations({
    status: 429,
    description: "Rate limit reached. `Retry-After` says how many seconds to wait."
  })
) {}

/** Writes: an earlier request with the same Idempotency-Key is still running. */
export class IdempotencyInProgress extends Schema.TaggedError<IdempotencyInProgress>()(
  "IdempotencyInProgress",
  { detail: Schema.String },
  HttpApiSchema.annotations({
    status: 409,
    description: "An earlier request with this Idempotency-Key is still running; retry shortly with the same key."
  })
) {}

/** Writes: the Idempotency-Key was first used for a different request (method, path or body). */
export class IdempotencyMismatch extends Schema.TaggedError<IdempotencyMismatch>()(
  "IdempotencyMismatch",
  { detail: Schema.String },
  HttpApiSchema.annotations({
    status: 422,
    description: "This Idempotency-Key was used for a different request within 24 hours; use a new key."
  })
) {}

/** Writes: the action is not possible for this booking or manifest row in its current state. */
export class NotPossible extends Schema.TaggedError<NotPossible>()(
  "NotPossible",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 422, description: "The action is not possible for this booking or row." })
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
  HttpApiSchema.annotations({
    status: 429,
    description: "Daily write limit reached; `Retry-After` counts the seconds to the next UTC midnight."
  })
) {}

/** Writes: a system the action depends on did not answer; retry with the same Idempotency-Key. */
export class Unavailable extends Schema.TaggedError<Unavailable>()(
  "Unavailable",
  { detail: Schema.String },
  HttpApiSchema.annotations({
    status: 503,
    description: "A system the action depends on did not answer; nothing was kept. Retry with the same Idempotency-Key."
  })
) {}

export const notYours = (what: string) => new NotFound({ detail: `${what} not found, or not yours` })
