/**
 * The SQL of GET /api/v1/sales: the sales summary's read tables of the operators in view (per
 * operator, day and currency; per operator, day, channel and currency: migration 0028), summed per
 * day, and what the sales ledger knows of their booking-system accounts.
 *
 * A hot read (benchmarked against the bare floor running these very statements: bench/README.md):
 * plain `sql<Row>` typed rows and no spans of its own (`repoEdge.untraced`; Sales.summary's span and
 * the driver's cover them).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { repoEdge } from "../../db/repoEdge.js"
import { toPgArray } from "../../db/sql.js"
import type { ChannelDayRow, LedgerCoverage, OwnDayRow } from "./rules.js"

export interface SalesRange {
  readonly operatorIds: ReadonlyArray<string>
  readonly from: string
  readonly to: string
}

export class SalesRepo extends Effect.Service<SalesRepo>()("Partner/SalesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const ownDays = (r: SalesRange) =>
      sql<OwnDayRow>`
        SELECT day, currency, operator_id, bookings, revenue_minor
        FROM sales_own_day_totals
        WHERE operator_id = ANY(${toPgArray(r.operatorIds)}::uuid[]) AND day BETWEEN ${r.from}::date AND ${r.to}::date
        ORDER BY day, operator_id, currency`

    const channelDays = (r: SalesRange) =>
      sql<ChannelDayRow>`
        SELECT day, channel_label AS label, currency, sum(bookings)::int8 AS bookings,
          sum(participants)::int8 AS participants, sum(revenue_minor)::int8 AS revenue_minor
        FROM sales_channel_day_totals
        WHERE operator_id = ANY(${toPgArray(r.operatorIds)}::uuid[]) AND day BETWEEN ${r.from}::date AND ${r.to}::date
        GROUP BY day, channel_label, currency`

    /** The booking-system accounts of these operators (each once) with their ledger's state. */
    const coverage = (operatorIds: ReadonlyArray<string>) =>
      sql<LedgerCoverage>`
        SELECT o.booking_system_account_id AS account_id, array_agg(o.id::text ORDER BY o.name) AS operator_ids,
          a.covered_from, a.covered_until, a.last_outcome, a.last_attempt_at
        FROM operators o
        LEFT JOIN sales_ledger_accounts a ON a.account_id = o.booking_system_account_id
        WHERE o.id = ANY(${toPgArray(operatorIds)}::uuid[]) AND o.booking_system_account_id IS NOT NULL
        GROUP BY o.booking_system_account_id, a.covered_from, a.covered_until, a.last_outcome, a.last_attempt_at`

    return repoEdge.untraced({ ownDays, channelDays, coverage })
  })
}) {}
