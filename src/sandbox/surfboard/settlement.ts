/**
 * Settlement in the payment sandbox (store.ts): refunds and voids complete per the switches, at
 * once, after a delay, or when told (`settleNow`); applied lazily before every read and write
 * (`settleDue`), in sandbox time. Payment pages past their validity close here too.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { SandboxClock } from "./clock.js"
import { makeRowWriters, newId, type OrderRow } from "./rows.js"

export const makeSettlement = (clock: SandboxClock) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const now = clock.now
    const { insertTransaction } = yield* makeRowWriters

    const completeRefund = (paymentId: string, at: Date) =>
      Effect.gen(function*() {
        const [row] = yield* sql<{ order_id: string; settle_amount_minor: number | null; amount_minor: number }>`
          UPDATE surfboard_sandbox.payments
          SET status = 'PAYMENT_COMPLETED', completed_at = ${at}, settles_at = NULL, settle_on_request = false
          WHERE id = ${paymentId}
          RETURNING order_id, settle_amount_minor, amount_minor`
        if (!row) return
        const [order] = yield* sql<OrderRow>`SELECT * FROM surfboard_sandbox.orders WHERE id = ${row.order_id}`
        const returned = row.settle_amount_minor ?? row.amount_minor
        if (returned > 0) {
          yield* insertTransaction(order!, paymentId, newId("transaction"), "RETURN", returned, at)
        }
        const status = returned < order!.amount_minor ? "PARTIAL_PAYMENT_COMPLETED" : "PAYMENT_COMPLETED"
        yield* sql`UPDATE surfboard_sandbox.orders SET status = ${status}, updated_at = ${at} WHERE id = ${order!.id}`
      })

    const completeVoid = (paymentId: string, at: Date) =>
      Effect.zipRight(
        sql`
          UPDATE surfboard_sandbox.payments SET void_status = 'VOIDED', void_settles_at = NULL, void_on_request = false
          WHERE id = ${paymentId}`,
        sql`UPDATE surfboard_sandbox.transactions SET voided = true WHERE payment_id = ${paymentId}`
      ).pipe(
        Effect.zipRight(sql`
        UPDATE surfboard_sandbox.orders o SET updated_at = ${at}
        FROM surfboard_sandbox.payments p WHERE p.id = ${paymentId} AND o.id = p.order_id`),
        Effect.asVoid
      )

    /** Refunds and voids whose time has come complete; payment pages past their validity close. */
    const settleDue: Effect.Effect<void, never> = Effect.gen(function*() {
      const at = yield* now
      yield* sql.withTransaction(Effect.gen(function*() {
        const refunds = yield* sql<{ id: string; settles_at: Date }>`
          SELECT id, settles_at FROM surfboard_sandbox.payments
          WHERE status = 'PAYMENT_PROCESSING' AND settles_at IS NOT NULL AND settles_at <= ${at}
          ORDER BY settles_at FOR UPDATE SKIP LOCKED`
        for (const r of refunds) yield* completeRefund(r.id, r.settles_at)
        const voids = yield* sql<{ id: string; void_settles_at: Date }>`
          SELECT id, void_settles_at FROM surfboard_sandbox.payments
          WHERE void_status = 'VOID_INITIATED' AND void_settles_at IS NOT NULL AND void_settles_at <= ${at}
          FOR UPDATE SKIP LOCKED`
        for (const v of voids) yield* completeVoid(v.id, v.void_settles_at)
        const expired = yield* sql<{ id: string }>`
          UPDATE surfboard_sandbox.orders SET status = 'PAYMENT_CANCELLED', updated_at = ${at}
          WHERE status = 'PENDING' AND page_expires_at IS NOT NULL AND page_expires_at <= ${at}
          RETURNING id`
        if (expired.length > 0) {
          yield* sql`
            UPDATE surfboard_sandbox.payments SET status = 'PAYMENT_CANCELLED', failure_reason = 'PAYMENT_PAGE_EXPIRED'
            WHERE order_id IN ${
            sql.in(expired.map((o) => o.id))
          } AND status IN ('PAYMENT_INITIATED', 'PAYMENT_PROCESSING')`
        }
      }))
    }).pipe(Effect.orDie)

    /** Completes refunds and voids that wait to be told (settlement `manual`); all, or one order's or payment's. */
    const settleNow = (
      filter: { readonly orderId?: string | undefined; readonly paymentId?: string | undefined } = {}
    ) =>
      Effect.gen(function*() {
        const at = yield* now
        const orderId = filter.orderId ?? null
        const paymentId = filter.paymentId ?? null
        const refunds = yield* sql<{ id: string }>`
          UPDATE surfboard_sandbox.payments p SET settles_at = ${at}
          FROM surfboard_sandbox.orders o
          WHERE o.id = p.order_id AND p.status = 'PAYMENT_PROCESSING'
            AND (p.settle_on_request OR p.settles_at IS NOT NULL)
            AND (${orderId}::text IS NULL OR o.id = ${orderId} OR o.purchase_order_id = ${orderId})
            AND (${paymentId}::text IS NULL OR p.id = ${paymentId})
          RETURNING p.id`
        const voids = yield* sql<{ id: string }>`
          UPDATE surfboard_sandbox.payments p SET void_settles_at = ${at}
          WHERE p.void_status = 'VOID_INITIATED'
            AND (${orderId}::text IS NULL OR p.order_id = ${orderId})
            AND (${paymentId}::text IS NULL OR p.id = ${paymentId})
          RETURNING p.id`
        yield* settleDue
        return refunds.length + voids.length
      })

    return { completeRefund, completeVoid, settleDue, settleNow }
  })
