/**
 * The refund rows of cancels (`booking_refunds`, migration 0010; src/partner/cancels/CancelRefunds.ts):
 * one per money-moving call, written `requested` BEFORE the call with our idempotency reference, so
 * that a retry after a crash or a lost answer sends the same reference and the provider never
 * returns money twice; then the provider's answer (`settling`, `completed`, `failed`, or
 * `superseded` / `partial` with a follow-up row), and the claims of due rows by the runners that
 * follow them up. A call inside a caller's `sql.withTransaction` joins that transaction.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { IdRow, repoEdge } from "../../db/repoEdge.js"

/** A refund row with what its call needs: the payment at the provider and the booking's operator. */
export const RefundRow = Schema.Struct({
  id: Schema.String,
  change_id: Schema.String,
  booking_id: Schema.String,
  payment_id: Schema.String,
  seq: Schema.Number,
  method: Schema.Literal("void", "refund"),
  idempotency_reference: Schema.String,
  amountMinor: Schema.Number,
  refundedMinor: Schema.Number,
  currency: Schema.String,
  state: Schema.Literal("requested", "settling", "completed", "partial", "superseded", "failed"),
  provider_refund_order_id: Schema.NullOr(Schema.String),
  attempts: Schema.Number,
  merchant_id: Schema.String,
  provider_order_id: Schema.String,
  provider_payment_id: Schema.NullOr(Schema.String),
  operator_id: Schema.String
})
export type RefundRow = typeof RefundRow.Type

/** A refund row to write, `requested`, before its call. */
const NewRefund = Schema.Struct({
  changeId: Schema.String,
  bookingId: Schema.String,
  paymentId: Schema.String,
  seq: Schema.Number,
  method: Schema.Literal("void", "refund"),
  reference: Schema.String,
  amountMinor: Schema.Number,
  currency: Schema.String
})

const REFUND_COLUMNS = `r.id, r.change_id, r.booking_id, r.payment_id, r.seq, r.method, r.idempotency_reference,
  r.amount_minor::int AS "amountMinor", r.refunded_minor::int AS "refundedMinor", r.currency, r.state,
  r.provider_refund_order_id, r.attempts, p.merchant_id, p.provider_order_id, p.provider_payment_id, b.operator_id`

const REFUND_FROM =
  `booking_refunds r JOIN booking_payments p ON p.id = r.payment_id JOIN bookings b ON b.id = r.booking_id`

/** Refund rows still waiting for the provider. */
const OPEN = `state IN ('requested', 'settling')`

