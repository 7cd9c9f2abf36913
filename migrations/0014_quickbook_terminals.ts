import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Quickbook desk sales (spec quickbook-api-v1 §5; src/quickbook/terminals/QuickbookKeys.ts):
 * - `quickbook_terminals`: a desk terminal of one selling operator; its id (a UUID) is sent as
 *   the `Quickbook-Terminal` header. Deactivated terminals stay (sales refer to them).
 * - `quickbook_keys`: `svcqb_live_<id>_<secret>` / `svcqb_test_<id>_<secret>`; only the SHA-256
 *   hash of the secret is stored (as for partner keys). `mode` test keys use the sandboxes only.
 * - `quickbook_key_terminals`: the terminals a key may act for (at least one to be useful).
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
    CREATE TABLE quickbook_terminals (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      operator_id uuid NOT NULL REFERENCES operators(id),
      name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
      created_at timestamptz NOT NULL DEFAULT now(),
      deactivated_at timestamptz
    );
    CREATE INDEX quickbook_terminals_by_operator ON quickbook_terminals (operator_id);

    CREATE TABLE quickbook_keys (
      id text PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9]{20}$'),
      mode text NOT NULL CHECK (mode IN ('live', 'test')),
      name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
      secret_hash bytea NOT NULL CHECK (length(secret_hash) = 32),
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz,
      revoked_at timestamptz
    );

    CREATE TABLE quickbook_key_terminals (
      key_id text NOT NULL REFERENCES quickbook_keys(id) ON DELETE CASCADE,
      terminal_id uuid NOT NULL REFERENCES quickbook_terminals(id),
      bound_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (key_id, terminal_id)
    );
    CREATE INDEX quickbook_key_terminals_by_terminal ON quickbook_key_terminals (terminal_id);
  `))
