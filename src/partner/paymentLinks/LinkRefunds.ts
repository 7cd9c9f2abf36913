/**
 * Returning a balance payment that arrived for a booking only in the booking system after that
 * booking was cancelled (docs/decisions.md "Balance paid after a booking-system booking was
 * cancelled"). Our payment provider holds the money (the link was ours, on the operator's merchant),
 * so it goes back the way a cancel's refunds do (src/payments/returnPayment.ts):
 *
 * - `PaidLinkRecorder.record` writes the intent, a `payment_link_refunds` row (seq 1, void or refund as
 *   `refundMethod` decides, our idempotency reference `<link reference>:refund:1`), in the same
 *   transaction that records the link as paid: on record before any call, once per link;
 * - `sendDue` sends the rows that are due: the payment-link watch calls it at once for a payment it
 *   just recorded, and on every run for rows left open (no answer, settling), which are claimed by
 *   pushing `next_attempt_at` out (`FOR UPDATE SKIP LOCKED`: never sent by two runs at once) and
 *   sent again with the reference recorded in the row, so a lost answer never returns money twice;
 * - a void the provider no longer allows (`superseded`) or a refund that returned less (`partial`)
 *   gets its follow-up row (seq + 1, a refund of the rest) in the same transaction as the answer;
 * - a refusal (`failed`) is alerted (`alert=payment_link_refund_failed`, `alerted_at`) and left to a
 *   person: `refunds list` shows these rows beside the cancels' refunds.
 */
import { Effect, Option, Random } from "effect"
import { retryDelayMillis } from "../../email/rules.js"
import { annotateSpan } from "../../observability/spanFn.js"
import { OperatorPaymentAccounts } from "../../payments/OperatorPaymentAccounts.js"
import { type MoneyReturnUpdate, returnPayment } from "../../payments/returnPayment.js"
import { PaymentProvider } from "../../ports/PaymentProvider.js"
import { LinkRefundsRepo, type RefundRow } from "./LinkRefundsRepo.js"
import { linkRefundReference } from "./rules.js"

/** Backoff of a refund the provider did not confirm: 30 s doubling to an hour (as a cancel's). */
const REFUND_RETRY = { baseMillis: 30_000, maxMillis: 3_600_000 }

/** Rows one call sends, at most (the rest on the next run). */
const BATCH = 100

export interface LinkRefundSummary {
  readonly found: number
  readonly completed: number
  /** Not confirmed yet (no answer, settling, or a follow-up row still to send). */
  readonly open: number
  readonly failed: number
}

export class LinkRefunds extends Effect.Service<LinkRefunds>()("Partner/LinkRefunds", {
  effect: Effect.gen(function*() {
    const repo = yield* LinkRefundsRepo
    const provider = yield* PaymentProvider
    const paymentAccounts = yield* OperatorPaymentAccounts

    /** Records one answer; a superseded void or a partial refund gets its follow-up row in the same transaction. */
    const recordAnswer = (row: RefundRow, update: MoneyReturnUpdate) =>
      repo.withTransaction(Effect.gen(function*() {
        const backoffSeconds = retryDelayMillis(row.attempts + 1, REFUND_RETRY, yield* Random.next) / 1000
        switch (update._tag) {
          case "Completed":
            return yield* repo.completed(row.id, update.refundedMinor, update.refundOrderId)
          case "Settling":
            return yield* repo.settling(row.id, backoffSeconds, update.refundOrderId)
          case "NoAnswer":
            return yield* repo.noAnswer(row.id, backoffSeconds, update.detail)
          case "Failed":
            return yield* repo.failed(row.id, update.detail)
          case "Superseded":
          case "Partial": {
            const changed = update._tag === "Superseded"
              ? yield* repo.superseded(row.id, update.detail)
              : yield* repo.partial(row.id, update.refundedMinor, update.refundOrderId)
            if (!changed) return
            const rest = row.amount_minor - (update._tag === "Partial" ? update.refundedMinor : 0)
            if (rest <= 0) return
            const seq = row.seq + 1
            yield* repo.insertFollowUp({
              of: row.id,
              seq,
              idempotencyReference: linkRefundReference(row.link_reference, seq),
              amountMinor: rest
            })
          }
        }
      }))

    /** One call for one row (again with the same reference when unsure), recorded; attempts counted first. */
    const attempt = Effect.fn("LinkRefunds.attempt")(function*(row: RefundRow) {
      yield* annotateSpan({ refund: row.id, method: row.method, state: row.state })
      yield* repo.countAttempt(row.id)
      const found = yield* paymentAccounts.forOperator(row.operator_id)
      if (Option.isNone(found)) {
        const update: MoneyReturnUpdate = {
          _tag: "NoAnswer",
          detail: `operator ${row.operator_id} has no payment account`
        }
        yield* recordAnswer(row, update)
        return update
      }
      const update = yield* returnPayment(provider, { ...found.value, merchantId: row.merchant_id }, {
        method: row.method,
        state: row.state,
        purchaseOrderId: row.purchase_order_id,
        paymentId: row.payment_id,
        refundOrderId: row.provider_refund_order_id,
        amountMinor: row.amount_minor,
        currency: row.currency.trim(),
        idempotencyReference: row.idempotency_reference,
        description: "Refund: booking cancelled"
      })
      yield* recordAnswer(row, update)
      if (update._tag === "Failed" || (update._tag === "NoAnswer" && update.unreadable === true)) {
        yield* Effect.logError(
          `payment link ${row.link_id}: the refund of a payment made after its booking was cancelled was not accepted ` +
            `(${update.detail}); a person has to return ${row.amount_minor} ${row.currency.trim()} (refunds list)`
        ).pipe(Effect.annotateLogs({
          alert: "payment_link_refund_failed",
          payment_link_id: row.link_id,
          manifest_row_id: row.manifest_row_id ?? "",
          refund_id: row.id
        }))
      }
      return update
    })

    /**
     * Sends the due rows (of one link, or of all), once each; follow-up rows (the rest after a
     * partial refund, a refund instead of a superseded void) in the same call, a bounded number of
     * rounds. One failing row never stops the others.
     */
    const sendDue = Effect.fn("LinkRefunds.sendDue")(function*(linkId: string | null = null) {
      yield* annotateSpan({ link: linkId ?? "" })
      const counts = { found: 0, completed: 0, open: 0, failed: 0 }
      for (let round = 0; round < 4; round++) {
        const rows = yield* repo.claimDue(linkId, BATCH)
        if (rows.length === 0) break
        counts.found += rows.length
        let followUps = false
        for (const row of rows) {
          const update = yield* attempt(row).pipe(
            Effect.catchAllCause((cause) =>
              Effect.as(
                Effect.logWarning(`payment link refund ${row.id} could not be sent`, cause),
                { _tag: "NoAnswer", detail: "" } as MoneyReturnUpdate
              )
            )
          )
          if (update._tag === "Completed") counts.completed += 1
          else if (update._tag === "Failed") counts.failed += 1
          else if (update._tag !== "Superseded" && update._tag !== "Partial") counts.open += 1
          if (update._tag === "Superseded" || update._tag === "Partial") followUps = true
        }
        if (!followUps) break
      }
      return counts satisfies LinkRefundSummary
    })

    return { sendDue } as const
  }),
  dependencies: [OperatorPaymentAccounts.Default, LinkRefundsRepo.Default]
}) {}
