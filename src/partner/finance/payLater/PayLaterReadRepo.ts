/**
 * The SQL of GET /api/v1/finance/pay-later: a page of the operators' charges by charge time (keyset
 * on (charge_at, id); indexes pay_later_charges_by_operator / _by_state) and the totals per state
 * and currency over every matching charge. Bookings the API never shows (holds) are left out.
 *
 * No spans of its own (`repoEdge.untraced`, as BookingsRepo): PayLaterCharges.list's span and the
 * driver's cover both statements (bench/README.md, issue 15: the finance lists).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { repoEdge } from "../../../db/repoEdge.js"
import { toPgArray } from "../../../db/sql.js"
import { type CursorPosition, microsToIso } from "../../../http/cursor.js"

export const PayLaterChargeRow = Schema.Struct({
  id: Schema.String,
  operator_id: Schema.String,
  operator_name: Schema.String,
  booking_id: Schema.String,
  confirmation_code: Schema.String,
  experience_date: Schema.NullOr(Schema.String),
  booking_status: Schema.Literal("CONFIRMED", "CANCELLED", "REFUNDED"),
  tour_name: Schema.NullOr(Schema.String),
  amount_minor: Schema.Number,
  currency: Schema.String,
  charge_at: Schema.DateFromSelf,
  charge_micros: Schema.String,
  state: Schema.Literal("upcoming", "failed", "collected", "cancelled"),
  retrying: Schema.Boolean,
  refunded: Schema.Boolean,
  attempts: Schema.Number,
  last_attempt_at: Schema.NullOr(Schema.DateFromSelf),
  next_attempt_at: Schema.NullOr(Schema.DateFromSelf),
  failure_message: Schema.NullOr(Schema.String),
  final_deadline_at: Schema.DateFromSelf,
  collected_at: Schema.NullOr(Schema.DateFromSelf)
})
export type PayLaterChargeRow = typeof PayLaterChargeRow.Type

export const TotalRow = Schema.Struct({
  state: Schema.Literal("upcoming", "failed", "collected", "cancelled"),
  currency: Schema.String,
  charges: Schema.Number,
  amount_minor: Schema.Number
})

export interface PayLaterFilter {
  readonly operatorIds: ReadonlyArray<string>
  readonly state: string | undefined
  readonly from: string | undefined
  readonly to: string | undefined
}

export class PayLaterReadRepo extends Effect.Service<PayLaterReadRepo>()("Partner/PayLaterReadRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const where = (f: PayLaterFilter, after: CursorPosition | undefined) => {
      const clauses = [
        sql`c.operator_id = ANY(${toPgArray(f.operatorIds)}::uuid[])`,
        sql`b.status IN ('RESERVED', 'CONFIRMED', 'CANCELLED', 'REFUNDED')`
      ]
      if (f.state !== undefined) clauses.push(sql`c.state = ${f.state}`)
      if (f.from !== undefined) clauses.push(sql`c.charge_at >= (${f.from}::date)::timestamp AT TIME ZONE 'UTC'`)
      if (f.to !== undefined) clauses.push(sql`c.charge_at < (${f.to}::date + 1)::timestamp AT TIME ZONE 'UTC'`)
      if (after !== undefined) {
        clauses.push(sql`(c.charge_at, c.id) > (${microsToIso(after.createdMicros)}::timestamptz, ${after.id}::uuid)`)
      }
      return sql.and(clauses)
    }

    // Plain rows, typed by the schemas above, with no decoding beyond the driver's types
    // (src/db/pgTypes.ts): the columns are what the schemas say (bench/finance.ts measured the
    // per-row decoding as a share of the read's CPU).
    const page = (filter: PayLaterFilter, after: CursorPosition | undefined, take: number) =>
      sql<PayLaterChargeRow>`
          SELECT c.id, c.operator_id, o.name AS operator_name, b.id AS booking_id, b.confirmation_code,
            b.experience_date::text AS experience_date,
            CASE WHEN b.status = 'RESERVED' THEN 'CONFIRMED' ELSE b.status END AS booking_status, b.tour_name,
            c.amount_minor::int AS amount_minor, trim(c.currency) AS currency, c.charge_at,
            ((extract(epoch FROM c.charge_at) * 1000000)::bigint)::text AS charge_micros,
            c.state, c.retrying, c.refunded, c.attempts, c.last_attempt_at, c.next_attempt_at, c.failure_message,
            c.final_deadline_at, c.collected_at
          FROM pay_later_charges c JOIN bookings b ON b.id = c.booking_id JOIN operators o ON o.id = c.operator_id
          WHERE ${where(filter, after)}
          ORDER BY c.charge_at, c.id
          LIMIT ${take}`

    const totals = (filter: PayLaterFilter) =>
      sql<typeof TotalRow.Type>`
          SELECT c.state, trim(c.currency) AS currency, count(*)::int AS charges, sum(c.amount_minor)::float8 AS amount_minor
          FROM pay_later_charges c JOIN bookings b ON b.id = c.booking_id
          WHERE ${where(filter, undefined)}
          GROUP BY c.state, trim(c.currency)
          ORDER BY c.state, trim(c.currency)`

    return repoEdge.untraced({ page, totals })
  })
}) {}
