/**
 * Every failure a client can see, as tagged errors. The HTTP layer maps them in one place
 * (src/http/problem.ts) to RFC 9457 problem details; the status annotations declare them
 * on the endpoints so the OpenAPI document lists every status.
 */
import { HttpApiSchema } from "@effect/platform"
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

export const notYours = (what: string) => new NotFound({ detail: `${what} not found, or not yours` })
