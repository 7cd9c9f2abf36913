import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Quickbook payments that do not match their sale (issue 11 item 5; docs/decisions.md "Quickbook: a
 * payment that does not match"): a `mismatch` keeps what the provider says the payment took
 * (`amount_minor`, `currency`, `merchant_id`, `paid_at`, and `order_reference_id`, the sale
 * reference the order carries), so that it can be presented again for the sale it does pay, and
 * so that the quickbook-recovery job can return the money once no sale will use it: such a
 * payment moves on to `refunding` → `refunded` with role `stray` (it pays no sale). The partial
 * index finds the mismatches the job looks at.
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
    ALTER TABLE quickbook_payments DROP CONSTRAINT quickbook_payments_role_check;
    ALTER TABLE quickbook_payments ADD CONSTRAINT quickbook_payments_role_check CHECK (role IN ('sale', 'duplicate', 'stray'));
    ALTER TABLE quickbook_payments ADD COLUMN order_reference_id text;
    CREATE INDEX quickbook_payments_mismatched ON quickbook_payments (updated_at) WHERE state = 'mismatch';
  `))
