/**
 * The emails of a reschedule (templates `booking_rescheduled_guest` / `_team`, src/email/templates.ts):
 * built from the moved booking and its change when step 3 records the move, enqueued in the same
 * transaction. Their dedupe keys name the change, so a retry or a recovery enqueues nothing new and
 * a later reschedule of the same booking emails again. Pure: no I/O.
 */
import type { EnqueueRequest } from "../../email/Outbox.js"
import { outboxKeys, teamLocale } from "../../email/rules.js"
import type { RescheduleChange } from "../bookingChanges/BookingChangesRepo.js"
import { changedBy, guestHeading, tourNameOf } from "../bookingChanges/changedBooking.js"
import type { MovedBooking } from "./ReschedulesRepo.js"

/** The guest's email (when the booking has an address) and the team's (when it has members). */
export const rescheduleEmails = (
  b: MovedBooking,
  change: RescheduleChange,
  team: ReadonlyArray<string>
): ReadonlyArray<EnqueueRequest> => {
  const previous = { date: change.from_date, startTime: change.from_start_time, rateTitle: change.from_rate_title }
  const next = { date: change.to_date, startTime: change.to_start_time, rateTitle: change.to_rate_title }
  const emails: Array<EnqueueRequest> = []
  if (b.guest_email) {
    emails.push({
      dedupeKey: outboxKeys.rescheduled(b.id, change.id, "guest"),
      to: b.guest_email,
      locale: "en",
      operatorId: b.operator_id,
      bookingId: b.id,
      template: "booking_rescheduled_guest",
      data: { ...guestHeading(b), previous, next, participants: b.participants }
    })
  }
  if (team.length > 0) {
    emails.push({
      dedupeKey: outboxKeys.rescheduled(b.id, change.id, "team"),
      to: team,
      locale: teamLocale(b.operator_timezone),
      operatorId: b.operator_id,
      bookingId: b.id,
      template: "booking_rescheduled_team",
      data: {
        operatorName: b.operator_name,
        tourName: tourNameOf(b),
        bookingReference: b.confirmation_code,
        previous,
        next,
        participants: b.participants,
        guestName: b.guest_name,
        rescheduledBy: changedBy(b)
      }
    })
  }
  return emails
}
