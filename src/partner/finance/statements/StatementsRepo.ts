/**
 * The SQL of GET /api/v1/finance/statements: the month's statement numbers, the sections (counts and
 * sums over every entry per operator and currency) and the first entries of each section, oldest
 * first, from the commission ledger (`commission_entries`, migration 0029; numbers and the index per
 * operator and currency: migration 0032).
 *
 * A read benchmarked at 10,000 entries in a month (bench/statements.ts): plain `sql<Row>` rows, no
 * decoding beyond the driver's types (src/db/pgTypes.ts).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { repoEdge } from "../../../db/repoEdge.js"
import { toPgArray } from "../../../db/sql.js"
import type { EntryRow, SectionRow } from "./rules.js"

export interface StatementsRange {
  readonly operatorIds: ReadonlyArray<string>
  readonly start: Date
  readonly end: Date
}

export class StatementsRepo extends Effect.Service<StatementsRepo>()("Partner/StatementsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** The statement numbers of these operators for the month starting at `start` (UTC). */
    const numbers = (r: StatementsRange) =>
      sql<{ operator_id: string; number: string }>`
        SELECT operator_id, number FROM commission_statements
        WHERE operator_id = ANY(${toPgArray(r.operatorIds)}::uuid[])
          AND month = (${r.start}::timestamptz AT TIME ZONE 'UTC')::date`

    const sections = (r: StatementsRange) =>
      sql<SectionRow>`
        SELECT operator_id, currency,
          count(*) FILTER (WHERE type = 'sale')::int AS sales,
          count(*) FILTER (WHERE type = 'cancellation')::int AS cancellations,
          count(*) FILTER (WHERE type = 'difference')::int AS differences,
          sum(gross_minor)::int8 AS gross_minor,
          sum(commission_minor)::int8 AS commission_minor,
          sum(reserve_fee_minor)::int8 AS reserve_fee_minor,
          count(*)::int AS entries_total,
          bool_or(pending) AS pending
        FROM commission_entries
        WHERE operator_id = ANY(${toPgArray(r.operatorIds)}::uuid[])
          AND occurred_at >= ${r.start} AND occurred_at < ${r.end}
        GROUP BY operator_id, currency`

    /** The first `limit` entries of each (operator, currency), oldest first (occurred_at, id). */
    const entries = (r: StatementsRange & { readonly currencies: ReadonlyArray<string>; readonly limit: number }) =>
      sql<EntryRow>`
        SELECT s.operator_id, e.type, e.occurred_at, s.currency, b.confirmation_code,
          coalesce(b.tour_name, t.title, '') AS tour, b.experience_date,
          e.gross_minor, e.commission_rate_percent, e.commission_minor, e.reserve_fee_minor
        FROM unnest(${toPgArray(r.operatorIds)}::uuid[], ${toPgArray(r.currencies)}::text[]) AS s(operator_id, currency)
        CROSS JOIN LATERAL (
          SELECT * FROM commission_entries c
          WHERE c.operator_id = s.operator_id AND c.currency = s.currency
            AND c.occurred_at >= ${r.start} AND c.occurred_at < ${r.end}
          ORDER BY c.occurred_at, c.id
          LIMIT ${r.limit}
        ) e
        JOIN bookings b ON b.id = e.booking_id
        LEFT JOIN tours t ON t.id = b.tour_id
        ORDER BY s.operator_id, s.currency, e.occurred_at, e.id`

    return repoEdge.untraced({ numbers, sections, entries })
  })
}) {}