export class CancelRefundsRepo extends Effect.Service<CancelRefundsRepo>()("Partner/CancelRefundsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const open = sql.literal(OPEN)

    const refundsOfChange = SqlSchema.findAll({
      Request: Schema.String,
      Result: RefundRow,
      execute: (changeId) =>
        sql`SELECT ${sql.literal(REFUND_COLUMNS)} FROM ${
          sql.literal(REFUND_FROM)
        } WHERE r.change_id = ${changeId}::uuid ORDER BY r.payment_id, r.seq`
    })

    const findRefund = SqlSchema.findOne({
      Request: Schema.String,
      Result: RefundRow,
      execute: (id) =>
        sql`SELECT ${sql.literal(REFUND_COLUMNS)} FROM ${sql.literal(REFUND_FROM)} WHERE r.id = ${id}::uuid`
    })

    /** A refund row, `requested`; `orSkip`: none when the change has this payment's row of this number already. */
    const insertRefund = SqlSchema.void({
      Request: Schema.Struct({ refund: NewRefund, orSkip: Schema.Boolean }),
      execute: ({ orSkip, refund: r }) =>
        sql`
          INSERT INTO booking_refunds (change_id, booking_id, payment_id, seq, method, idempotency_reference, amount_minor, currency, state)
          VALUES (${r.changeId}::uuid, ${r.bookingId}::uuid, ${r.paymentId}::uuid, ${r.seq}, ${r.method},
            ${r.reference}, ${r.amountMinor}, ${r.currency}, 'requested')
          ${orSkip ? sql`ON CONFLICT (change_id, payment_id, seq) DO NOTHING` : sql``}`
    })

    const countRefundAttempt = SqlSchema.void({
      Request: Schema.String,
      execute: (id) => sql`UPDATE booking_refunds SET attempts = attempts + 1 WHERE id = ${id}::uuid`
    })

    const OpenRow = Schema.Struct({ id: Schema.String, refundOrderId: Schema.NullOr(Schema.String) })
    const retryAt = (seconds: number) => sql`now() + make_interval(secs => ${seconds})`

    const refundCompleted = SqlSchema.void({
      Request: Schema.Struct({ ...OpenRow.fields, refundedMinor: Schema.Number }),
      execute: (u) =>
        sql`
          UPDATE booking_refunds SET state = 'completed', refunded_minor = ${u.refundedMinor},
            provider_refund_order_id = coalesce(${u.refundOrderId}, provider_refund_order_id), last_error = null,
            completed_at = now(), updated_at = now()
          WHERE id = ${u.id}::uuid AND ${open}`
    })

    const refundSettling = SqlSchema.void({
      Request: Schema.Struct({ ...OpenRow.fields, retryInSeconds: Schema.Number }),
      execute: (u) =>
        sql`
          UPDATE booking_refunds SET state = 'settling', next_attempt_at = ${retryAt(u.retryInSeconds)},
            provider_refund_order_id = coalesce(${u.refundOrderId}, provider_refund_order_id), updated_at = now()
          WHERE id = ${u.id}::uuid AND ${open}`
    })

    const refundUnanswered = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.String, detail: Schema.String, retryInSeconds: Schema.Number }),
      execute: (u) =>
        sql`
          UPDATE booking_refunds SET next_attempt_at = ${retryAt(u.retryInSeconds)}, last_error = ${
          u.detail.slice(0, 1000)
        },
            updated_at = now()
          WHERE id = ${u.id}::uuid AND ${open}`
    })

    const refundFailed = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.String, detail: Schema.String }),
      execute: (u) =>
        sql`
          UPDATE booking_refunds SET state = 'failed', last_error = ${u.detail.slice(0, 1000)}, updated_at = now()
          WHERE id = ${u.id}::uuid AND ${open}`
    })

    /** A void refused as settled (`superseded`) or a refund of less (`partial`): closed, for a follow-up row. */
    const refundReplaced = SqlSchema.findOne({
      Request: Schema.Struct({
        id: Schema.String,
        state: Schema.Literal("superseded", "partial"),
        refundedMinor: Schema.Number,
        refundOrderId: Schema.NullOr(Schema.String),
        detail: Schema.NullOr(Schema.String)
      }),
      Result: IdRow,
      execute: (u) =>
        sql`
          UPDATE booking_refunds SET state = ${u.state}, refunded_minor = ${u.refundedMinor},
            provider_refund_order_id = ${u.refundOrderId}, last_error = ${
          u.detail?.slice(0, 1000) ?? null
        }, updated_at = now()
          WHERE id = ${u.id}::uuid AND ${open} RETURNING id`
    })

    const alertRefunds = SqlSchema.void({
      Request: Schema.String,
      execute: (changeId) =>
        sql`
          UPDATE booking_refunds SET alerted_at = coalesce(alerted_at, now())
          WHERE change_id = ${changeId}::uuid AND state IN ('requested', 'settling', 'failed')`
    })

    /** Claims due rows of completed cancels by pushing their next attempt out (no other runner takes them). */
    const claimDueRefunds = SqlSchema.findAll({
      Request: Schema.Void,
      Result: Schema.Struct({ id: Schema.String, change_id: Schema.String }),
      execute: () =>
        sql`
          UPDATE booking_refunds SET next_attempt_at = now() + interval '5 minutes'
          WHERE id IN (
            SELECT r.id FROM booking_refunds r JOIN booking_changes c ON c.id = r.change_id
            WHERE r.state IN ('requested', 'settling') AND r.next_attempt_at <= now() AND c.state = 'done'
            ORDER BY r.next_attempt_at LIMIT 100 FOR UPDATE OF r SKIP LOCKED)
          RETURNING id, change_id`
    })

    /** The same for one completed cancel's rows not sent yet. */
    const claimLateRefunds = SqlSchema.findAll({
      Request: Schema.String,
      Result: IdRow,
      execute: (changeId) =>
        sql`
          UPDATE booking_refunds SET next_attempt_at = now() + interval '5 minutes'
          WHERE id IN (
            SELECT r.id FROM booking_refunds r JOIN booking_changes c ON c.id = r.change_id
            WHERE r.change_id = ${changeId}::uuid AND r.state = 'requested' AND r.next_attempt_at <= now() AND c.state = 'done'
            FOR UPDATE OF r SKIP LOCKED)
          RETURNING id`
    })

    type RefundUpdate = Parameters<typeof refundReplaced>[0]

    return repoEdge("CancelRefundsRepo", {
      refundsOfChange,
      findRefund,
      insertRefund: (refund: typeof NewRefund.Type, options: { readonly orSkip: boolean }) =>
        insertRefund({ refund, orSkip: options.orSkip }),
      countRefundAttempt,
      refundCompleted,
      refundSettling,
      refundUnanswered,
      refundFailed,
      refundReplaced: (u: RefundUpdate) => Effect.map(refundReplaced(u), Option.isSome),
      alertRefunds,
      claimDueRefunds: () => claimDueRefunds(undefined),
      claimLateRefunds: (changeId: string) => Effect.map(claimLateRefunds(changeId), (rows) => rows.map((r) => r.id))
    })
  })
}) {}
