/** The pay-later read's rules (pure): states, the page size, a row as the API shows it. */
import type { PayLaterChargeRow } from "./PayLaterReadRepo.js"

export const PAY_LATER_STATES = ["upcoming", "failed", "collected", "cancelled"] as const
export type PayLaterState = (typeof PAY_LATER_STATES)[number]

export const PAY_LATER_DEFAULT_LIMIT = 50

const iso = (d: Date | null) => (d === null ? null : d.toISOString())

/** A row as GET /finance/pay-later shows it: no guest details, no card data (the token id stays in). */
export const toCharge = (r: PayLaterChargeRow) => ({
  id: r.id,
  partner: { id: r.operator_id, name: r.operator_name },
  booking: {
    id: r.booking_id,
    confirmation_code: r.confirmation_code,
    experience_date: r.experience_date,
    status: r.booking_status
  },
  tour: r.tour_name,
  amount_minor: r.amount_minor,
  currency: r.currency,
  charge_at: r.charge_at.toISOString(),
  state: r.state,
  retrying: r.retrying,
  refunded: r.refunded,
  attempts: r.attempts,
  last_attempt_at: iso(r.last_attempt_at),
  next_attempt_at: iso(r.next_attempt_at),
  failure_message: r.failure_message,
  final_deadline_at: r.final_deadline_at.toISOString(),
  collected_at: iso(r.collected_at)
})
