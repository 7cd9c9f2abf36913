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
import { BodyTooLarge, UnsupportedMediaType } from "../http/requestBody.js"
import { EXAMPLE_BOOKING } from "./finance/examples.js"
import { internalProblem, problemFor, type RenderedProblem } from "./problem.js"

/** A request id as the service issues them. */
export const EXAMPLE_REQUEST_ID = "req_01JDQ8Z6W4M2T7K9R3V5X8Y1B2"

const BOOKING_PATH = `/api/v1/bookings/${EXAMPLE_BOOKING.id}/cancel`

const FAILURES: ReadonlyArray<unknown> = [
  new InvalidRequest({ detail: "reason must be 3 to 500 characters", field: "reason" }),
  new Unauthorized({ detail: "the API key is missing, unknown, revoked or expired" }),
  new Forbidden({ detail: "this key lacks the scope bookings.cancel:write", scope: "bookings.cancel:write" }),
  new NotFound({ detail: `booking ${EXAMPLE_BOOKING.id} not found, or not yours` }),
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
  new NotPossible({
    detail: `booking ${EXAMPLE_BOOKING.confirmation_code} is already checked in and cannot be cancelled`
  }),
  new RateLimited({
    detail: "300 requests per minute used up for this key; retry in 12 seconds",
    retryAfterSeconds: 12
  }),
  new DailyLimitReached({
    detail: "this key's 200 cancellations for today (UTC) are used up; the limit resets at midnight UTC",
    limit: "cancels",
    retryAfterSeconds: 32400
  }),
  new Unavailable({
    detail: "the booking system did not answer; nothing was changed. Retry with the same Idempotency-Key"
  })
]

const bySlug = new Map<string, RenderedProblem>()
for (const failure of FAILURES) {
  const rendered = problemFor(failure, EXAMPLE_REQUEST_ID, "POST", BOOKING_PATH)
  if (rendered !== undefined && !bySlug.has(rendered.type.slug)) bySlug.set(rendered.type.slug, rendered)
}
const internal = internalProblem(EXAMPLE_REQUEST_ID)
bySlug.set(internal.type.slug, internal)

/** The media type `examples` of an error answer: one per problem type it may carry, named by slug. */
export const problemExamples = (types: ReadonlyArray<ProblemType>) =>
  Object.fromEntries(
    types.flatMap((type) => {
      const problem = bySlug.get(type.slug)
      return problem === undefined ? [] : [[type.slug, { summary: type.title, value: problem.body }]]
    })
  )
