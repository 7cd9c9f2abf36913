/**
 * A payment presented to POST /book as `quickbook_payments` keeps it (migration 0017, 0019): its
 * key, what the request asked, the answer given, and the row as QuickbookBookRepo reads it. Schemas
 * of the columns as node-postgres returns them (timestamptz as Date, jsonb parsed).
 */
import { Schema } from "effect"
import type { BookFailedVariant } from "../clerkMessages.js"
import type { QuickbookKeyMode } from "../terminals/key.js"
import type { Ticket } from "../tickets/ticket.js"
import { BookFailureReason } from "./rules.js"

export const PaymentState = Schema.Literal(
  "received",
  "verified",
  "booking",
  "confirmed",
  "refunding",
  "refunded",
  "mismatch"
)
export type PaymentState = typeof PaymentState.Type

export const PaymentKey = Schema.Struct({ provider: Schema.String, paymentId: Schema.String })
export type PaymentKey = typeof PaymentKey.Type

export const keyOf = (row: { readonly provider: string; readonly payment_id: string }): PaymentKey => ({
  provider: row.provider,
  paymentId: row.payment_id
})

/** What POST /book asked, kept with the payment. */
export const StoredRequest = Schema.Struct({
  reference: Schema.String,
  holdRef: Schema.NullOr(Schema.String),
  customer: Schema.Struct({
    firstName: Schema.String,
    lastName: Schema.String,
    email: Schema.String,
    phone: Schema.NullOr(Schema.String)
  }),
  language: Schema.Literal("en", "nb")
})
export type StoredRequest = typeof StoredRequest.Type

/** The ticket as it was answered (src/quickbook/tickets/ticket.ts `Ticket`). */
const StoredTicket: Schema.Schema<Ticket> = Schema.Struct({
  lines32: Schema.Array(Schema.String),
  lines48: Schema.Array(Schema.String),
  qrPayload: Schema.String,
  pdfUrl: Schema.NullOr(Schema.String),
  bookingCode: Schema.String
})

const FailedVariant: Schema.Schema<BookFailedVariant> = Schema.Literal("sale_failed", "sale_booking", "stray")

/** The answer given for the payment (repeated on a retry); `moneyReturned` is read from `state`. */
export const StoredAnswer = Schema.Union(
  Schema.Struct({ status: Schema.Literal("confirmed"), ticket: StoredTicket }),
  Schema.Struct({
    status: Schema.Literal("failed"),
    reason: BookFailureReason,
    variant: Schema.optional(FailedVariant)
  }),
  Schema.Struct({ status: Schema.Literal("mismatch") })
)
export type StoredAnswer = typeof StoredAnswer.Type

const Instant = Schema.DateFromSelf

export const PaymentRow = Schema.Struct({
  provider: Schema.String,
  payment_id: Schema.String,
  order_id: Schema.String,
  sale_reference: Schema.String,
  terminal_id: Schema.String,
  payment_terminal_id: Schema.NullOr(Schema.String),
  request: StoredRequest,
  amount_minor: Schema.NullOr(Schema.Number),
  currency: Schema.NullOr(Schema.String),
  merchant_id: Schema.NullOr(Schema.String),
  paid_at: Schema.NullOr(Instant),
  state: PaymentState,
  /** `stray`: a mismatch that paid no sale, returned (migration 0019). */
  role: Schema.NullOr(Schema.Literal("sale", "duplicate", "stray")),
  hold_id: Schema.NullOr(Schema.String),
  failure_reason: Schema.NullOr(BookFailureReason),
  answer: Schema.NullOr(StoredAnswer),
  refund_method: Schema.NullOr(Schema.Literal("void", "refund")),
  refund_seq: Schema.Number,
  refund_reference: Schema.NullOr(Schema.String),
  refund_order_id: Schema.NullOr(Schema.String),
  refund_state: Schema.NullOr(Schema.Literal("requested", "settling", "completed", "failed")),
  refunded_minor: Schema.Number,
  refund_attempts: Schema.Number,
  /** A mismatch's order: the sale reference it carries at the provider (null: none). */
  order_reference_id: Schema.NullOr(Schema.String),
  selling_operator_id: Schema.String,
  lease_expired: Schema.Boolean
})
export type PaymentRow = typeof PaymentRow.Type

/** The sale a payment pays, as booking it needs it. */
export const SaleRow = Schema.Struct({
  reference: Schema.String,
  terminal_id: Schema.String,
  key_id: Schema.String,
  selling_operator_id: Schema.String,
  tour_id: Schema.String,
  merchant_id: Schema.String,
  product_id: Schema.String,
  rate_id: Schema.NullOr(Schema.String),
  start_date: Schema.String,
  start_time: Schema.String,
  start_time_id: Schema.String,
  guests: Schema.Array(Schema.Struct({ type: Schema.String, count: Schema.Number, categoryId: Schema.String })),
  total_minor: Schema.Number,
  currency: Schema.String,
  /** The cart line's `requiresPhone` (false when it has none). */
  cart_requires_phone: Schema.Boolean,
  valid_until: Instant,
  hold_id: Schema.NullOr(Schema.String),
  hold_expires_at: Schema.NullOr(Instant)
})
export type SaleRow = typeof SaleRow.Type

/**
 * A payment recorded as a mismatch, presented again for another sale: the new sale, terminal and
 * request it is presented with (the payment moves to that sale when it pays it).
 */
export const Represented = Schema.Struct({
  reference: Schema.String,
  terminalId: Schema.String,
  paymentTerminalId: Schema.NullOr(Schema.String),
  orderId: Schema.String,
  request: StoredRequest
})
export type Represented = typeof Represented.Type

/** The sale POST /book names, as the request is taken in (before anything is recorded). */
export const IntakeSale = Schema.Struct({
  reference: Schema.String,
  key_mode: Schema.Literal("live", "test") satisfies Schema.Schema<QuickbookKeyMode>,
  cart_requires_phone: Schema.Boolean,
  tour_requires_phone: Schema.Boolean,
  payment_terminal_id: Schema.NullOr(Schema.String)
})

/** What the provider's order says a verified payment took. */
export const VerifiedFacts = Schema.Struct({
  amountMinor: Schema.Number,
  currency: Schema.String,
  merchantId: Schema.String,
  paidAt: Instant
})

/** What a mismatch's order says it took (amounts null: not in a currency we can store), kept for its return. */
export const MismatchFacts = Schema.Struct({
  amountMinor: Schema.NullOr(Schema.Number),
  currency: Schema.NullOr(Schema.String),
  merchantId: Schema.NullOr(Schema.String),
  paidAt: Schema.NullOr(Instant),
  referenceId: Schema.NullOr(Schema.String),
  detail: Schema.String
})
