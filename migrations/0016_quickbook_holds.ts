import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Quickbook seat holds (spec quickbook-api-v1 §3 POST/DELETE /reserve; src/quickbook/sales/QuickbookHolds.ts):
 * the booking system's hold id, when it lapses and the client's idempotency key of the hold that
 * made it, on the sale row. Set while the sale is `held`; cleared when it is released
 * (`hold_released_at` keeps when).
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
    ALTER TABLE quickbook_sales
      ADD COLUMN hold_id text,
      ADD COLUMN hold_expires_at timestamptz,
      ADD COLUMN hold_idempotency_key text,
      ADD COLUMN hold_released_at timestamptz,
      ADD CONSTRAINT quickbook_sales_held_has_hold CHECK (status <> 'held' OR (hold_id IS NOT NULL AND hold_expires_at IS NOT NULL));
  `))
