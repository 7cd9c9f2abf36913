import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Quickbook sales (spec quickbook-api-v1 §2, §3; src/quickbook/sales/): one row per
 * quote, keyed by the sale reference `SVC-` + 10 uppercase letters or digits. A quote holds
 * nothing: the row keeps what was quoted (departure, guests with their unit prices, totals, the
 * cart line as returned) until `valid_until`. Later steps (hold, book) move `status` on.
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
    CREATE TABLE quickbook_sales (
      reference text PRIMARY KEY CHECK (reference ~ '^SVC-[A-Z0-9]{10}$'),
      terminal_id uuid NOT NULL REFERENCES quickbook_terminals(id),
      key_id text NOT NULL REFERENCES quickbook_keys(id),
      selling_operator_id uuid NOT NULL REFERENCES operators(id),
      tour_id uuid NOT NULL REFERENCES tours(id),
      merchant_id text NOT NULL,
      product_id text NOT NULL,
      rate_id text,
      start_date date NOT NULL,
      start_time text NOT NULL CHECK (start_time ~ '^[0-2][0-9]:[0-5][0-9]$'),
      start_time_id text NOT NULL,
      guests jsonb NOT NULL,
      total_minor bigint NOT NULL CHECK (total_minor >= 0),
      vat_minor bigint NOT NULL CHECK (vat_minor >= 0),
      currency char(3) NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
      cart_line jsonb NOT NULL,
      status text NOT NULL DEFAULT 'quoted'
        CHECK (status IN ('quoted', 'held', 'expired', 'booking', 'confirmed', 'failed')),
      valid_until timestamptz NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX quickbook_sales_by_terminal ON quickbook_sales (terminal_id, created_at);
  `))
