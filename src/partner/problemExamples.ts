/**
 * The OpenAPI examples of the problem bodies (docs only): one failure of each problem type, rendered
 * by the Partner API's own mapping (problem.ts), so an example is exactly what the server sends for
 * it. The story is the one the other examples tell (finance/examples.ts: booking FJX-7K2M9Q).
 */
import {
  DailyLimitReached,
  Forbidden,
  IdempotencyInProgress,
  IdempotencyMismatch,
  InvalidRequest,
  NotFound,
  NotPossible,
  type ProblemType,
  RateLimited,
  Unauthorized,
  Unavailable
} from "../domain/errors.js"
import type { Json } from "../http/openapiSchemas.js"
import { BodyTooLarge, UnsupportedMediaType } from "../http/requestBody.js"
import { requiredScopes } from "./auth/middleware.js"
import { EXAMPLE_BOOKING } from "./finance/examples.js"
import { internalProblem, problemFor, type RenderedProblem } from "./problem.js"

/** A request id as the service issues them. */
export const EXAMPLE_REQUEST_ID = "req_01JDQ8Z6W4M2T7K9R3V5X8Y1B2"

/** Per write, a field it refuses and why, and why the action may not be possible (422). */
const WRITE_FAILURES: Readonly<
  Record<string, { readonly field: string; readonly invalid: string; readonly notPossible?: string }>
> = {
  cancelBooking: {
    field: "reason",
    invalid: "reason must be 3 to 500 characters",
    notPossible: `booking ${EXAMPLE_BOOKING.confirmation_code} has already taken place and cannot be cancelled`
  },
  rescheduleBooking: {
    field: "date",
    invalid: "date must be a real day as YYYY-MM-DD",
    notPossible: "no departure on 2026-10-16 has 3 seats left at the booking's price"
  },
  checkInGuests: {
    field: "present",
    invalid: "present must be at most the booking's 3 participants",
    notPossible: `booking ${EXAMPLE_BOOKING.confirmation_code} is cancelled: nothing to check in`
  },
  createPaymentLink: {
    field: "body",
    invalid: "the body takes no members: amount is not accepted",
    notPossible: `booking ${EXAMPLE_BOOKING.confirmation_code} owes nothing: it is paid in full`
  },
  collectEvent: { field: "key", invalid: "must be a publishable key: pk_widget_ and 24 letters or digits" }
}

/** The daily limit each write counts against (DailyLimitReached's `limit`). */
const DAILY_LIMITS: Readonly<Record<string, string>> = {
  cancelBooking: "cancels",
  rescheduleBooking: "reschedules",
  checkInGuests: "checkins",
  createPaymentLink: "payment_links"
}

/** A query or path parameter of a read and what it refuses. */
const PARAMETER_FAILURES: ReadonlyArray<readonly [string, string]> = [
  ["limit", "limit must be a whole number from 1 to 100"],
  ["date", "date must be a real day as YYYY-MM-DD"],
  ["from", "from must be a real day as YYYY-MM-DD"],
  ["month", "month must be YYYY-MM"],
  ["id", "id is not an id this endpoint takes"],
  ["file", "the link has expired or its signature does not match"]
]

const invalidRequest = (op: Json) => {
  const write = WRITE_FAILURES[op.operationId]
  if (write !== undefined) return new InvalidRequest({ detail: write.invalid, field: write.field })
  const names = new Set((op.parameters ?? []).map((p: Json) => p.name))
  const [field, detail] = PARAMETER_FAILURES.find(([name]) => names.has(name)) ??
    ["partner_id", "partner_id must be a UUID"]
  return new InvalidRequest({ detail, field })
}

/** What the path's id names (404), from the path. */
const notFound = (path: string) =>
  path.includes("/manifest/")
    ? new NotFound({ detail: `manifest row ${EXAMPLE_BOOKING.id} not found, or not yours` })
    : path.includes("/tours/")
    ? new NotFound({ detail: "tour 7c9e6679-7425-40de-944b-e07fc1f90ae7 not found, or not yours" })
    : path.includes("/bookings/")
    ? new NotFound({ detail: `booking ${EXAMPLE_BOOKING.id} not found, or not yours` })
    : new NotFound({ detail: "partner_id 5d1e2c3b-7a8f-4e6d-9c0b-1a2b3c4d5e6f is none of your key's operators" })

const failuresOf = (method: string, path: string, op: Json): ReadonlyArray<unknown> => {
  const scope = requiredScopes.get(`${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ":$1")}`) ?? "bookings:read"
  const write = WRITE_FAILURES[op.operationId]
  return [
    invalidRequest(op),
    new Unauthorized({ detail: "the API key is missing, unknown, revoked or expired" }),
    new Forbidden({ detail: `this key lacks the scope ${scope}`, scope }),
    notFound(path),
    new IdempotencyInProgress({
      detail: "a request with this Idempotency-Key is still running; retry with the same key in a moment"
    }),
    new BodyTooLarge({
      detail: "the body is larger than 65536 bytes (64 KiB), the most this endpoint takes",
      limitBytes: 65536
    }),
    new UnsupportedMediaType({ detail: "send the body as Content-Type: application/json" }),
    new IdempotencyMismatch({
      detail: "this Idempotency-Key was first used for a different request; use a new key for a new request"
    }),
    new NotPossible({ detail: write?.notPossible ?? "the action is not possible for this booking now" }),
    new RateLimited({
      detail: "300 requests per minute used up for this key; retry in 12 seconds",
      retryAfterSeconds: 12
    }),
    new DailyLimitReached({
      detail: `this key's daily ${DAILY_LIMITS[op.operationId] ?? "cancels"} limit is used up until midnight UTC`,
      limit: DAILY_LIMITS[op.operationId] ?? "cancels",
      retryAfterSeconds: 32400
    }),
    new Unavailable({
      detail: "the booking system did not answer; nothing was changed. Retry with the same Idempotency-Key"
    })
  ]
}

const INTERNAL_PROBLEM = internalProblem(EXAMPLE_REQUEST_ID)

/**
 * The media type `examples` of an error answer of the operation `method path`: one per problem type
 * it may carry, named by slug.
 */
export const problemExamples = (types: ReadonlyArray<ProblemType>, method: string, path: string, op: Json) => {
  const bySlug = new Map<string, RenderedProblem>([[INTERNAL_PROBLEM.type.slug, INTERNAL_PROBLEM]])
  for (const failure of failuresOf(method, path, op)) {
    const rendered = problemFor(failure, EXAMPLE_REQUEST_ID, method.toUpperCase(), path)
    if (rendered !== undefined && !bySlug.has(rendered.type.slug)) bySlug.set(rendered.type.slug, rendered)
  }
  return Object.fromEntries(
    types.flatMap((type) => {
      const problem = bySlug.get(type.slug)
      return problem === undefined ? [] : [[type.slug, { summary: type.title, value: problem.body }]]
    })
  )
}
