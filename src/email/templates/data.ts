/**
 * The values templates are filled with, as `effect/Schema`s: local calendar days (`YYYY-MM-DD`),
 * local wall-clock times (`HH:MM`) of the tour's time zone, money in integer minor units with an
 * ISO 4217 code (pure; no I/O).
 */
import { Schema } from "effect"

const isCalendarDay = (s: string) => {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s)
  if (!m) return false
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])))
  return d.toISOString().slice(0, 10) === s
}

export const Day = Schema.String.pipe(Schema.filter(isCalendarDay, { message: () => "a calendar day YYYY-MM-DD" }))
const Time = Schema.String.pipe(Schema.pattern(/^([01]\d|2[0-3]):[0-5]\d$/, { message: () => "a time HH:MM" }))
export const Text = Schema.String.pipe(Schema.filter((s) => s.trim().length > 0, { message: () => "a non-empty text" }))
export const Count = Schema.Int.pipe(Schema.nonNegative())
export const Url = Schema.String.pipe(Schema.filter((s) => {
  try {
    const url = new URL(s)
    return url.protocol === "https:" || url.protocol === "http:"
  } catch {
    return false
  }
}, { message: () => "an http(s) URL" }))

export const Money = Schema.Struct({
  amountMinor: Count,
  currency: Schema.String.pipe(Schema.pattern(/^[A-Z]{3}$/, { message: () => "an ISO 4217 currency code" }))
})
export type Money = typeof Money.Type

/** A departure as the guest knows it: local day, local start time (if the tour has one), rate. */
export const Departure = Schema.Struct({
  date: Day,
  startTime: Schema.NullOr(Time),
  rateTitle: Schema.optional(Schema.NullOr(Schema.String))
})
export type Departure = typeof Departure.Type

/**
 * What happened to the money when a booking was cancelled: `refunded` (the payment provider
 * confirmed the refund), `processing` (a refund still pending, or a void still settling) or `none`
 * (nothing had been paid).
 */
export const Refund = Schema.Union(
  Schema.Struct({ outcome: Schema.Literal("refunded", "processing"), amount: Money }),
  Schema.Struct({ outcome: Schema.Literal("none") })
)
export type Refund = typeof Refund.Type

/** How guests reach the operator (an email address or phone number), shown as given. */
const OperatorContact = Schema.optional(Schema.NullOr(Schema.String))

/** The fields every guest email about a booking starts with: to whom, from which operator, which tour and booking. */
export const GuestBooking = Schema.Struct({
  guestName: Schema.NullOr(Schema.String),
  operatorName: Text,
  operatorContact: OperatorContact,
  tourName: Text,
  bookingReference: Text
})
