import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Sandbox accounts (spec quickbook-api-v1 §5, §9; issue 6 item 1: test keys run entirely against
 * the sandboxes and never touch live systems; src/quickbook/terminals/testKeys.ts):
 * - `booking_system_accounts.sandbox` and `operator_payment_accounts.sandbox`: the account is a
 *   sandbox (a booking system or merchant where nothing real happens). A test key sells only where
 *   the tour's booking-system account and the selling operator's merchant are sandboxes; a live key
 *   only where neither is. Existing rows are live (the demo marks its own sandboxes at every start).
 * - the expiry sweeper (src/jobs/quickbookExpiry.ts) finds quotes past `valid_until` and holds past
 *   `hold_expires_at` through the two partial indexes.
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
    ALTER TABLE booking_system_accounts ADD COLUMN sandbox boolean NOT NULL DEFAULT false;
    ALTER TABLE operator_payment_accounts ADD COLUMN sandbox boolean NOT NULL DEFAULT false;

    CREATE INDEX quickbook_sales_quoted_until ON quickbook_sales (valid_until) WHERE status = 'quoted';
    CREATE INDEX quickbook_sales_held_until ON quickbook_sales (hold_expires_at) WHERE status = 'held';
  `))
