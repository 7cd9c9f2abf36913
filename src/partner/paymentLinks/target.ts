/**
 * What a payment-link request addresses (step 1 of PaymentLinks.send), as the rules, the provider
 * and the guest's email need it: a service booking, or a booking only in the booking system named by
 * one of its manifest rows. Pure: built from the rows LinkTargetsRepo reads.
 */
import type { BookingTargetRow, RowTargetRow } from "./LinkTargetsRepo.js"
import type { PaymentLinkTarget } from "./rules.js"

export interface Target {
  /** `booking:<id>` or `row:<id>`: where links of one booking are kept. */
  readonly key: string
  readonly bookingId: string | null
  readonly manifestRowId: string | null
  readonly operatorId: string
  readonly operatorName: string
  readonly rule: PaymentLinkTarget
  /** Booking-system account and reference, when the booking system can be asked. */
  readonly accountId: string | null
  readonly reference: string | null
  /** Shown to the guest and sent to the provider as `referenceId`. */
  readonly bookingReference: string
  readonly tourName: string
  readonly date: string | null
  readonly startTime: string | null
  readonly rateTitle: string | null
  readonly timezone: string
  readonly guestName: string | null
  readonly guestEmail: string | null
  readonly chargeAt: Date | null
}

/** The target key of a service booking: what the links of its balance are locked and looked up by. */
export const bookingTargetKey = (bookingId: string) => `booking:${bookingId}`

/** A service booking. */
export const bookingTarget = (b: BookingTargetRow): Target => ({
  key: bookingTargetKey(b.id),
  bookingId: b.id,
  manifestRowId: null,
  operatorId: b.operator_id,
  operatorName: b.operator_name,
  rule: {
    source: "service",
    status: b.status,
    paymentStrategy: b.payment_strategy,
    payLaterStatus: b.pay_later_status,
    payLaterAmountMinor: b.pay_later_amount_minor,
    payLaterCurrency: b.pay_later_currency?.trim() ?? null,
    currency: b.currency.trim(),
    inBookingSystem: b.account_id !== null && b.provider_reference !== null
  },
  accountId: b.account_id,
  reference: b.provider_reference,
  bookingReference: b.confirmation_code,
  tourName: b.tour_name ?? "your tour",
  date: b.experience_date,
  startTime: b.start_time,
  rateTitle: null,
  timezone: b.timezone,
  guestName: b.guest_name,
  guestEmail: b.guest_email,
  chargeAt: b.pay_later_charge_at
})

/**
 * A booking only in the booking system, by the row the request names. Its links are kept on its
 * first row (`keptOn`), whichever of its lines the request names: its balance is the booking's, so
 * one link serves all its rows.
 */
export const rowTarget = (row: RowTargetRow, keptOn: string): Target => {
  const reference = row.reference ?? row.booking_id
  return {
    key: `row:${keptOn}`,
    bookingId: null,
    manifestRowId: keptOn,
    operatorId: row.operator_id,
    operatorName: row.operator_name,
    rule: { source: "booking_system", status: row.status },
    accountId: row.account_id,
    reference,
    bookingReference: reference,
    tourName: row.product_title ?? "your tour",
    date: row.departure_date,
    startTime: row.start_time,
    rateTitle: row.rate_title,
    timezone: row.timezone,
    guestName: row.guest_name,
    guestEmail: row.guest_email,
    chargeAt: null
  }
}

/** The description of a new link (at most 200 characters): what the balance is for. */
export const linkDescription = (target: Target) => {
  const when = target.date === null ? "" : ` ${target.date}${target.startTime ? ` ${target.startTime}` : ""}`
  return `Balance: ${target.tourName}${when}`.slice(0, 200)
}
