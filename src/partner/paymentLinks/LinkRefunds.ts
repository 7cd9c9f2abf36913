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
import { SqlClient } from "@effect/sql"
import { Effect, Option, Random } from "effect"
import { retryDelayMillis } from "../../email/rules.js"
import { OperatorPaymentAccounts } from "../../payments/OperatorPaymentAccounts.js"
import { type MoneyReturnUpdate, returnPayment } from "../../payments/returnPayment.js"
import { PaymentProvider } from "../../ports/PaymentProvider.js"

/** Backoff of a refund the provider did not confirm: 30 s doubling to an hour (as a cancel's). */
const REFUND_RETRY = { baseMillis: 30_000, maxMillis: 3_600_000 }

/** Rows one call sends, at most (the rest on the next run). */
const BATCH = 100

/** Our idempotency reference of the `seq`th money-returning call for a paid link. */
export const linkRefundReference = (linkIdempotencyReference: string, seq: number) => `${linkIdempotencyReference}:refund:${seq}`

export interface LinkRefundSummary {
  readonly found: number
  readonly completed: number
  /** Not confirmed yet (no answer, settling, or a follow-up row still to send). */
  readonly open: number
  readonly failed: number
}

interface RefundRow {
  readonly id: string
  readonly link_id: string
  readonly seq: number
  readonly method: "void" | "refund"
  readonly state: "requested" | "settling"
  readonly idempotency_reference: string
  readonly link_reference: string
  readonly merchant_id: string
  readonly purchase_order_id: string
  readonly payment_id: string | null
  readonly amount_minor: number
  readonly currency: string
  readonly provider_refund_order_id: string | null
  readonly attempts: number
  readonly operator_id: string
  readonly manifest_row_id: string | null
}

