/**
 * Quickbook failures (spec §7). Each class fixes the HTTP status and its OpenAPI description (the
 * codes it answers with and when); `code` is what the client branches on, and CLERK_MESSAGES
 * (./clerkMessages.ts) what the clerk reads for it; `detail` is for our logs only (the body carries `code`, the clerk
 * message in the clerk's language and, where known, the sale `reference`).
 * src/quickbook/errorMapping.ts turns them into responses, in one place, reading the status from
 * the class.
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { Schema } from "effect"

export const QuickbookCode = Schema.Literal(
  "terminal_not_registered",
  "invalid_request",
  "unauthorized",
  "tour_not_sellable_here",
  "not_found",
  "sold_out",
  "price_changed",
  "payment_mismatch",
  "duplicate_payment",
  "provider_refused",
  "hold_expired",
  "hold_not_supported",
  "payment_not_found",
  "phone_required",
  "phone_rejected",
  "rate_limited",
  "provider_unavailable",
  "internal"
)
export type QuickbookCode = typeof QuickbookCode.Type

const fields = {
  code: QuickbookCode,
  detail: Schema.String,
  reference: Schema.optional(Schema.String)
}

/**
 * `field`: the parameter or body field at fault (`start.date`), named in the clerk message;
 * `variant`: a more precise clerk message (CLERK_MESSAGE_VARIANTS).
 */
export class QbBadRequest extends Schema.TaggedError<QbBadRequest>()(
  "QbBadRequest",
  {
    ...fields,
    field: Schema.optional(Schema.String),
    variant: Schema.optional(Schema.Literal("too_many_guest_entries", "too_many_guests"))
  },
  HttpApiSchema.annotations({
    status: 400,
    description:
      "`terminal_not_registered`: the Quickbook-Terminal header is missing or malformed; `invalid_request`: a " +
      "parameter or the body does not validate."
  })
) {}
export class QbUnauthorized extends Schema.TaggedError<QbUnauthorized>()(
  "QbUnauthorized",
  fields,
  HttpApiSchema.annotations({
    status: 401,
    description: "`unauthorized`: key missing, invalid, expired, revoked, not a quickbook key, or sent in the URL."
  })
) {}
/** `variant`: a more precise clerk message for the same code (CLERK_MESSAGE_VARIANTS). */
export class QbForbidden extends Schema.TaggedError<QbForbidden>()(
  "QbForbidden",
  { ...fields, variant: Schema.optional(Schema.Literal("test_sale", "live_sale")) },
  HttpApiSchema.annotations({
    status: 403,
    description: "`terminal_not_registered`: the terminal is not registered, not active or not bound to the key; " +
      "`tour_not_sellable_here`: the terminal cannot sell or charge for the tour (not sold on its operator's sites; no " +
      "merchant or card terminal to charge with; or a test key on live accounts, or a live key on sandbox accounts), or " +
      "the sale was quoted with a key of the other mode (test or live; the clerk message says which)."
  })
) {}
/** `variant`: a more precise clerk message for the same code (CLERK_MESSAGE_VARIANTS). */
export class QbNotFound extends Schema.TaggedError<QbNotFound>()(
  "QbNotFound",
  { ...fields, variant: Schema.optional(Schema.Literal("no_ticket_yet")) },
  HttpApiSchema.annotations({
    status: 404,
    description: "`not_found`: no such sale or hold for this terminal (an unknown or malformed reference, or another " +
      "terminal's); on the ticket endpoints also a sale not confirmed (no ticket yet, with its own clerk message); for a " +
      "PDF link also a signature that does not verify or a link that has lapsed."
  })
) {}
export class QbConflict extends Schema.TaggedError<QbConflict>()(
  "QbConflict",
  fields,
  HttpApiSchema.annotations({
    status: 409,
    description:
      "`sold_out`: not enough seats on the departure; `price_changed`: the live price differs from the quote " +
      "past `validUntil`, or a guest type the tour does not sell."
  })
) {}
export class QbGone extends Schema.TaggedError<QbGone>()(
  "QbGone",
  fields,
  HttpApiSchema.annotations({
    status: 410,
    description: "`hold_expired`: the quote is past `validUntil`, or the hold ran out; make a new quote."
  })
) {}
export class QbUnprocessable extends Schema.TaggedError<QbUnprocessable>()(
  "QbUnprocessable",
  fields,
  HttpApiSchema.annotations({
    status: 422,
    description:
      "`hold_not_supported` (POST /reserve): the tour's booking system cannot hold seats (continue without a " +
      "hold); `payment_not_found` (POST /book): the provider does not show the payment completed (nothing was booked)."
  })
) {}
/** `variant`: what did not answer when it is not the booking system (CLERK_MESSAGE_VARIANTS). */
export class QbUnavailable extends Schema.TaggedError<QbUnavailable>()(
  "QbUnavailable",
  { ...fields, variant: Schema.optional(Schema.Literal("payment_provider", "still_processing")) },
  HttpApiSchema.annotations({
    status: 503,
    description:
      "`provider_unavailable`: the operator's booking system (or, on POST /book, the payment provider, or on " +
      "any endpoint the service's own database) did not answer in time, or the same payment is still being " +
      "processed; try again shortly (`Retry-After`)."
  })
) {}
export class QbRateLimited extends Schema.TaggedError<QbRateLimited>()(
  "QbRateLimited",
  { ...fields, retryAfterSeconds: Schema.Int },
  HttpApiSchema.annotations({
    status: 429,
    description: "`rate_limited`: this terminal's budget for the endpoint is spent; `Retry-After` says when to retry."
  })
) {}

export type QuickbookFailure =
  | QbBadRequest
  | QbUnauthorized
  | QbForbidden
  | QbNotFound
  | QbConflict
  | QbGone
  | QbUnprocessable
  | QbUnavailable
  | QbRateLimited

export const unauthorized = (detail: string) => new QbUnauthorized({ code: "unauthorized", detail })
