/** Booking resources as the Partner API shows them (spec §2 "Booking summary" / "Booking detail"). */
import { Schema } from "effect"
import { DateString, DateTimeString, LocalTime } from "../../domain/dates.js"

export const Partner = Schema.Struct({
  id: Schema.String.annotations({ examples: ["0b7c4f8e-1d1a-4a59-9a43-6c2f0f3b2a11"] }),
  name: Schema.String.annotations({ examples: ["Fjord Explorer AS"] })
}).annotations({
  identifier: "Partner",
  examples: [{ id: "0b7c4f8e-1d1a-4a59-9a43-6c2f0f3b2a11", name: "Fjord Explorer AS" }]
})

/** Statuses the API shows; a live booking (internally CONFIRMED or RESERVED) is CONFIRMED. */
export const BookingStatus = Schema.Literal("CONFIRMED", "CANCELLED", "REFUNDED").annotations({
  identifier: "BookingStatus",
  examples: ["CONFIRMED"]
})
export type BookingStatus = typeof BookingStatus.Type

/** Internal statuses each API status covers. HOLD and ABANDONED are never shown. */
export const STORED_STATUSES: Record<BookingStatus, ReadonlyArray<string>> = {
  CONFIRMED: ["CONFIRMED", "RESERVED"],
  CANCELLED: ["CANCELLED"],
  REFUNDED: ["REFUNDED"]
}

export const apiStatusOf = (stored: string): BookingStatus =>
  stored === "RESERVED" ? "CONFIRMED" : (stored as BookingStatus)

const nullable = <S extends Schema.Schema.Any>(s: S) => Schema.NullOr(s)
/** A key that is absent (not null) without the scope that grants it. */
const scoped = <S extends Schema.Schema.Any>(s: S) => Schema.optionalWith(Schema.NullOr(s), { exact: true })

export const Guest = Schema.Struct({
  name: nullable(Schema.String),
  email: scoped(Schema.String).annotations({ description: "Only with scope guests.contact:read; otherwise absent." }),
  phone: scoped(Schema.String).annotations({ description: "Only with scope guests.contact:read; otherwise absent." })
}).annotations({ identifier: "Guest" })

export const bookingSummaryFields = {
  id: Schema.UUID,
  confirmation_code: Schema.String,
  status: BookingStatus,
  partner: Partner,
  tour: Schema.Struct({ id: nullable(Schema.String), name: nullable(Schema.String) }),
  experience_date: nullable(DateString),
  start_time: nullable(LocalTime),
  timezone: Schema.String.annotations({ description: "IANA time zone of `start_time`", example: "Europe/Oslo" }),
  participants: nullable(Schema.Int),
  amount_minor: Schema.Int,
  currency: Schema.String.annotations({ description: "ISO 4217" }),
  channel: nullable(Schema.String),
  guest: Guest,
  booked_at: nullable(DateTimeString),
  created_at: DateTimeString,
  updated_at: nullable(DateTimeString)
}

export const BookingSummary = Schema.Struct(bookingSummaryFields).annotations({ identifier: "BookingSummary" })
export type BookingSummary = typeof BookingSummary.Type

export const PayLater = Schema.Struct({
  status: Schema.String,
  amount_minor: Schema.Int,
  currency: nullable(Schema.String),
  charge_at: nullable(DateTimeString),
  paid_at: nullable(DateTimeString)
}).annotations({ identifier: "PayLater" })

export const Commission = Schema.Struct({
  amount_minor: Schema.Int,
  rate_percent: nullable(Schema.Number),
  currency: nullable(Schema.String),
  status: nullable(Schema.String)
}).annotations({ identifier: "Commission" })

export const BookingDetail = Schema.Struct({
  ...bookingSummaryFields,
  provider_reference: nullable(Schema.String),
  payment: Schema.Struct({
    strategy: Schema.Literal("pay_now", "pay_later"),
    pay_later: nullable(PayLater)
  }),
  commission: nullable(Commission)
}).annotations({ identifier: "BookingDetail" })
export type BookingDetail = typeof BookingDetail.Type

export const BookingPage = Schema.Struct({
  data: Schema.Array(BookingSummary),
  next_cursor: nullable(Schema.String).annotations({
    description: "Pass back as `cursor` for the next page; null on the last page."
  })
}).annotations({ identifier: "BookingPage" })
export type BookingPage = typeof BookingPage.Type