export class LinkRefunds extends Effect.Service<LinkRefunds>()("LinkRefunds", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const provider = yield* PaymentProvider
    const paymentAccounts = yield* OperatorPaymentAccounts

    /** Records one answer; a superseded void or a partial refund gets its follow-up row in the same transaction. */
    const recordAnswer = (row: RefundRow, update: MoneyReturnUpdate) =>
      sql.withTransaction(Effect.gen(function*() {
        const backoff = retryDelayMillis(row.attempts + 1, REFUND_RETRY, yield* Random.next)
        const later = sql`now() + make_interval(secs => ${backoff / 1000})`
        const open = sql`id = ${row.id}::uuid AND state IN ('requested', 'settling')`
        switch (update._tag) {
          case "Completed":
            yield* sql`
              UPDATE payment_link_refunds SET state = 'completed', refunded_minor = ${update.refundedMinor},
                provider_refund_order_id = coalesce(${update.refundOrderId}, provider_refund_order_id), last_error = null,
                completed_at = now(), updated_at = now()
              WHERE ${open}`
            return
          case "Settling":
            yield* sql`
              UPDATE payment_link_refunds SET state = 'settling', next_attempt_at = ${later},
                provider_refund_order_id = coalesce(${update.refundOrderId}, provider_refund_order_id), updated_at = now()
              WHERE ${open}`
            return
          case "NoAnswer":
            yield* sql`
              UPDATE payment_link_refunds SET next_attempt_at = ${later}, last_error = ${update.detail.slice(0, 1000)}, updated_at = now()
              WHERE ${open}`
            return
          case "Failed":
            yield* sql`
              UPDATE payment_link_refunds SET state = 'failed', last_error = ${update.detail.slice(0, 1000)},
                alerted_at = coalesce(alerted_at, now()), updated_at = now()
              WHERE ${open}`
            return
          case "Superseded":
          case "Partial": {
            const [changed] = yield* sql<{ id: string }>`
              UPDATE payment_link_refunds SET
                state = ${update._tag === "Superseded" ? "superseded" : "partial"},
                refunded_minor = ${update._tag === "Partial" ? update.refundedMinor : 0},
                provider_refund_order_id = ${update._tag === "Partial" ? update.refundOrderId : null},
                last_error = ${update._tag === "Superseded" ? update.detail.slice(0, 1000) : null}, updated_at = now()
              WHERE ${open} RETURNING id`
            if (changed === undefined) return
            const rest = row.amount_minor - (update._tag === "Partial" ? update.refundedMinor : 0)
            if (rest <= 0) return
            const seq = row.seq + 1
            yield* sql`
              INSERT INTO payment_link_refunds (link_id, seq, method, idempotency_reference, merchant_id, purchase_order_id,
                payment_id, amount_minor, currency, paid_at, reason)
              SELECT link_id, ${seq}, 'refund', ${linkRefundReference(row.link_reference, seq)}, merchant_id, purchase_order_id,
                payment_id, ${rest}, currency, paid_at, reason
              FROM payment_link_refunds WHERE id = ${row.id}::uuid
              ON CONFLICT (link_id, seq) DO NOTHING`
            return
          }
        }
      })).pipe(Effect.orDie)

    /** One call for one row (again with the same reference when unsure), recorded; attempts counted first. */
    const attempt = (row: RefundRow) =>
      Effect.gen(function*() {
        yield* sql`UPDATE payment_link_refunds SET attempts = attempts + 1 WHERE id = ${row.id}::uuid`.pipe(Effect.orDie)
        const found = yield* paymentAccounts.forOperator(row.operator_id)
        if (Option.isNone(found)) {
          const update: MoneyReturnUpdate = { _tag: "NoAnswer", detail: `operator ${row.operator_id} has no payment account` }
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
      }).pipe(Effect.withSpan("LinkRefunds.attempt", { attributes: { refund: row.id, method: row.method, state: row.state } }))

    /** Claims the due rows (of one link, or all) by pushing their next attempt out, and reads them. */
    const claimDue = (linkId: string | null) =>
      sql<RefundRow>`
        WITH due AS (
          UPDATE payment_link_refunds SET next_attempt_at = now() + interval '5 minutes'
          WHERE id IN (
            SELECT id FROM payment_link_refunds
            WHERE state IN ('requested', 'settling') AND next_attempt_at <= now()
              ${linkId === null ? sql`` : sql`AND link_id = ${linkId}::uuid`}
            ORDER BY next_attempt_at LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)
          RETURNING *)
        SELECT d.id, d.link_id, d.seq, d.method, d.state, d.idempotency_reference, l.idempotency_reference AS link_reference,
          d.merchant_id, d.purchase_order_id, d.payment_id, d.amount_minor::int AS amount_minor, d.currency,
          d.provider_refund_order_id, d.attempts, l.operator_id, l.manifest_row_id
        FROM due d JOIN payment_links l ON l.id = d.link_id
        ORDER BY d.created_at, d.seq`.pipe(Effect.orDie)

    /**
     * Sends the due rows (of one link, or of all), once each; follow-up rows (the rest after a
     * partial refund, a refund instead of a superseded void) in the same call, a bounded number of
     * rounds. One failing row never stops the others.
     */
    const sendDue = (linkId: string | null = null) =>
      Effect.gen(function*() {
        const counts = { found: 0, completed: 0, open: 0, failed: 0 }
        for (let round = 0; round < 4; round++) {
          const rows = yield* claimDue(linkId)
          if (rows.length === 0) break
          counts.found += rows.length
          let followUps = false
          for (const row of rows) {
            const update = yield* attempt(row).pipe(
              Effect.catchAllCause((cause) =>
                Effect.as(
                  Effect.logWarning(`payment link refund ${row.id} could not be sent`, cause),
                  { _tag: "NoAnswer", detail: "" } as MoneyReturnUpdate
                ))
            )
            if (update._tag === "Completed") counts.completed += 1
            else if (update._tag === "Failed") counts.failed += 1
            else if (update._tag !== "Superseded" && update._tag !== "Partial") counts.open += 1
            if (update._tag === "Superseded" || update._tag === "Partial") followUps = true
          }
          if (!followUps) break
        }
        return counts satisfies LinkRefundSummary
      }).pipe(Effect.withSpan("LinkRefunds.sendDue", { attributes: { link: linkId ?? "" } }))

    return { sendDue } as const
  }),
  dependencies: [OperatorPaymentAccounts.Default]
}) {}
