/**
 * The payments presented to POST /book (`quickbook_payments`, migration 0017): reading a row, its
 * lease, and returning its money when the sale failed or was paid twice.
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
import { SqlClient } from "@effect/sql"
import { Effect, Option, Random } from "effect"
import type { BookFailureReason } from "./rules.js"
import { refundReference } from "./rules.js"
import type { BookFailedVariant } from "../errors.js"
import { retryDelayMillis } from "../../email/rules.js"
import { type PaymentAccount, PaymentProvider } from "../../ports/PaymentProvider.js"
import { OperatorPaymentAccounts } from "../../payments/OperatorPaymentAccounts.js"
import type { Ticket } from "../tickets/ticket.js"
import { type MoneyReturnUpdate, returnPayment } from "../../payments/returnPayment.js"

export type PaymentState = "received" | "verified" | "booking" | "confirmed" | "refunding" | "refunded" | "mismatch"

/** What POST /book asked, kept with the payment. */
export interface StoredRequest {
  readonly reference: string
  readonly holdRef: string | null
  readonly customer: { readonly firstName: string; readonly lastName: string; readonly email: string; readonly phone: string | null }
  readonly language: "en" | "nb"
}

/** The answer given for the payment (repeated on a retry); `moneyReturned` is read from `state`. */
export type StoredAnswer =
  | { readonly status: "confirmed"; readonly ticket: Ticket }
  | { readonly status: "failed"; readonly reason: BookFailureReason; readonly variant?: BookFailedVariant | undefined }
  | { readonly status: "mismatch" }

export interface PaymentKey {
  readonly provider: string
  readonly paymentId: string
}

export interface PaymentRow {
  readonly provider: string
  readonly payment_id: string
  readonly order_id: string
  readonly sale_reference: string
  readonly terminal_id: string
  readonly payment_terminal_id: string | null
  readonly request: StoredRequest
  readonly amount_minor: number | null
  readonly currency: string | null
  readonly merchant_id: string | null
  readonly paid_at: Date | null
  readonly state: PaymentState
  /** `stray`: a mismatch that paid no sale, returned (migration 0019). */
  readonly role: "sale" | "duplicate" | "stray" | null
  readonly hold_id: string | null
  readonly failure_reason: BookFailureReason | null
  readonly answer: StoredAnswer | null
  readonly refund_method: "void" | "refund" | null
  readonly refund_seq: number
  readonly refund_reference: string | null
  readonly refund_order_id: string | null
  readonly refund_state: "requested" | "settling" | "completed" | "failed" | null
  readonly refunded_minor: number
  readonly refund_attempts: number
  /** A mismatch's order: the sale reference it carries at the provider (null: none). */
  readonly order_reference_id: string | null
  readonly selling_operator_id: string
  readonly lease_expired: boolean
}

/** Other merchants of ours a payment not found on its sale's merchant is looked for on, at most. */
const OTHER_MERCHANTS_LOOKED_AT = 50

/** Backoff of a refund the provider did not confirm: 30 s doubling to an hour. */
const REFUND_RETRY = { baseMillis: 30_000, maxMillis: 3_600_000 }

