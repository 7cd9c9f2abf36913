import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The other-channel sales ledger (src/sales/SalesLedger.ts; docs/booking-system.md "Sales ledger").
 *
 * `sales_ledger_lines`: every booking line of a linked booking-system account, by the BOOKING's
 * creation time (`created_at`), whatever its departure day, from every sales channel (the lines the
 * service sold itself too: channel_class 'service'; the sales rollup leaves them out). `operator_id`
 * is resolved as the mirror resolves it (src/mirror/lineOwner.ts). `changed_at` is set on insert and
 * whenever a stored field changes, never when a refresh finds the line unchanged: the rollup job
 * finds what changed since its last run through its index. `synced_at`: when a refresh last saw it.
 *
 * `sales_ledger_accounts`: one row per account with a ledger. Every line created on or after the
 * UTC day `covered_from` and before the instant `covered_until` is in the ledger;
 * `last_outcome`/`last_error` say how the latest refresh or backfill step of the account went.
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
    CREATE TABLE sales_ledger_lines (
      account_id uuid NOT NULL REFERENCES booking_system_accounts(id),
      line_id text NOT NULL,
      booking_id text NOT NULL,
      external_reference text,
      operator_id uuid NOT NULL REFERENCES operators(id),
      tour_id uuid NULL,
      product_id text NOT NULL,
      status text NOT NULL CHECK (status IN ('CONFIRMED', 'RESERVED', 'CANCELLED')),
      channel_class text NULL CHECK (channel_class IN ('service', 'ota', 'direct', 'reseller')),
      channel_title text NULL,
      participants int NOT NULL,
      total_minor bigint NOT NULL,
      currency char(3) NOT NULL,
      created_at timestamptz NOT NULL,
      changed_at timestamptz NOT NULL DEFAULT now(),
      synced_at timestamptz,
      PRIMARY KEY (account_id, line_id)
    );
    CREATE INDEX sales_ledger_lines_changed ON sales_ledger_lines (changed_at);
    CREATE INDEX sales_ledger_lines_by_operator ON sales_ledger_lines (operator_id, created_at);
    -- A refresh's lines of an account created in its range (those it no longer lists are cancelled).
    CREATE INDEX sales_ledger_lines_by_account ON sales_ledger_lines (account_id, created_at);

    CREATE TABLE sales_ledger_accounts (
      account_id uuid PRIMARY KEY REFERENCES booking_system_accounts(id),
      covered_from date NULL,
      covered_until timestamptz NULL,
      last_attempt_at timestamptz,
      last_outcome text CHECK (last_outcome IN ('ok', 'failed')),
      last_error text NULL,
      updated_at timestamptz NOT NULL DEFAULT now()
    );
  `))
