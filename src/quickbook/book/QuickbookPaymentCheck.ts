/**
 * POST /book's verification at the payment provider (Quickbook spec §4; docs/decisions.md
 * "Quickbook: book after payment"): a recorded payment's order is read at the provider and checked
 * against its sale (rules.verifyPayment); it moves `received` → `verified` claiming the sale (or as
 * a `duplicate` of the payment that did), or → `mismatch` (alerted once, 409, nothing booked or
 * refunded). A mismatch presented for another sale is checked against that one. Refusals before
 * verification are error answers; nothing is left recorded for them but a mismatch.
 */
import { Clock, Effect, Either, Option } from "effect"
import { type PaymentAccount, PaymentProvider, type PaymentProviderError } from "../../ports/PaymentProvider.js"
import { QbConflict, QbForbidden, QbUnavailable, QbUnprocessable } from "../errors.js"
import { keyOf, type PaymentKey, type PaymentRow, type Represented, type SaleRow } from "./payment.js"
import { QuickbookBookRepo } from "./QuickbookBookRepo.js"
import { QuickbookMerchants } from "./QuickbookMerchants.js"
import { type Verification, verifyPayment } from "./rules.js"

/** A refusal before the payment was verified (an error answer); only a mismatch leaves a record. */
export type Refusal = QbConflict | QbUnprocessable | QbUnavailable | QbForbidden

/** What the provider's order says about a payment against a sale, once it could be read. */
type Checked = Extract<Verification, { readonly _tag: "Verified" | "Mismatch" }>
type Mismatch = Extract<Checked, { _tag: "Mismatch" }>

interface Presented {
  readonly reference: string
  readonly paymentId: string
  readonly orderId: string
}

const isNotFound = (e: PaymentProviderError) =>
  e._tag === "PaymentProviderRejected" && (e.reason === "not_found" || e.reason === "invalid")

/** An answer of the provider's that did not decode: a defect of ours (or a change of theirs), never "unavailable". */
const isUnreadable = (e: PaymentProviderError) => e._tag === "PaymentProviderUnavailable" && e.reason === "bad_response"

/** Facts of a mismatch kept for its return: only when the provider gave a currency we can store. */
const storable = (currency: string) => /^[A-Z0-9]{3}$/.test(currency)

const alertMismatch = (p: Presented, v: Mismatch) =>
  Effect.logError("quickbook: a payment does not match its sale; nothing was booked or refunded").pipe(
    Effect.annotateLogs({
      alert: "quickbook_payment_mismatch",
      reference: p.reference,
      payment_id: p.paymentId,
      order_id: p.orderId,
      order_reference: v.taken.referenceId ?? "none",
      fields: v.fields.join(","),
      detail: v.detail
    })
  )

/** The provider's answer about a payment did not decode: alerted as the defect it is, answered 500 (nothing recorded). */
const unreadable = (p: Presented, e: PaymentProviderError) =>
  Effect.zipRight(
    Effect.logError(
      "quickbook: the payment provider's answer about a payment could not be read; nothing was booked or refused"
    ).pipe(
      Effect.annotateLogs({
        alert: "quickbook_provider_answer_unreadable",
        reference: p.reference,
        payment_id: p.paymentId,
        order_id: p.orderId,
        detail: `${e.operation}: ${e.detail}`
      })
    ),
    Effect.dieMessage(
      `quickbook: the payment provider's answer about order ${p.orderId} could not be read: ${e.detail}`
    )
  )

/** What a mismatch's order took, as recorded for its return (amounts only in a currency we can store). */
const factsOf = (v: Mismatch) => {
  const facts = storable(v.taken.currency) ? v.taken : null
  return {
    amountMinor: facts?.amountMinor ?? null,
    currency: facts?.currency ?? null,
    merchantId: facts?.merchantId ?? null,
    paidAt: facts?.paidAt ?? null,
    referenceId: v.taken.referenceId,
    detail: v.detail
  }
}

