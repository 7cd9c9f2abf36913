/**
 * Which operator (and tour) a booking line of a shared booking-system account belongs to: the
 * operator whose tour is the line's product (among the account's operators; the oldest such tour),
 * else the account's primary operator (its first by name). The mirror (`manifest_rows`) and the
 * sales ledger (`sales_ledger_lines`) both resolve lines with this one fragment.
 */
import type { SqlClient } from "@effect/sql"

export interface LineOwners {
  /** The account's operators. */
  readonly operatorIds: ReadonlyArray<string>
  /** The operator that owns the lines of no operator's tour. */
  readonly primaryOperatorId: string
}

/**
 * Joins `t` (the tour: `t.id`, `t.operator_id`, or nulls) and `o` (the owning operator) to a row
 * source aliased `i` that has a `product_id` column.
 */
export const lineOwnerJoin = (sql: SqlClient.SqlClient, owners: LineOwners) =>
  sql`
    LEFT JOIN LATERAL (
      SELECT t.id, t.operator_id FROM tours t
      WHERE t.booking_system_product_id = i.product_id
        AND t.operator_id = ANY(${`{${owners.operatorIds.join(",")}}`}::uuid[])
      ORDER BY t.created_at, t.id LIMIT 1
    ) t ON true
    JOIN operators o ON o.id = coalesce(t.operator_id, ${owners.primaryOperatorId}::uuid)`