export class QuickbookPayments extends Effect.Service<QuickbookPayments>()("QuickbookPayments", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const provider = yield* PaymentProvider
    const paymentAccounts = yield* OperatorPaymentAccounts

    const load = (key: PaymentKey) =>
      sql<PaymentRow>`
        SELECT p.provider, p.payment_id, p.order_id, p.sale_reference, p.terminal_id, p.payment_terminal_id, p.request,
          p.amount_minor::int AS amount_minor, trim(p.currency) AS currency, p.merchant_id, p.paid_at, p.state, p.role,
          p.hold_id, p.failure_reason, p.answer, p.refund_method, p.refund_seq, p.refund_reference, p.refund_order_id,
          p.refund_state, p.refunded_minor::int AS refunded_minor, p.refund_attempts, p.order_reference_id, s.selling_operator_id,
          coalesce(p.lease_until < now(), false) AS lease_expired
        FROM quickbook_payments p JOIN quickbook_sales s ON s.reference = p.sale_reference
        WHERE p.provider = ${key.provider} AND p.payment_id = ${key.paymentId}`.pipe(
        Effect.orDie,
        Effect.map((rows) => Option.fromNullable(rows[0]))
      )

    const mustLoad = (key: PaymentKey) =>
      Effect.flatMap(load(key), Option.match({
        onNone: () => Effect.dieMessage(`payment ${key.provider}/${key.paymentId} is gone`),
        onSome: Effect.succeed
      }))

    /**
     * The merchant's account at the provider: the selling operator's own merchant; with `merchantId`
     * (the merchant a payment was made on), that merchant, with the credentials of the operator it
     * belongs to (the selling operator's when it is theirs, or when no operator has it any more).
     */
    const accountFor = (operatorId: string, merchantId?: string) =>
      Effect.gen(function*() {
        if (merchantId === undefined) return yield* paymentAccounts.forOperator(operatorId)
        const [owner] = yield* sql<{ operator_id: string }>`
          SELECT operator_id FROM operator_payment_accounts WHERE merchant_id = ${merchantId}
          ORDER BY (operator_id = ${operatorId}) DESC, operator_id LIMIT 1`.pipe(Effect.orDie)
        const account = yield* paymentAccounts.forOperator(owner?.operator_id ?? operatorId)
        return Option.map(account, (a): PaymentAccount => ({ ...a, merchantId }))
      })

    /**
     * Our merchants other than `exclude`, each with its operator's credentials: those of the same
     * kind (sandbox or live) as the operator's own merchant. Where a payment not found on the sale's
     * merchant is looked for (a payment on another merchant of ours is a mismatch, not "not found").
     */
    const otherAccounts = (operatorId: string, exclude: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const rows = yield* sql<{ operator_id: string; merchant_id: string }>`
          SELECT DISTINCT ON (a.merchant_id) a.operator_id, a.merchant_id FROM operator_payment_accounts a
          WHERE a.merchant_id NOT IN ${sql.in(exclude)}
            AND a.sandbox = (SELECT o.sandbox FROM operator_payment_accounts o WHERE o.operator_id = ${operatorId})
          ORDER BY a.merchant_id, (a.operator_id = ${operatorId}) DESC, a.operator_id
          LIMIT ${OTHER_MERCHANTS_LOOKED_AT}`.pipe(Effect.orDie)
        const accounts = yield* Effect.forEach(rows, (r) =>
          Effect.map(paymentAccounts.forOperator(r.operator_id), Option.map((a): PaymentAccount => ({ ...a, merchantId: r.merchant_id }))))
        return accounts.flatMap((a) => (Option.isSome(a) ? [a.value] : []))
      })

    const alertRefundFailed = (row: PaymentRow, detail: string) =>
      Effect.logError("quickbook: a desk payment could not be returned; a person has to return it").pipe(
        Effect.annotateLogs({
          alert: "quickbook_refund_failed",
          reference: row.sale_reference,
          payment_id: row.payment_id,
          order_id: row.order_id,
          detail
        })
      )

    const alertRefundUnreadable = (row: PaymentRow, detail: string) =>
      Effect.logError("quickbook: the payment provider's answer about a desk payment's return could not be read; asked again later").pipe(
        Effect.annotateLogs({
          alert: "quickbook_refund_answer_unreadable",
          reference: row.sale_reference,
          payment_id: row.payment_id,
          order_id: row.order_id,
          refund_reference: row.refund_reference,
          detail
        })
      )

    const where = (row: PaymentRow) => sql`provider = ${row.provider} AND payment_id = ${row.payment_id}`

    /** Records one answer; true when the money is back (or the row was finished elsewhere). */
    const record = (row: PaymentRow, update: MoneyReturnUpdate) =>
      Effect.gen(function*() {
        const backoff = retryDelayMillis(row.refund_attempts, REFUND_RETRY, yield* Random.next)
        const later = sql`now() + make_interval(secs => ${backoff / 1000})`
        const open = sql`state = 'refunding' AND refund_state IN ('requested', 'settling') AND refund_seq = ${row.refund_seq}`
        switch (update._tag) {
          case "Completed":
            yield* sql`
              UPDATE quickbook_payments SET state = 'refunded', refund_state = 'completed',
                refunded_minor = refunded_minor + ${update.refundedMinor},
                refund_order_id = coalesce(${update.refundOrderId}, refund_order_id), last_error = NULL,
                lease_until = NULL, updated_at = now()
              WHERE ${where(row)} AND ${open}`
            return "done" as const
          case "Settling":
            yield* sql`
              UPDATE quickbook_payments SET refund_state = 'settling', lease_until = ${later},
                refund_order_id = coalesce(${update.refundOrderId}, refund_order_id), updated_at = now()
              WHERE ${where(row)} AND ${open}`
            return "open" as const
          case "NoAnswer": {
            // An answer that did not decode is asked again like no answer (the same reference moves
            // nothing twice), but it is a defect, not an outage: each such attempt is alerted, so it
            // is never retried unseen.
            const [kept] = yield* sql<{ provider: string }>`
              UPDATE quickbook_payments SET lease_until = ${later}, last_error = ${update.detail.slice(0, 1000)},
                alerted_at = ${update.unreadable === true ? sql`coalesce(alerted_at, now())` : sql`alerted_at`}, updated_at = now()
              WHERE ${where(row)} AND ${open} RETURNING provider`
            if (kept && update.unreadable === true) yield* alertRefundUnreadable(row, update.detail)
            return "open" as const
          }
          case "Failed": {
            const [failed] = yield* sql<{ alerted: boolean }>`
              UPDATE quickbook_payments SET refund_state = 'failed', lease_until = NULL, last_error = ${update.detail.slice(0, 1000)},
                alerted_at = coalesce(alerted_at, now()), updated_at = now()
              WHERE ${where(row)} AND ${open} RETURNING true AS alerted`
            if (failed) yield* alertRefundFailed(row, update.detail)
            return "failed" as const
          }
          case "Superseded":
          case "Partial": {
            // The next attempt: a refund of what is still owed, with the next reference.
            const seq = row.refund_seq + 1
            yield* sql`
              UPDATE quickbook_payments SET refund_method = 'refund', refund_seq = ${seq},
                refund_reference = ${refundReference(row.provider, row.payment_id, seq)}, refund_state = 'requested',
                refund_order_id = NULL,
                refunded_minor = refunded_minor + ${update._tag === "Partial" ? update.refundedMinor : 0},
                last_error = ${update._tag === "Superseded" ? update.detail.slice(0, 1000) : null}, updated_at = now()
              WHERE ${where(row)} AND ${open}`
            return "again" as const
          }
        }
      }).pipe(Effect.orDie)

    /**
     * Sends (or reads) the row's money return with its recorded reference, records the answer, and
     * goes on to the next reference when a void became a refund or a refund returned part. Answers
     * whether the money is back now.
     */
    const returnMoney = (key: PaymentKey) =>
      Effect.gen(function*() {
        for (let round = 0; round < 4; round++) {
          const row = yield* mustLoad(key)
          if (row.state === "refunded") return true
          if (row.state !== "refunding" || (row.refund_state !== "requested" && row.refund_state !== "settling")) return false
          yield* sql`UPDATE quickbook_payments SET refund_attempts = refund_attempts + 1 WHERE ${where(row)}`.pipe(Effect.orDie)
          const account = yield* accountFor(row.selling_operator_id, row.merchant_id!)
          if (Option.isNone(account)) {
            yield* record({ ...row, refund_attempts: row.refund_attempts + 1 }, {
              _tag: "NoAnswer",
              detail: `operator ${row.selling_operator_id} has no payment account`
            })
            return false
          }
          const update = yield* returnPayment(provider, account.value, {
            method: row.refund_method!,
            state: row.refund_state,
            purchaseOrderId: row.order_id,
            paymentId: row.payment_id,
            refundOrderId: row.refund_order_id,
            amountMinor: row.amount_minor! - row.refunded_minor,
            currency: row.currency!,
            idempotencyReference: row.refund_reference!,
            description: `Refund ${row.sale_reference}`
          })
          const outcome = yield* record({ ...row, refund_attempts: row.refund_attempts + 1 }, update)
          if (outcome !== "again") return outcome === "done"
        }
        return false
      }).pipe(Effect.withSpan("QuickbookPayments.returnMoney", { attributes: { payment: key.paymentId } }))

    return { load, mustLoad, accountFor, otherAccounts, returnMoney } as const
  }),
  dependencies: [OperatorPaymentAccounts.Default]
}) {}
