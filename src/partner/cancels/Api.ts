/** The `cancels` group of the Partner API: cancel a booking with a full refund (a write). */
import { HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { PartnerAuth, RequiredScope } from "../auth/security.js"
import { writeOnId } from "../writes/writeEndpoint.js"
import { CANCEL_REASON_MAX, CANCEL_REASON_MIN } from "./rules.js"

/**
 * 3 to 500 characters as sent (what the document says) and once trimmed (what is kept): surrounding
 * spaces count against the maximum and not towards the minimum.
 */
const CancelReason = Schema.String.pipe(
  Schema.minLength(CANCEL_REASON_MIN, {
    message: () => `must be ${CANCEL_REASON_MIN} to ${CANCEL_REASON_MAX} characters`
  }),
  Schema.maxLength(CANCEL_REASON_MAX, {
    message: () => `must be ${CANCEL_REASON_MIN} to ${CANCEL_REASON_MAX} characters`
  }),
  Schema.compose(Schema.Trim),
  Schema.minLength(CANCEL_REASON_MIN, {
    message: () => `must be ${CANCEL_REASON_MIN} to ${CANCEL_REASON_MAX} characters (not counting surrounding spaces)`
  })
)

export const CancelRequest = Schema.Struct({
  reason: Schema.propertySignature(CancelReason).annotations({
    description:
      `Why the booking is cancelled, ${CANCEL_REASON_MIN} to ${CANCEL_REASON_MAX} characters; kept on the booking and shown to the operator's team.`,
    missingMessage: () =>
      `is required: why the booking is cancelled, ${CANCEL_REASON_MIN} to ${CANCEL_REASON_MAX} characters`
  })
}).annotations({ identifier: "CancelRequest", message: () => "must be a JSON object with `reason`" })

export const CancelResult = Schema.Struct({
  id: Schema.String.annotations({ description: "The booking id." }),
  status: Schema.Literal("CONFIRMED", "CANCELLED", "REFUNDED").annotations({
    description:
      "REFUNDED: the provider confirmed the refund. CANCELLED: nothing needed returning, or a void is still " +
      "settling. CONFIRMED (with `refund.outcome` pending): seats were released but the refund did not complete; the " +
      "service is alerted and keeps finishing it."
  }),
  already_cancelled: Schema.Boolean.annotations({
    description: "true when the booking was cancelled before: nothing changed, not counted against the daily limit."
  }),
  refund: Schema.Struct({
    outcome: Schema.Literal("refunded", "none", "pending").annotations({
      description:
        "refunded: returned and confirmed; none: nothing had been paid; pending: a refund (or void) still on its way."
    }),
    amount_minor: Schema.Int.annotations({
      description: "What the guest gets back (the whole price, or the reservation fee of an unpaid pay-later booking)."
    }),
    currency: Schema.String.annotations({ description: "ISO 4217" })
  })
}).annotations({ identifier: "CancelResult" })

export class CancelsGroup extends HttpApiGroup.make("cancels")
  .annotate(OpenApi.Title, "Cancellation")
  .annotate(
    OpenApi.Description,
    "Cancel a booking with a full refund. A write: `Idempotency-Key`, daily limit, audited; cannot be undone."
  )
  .add(
    writeOnId("cancel", "/bookings/:id/cancel")
      .setPayload(CancelRequest)
      .addSuccess(CancelResult)
      .annotateContext(OpenApi.annotations({
        identifier: "cancelBooking",
        summary: "Cancel a booking with a full refund",
        description:
          "Scope `bookings.cancel:write`; header `Idempotency-Key` required. Seats are released in the booking system " +
          "first (503 when it does not answer: nothing changed; retry with the same key), then every payment is " +
          "returned in full: voided the same UTC day before 23:00 UTC, refunded otherwise (an unpaid pay-later booking " +
          "returns its reservation fee). The booking is marked cancelled, its commission voided, guest and team " +
          "emailed. No free-cancellation window or departure check applies; no amount is taken; cannot be undone. " +
          "A booking cancelled before answers 200 with `already_cancelled` true and does not count against the daily " +
          "`cancels` limit. 404 when the booking is not one of the key's operators'; 422 when the service cannot " +
          "refund it (no payment on record for what was paid, no payment account) or the booking system refuses. " +
          "409 while another cancel or reschedule of the booking is being applied, or when one was applied while " +
          "this request was being checked (nothing changed; retry with the same key)."
      }))
  )
  .annotate(RequiredScope, "bookings.cancel:write")
  .middleware(PartnerAuth)
  .prefix("/api/v1")
{}
