/**
 * The SQL of the refunds of payment links paid after their booking (one only in the booking system)
 * was cancelled: `payment_link_refunds` (LinkRefunds.ts sends them; PaidLinkRecorder.ts writes the
 * first one with the payment's record). Each row changes only while it is still open (`requested`
 * or `settling`), so that an answer recorded twice changes nothing.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { IdRow, repoEdge, transactionAtEdge } from "../../db/repoEdge.js"

/** A due refund row, with its link's reference, operator and manifest row. */
export const RefundRow = Schema.Struct({
  id: Schema.String,
  link_id: Schema.String,
  seq: Schema.Number,
  method: Schema.Literal("void", "refund"),
  state: Schema.Literal("requested", "settling"),
  idempotency_reference: Schema.String,
  link_reference: Schema.String,
  merchant_id: Schema.String,
  purchase_order_id: Schema.String,
  payment_id: Schema.NullOr(Schema.String),
  amount_minor: Schema.Number,
  currency: Schema.String,
  provider_refund_order_id: Schema.NullOr(Schema.String),
  attempts: Schema.Number,
  operator_id: Schema.String,
  manifest_row_id: Schema.NullOr(Schema.String)
})
export type RefundRow = typeof RefundRow.Type

/** The first refund of a paid link (seq 1), written with the payment's record. */
export const NewLinkRefund = Schema.Struct({
  linkId: Schema.String,
  method: Schema.Literal("void", "refund"),
  idempotencyReference: Schema.String,
  merchantId: Schema.String,
  purchaseOrderId: Schema.String,
  paymentId: Schema.NullOr(Schema.String),
  amountMinor: Schema.Number,
  currency: Schema.String,
  paidAt: Schema.DateFromSelf,
  reason: Schema.String
})
export type NewLinkRefund = typeof NewLinkRefund.Type

/** An open row, and when to try it again. */
const Later = Schema.Struct({ id: Schema.String, backoffSeconds: Schema.Number })
const Detail = Schema.Struct({ id: Schema.String, detail: Schema.String })

