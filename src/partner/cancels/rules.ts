/**
 * Cancel rules (spec §2 "Cancel result", §3 booking states, §4 POST /bookings/{id}/cancel): what a
 * cancel must return to the guest, whether each payment is voided or refunded, and which state and
 * refund outcome the booking ends in. Pure code, no I/O; src/partner/cancels/Cancels.ts
 * and its steps (CancelRefunds.ts, CancelRecovery.ts) do the rest.
 */
import { Either } from "effect"
import { canVoid } from "../../ports/PaymentProvider.js"

export const CANCEL_REASON_MIN = 3
export const CANCEL_REASON_MAX = 500

/** The booking, as far as cancelling cares. */
export interface CancelFacts {
  /** Stored status: RESERVED, CONFIRMED, CANCELLED, REFUNDED. */
  readonly status: string
  readonly amountMinor: number
  readonly currency: string
  readonly paymentStrategy: "pay_now" | "pay_later"
  readonly payLaterStatus: string | null
  readonly payLaterAmountMinor: number | null
}

/** A payment the booking took at the provider (`booking_payments`). */
export interface PaymentFacts {
  readonly id: string
  readonly amountMinor: number
  readonly currency: string
  readonly paidAt: Date
  readonly providerPaymentId: string | null
}

export const isLive = (status: string) => status === "CONFIRMED" || status === "RESERVED"

/**
 * What the guest has paid, by the booking's own figures: the whole price of a pay-now booking; the
 * reservation fee (price less the pay-later balance) of a pay-later booking, plus the balance once
 * collected. A full refund returns exactly this: on an unpaid pay-later booking, the fee only.
 */
export const paidMinor = (b: CancelFacts): number => {
  if (b.paymentStrategy === "pay_now") return b.amountMinor
  const balance = b.payLaterAmountMinor ?? 0
  return Math.max(b.amountMinor - balance, 0) + (b.payLaterStatus === "collected" ? balance : 0)
}

/**
 * The payments to refund: every payment on record, provided they add up to what the booking says
 * was paid, in its currency. Anything else would refund too little or too much, so the cancel is
 * refused (422) and left to a person.
 */
export const paymentsToRefund = (
  b: CancelFacts,
  payments: ReadonlyArray<PaymentFacts>
): Either.Either<ReadonlyArray<PaymentFacts>, string> => {
  const expected = paidMinor(b)
  const foreign = payments.find((p) => p.currency !== b.currency)
  if (foreign !== undefined) {
    return Either.left(
      `a payment of this booking is in ${foreign.currency}, not ${b.currency}: it cannot be refunded automatically`
    )
  }
  const recorded = payments.reduce((sum, p) => sum + p.amountMinor, 0)
  if (recorded !== expected) {
    return Either.left(
      recorded === 0
        ? `the service has no record of the payment of ${expected} (minor units, ${b.currency}) this booking took, so it cannot refund it; cancel it in the dashboard`
        : `the payments on record (${recorded}) do not add up to what the booking says was paid (${expected}, minor units, ${b.currency}); cancel it in the dashboard`
    )
  }
  return Either.right(payments)
}

/**
 * Void (the money never leaves the card) while the provider still allows it: the same UTC day
 * before 23:00 UTC, for a payment whose provider payment id is known. Refund otherwise.
 */
export const refundMethod = (p: PaymentFacts, now: Date): "void" | "refund" =>
  p.providerPaymentId !== null && canVoid(p.paidAt, now) ? "void" : "refund"

/** A refund row as the outcome needs it (`booking_refunds`). */
export interface RefundFacts {
  readonly method: "void" | "refund"
  readonly state: "requested" | "settling" | "completed" | "partial" | "superseded" | "failed"
  readonly amountMinor: number
  readonly refundedMinor: number
}

export type RefundOutcome = "refunded" | "none" | "pending"

export interface CancelOutcome {
  /** Stored status the booking ends in. */
  readonly status: "REFUNDED" | "CANCELLED" | "CONFIRMED" | "RESERVED"
  readonly outcome: RefundOutcome
  /** Whether the service is alerted: money that should go back has not (yet) without a void settling. */
  readonly alert: boolean
}

/**
 * Where a cancel stands (spec §3), from the live status the booking had and its refund rows:
 * - nothing to return: CANCELLED, `none`;
 * - every payment returned (refunds completed, voids voided): REFUNDED, `refunded`;
 * - the only thing outstanding is a void still settling: CANCELLED, `pending`;
 * - anything else (a refund requested without an answer, settling, partly returned, or refused):
 *   the booking keeps its live status, `pending`, and the service is alerted; the refund job keeps
 *   finishing it.
 */
export const cancelOutcome = (
  liveStatus: "CONFIRMED" | "RESERVED",
  refunds: ReadonlyArray<RefundFacts>
): CancelOutcome => {
  if (refunds.length === 0) return { status: "CANCELLED", outcome: "none", alert: false }
  // A superseded void and a partial refund are each followed by the row that replaces them.
  const current = refunds.filter((r) => r.state !== "superseded" && r.state !== "partial")
  const open = current.filter((r) => r.state !== "completed")
  if (current.length > 0 && open.length === 0) return { status: "REFUNDED", outcome: "refunded", alert: false }
  if (open.length > 0 && open.every((r) => r.method === "void" && r.state === "settling")) {
    return { status: "CANCELLED", outcome: "pending", alert: false }
  }
  return { status: liveStatus, outcome: "pending", alert: true }
}

/** Our idempotency reference for one money-moving call of a cancel (never reused for another request). */
export const refundReference = (changeId: string, paymentId: string, seq: number) =>
  `cancel:${changeId}:${paymentId}:${seq}`
