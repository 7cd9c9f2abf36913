/**
 * The quickbook-recovery job's work (src/jobs/quickbookRecovery.ts): desk payments a crash (or a
 * refund without a definite answer) left open past their lease are finished from where they stand
 * (QuickbookBooking: verified again, booked with the same external reference, or refunded with the
 * same reference), and payments recorded as mismatches that no sale will use are returned
 * (`alert=quickbook_mismatch_returned`). One failing payment never stops the others.
 */
import { Clock, Effect, Option } from "effect"
import { canVoid } from "../../ports/PaymentProvider.js"
import { keyOf, type PaymentKey, type StoredAnswer } from "./payment.js"
import { QuickbookBooking } from "./QuickbookBooking.js"
import { QuickbookBookRepo } from "./QuickbookBookRepo.js"
import { QuickbookMoneyReturn } from "./QuickbookMoneyReturn.js"
import { refundReference } from "./rules.js"

export interface QuickbookRecoverySummary {
  readonly found: number
  readonly confirmed: number
  readonly refunded: number
  /** Refunds still without a definite answer (asked again later). */
  readonly refunding: number
  /** Payments the provider no longer shows as paid: nothing to do. */
  readonly dropped: number
  readonly mismatched: number
  readonly pending: number
  /** Payments that matched no sale, returned because no sale will use them (their return started). */
  readonly strays: number
}

export class QuickbookBookRecovery extends Effect.Service<QuickbookBookRecovery>()("Quickbook/BookRecovery", {
  effect: Effect.gen(function*() {
    const repo = yield* QuickbookBookRepo
    const booking = yield* QuickbookBooking
    const moneyReturn = yield* QuickbookMoneyReturn

    /**
     * A payment recorded as a mismatch whose order names one of our sales, returned once no sale
     * will use it: that sale is confirmed (by another payment) or failed, or the payment waited
     * QUICKBOOK_MISMATCH_RETURN_AFTER_SECONDS without being presented for the sale it pays. The
     * condition is checked again in the same statement that starts the return (a presentation at the
     * same moment wins or loses atomically). Alerted; the money goes back like any other return.
     */
    const returnStray = (key: PaymentKey) =>
      Effect.gen(function*() {
        const row = yield* repo.mustLoad(key)
        if (
          row.state !== "mismatch" || row.amount_minor === null || row.currency === null || row.paid_at === null
        ) return false
        const method = canVoid(row.paid_at, new Date(yield* Clock.currentTimeMillis)) ? "void" : "refund"
        const answer: StoredAnswer = { status: "failed", reason: "payment_mismatch", variant: "stray" }
        const moved = yield* repo.startStrayReturn({
          key,
          answer,
          method,
          reference: refundReference(row.provider, row.payment_id, 1)
        })
        if (Option.isNone(moved)) return false
        yield* Effect.logError("quickbook: a payment that matched no sale is returned; no sale will use it").pipe(
          Effect.annotateLogs({
            alert: "quickbook_mismatch_returned",
            reference: row.sale_reference,
            order_reference: row.order_reference_id ?? "none",
            order_reference_status: moved.value,
            payment_id: row.payment_id,
            order_id: row.order_id,
            amount_minor: row.amount_minor,
            currency: row.currency,
            method
          })
        )
        yield* moneyReturn.returnMoney(key)
        return true
      })

    /**
     * Payments a crash (or a refund without a definite answer) left open past their lease are
     * finished: verified again, booked (the same external reference) or refunded (the same
     * reference). Payments recorded as mismatches that no sale will use are returned (returnStray).
     * One failing payment never stops the others.
     */
    const recover = Effect.fn("QuickbookBookRecovery.recover")(function*() {
      const due = yield* repo.leasesRunOut()
      const summary = {
        found: due.length,
        confirmed: 0,
        refunded: 0,
        refunding: 0,
        dropped: 0,
        mismatched: 0,
        pending: 0,
        strays: 0
      }
      for (const d of due) {
        const key = keyOf(d)
        if (!(yield* repo.takeLease(key))) continue
        yield* booking.advance(key).pipe(
          Effect.catchAllCause((cause) =>
            Effect.logWarning(`quickbook payment ${key.paymentId} not finished this time`, cause)
          )
        )
        const after = yield* repo.load(key)
        if (Option.isNone(after)) summary.dropped += 1
        else {
          const state = after.value.state
          if (state === "confirmed") summary.confirmed += 1
          else if (state === "refunded") summary.refunded += 1
          else if (state === "refunding") summary.refunding += 1
          else if (state === "mismatch") summary.mismatched += 1
          else summary.pending += 1
        }
      }
      for (const d of yield* repo.straysDue()) {
        const returned = yield* returnStray(keyOf(d)).pipe(
          Effect.catchAllCause((cause) =>
            Effect.as(Effect.logWarning(`quickbook payment ${d.payment_id} not returned this time`, cause), false)
          )
        )
        if (returned) summary.strays += 1
      }
      return summary satisfies QuickbookRecoverySummary
    })

    return { recover } as const
  }),
  dependencies: [QuickbookBookRepo.Default, QuickbookBooking.Default, QuickbookMoneyReturn.Default]
}) {}
