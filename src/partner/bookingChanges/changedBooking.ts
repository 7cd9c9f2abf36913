/**
 * The booking as the emails of a change (a cancel, a reschedule) tell it: its operator and team
 * locale, its reference, tour and party, the guest, and the API key that asked. Both read it in the
 * transaction that completes the change (src/partner/cancels/CancelsRepo.ts,
 * src/partner/reschedules/ReschedulesRepo.ts) with the columns below.
 */
import { Schema } from "effect"

export const ChangedBookingFields = {
  operator_id: Schema.String,
  operator_name: Schema.String,
  operator_timezone: Schema.String,
  confirmation_code: Schema.String,
  tour_name: Schema.NullOr(Schema.String),
  participants: Schema.NullOr(Schema.Number),
  guest_name: Schema.NullOr(Schema.String),
  guest_email: Schema.NullOr(Schema.String),
  /** The name of the API key that asked for the change. */
  key_name: Schema.NullOr(Schema.String)
}

type ChangedBooking = Schema.Struct.Type<typeof ChangedBookingFields>

/** The tour as the emails name it. */
export const tourNameOf = (b: ChangedBooking) => (b.tour_name && b.tour_name.trim() ? b.tour_name : "your tour")

/** What a guest's email of a change opens with: the guest, the operator, the tour and the booking's reference. */
export const guestHeading = (b: ChangedBooking) => ({
  guestName: b.guest_name,
  operatorName: b.operator_name,
  operatorContact: null,
  tourName: tourNameOf(b),
  bookingReference: b.confirmation_code
})

/** Who made the change, as the team's email says it. */
export const changedBy = (b: ChangedBooking) => (b.key_name ? `Partner API key "${b.key_name}"` : "the Partner API")