export class QuickbookPaymentCheck extends Effect.Service<QuickbookPaymentCheck>()("Quickbook/PaymentCheck", {
  effect: Effect.gen(function*() {
    const repo = yield* QuickbookBookRepo
    const merchants = yield* QuickbookMerchants
    const provider = yield* PaymentProvider

    /**
     * Reads the payment's order at the provider and checks it against the sale; writes nothing. The
     * order is read on the sale's merchant; one not found there is looked for on our other merchants
     * (found there, it is a payment on another merchant: a mismatch, not "not found"). Not found
     * anywhere or not paid: 422 payment_not_found; no answer: 503; an answer that does not decode: a
     * defect (alerted, 500), never "unavailable".
     */
    const check = (
      payment: { readonly orderId: string; readonly paymentId: string; readonly paymentTerminalId: string | null },
      sale: SaleRow
    ): Effect.Effect<Checked, Refusal> =>
      Effect.gen(function*() {
        const ref = sale.reference
        const named = { reference: ref, paymentId: payment.paymentId, orderId: payment.orderId }
        const account = yield* merchants.accountFor(sale.selling_operator_id)
        if (Option.isNone(account)) {
          return yield* new QbForbidden({
            code: "tour_not_sellable_here",
            detail: "the operator has no payment account",
            reference: ref
          })
        }
        const read = (on: PaymentAccount) => Effect.either(provider.orderStatus(on, payment.orderId))
        let order = yield* read(account.value)
        if (Either.isLeft(order) && isNotFound(order.left)) {
          // The merchant the sale was quoted on (when the operator's has changed since), then our other merchants.
          const quoted = sale.merchant_id !== account.value.merchantId
            ? Option.toArray(yield* merchants.accountFor(sale.selling_operator_id, sale.merchant_id))
            : []
          const others = yield* merchants.otherAccounts(sale.selling_operator_id, [
            account.value.merchantId,
            sale.merchant_id
          ])
          const elsewhere = yield* Effect.forEach([...quoted, ...others], read, { concurrency: 8 })
          order = elsewhere.find((o) => Either.isRight(o)) ?? elsewhere.find((o) =>
            Either.isLeft(o) && isUnreadable(o.left)
          ) ?? order
        }
        if (Either.isLeft(order)) {
          const e = order.left
          if (isUnreadable(e)) return yield* unreadable(named, e)
          return yield* isNotFound(e)
            ? new QbUnprocessable({
              code: "payment_not_found",
              detail: `order ${payment.orderId}: ${e.reason}: ${e.detail}`,
              reference: ref
            })
            : new QbUnavailable({
              code: "provider_unavailable",
              detail: `payment provider: ${e.reason}: ${e.detail}`,
              reference: ref,
              variant: "payment_provider"
            })
        }
        const verification = verifyPayment(order.right, payment.paymentId, {
          amountMinor: sale.total_minor,
          currency: sale.currency,
          merchantId: sale.merchant_id,
          reference: ref,
          terminalId: payment.paymentTerminalId
        }, new Date(yield* Clock.currentTimeMillis))
        if (verification._tag === "NotFound") {
          return yield* new QbUnprocessable({ code: "payment_not_found", detail: verification.detail, reference: ref })
        }
        return verification
      })

    /** A mismatch recorded (from `from`), alerted when this call recorded it, and answered 409. */
    const refuseMismatch = (
      key: PaymentKey,
      from: "received" | "mismatch",
      p: Presented,
      v: Mismatch,
      r: Represented | null
    ) =>
      Effect.gen(function*() {
        if (yield* repo.markMismatch({ key, from, facts: factsOf(v), represented: r })) yield* alertMismatch(p, v)
        return yield* new QbConflict({ code: "payment_mismatch", detail: v.detail, reference: p.reference })
      })

    /**
     * A new payment: read at the provider and checked; a verified one claims the sale (or is a
     * duplicate). Refusals remove the row (nothing happened) except a mismatch, which is kept and
     * alerted once.
     */
    const verifyAndClaim = Effect.fn("QuickbookPaymentCheck.verifyAndClaim")(function*(row: PaymentRow) {
      const key = keyOf(row)
      const sale = yield* repo.sale(row.sale_reference)
      const checked = yield* check({
        orderId: row.order_id,
        paymentId: row.payment_id,
        paymentTerminalId: row.payment_terminal_id
      }, sale)
        .pipe(Effect.onError(() => repo.removeReceived(key)))
      if (checked._tag === "Mismatch") {
        return yield* refuseMismatch(
          key,
          "received",
          { reference: sale.reference, paymentId: row.payment_id, orderId: row.order_id },
          checked,
          null
        )
      }
      yield* repo.claim({ key, from: "received", reference: sale.reference, verified: checked, represented: null })
    })

    /**
     * A payment recorded as a mismatch, presented for another sale: checked against that sale. A
     * payment it pays moves to it (verified, claimed: true, the caller books it); one it does not
     * pay stays a mismatch, now of that sale (alerted); a refusal changes nothing (the mismatch
     * stays traceable).
     */
    const represent = Effect.fn("QuickbookPaymentCheck.represent")(function*(key: PaymentKey, r: Represented) {
      const sale = yield* repo.sale(r.reference)
      const checked = yield* check({
        orderId: r.orderId,
        paymentId: key.paymentId,
        paymentTerminalId: r.paymentTerminalId
      }, sale)
      if (checked._tag === "Mismatch") {
        return yield* refuseMismatch(
          key,
          "mismatch",
          { reference: r.reference, paymentId: key.paymentId, orderId: r.orderId },
          checked,
          r
        )
      }
      return yield* repo.claim({ key, from: "mismatch", reference: sale.reference, verified: checked, represented: r })
    })

    return { verifyAndClaim, represent } as const
  }),
  dependencies: [QuickbookBookRepo.Default, QuickbookMerchants.Default]
}) {}
