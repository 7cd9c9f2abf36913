/** The daily manifest as the Partner API shows it (spec §2 "Manifest", "Manifest row"). */
import { Schema } from "effect"
import { DateString, DateTimeString, LocalTime } from "../../domain/dates.js"
import { Guest, Partner } from "../bookings/booking.js"

const nullable = <S extends Schema.Schema.Any>(s: S) => Schema.NullOr(s)
const Count = Schema.Int.annotations({ jsonSchema: { type: "integer", minimum: 0 } })

/** As the booking system says; CONFIRMED and RESERVED are live, CANCELLED rows are listed apart. */
export const ManifestRowStatus = Schema.Literal("CONFIRMED", "RESERVED", "CANCELLED").annotations({
  identifier: "ManifestRowStatus",
  description: "The booking system's status of the line. CONFIRMED and RESERVED are live (listed in `departures`); " +
    "CANCELLED rows are listed only in `cancelled`."
})
export type ManifestRowStatus = typeof ManifestRowStatus.Type

/** Check-in state (spec §3): null (not seen), checked_in, no_show. */
export const CheckInStatus = Schema.Literal("checked_in", "no_show").annotations({ identifier: "CheckInStatus" })
export type CheckInStatus = typeof CheckInStatus.Type

export const CheckIn = Schema.Struct({
  status: nullable(CheckInStatus).annotations({ description: "null: not seen yet." }),
  present: nullable(Count).annotations({
    description: "With checked_in: how many of the party turned up; null means everyone."
  })
}).annotations({ identifier: "CheckIn" })
export type CheckIn = typeof CheckIn.Type

export const SalesChannel = Schema.Struct({
  class: nullable(Schema.String).annotations({
    description: "service, ota, direct or reseller, as the mirror knows it."
  }),
  source: nullable(Schema.String),
  title: nullable(Schema.String)
}).annotations({ identifier: "SalesChannel" })

export const PaxLine = Schema.Struct({
  title: Schema.String.annotations({ description: "Pricing category, e.g. Adult." }),
  quantity: Count
}).annotations({ identifier: "PaxLine" })
export type PaxLine = typeof PaxLine.Type

export const Pickup = Schema.Struct({
  place: nullable(Schema.String),
  time: nullable(Schema.String).annotations({ description: "Local pickup time as the booking system gives it." })
}).annotations({ identifier: "Pickup" })

export const ManifestRow = Schema.Struct({
  id: Schema.UUID.annotations({ description: "Manifest row id, stable for the booking line (used by check-in)." }),
  reference: nullable(Schema.String).annotations({ description: "The booking system's reference of the booking." }),
  confirmation_code: nullable(Schema.String).annotations({
    description: "The service's confirmation code when the service sold the booking, otherwise the seller's " +
      "reference (e.g. the travel agency's), otherwise null."
  }),
  status: ManifestRowStatus,
  partner: Partner,
  channel: SalesChannel,
  participants: Count,
  pax_breakdown: nullable(Schema.Array(PaxLine)),
  guest: Guest,
  pickup: nullable(Pickup).annotations({ description: "null when the booking has neither pickup place nor time." }),
  payment_status: nullable(Schema.String).annotations({
    description: "As the booking system says, e.g. PAID, NOT_PAID."
  }),
  check_in: CheckIn
}).annotations({ identifier: "ManifestRow" })
export type ManifestRow = typeof ManifestRow.Type

export const Departure = Schema.Struct({
  start_time: nullable(LocalTime).annotations({
    description: "Local HH:MM in `timezone`; null when the product has no start time."
  }),
  timezone: Schema.String.annotations({ description: "IANA time zone of the departure.", example: "Europe/Oslo" }),
  product_title: nullable(Schema.String),
  rate_title: nullable(Schema.String),
  passengers: Count.annotations({ description: "Sum of `participants` of the rows." }),
  checked_in: Count.annotations({
    description:
      "Passengers checked in: `present` (at most `participants`) of checked_in rows, or all participants when `present` is null."
  }),
  no_show: Count.annotations({ description: "Passengers of rows marked no_show." }),
  bookings: Schema.Array(ManifestRow)
}).annotations({ identifier: "Departure" })
export type Departure = typeof Departure.Type

export const ManifestTotals = Schema.Struct({
  departures: Count,
  bookings: Count.annotations({ description: "Live manifest rows (booking lines) in `departures`." }),
  passengers: Count,
  checked_in: Count,
  no_show: Count
}).annotations({ identifier: "ManifestTotals", description: "Sums over `departures`; cancelled rows are not counted." })
export type ManifestTotals = typeof ManifestTotals.Type

export const Manifest = Schema.Struct({
  date: DateString.annotations({ description: "The local departure day asked for." }),
  timezone: Schema.String.annotations({
    description:
      "Time zone of the first operator in view by name (of `partner_id` when given); each departure carries its own."
  }),
  synced_at: nullable(DateTimeString).annotations({
    description:
      "When the mirror last refreshed this day: the oldest refresh among the booking-system accounts in view; " +
      "null when any of them has never refreshed this day."
  }),
  totals: ManifestTotals,
  departures: Schema.Array(Departure),
  cancelled: Schema.Array(ManifestRow).annotations({ description: "Rows with status CANCELLED; not counted anywhere." })
}).annotations({ identifier: "Manifest" })
export type Manifest = typeof Manifest.Type
