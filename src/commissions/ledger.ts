/**
 * The commission ledger (`commission_entries`, migrations 0029 and 0032): what the marketplace's
 * commission did per booking event, in the booking's currency. Statements
 * (src/partner/finance/statements/) and commission invoices read it.
 *
 * The writers are PostgreSQL triggers on `bookings` (migration 0032), so every writer of a booking
 * (the cancel feature and its recovery, the pay-later charger, a paid balance link, the checkout, the
 * seed, tests, a hand-run statement) moves the ledger in its own transaction without calling anything:
 * docs/decisions.md "Commission ledger: written by triggers on bookings". This module holds the
 * vocabulary the TypeScript side shares with them.
 *
 * - `sale`: the booking became live (inserted RESERVED/CONFIRMED, or a hold confirmed): +price,
 *   +commission, +reserve fee (a pay-later booking's reservation fee: price − balance).
 * - `cancellation`: a live booking became CANCELLED or REFUNDED: its entries' net reversed (negative).
 * - `difference`: a live booking's price, commission or reservation fee changed: the change.
 * A reschedule (date or time only) writes nothing; a booking without commission (no rate, no amount)
 * moves no commission and writes nothing.
 *
 * `pending` (the money is not final): a sale or difference of a live pay-later booking until its
 * balance is collected (`pay_later_paid_at`) or the booking is cancelled; a cancellation until every
 * refund of the booking settled (`booking_refunds` no longer requested, settling or partial). Cleared
 * by the triggers when that happens, never set again.
 */

export const ENTRY_TYPES = ["sale", "cancellation", "difference"] as const
export type EntryType = typeof ENTRY_TYPES[number]

/** `source_key` of an entry (unique): the first life of a booking; later lives and differences add `:<n>`. */
export const sourceKey = (type: EntryType, bookingId: string, n?: number) =>
  n === undefined ? `${type}:${bookingId}` : `${type}:${bookingId}:${n}`

/** The UTC month (`YYYY-MM`) an entry's statement is, from its `occurred_at`. */
export const statementMonth = (occurredAt: Date) => occurredAt.toISOString().slice(0, 7)
