/**
 * The SQL of GET /api/v1/finance/chargebacks (migration 0030): chargebacks matched to bookings of
 * the operators in view (listed booking statuses only), newest first (keyset on `first_seen_at, id`,
 * index chargebacks_by_operator). Unmatched chargebacks have no operator and never appear.
 *
 * No span of its own (`repoEdge.untraced`, as BookingsRepo): Chargebacks.list's span and the
 * driver's cover it, and a span per statement was a measurable share of this cheap read's Node CPU
 * over the floor's (bench/README.md, issue 15: the finance lists).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { repoEdge } from "../../../db/repoEdge.js"
import { toPgArray } from "../../../db/sql.js"
import { type CursorPosition, microsToIso } from "../../../http/cursor.js"
import type { ChargebackRow } from "./rules.js"

export interface ChargebackListRequest {
  readonly operatorIds: ReadonlyArray<string>
  readonly from?: string | undefined
  readonly to?: string | undefined
  readonly after?: CursorPosition | undefined
}

export class ChargebacksRepo extends Effect.Service<ChargebacksRepo>()("Partner/ChargebacksRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const list = (r: ChargebackListRequest, take: number) => {
      const clauses = [
        sql`c.operator_id = ANY(${toPgArray(r.operatorIds)}::uuid[])`,
        sql.literal(`b.status IN ('RESERVED', 'CONFIRMED', 'CANCELLED', 'REFUNDED')`)
      ]
      if (r.from) clauses.push(sql`c.first_seen_at >= (${r.from}::date::timestamp AT TIME ZONE 'UTC')`)
      if (r.to) clauses.push(sql`c.first_seen_at < ((${r.to}::date + 1)::timestamp AT TIME ZONE 'UTC')`)
      if (r.after) {
        clauses.push(
          sql`(c.first_seen_at, c.id) < (${microsToIso(r.after.createdMicros)}::timestamptz, ${r.after.id}::uuid)`
        )
      }
      return sql<ChargebackRow>`
        SELECT c.id, c.operator_id, o.name AS operator_name, c.booking_id, b.confirmation_code,
          to_char(b.experience_date, 'YYYY-MM-DD') AS experience_date, b.status AS booking_status,
          c.amount_minor::text, c.currency, c.fee_minor::text, c.settled_currency, c.settled_amount_minor::text,
          c.settled_fee_minor::text, c.dispute_reference, c.dispute_status, c.reason,
          to_char(c.transaction_date, 'YYYY-MM-DD') AS transaction_date,
          to_char(c.registered_at, 'YYYY-MM-DD') AS registered_at, to_char(c.respond_by, 'YYYY-MM-DD') AS respond_by,
          to_char(c.settled_on, 'YYYY-MM-DD') AS settled_on, c.first_seen_at,
          (extract(epoch FROM c.first_seen_at) * 1000000)::bigint::text AS seen_micros
        FROM chargebacks c
        JOIN bookings b ON b.id = c.booking_id
        JOIN operators o ON o.id = c.operator_id
        WHERE ${sql.and(clauses)}
        ORDER BY c.first_seen_at DESC, c.id DESC
        LIMIT ${take}`
    }

    return repoEdge.untraced({ list })
  })
}) {}
