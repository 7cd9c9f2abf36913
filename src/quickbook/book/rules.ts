/**
 * POST /book (Quickbook spec §2 "Book failure", §4; docs/decisions.md "Quickbook: book after
 * payment") as pure rules: what the payment must show to pay the sale, which booking-system "no"
 * is which failure reason, the live price of a quote past its validity, when a phone is required,
 * the refund references, and the failed answer's clerk message.
 */
import { Either, Schema } from "effect"
import type { OrderStatus } from "../../ports/PaymentProvider.js"
import {
  BOOK_FAILED_LEADS,
  BOOK_FAILED_VARIANT_LEADS,
  type BookFailedVariant,
  CLERK_MESSAGES,
  type ClerkLanguage,
  MONEY_BACK_MESSAGES
} from "../clerkMessages.js"
import { type QuickbookCode } from "../errors.js"
import { cartTotal, partyLinesOf, type Slot } from "../sales/rules.js"

/** Spec §2 "Book failure" `reason`. */
export const BookFailureReason = Schema.Literal(
  "sold_out",
  "price_changed",
  "provider_unavailable",
  "hold_expired",
  "hold_not_supported",
  "terminal_not_registered",
  "tour_not_sellable_here",
  "phone_required",
  "phone_rejected",
  "payment_not_found",
  "payment_mismatch",
  "duplicate_payment",
  "provider_refused"
)
export type BookFailureReason = typeof BookFailureReason.Type

/** A phone number in international format: `+`, country code, number; digits only (E.164). */
export const PHONE_PATTERN = /^\+[1-9]\d{6,14}$/

export type PaymentField = "amount" | "currency" | "merchant" | "reference" | "terminal"

/**
 * What the provider says a payment that does not match its sale is: the money it took (what a
 * return would give back), on which merchant, and the sale reference it carries (null: none).
 */
export interface TakenPayment {
  readonly amountMinor: number
  readonly currency: string
  readonly merchantId: string
  readonly referenceId: string | null
  readonly paidAt: Date
}

export type Verification =
  | { readonly _tag: "NotFound"; readonly detail: string }
  | {
    readonly _tag: "Mismatch"
    readonly fields: ReadonlyArray<PaymentField>
    readonly detail: string
    readonly taken: TakenPayment
  }
  | {
    readonly _tag: "Verified"
    readonly amountMinor: number
    readonly currency: string
    readonly merchantId: string
    readonly terminalId: string
    readonly paidAt: Date
  }

export interface ExpectedPayment {
  readonly amountMinor: number
  readonly currency: string
  readonly merchantId: string
  readonly reference: string
  /** The desk terminal's card terminal at the provider (null: none registered, nothing matches). */
  readonly terminalId: string | null
}

/**
 * Whether the order read at the provider pays the sale with `paymentId`: the payment must be one of
 * the order's completed payments and the order paid in full and not voided (else not found: not
 * taken yet, declined or voided), and amount, currency, merchant, reference and terminal must be
 * the sale's (else a mismatch naming every field that differs).
 */
