import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The commission ledger (issue 15; docs/api/finance.md "Statements"): one entry per booking event
 * that moves commission, written when the event happens and never edited afterwards except for
 * `pending` (cleared when the entry's money is final). A sale, a cancellation (commission given back:
 * negative amounts) or a party difference (the booking's amount changed: the difference), in the
 * booking's currency, with the commission rate and the reserve fee. `source_key` makes writing an
 * event idempotent ('sale:<booking>', 'cancellation:<booking>', 'difference:<booking>:<n>').
 * Statements (GET /api/v1/finance/statements) and commission invoices read it.
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
    CREATE TABLE commission_entries (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      booking_id uuid NOT NULL REFERENCES bookings(id),
      operator_id uuid NOT NULL REFERENCES operators(id),
      type text NOT NULL CHECK (type IN ('sale', 'cancellation', 'difference')),
      occurred_at timestamptz NOT NULL,
      currency char(3) NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
      gross_minor bigint NOT NULL,
      commission_rate_percent numeric(6, 3) NOT NULL,
      commission_minor bigint NOT NULL,
      reserve_fee_minor bigint NOT NULL DEFAULT 0,
      pending boolean NOT NULL DEFAULT false,
      source_key text NOT NULL UNIQUE,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX commission_entries_by_operator ON commission_entries (operator_id, occurred_at, id);
    CREATE INDEX commission_entries_by_booking ON commission_entries (booking_id);
  `))