export class LinkRefundsRepo extends Effect.Service<LinkRefundsRepo>()("Partner/LinkRefundsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insertFirst = SqlSchema.findOne({
      Request: NewLinkRefund,
      Result: IdRow,
      execute: (r) =>
        sql`
          INSERT INTO payment_link_refunds (link_id, seq, method, idempotency_reference, merchant_id, purchase_order_id, payment_id,
            amount_minor, currency, paid_at, reason)
          VALUES (${r.linkId}::uuid, 1, ${r.method}, ${r.idempotencyReference}, ${r.merchantId},
            ${r.purchaseOrderId}, ${r.paymentId}, ${r.amountMinor}, ${r.currency}, ${r.paidAt}, ${r.reason})
          ON CONFLICT (link_id, seq) DO NOTHING
          RETURNING id`
    })

    const claimDue = SqlSchema.findAll({
      Request: Schema.Struct({ linkId: Schema.NullOr(Schema.String), batch: Schema.Number }),
      Result: RefundRow,
      execute: ({ batch, linkId }) =>
        sql`
          WITH due AS (
            UPDATE payment_link_refunds SET next_attempt_at = now() + interval '5 minutes'
            WHERE id IN (
              SELECT id FROM payment_link_refunds
              WHERE state IN ('requested', 'settling') AND next_attempt_at <= now()
                ${linkId === null ? sql`` : sql`AND link_id = ${linkId}::uuid`}
              ORDER BY next_attempt_at LIMIT ${batch} FOR UPDATE SKIP LOCKED)
            RETURNING *)
          SELECT d.id, d.link_id, d.seq, d.method, d.state, d.idempotency_reference, l.idempotency_reference AS link_reference,
            d.merchant_id, d.purchase_order_id, d.payment_id, d.amount_minor::int AS amount_minor, d.currency,
            d.provider_refund_order_id, d.attempts, l.operator_id, l.manifest_row_id
          FROM due d JOIN payment_links l ON l.id = d.link_id
          ORDER BY d.created_at, d.seq`
    })

    const countAttempt = SqlSchema.void({
      Request: Schema.String,
      execute: (id) => sql`UPDATE payment_link_refunds SET attempts = attempts + 1 WHERE id = ${id}::uuid`
    })

    const open = (id: string) => sql`id = ${id}::uuid AND state IN ('requested', 'settling')`
    const at = (backoffSeconds: number) => sql`now() + make_interval(secs => ${backoffSeconds})`

    const completed = SqlSchema.void({
      Request: Schema.Struct({
        id: Schema.String,
        refundedMinor: Schema.Number,
        refundOrderId: Schema.NullOr(Schema.String)
      }),
      execute: ({ id, refundOrderId, refundedMinor }) =>
        sql`
          UPDATE payment_link_refunds SET state = 'completed', refunded_minor = ${refundedMinor},
            provider_refund_order_id = coalesce(${refundOrderId}, provider_refund_order_id), last_error = null,
            completed_at = now(), updated_at = now()
          WHERE ${open(id)}`
    })

    const settling = SqlSchema.void({
      Request: Schema.Struct({ ...Later.fields, refundOrderId: Schema.NullOr(Schema.String) }),
      execute: ({ backoffSeconds, id, refundOrderId }) =>
        sql`
          UPDATE payment_link_refunds SET state = 'settling', next_attempt_at = ${at(backoffSeconds)},
            provider_refund_order_id = coalesce(${refundOrderId}, provider_refund_order_id), updated_at = now()
          WHERE ${open(id)}`
    })

    const noAnswer = SqlSchema.void({
      Request: Schema.Struct({ ...Later.fields, detail: Schema.String }),
      execute: ({ backoffSeconds, detail, id }) =>
        sql`
          UPDATE payment_link_refunds SET next_attempt_at = ${at(backoffSeconds)}, last_error = ${
          detail.slice(0, 1000)
        }, updated_at = now()
          WHERE ${open(id)}`
    })

    const failed = SqlSchema.void({
      Request: Detail,
      execute: ({ detail, id }) =>
        sql`
          UPDATE payment_link_refunds SET state = 'failed', last_error = ${detail.slice(0, 1000)},
            alerted_at = coalesce(alerted_at, now()), updated_at = now()
          WHERE ${open(id)}`
    })

    const superseded = SqlSchema.findOne({
      Request: Detail,
      Result: IdRow,
      execute: ({ detail, id }) =>
        sql`
          UPDATE payment_link_refunds SET state = 'superseded', refunded_minor = 0, provider_refund_order_id = null,
            last_error = ${detail.slice(0, 1000)}, updated_at = now()
          WHERE ${open(id)} RETURNING id`
    })

    const partial = SqlSchema.findOne({
      Request: Schema.Struct({
        id: Schema.String,
        refundedMinor: Schema.Number,
        refundOrderId: Schema.NullOr(Schema.String)
      }),
      Result: IdRow,
      execute: ({ id, refundOrderId, refundedMinor }) =>
        sql`
          UPDATE payment_link_refunds SET state = 'partial', refunded_minor = ${refundedMinor},
            provider_refund_order_id = ${refundOrderId}, last_error = null, updated_at = now()
          WHERE ${open(id)} RETURNING id`
    })

    const insertFollowUp = SqlSchema.void({
      Request: Schema.Struct({
        of: Schema.String,
        seq: Schema.Number,
        idempotencyReference: Schema.String,
        amountMinor: Schema.Number
      }),
      execute: ({ amountMinor, idempotencyReference, of, seq }) =>
        sql`
          INSERT INTO payment_link_refunds (link_id, seq, method, idempotency_reference, merchant_id, purchase_order_id,
            payment_id, amount_minor, currency, paid_at, reason)
          SELECT link_id, ${seq}, 'refund', ${idempotencyReference}, merchant_id, purchase_order_id,
            payment_id, ${amountMinor}, currency, paid_at, reason
          FROM payment_link_refunds WHERE id = ${of}::uuid
          ON CONFLICT (link_id, seq) DO NOTHING`
    })

    return {
      ...repoEdge("LinkRefundsRepo", {
        /** The first refund of a paid link; false when the link has one already. */
        insertFirst: (refund: NewLinkRefund) => Effect.map(insertFirst(refund), Option.isSome),
        /** Claims the due rows (of one link, or all; at most `batch`) by pushing their next attempt out. */
        claimDue: (linkId: string | null, batch: number) => claimDue({ linkId, batch }),
        /** One more attempt, counted before it is made. */
        countAttempt,
        /** The provider returned the money. */
        completed: (id: string, refundedMinor: number, refundOrderId: string | null) =>
          completed({ id, refundedMinor, refundOrderId }),
        /** Accepted, not completed yet: read again after the backoff. */
        settling: (id: string, backoffSeconds: number, refundOrderId: string | null) =>
          settling({ id, backoffSeconds, refundOrderId }),
        /** No answer: sent again (same reference) after the backoff. */
        noAnswer: (id: string, backoffSeconds: number, detail: string) => noAnswer({ id, backoffSeconds, detail }),
        /** Refused: alerted, left to a person. */
        failed: (id: string, detail: string) => failed({ id, detail }),
        /** A void the provider no longer allows; false when the row was no longer open. */
        superseded: (id: string, detail: string) => Effect.map(superseded({ id, detail }), Option.isSome),
        /** Less came back than asked; false when the row was no longer open. */
        partial: (id: string, refundedMinor: number, refundOrderId: string | null) =>
          Effect.map(partial({ id, refundedMinor, refundOrderId }), Option.isSome),
        /** The follow-up of row `of`: a refund of `amountMinor` (the rest), as attempt `seq`, once. */
        insertFollowUp
      }),
      withTransaction: transactionAtEdge(sql)
    }
  })
}) {}