export const verifyPayment = (
  order: OrderStatus,
  paymentId: string,
  expected: ExpectedPayment,
  now: Date
): Verification => {
  const payment = order.payments.find((p) => p.paymentId === paymentId)
  if (order.type !== "purchase") return { _tag: "NotFound", detail: `order ${order.orderId} is a ${order.type}` }
  if (!payment) return { _tag: "NotFound", detail: `order ${order.orderId} has no payment ${paymentId}` }
  if (payment.status !== "completed") return { _tag: "NotFound", detail: `payment ${paymentId} is ${payment.status}` }
  if (order.voided) return { _tag: "NotFound", detail: `payment ${paymentId} was voided` }
  const fields: Array<PaymentField> = []
  if (order.amountMinor !== expected.amountMinor || !order.paid) fields.push("amount")
  if (order.currency !== expected.currency) fields.push("currency")
  if (order.merchantId !== expected.merchantId) fields.push("merchant")
  if (order.referenceId !== expected.reference) fields.push("reference")
  if (expected.terminalId === null || order.terminalId !== expected.terminalId) fields.push("terminal")
  if (fields.length > 0) {
    const detail =
      `order ${order.orderId}: ${order.paidMinor}/${order.amountMinor} ${order.currency} paid on merchant ` +
      `${order.merchantId} terminal ${order.terminalId} for ${order.referenceId}; the sale wants ${expected.amountMinor} ` +
      `${expected.currency} on merchant ${expected.merchantId} terminal ${expected.terminalId} for ${expected.reference}`
    const taken: TakenPayment = {
      amountMinor: payment.amountMinor > 0 ? payment.amountMinor : order.paidMinor,
      currency: order.currency,
      merchantId: order.merchantId,
      referenceId: order.referenceId,
      paidAt: order.paidAt ?? now
    }
    return { _tag: "Mismatch", fields, detail, taken }
  }
  return {
    _tag: "Verified",
    amountMinor: order.amountMinor,
    currency: order.currency,
    merchantId: order.merchantId,
    terminalId: order.terminalId,
    paidAt: order.paidAt ?? now
  }
}

/** A booking system's definite "no" (BookingSystemRejected.reason) as the book's failure reason. */
export const failureOfRejection = (reason: string): BookFailureReason => {
  switch (reason) {
    case "no_seats":
      return "sold_out"
    case "price_changed":
    case "hold_expired":
    case "hold_not_supported":
      return reason
    case "invalid_phone":
      return "phone_rejected"
    default:
      return "provider_refused"
  }
}

/** Needed when the cart line told the clerk so, or the tour needs it now. */
export const phoneRequired = (cartLineRequiresPhone: boolean, tourRequiresPhone: boolean) =>
  cartLineRequiresPhone || tourRequiresPhone

/**
 * What the party costs at the live prices of the departure, by the quote's own rule
 * (`partyLinesOf`: guests × unit price, plus the booking price of a tour priced per booking);
 * undefined when a guest type has no price there any more.
 */
export const liveTotal = (
  guests: ReadonlyArray<{ readonly type: string; readonly count: number }>,
  slot: Pick<Slot, "guests" | "bookingPriceMinor">
): number | undefined => Either.match(partyLinesOf(guests, slot), { onLeft: () => undefined, onRight: cartTotal })

/** Our idempotency reference of the `seq`th attempt to return a payment (a void, then refunds). */
export const refundReference = (provider: string, paymentId: string, seq: number) =>
  `quickbook:${provider}:${paymentId}:${seq}`

/**
 * The lead of a duplicate_payment answer, from where the sale it duplicates stands when the answer
 * is given: confirmed by the first payment ("that sale stands", no variant), failed (`sale_failed`:
 * make a new quote), or still being booked by the first payment (`sale_booking`: not known yet).
 */
export const duplicateVariant = (saleStatus: string | null): BookFailedVariant | undefined =>
  saleStatus === "confirmed" ? undefined : saleStatus === "failed" ? "sale_failed" : "sale_booking"

/** Whether the first payment of a sale has settled it (a duplicate's answer can then say how). */
export const saleSettled = (saleStatus: string | null) => saleStatus === "confirmed" || saleStatus === "failed"

/**
 * The failed answer's `clerkMessage`: what went wrong, then where the money is. `variant` names a
 * case of the reason with its own lead (a payment for a sale that already failed; a payment that
 * matched no sale and was returned).
 */
export const failedClerkMessage = (
  reason: BookFailureReason,
  moneyReturned: boolean,
  lang: ClerkLanguage,
  variant?: BookFailedVariant | undefined
) => {
  const code: QuickbookCode = reason
  const lead = (variant !== undefined ? BOOK_FAILED_VARIANT_LEADS[variant][lang] : undefined) ??
    BOOK_FAILED_LEADS[code]?.[lang] ?? CLERK_MESSAGES[code][lang]
  return `${lead} ${MONEY_BACK_MESSAGES[moneyReturned ? "returned" : "returning"][lang]}`
}
