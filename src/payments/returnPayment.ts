/**
 * One money-returning call to the payment provider, shared by cancels (src/partner/cancels/CancelRefunds.ts) and
 * desk sales that failed after payment (src/quickbook/book/QuickbookMoneyReturn.ts): a void (or, once it was
 * sent, a read of whether it settled), or a refund (or a read of a refund that is settling), always
 * with the caller's idempotency reference, recorded by the caller before the call. The answer is
 * mapped to what it does to the caller's record; it never fails.
 */
import { Effect } from "effect"
import type { PaymentAccount, PaymentProviderClient, PaymentProviderError } from "../ports/PaymentProvider.js"

export interface MoneyReturn {
  readonly method: "void" | "refund"
  /** `settling`: sent before and accepted; it is read instead of sent again. */
  readonly state: "requested" | "settling"
  readonly purchaseOrderId: string
  readonly paymentId: string | null
  readonly refundOrderId: string | null
  readonly amountMinor: number
  readonly currency: string
  readonly idempotencyReference: string
  readonly description: string
}

/** What one provider answer does to the caller's record. */
export type MoneyReturnUpdate =
  | { readonly _tag: "Completed"; readonly refundedMinor: number; readonly refundOrderId: string | null }
  | { readonly _tag: "Settling"; readonly refundOrderId: string | null }
  | { readonly _tag: "Partial"; readonly refundedMinor: number; readonly refundOrderId: string | null }
  /** A void refused because the payment can no longer be voided: a refund is needed instead. */
  | { readonly _tag: "Superseded"; readonly detail: string }
  | { readonly _tag: "Failed"; readonly detail: string }
  /**
   * No answer: the outcome is unknown; ask again with the same reference. `unreadable`: there was
   * an answer but it did not decode (a defect to look at, not an outage: the caller alerts).
   */
  | { readonly _tag: "NoAnswer"; readonly detail: string; readonly unreadable?: boolean }

const detailOf = (e: PaymentProviderError) => `${e.operation}: ${e.reason}: ${e.detail}`

export const returnPayment = (
  provider: PaymentProviderClient,
  account: PaymentAccount,
  r: MoneyReturn
): Effect.Effect<MoneyReturnUpdate> => {
  const settlingVoid = r.method === "void" && r.state === "settling"
  const settlingRefund = r.method === "refund" && r.state === "settling" && r.refundOrderId !== null
  const call: Effect.Effect<MoneyReturnUpdate, PaymentProviderError> = settlingVoid
    ? Effect.map(
      provider.orderStatus(account, r.purchaseOrderId),
      (s): MoneyReturnUpdate =>
        s.voided
          ? { _tag: "Completed", refundedMinor: r.amountMinor, refundOrderId: null }
          : { _tag: "Settling", refundOrderId: null }
    )
    : r.method === "void"
    ? Effect.map(
      provider.voidPayment(account, { paymentId: r.paymentId!, idempotencyReference: r.idempotencyReference }),
      (v): MoneyReturnUpdate =>
        v.state === "voided"
          ? { _tag: "Completed", refundedMinor: r.amountMinor, refundOrderId: null }
          : { _tag: "Settling", refundOrderId: null }
    )
    : Effect.map(
      settlingRefund
        ? provider.refundStatus(account, r.refundOrderId!)
        : provider.refund(account, {
          purchaseOrderId: r.purchaseOrderId,
          amountMinor: r.amountMinor,
          currency: r.currency,
          idempotencyReference: r.idempotencyReference,
          description: r.description
        }),
      (refund): MoneyReturnUpdate =>
        refund.state === "completed"
          ? { _tag: "Completed", refundedMinor: refund.refundedMinor, refundOrderId: refund.refundOrderId }
          : refund.state === "pending"
          ? { _tag: "Settling", refundOrderId: refund.refundOrderId }
          : refund.state === "partial"
          ? { _tag: "Partial", refundedMinor: refund.refundedMinor, refundOrderId: refund.refundOrderId }
          : { _tag: "Failed", detail: `the provider reports refund ${refund.refundOrderId} failed` }
    )
  return call.pipe(
    Effect.catchAll((e): Effect.Effect<MoneyReturnUpdate> =>
      Effect.succeed(
        e._tag === "PaymentProviderUnavailable"
          ? { _tag: "NoAnswer", detail: detailOf(e), unreadable: e.reason === "bad_response" }
          : r.method === "void" && e.reason === "cannot_void"
          ? { _tag: "Superseded", detail: detailOf(e) }
          : { _tag: "Failed", detail: detailOf(e) }
      )
    )
  )
}
