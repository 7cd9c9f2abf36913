/** The chargebacks read's pure part (unit-tested): a stored chargeback as the API shows it (spec §2). */
import { apiStatusOf } from "../../bookings/booking.js"
import type { Chargeback } from "./Api.js"

export interface ChargebackRow {
  readonly id: string
  readonly operator_id: string
  readonly operator_name: string
  readonly booking_id: string
  readonly confirmation_code: string
  readonly experience_date: string | null
  readonly booking_status: string
  readonly amount_minor: string | null
  readonly currency: string | null
  readonly fee_minor: string | null
  readonly settled_currency: string | null
  readonly settled_amount_minor: string | null
  readonly settled_fee_minor: string | null
  readonly dispute_reference: string | null
  readonly dispute_status: string | null
  readonly reason: string | null
  readonly transaction_date: string | null
  readonly registered_at: string | null
  readonly respond_by: string | null
  readonly settled_on: string | null
  readonly first_seen_at: Date
  /** first_seen_at in microseconds (the cursor's position). */
  readonly seen_micros: string
}

const num = (s: string | null) => (s === null ? null : Number(s))

export const toChargeback = (r: ChargebackRow): Chargeback => ({
  id: r.id,
  partner: { id: r.operator_id, name: r.operator_name },
  booking: {
    id: r.booking_id,
    confirmation_code: r.confirmation_code,
    experience_date: r.experience_date,
    status: apiStatusOf(r.booking_status)
  },
  amount_minor: num(r.amount_minor),
  currency: r.currency,
  fee_minor: num(r.fee_minor),
  settled: r.settled_currency === null
    ? null
    : { currency: r.settled_currency, amount_minor: num(r.settled_amount_minor), fee_minor: num(r.settled_fee_minor) },
  dispute_reference: r.dispute_reference,
  dispute_status: r.dispute_status,
  reason: r.reason,
  transaction_date: r.transaction_date,
  registered_at: r.registered_at,
  respond_by: r.respond_by,
  settled_on: r.settled_on,
  first_seen_at: r.first_seen_at.toISOString()
})
