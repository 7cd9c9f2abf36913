/**
 * The emails of a cancel (templates `booking_cancelled_guest` / `_team`, src/email/templates.ts):
 * built from the cancelled booking, its change and what its refund came to when step 4 ends the
 * booking, enqueued in the same transaction. Their dedupe keys name the booking (a booking is
 * cancelled once). Pure: no I/O.
 */
import type { EnqueueRequest } from "../../email/Outbox.js"
import { outboxKeys, teamLocale } from "../../email/rules.js"
import { changedBy, guestHeading, tourNameOf } from "../bookingChanges/changedBooking.js"
import type { CancelledBooking } from "./CancelsRepo.js"
import type { RefundOutcome } from "./rules.js"

/** What the emails say of the money: refunded, still on its way (`processing`), or nothing to return. */
export const emailRefund = (outcome: RefundOutcome, amountMinor: number, currency: string) =>
  outcome === "none"
    ? { outcome: "none" as const }
    : {
      outcome: outcome === "refunded" ? "refunded" as const : "processing" as const,
      amount: { amountMinor, currency }
    }

export interface CancelEmailFacts {
  readonly bookingId: string
  readonly booking: CancelledBooking
  /** The reason given with the cancel. */
  readonly reason: string | null
  readonly refund: { readonly outcome: RefundOutcome; readonly amountMinor: number; readonly currency: string }
  /** The operator's team's addresses. */
  readonly team: ReadonlyArray<string>
}

/** The guest's email (when the booking has an address) and the team's (when it has members). */
export const cancelEmails = (
  { booking: b, bookingId, reason, refund: r, team }: CancelEmailFacts
): ReadonlyArray<EnqueueRequest> => {
  const refund = emailRefund(r.outcome, r.amountMinor, r.currency)
  // A cancel is refused before it begins when the booking has no departure day.
  const departure = { date: b.experience_date!, startTime: b.start_time }
  const emails: Array<EnqueueRequest> = []
  if (b.guest_email) {
    emails.push({
      dedupeKey: outboxKeys.cancelled(bookingId, "guest"),
      to: b.guest_email,
      locale: "en",
      operatorId: b.operator_id,
      bookingId,
      template: "booking_cancelled_guest",
      data: { ...guestHeading(b), departure, participants: b.participants, refund }
    })
  }
  if (team.length > 0) {
    emails.push({
      dedupeKey: outboxKeys.cancelled(bookingId, "team"),
      to: team,
      locale: teamLocale(b.operator_timezone),
      operatorId: b.operator_id,
      bookingId,
      template: "booking_cancelled_team",
      data: {
        operatorName: b.operator_name,
        tourName: tourNameOf(b),
        bookingReference: b.confirmation_code,
        departure,
        participants: b.participants,
        guestName: b.guest_name,
        reason: reason ?? "(none given)",
        cancelledBy: changedBy(b),
        refund
      }
    })
  }
  return emails
}
