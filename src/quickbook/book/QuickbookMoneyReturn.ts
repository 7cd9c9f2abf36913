/**
 * Returning the money of a desk payment when its sale failed, it was paid twice, or it paid no sale
 * (POST /book, `quickbook_payments`, migration 0017).
 *
 * A refund's idempotency reference is recorded (with its method: a void the same UTC day before
 * 23:00, else a refund) in the transaction that records the failure, before any call; each call
 * sends that reference (src/payments/returnPayment.ts), so asking again after a crash or a lost
 * answer never moves money twice. A void the provider can no longer make becomes a refund, and a
 * refund that returned only part becomes a refund of the rest, each with the next reference. A
 * refund without a definite answer (no answer, still settling) waits in the row's lease (backoff
 * from 30 seconds to an hour) for the quickbook-recovery job; one the provider refused is alerted
 * once (`alert=quickbook_refund_failed`) and left to a person.
 */
import { Effect, Option, Random } from "effect"
import { retryDelayMillis } from "../../email/rules.js"
import { annotateSpan } from "../../observability/spanFn.js"
import { type MoneyReturnUpdate, returnPayment } from "../../payments/returnPayment.js"
import { PaymentProvider } from "../../ports/PaymentProvider.js"
import type { PaymentKey, PaymentRow } from "./payment.js"
import { QuickbookBookRepo } from "./QuickbookBookRepo.js"
import { QuickbookMerchants } from "./QuickbookMerchants.js"
import { QuickbookMoneyReturnRepo } from "./QuickbookMoneyReturnRepo.js"
import { refundReference } from "./rules.js"

/** Backoff of a refund the provider did not confirm: 30 s doubling to an hour. */
const REFUND_RETRY = { baseMillis: 30_000, maxMillis: 3_600_000 }

export class QuickbookMoneyReturn extends Effect.Service<QuickbookMoneyReturn>()("Quickbook/MoneyReturn", {
  effect: Effect.gen(function*() {
    const repo = yield* QuickbookBookRepo
    const returns = yield* QuickbookMoneyReturnRepo
    const merchants = yield* QuickbookMerchants
    const provider = yield* PaymentProvider

    /** An alert about the row's money return: a person has to look (the alert names are in docs/decisions.md). */
    const alert = (row: PaymentRow, name: string, message: string, more: Record<string, unknown>) =>
      Effect.logError(message).pipe(Effect.annotateLogs({
        alert: name,
        reference: row.sale_reference,
        payment_id: row.payment_id,
        order_id: row.order_id,
        ...more
      }))

    /** Records one answer about the attempt `row.refund_seq`: done (the money is back, or finished elsewhere), open, again, or failed. */
    const record = (row: PaymentRow, update: MoneyReturnUpdate) =>
      Effect.gen(function*() {
        const retryInSeconds = retryDelayMillis(row.refund_attempts, REFUND_RETRY, yield* Random.next) / 1000
        const open = { provider: row.provider, paymentId: row.payment_id, seq: row.refund_seq }
        switch (update._tag) {
          case "Completed":
            yield* returns.returnCompleted({
              ...open,
              refundedMinor: update.refundedMinor,
              refundOrderId: update.refundOrderId
            })
            return "done" as const
          case "Settling":
            yield* returns.returnSettling({ ...open, retryInSeconds, refundOrderId: update.refundOrderId })
            return "open" as const
          case "NoAnswer": {
            // An answer that did not decode is asked again like no answer (the same reference moves
            // nothing twice), but it is a defect, not an outage: each such attempt is alerted, so it
            // is never retried unseen.
            const unreadable = update.unreadable === true
            const kept = yield* returns.returnUnanswered({
              ...open,
              retryInSeconds,
              why: update.detail,
              alerted: unreadable
            })
            if (kept && unreadable) {
              yield* alert(
                row,
                "quickbook_refund_answer_unreadable",
                "quickbook: the payment provider's answer about a desk payment's return could not be read; asked again later",
                { refund_reference: row.refund_reference, detail: update.detail }
              )
            }
            return "open" as const
          }
          case "Failed": {
            if (yield* returns.returnFailed({ ...open, why: update.detail })) {
              yield* alert(
                row,
                "quickbook_refund_failed",
                "quickbook: a desk payment could not be returned; a person has to return it",
                {
                  detail: update.detail
                }
              )
            }
            return "failed" as const
          }
          case "Superseded":
          case "Partial":
            // The next attempt: a refund of what is still owed, with the next reference.
            yield* returns.nextReturn({
              ...open,
              reference: refundReference(row.provider, row.payment_id, row.refund_seq + 1),
              refundedMinor: update._tag === "Partial" ? update.refundedMinor : 0,
              lastError: update._tag === "Superseded" ? update.detail : null
            })
            return "again" as const
        }
      })

    /**
     * Sends (or reads) the row's money return with its recorded reference, records the answer, and
     * goes on to the next reference when a void became a refund or a refund returned part. Answers
     * whether the money is back now.
     */
    const returnMoney = Effect.fn("QuickbookMoneyReturn.returnMoney")(function*(key: PaymentKey) {
      yield* annotateSpan({ payment: key.paymentId })
      for (let round = 0; round < 4; round++) {
        const row = yield* repo.mustLoad(key)
        if (row.state === "refunded") return true
        if (row.state !== "refunding" || (row.refund_state !== "requested" && row.refund_state !== "settling")) {
          return false
        }
        // A row being returned has the payment's amount, its method and reference (migration 0017's checks).
        if (
          row.amount_minor === null || row.currency === null || row.refund_method === null ||
          row.refund_reference === null
        ) {
          return yield* Effect.dieMessage(
            `payment ${key.provider}/${key.paymentId} is being returned without its amount or reference`
          )
        }
        yield* returns.countReturnAttempt(key)
        const attempted = { ...row, refund_attempts: row.refund_attempts + 1 }
        const account = yield* merchants.accountFor(row.selling_operator_id, row.merchant_id ?? undefined)
        if (Option.isNone(account)) {
          yield* record(attempted, {
            _tag: "NoAnswer",
            detail: `operator ${row.selling_operator_id} has no payment account`
          })
          return false
        }
        const update = yield* returnPayment(provider, account.value, {
          method: row.refund_method,
          state: row.refund_state,
          purchaseOrderId: row.order_id,
          paymentId: row.payment_id,
          refundOrderId: row.refund_order_id,
          amountMinor: row.amount_minor - row.refunded_minor,
          currency: row.currency,
          idempotencyReference: row.refund_reference,
          description: `Refund ${row.sale_reference}`
        })
        const outcome = yield* record(attempted, update)
        if (outcome !== "again") return outcome === "done"
      }
      return false
    })

    return { returnMoney } as const
  }),
  dependencies: [QuickbookBookRepo.Default, QuickbookMoneyReturnRepo.Default, QuickbookMerchants.Default]
}) {}
