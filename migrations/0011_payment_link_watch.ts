import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Noticing when a balance payment link is paid (src/partner/paymentLinks/LinkStatusChecks.ts, the
 * `payment-link-watch` job; docs/api/writes.md "When the guest pays").
 *
 * `payment_links` gains:
 * - state `closing`: a `creating` row nobody finished (past a grace period), taken over by the job.
 *   No request reuses it: the job learns its link at the provider (the same reference and request
 *   again), records it as paid if it was, else cancels it there, then closes it;
 * - `next_check_at`: when the job next asks the provider about an `open` (or `closing`) link;
 *   checks back off as the link ages (and after a provider that did not answer);
 * - `checks`, `last_checked_at`, `last_error`: what the job saw last.
 * Existing open links are due at once.
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
    ALTER TABLE payment_links DROP CONSTRAINT payment_links_state_check;
    ALTER TABLE payment_links ADD CONSTRAINT payment_links_state_check
      CHECK (state IN ('creating', 'open', 'closing', 'closed'));
    ALTER TABLE payment_links ADD COLUMN next_check_at timestamptz NOT NULL DEFAULT now();
    ALTER TABLE payment_links ADD COLUMN checks integer NOT NULL DEFAULT 0;
    ALTER TABLE payment_links ADD COLUMN last_checked_at timestamptz;
    ALTER TABLE payment_links ADD COLUMN last_error text;
    CREATE INDEX payment_links_watch ON payment_links (next_check_at) WHERE state IN ('open', 'closing');
    CREATE INDEX payment_links_stuck ON payment_links (updated_at) WHERE state = 'creating';
  `))
