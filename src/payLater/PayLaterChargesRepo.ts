/**
 * The SQL of pay-later charging (PayLaterCharger.ts; migration 0031): claiming due charges so that
 * two instances never take the same one, attempts recorded before the provider is called, and the
 * charge's moves, each writing the booking's `pay_later_status`/`pay_later_paid_at` and the charge's
 * own columns in one transaction (the booking's triggers carry its columns into the charge's row in
 * the same statement).
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { repoEdge, transactionAtEdge } from "../db/repoEdge.js"
import { insertBalancePayment, type NewBalancePayment } from "../payments/balancePayment.js"

export const DueCharge = Schema.Struct({
  id: Schema.String,
  booking_id: Schema.String,
  operator_id: Schema.String,
  amount_minor: Schema.Number,
  currency: Schema.String,
  charge_at: Schema.DateFromSelf,
  final_deadline_at: Schema.DateFromSelf,
  state: Schema.Literal("upcoming", "failed", "collected", "cancelled"),
  retrying: Schema.Boolean,
  attempts: Schema.Number,
  token_id: Schema.NullOr(Schema.String),
  failure_message: Schema.NullOr(Schema.String),
  confirmation_code: Schema.String,
  tour_name: Schema.NullOr(Schema.String)
})
export type DueCharge = typeof DueCharge.Type

export const OpenAttempt = Schema.Struct({
  number: Schema.Number,
  idempotency_reference: Schema.String,
  merchant_id: Schema.String
})
export type OpenAttempt = typeof OpenAttempt.Type

const Moved = Schema.Struct({ id: Schema.String })

export class PayLaterChargesRepo extends Effect.Service<PayLaterChargesRepo>()("PayLater/PayLaterChargesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /**
     * Up to `batch` charges to work on now, each claimed until `leaseUntil`: due upcoming ones,
     * failed ones due for a retry, and failed-for-good ones whose guest and operator are not told
     * yet. SKIP LOCKED and the claim keep a charge with one instance at a time. Only live bookings.
     */
    const claimDue = SqlSchema.findAll({
      Request: Schema.Struct({ now: Schema.DateFromSelf, leaseUntil: Schema.DateFromSelf, batch: Schema.Number }),
      Result: DueCharge,
      execute: ({ batch, leaseUntil, now }) =>
        sql`
          WITH due AS (
            SELECT c.id FROM pay_later_charges c JOIN bookings b ON b.id = c.booking_id
            WHERE b.status IN ('RESERVED', 'CONFIRMED')
              AND (c.claimed_until IS NULL OR c.claimed_until < ${now})
              AND ((c.state = 'upcoming' AND c.charge_at <= ${now})
                OR (c.state = 'failed' AND c.retrying AND c.next_attempt_at <= ${now})
                OR (c.state = 'failed' AND NOT c.retrying AND c.link_emailed_at IS NULL))
            ORDER BY coalesce(c.next_attempt_at, c.charge_at), c.id
            LIMIT ${batch}
            FOR UPDATE OF c SKIP LOCKED
          )
          UPDATE pay_later_charges c SET claimed_until = ${leaseUntil}
          FROM due, bookings b
          WHERE c.id = due.id AND b.id = c.booking_id
          RETURNING c.id, c.booking_id, c.operator_id, c.amount_minor::int AS amount_minor, trim(c.currency) AS currency,
            c.charge_at, c.final_deadline_at, c.state, c.retrying, c.attempts, c.token_id, c.failure_message,
            b.confirmation_code, b.tour_name`
    })

    const release = SqlSchema.void({
      Request: Schema.String,
      execute: (id) => sql`UPDATE pay_later_charges SET claimed_until = NULL WHERE id = ${id}::uuid`
    })

    /** The attempt whose outcome is not known (sent, or maybe sent, and no answer recorded). */
    const openAttempt = SqlSchema.findOne({
      Request: Schema.String,
      Result: OpenAttempt,
      execute: (chargeId) =>
        sql`
          SELECT number, idempotency_reference, merchant_id FROM pay_later_attempts
          WHERE charge_id = ${chargeId}::uuid AND outcome IS NULL ORDER BY number DESC LIMIT 1`
    })

    /** A new attempt, committed before the call: its reference, and the charge's count and time. */
    const insertAttempt = SqlSchema.void({
      Request: Schema.Struct({
        chargeId: Schema.String,
        number: Schema.Number,
        reference: Schema.String,
        merchantId: Schema.String,
        amountMinor: Schema.Number,
        currency: Schema.String,
        now: Schema.DateFromSelf
      }),
      execute: (a) =>
        sql`
          WITH attempt AS (
            INSERT INTO pay_later_attempts (charge_id, number, idempotency_reference, merchant_id, amount_minor, currency,
              started_at)
            VALUES (${a.chargeId}::uuid, ${a.number}, ${a.reference}, ${a.merchantId}, ${a.amountMinor}, ${a.currency},
              ${a.now})
            RETURNING charge_id
          )
          UPDATE pay_later_charges SET attempts = ${a.number}, last_attempt_at = ${a.now}, updated_at = now()
          WHERE id = (SELECT charge_id FROM attempt)`
    })

    const finishAttempt = SqlSchema.void({
      Request: Schema.Struct({
        reference: Schema.String,
        outcome: Schema.String,
        declineReason: Schema.NullOr(Schema.String),
        orderId: Schema.NullOr(Schema.String),
        now: Schema.DateFromSelf
      }),
      execute: (f) =>
        sql`
          UPDATE pay_later_attempts SET outcome = ${f.outcome}, decline_reason = ${f.declineReason},
            provider_order_id = coalesce(${f.orderId}, provider_order_id), finished_at = ${f.now}
          WHERE idempotency_reference = ${f.reference} AND outcome IS NULL`
    })

    /** Collected: the booking's balance paid (and its payment on record, for refunds), no more attempts. */
    const markCollected = SqlSchema.findOne({
      Request: Schema.Struct({ chargeId: Schema.String, bookingId: Schema.String, paidAt: Schema.DateFromSelf }),
      Result: Moved,
      execute: ({ bookingId, chargeId, paidAt }) =>
        sql`
          WITH booking AS (
            UPDATE bookings SET pay_later_status = 'collected', pay_later_paid_at = ${paidAt}, updated_at = now()
            WHERE id = ${bookingId}::uuid AND pay_later_status IN ('upcoming', 'failed')
            RETURNING id
          )
          UPDATE pay_later_charges SET retrying = false, next_attempt_at = NULL, failure_message = NULL,
            updated_at = now()
          WHERE id = ${chargeId}::uuid AND EXISTS (SELECT 1 FROM booking)
          RETURNING id`
    })

    const insertPayment = insertBalancePayment(sql)

    /** Failed, tried again at `at` (or failed for good: `at` null). Only while the charge is still open. */
    const markFailed = SqlSchema.findOne({
      Request: Schema.Struct({
        chargeId: Schema.String,
        bookingId: Schema.String,
        at: Schema.NullOr(Schema.DateFromSelf),
        message: Schema.String
      }),
      Result: Moved,
      execute: ({ at, bookingId, chargeId, message }) =>
        sql`
          WITH booking AS (
            UPDATE bookings SET pay_later_status = 'failed', updated_at = now()
            WHERE id = ${bookingId}::uuid AND pay_later_status IN ('upcoming', 'failed')
            RETURNING id
          )
          UPDATE pay_later_charges SET state = 'failed', retrying = ${at !== null}, next_attempt_at = ${at},
            failure_message = ${message}, updated_at = now()
          WHERE id = ${chargeId}::uuid AND EXISTS (SELECT 1 FROM booking)
          RETURNING id`
    })

    const markNoticed = SqlSchema.void({
      Request: Schema.Struct({ chargeId: Schema.String, now: Schema.DateFromSelf }),
      execute: ({ chargeId, now }) =>
        sql`UPDATE pay_later_charges SET link_emailed_at = ${now} WHERE id = ${chargeId}::uuid`
    })

    /**
     * Charges in trouble, for support (the admin CLI): failed (retrying or not), and upcoming ones
     * within `withinHours` of their final deadline; soonest deadline first.
     */
    const trouble = SqlSchema.findAll({
      Request: Schema.Struct({ now: Schema.DateFromSelf, withinHours: Schema.Number, limit: Schema.Number }),
      Result: Schema.Struct({
        id: Schema.String,
        booking_id: Schema.String,
        confirmation_code: Schema.String,
        operator_id: Schema.String,
        operator_name: Schema.String,
        state: Schema.String,
        retrying: Schema.Boolean,
        attempts: Schema.Number,
        amount_minor: Schema.Number,
        currency: Schema.String,
        charge_at: Schema.DateFromSelf,
        final_deadline_at: Schema.DateFromSelf,
        last_attempt_at: Schema.NullOr(Schema.DateFromSelf),
        next_attempt_at: Schema.NullOr(Schema.DateFromSelf),
        failure_message: Schema.NullOr(Schema.String),
        link_emailed_at: Schema.NullOr(Schema.DateFromSelf),
        unknown_outcome: Schema.Boolean,
        saved_card: Schema.Boolean
      }),
      execute: ({ limit, now, withinHours }) =>
        sql`
          SELECT c.id, c.booking_id, b.confirmation_code, c.operator_id, o.name AS operator_name, c.state, c.retrying,
            c.attempts, c.amount_minor::int AS amount_minor, trim(c.currency) AS currency, c.charge_at, c.final_deadline_at,
            c.last_attempt_at, c.next_attempt_at, c.failure_message, c.link_emailed_at,
            EXISTS (SELECT 1 FROM pay_later_attempts a WHERE a.charge_id = c.id AND a.outcome IS NULL) AS unknown_outcome,
            c.token_id IS NOT NULL AS saved_card
          FROM pay_later_charges c JOIN bookings b ON b.id = c.booking_id JOIN operators o ON o.id = c.operator_id
          WHERE b.status IN ('RESERVED', 'CONFIRMED')
            AND (c.state = 'failed'
              OR (c.state = 'upcoming' AND c.final_deadline_at <= ${now}::timestamptz + make_interval(hours => ${withinHours})))
          ORDER BY c.final_deadline_at, c.id
          LIMIT ${limit}`
    })

    return {
      ...repoEdge("PayLaterChargesRepo", {
        trouble,
        claimDue,
        release,
        openAttempt,
        insertAttempt,
        finishAttempt,
        /** True when the charge was still open and is collected now. */
        markCollected: (m: { chargeId: string; bookingId: string; paidAt: Date }) =>
          Effect.map(markCollected(m), Option.isSome),
        insertPayment: (payment: NewBalancePayment) => Effect.asVoid(insertPayment(payment)),
        /** True when the charge was still open and moved. */
        markFailed: (m: { chargeId: string; bookingId: string; at: Date | null; message: string }) =>
          Effect.map(markFailed(m), Option.isSome),
        markNoticed
      }),
      withTransaction: transactionAtEdge(sql)
    }
  })
}) {}
