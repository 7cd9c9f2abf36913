import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The assistant's two-call writes (issue 16; docs/assistant.md "Confirmations";
 * src/assistant/confirmations/):
 *
 * - `assistant_confirmations`: one row per first call of a write tool. The confirm token is kept
 *   only as its SHA-256 (`token_hash`); the row binds it to the connection (its `api_keys` row), the
 *   tool, a hash of the exact decoded arguments, the booking (or manifest row) and a fingerprint of
 *   that target's state as the summary showed it; it expires 5 minutes after it was made (the
 *   service's clock). `used_at` is set by the one second call that runs the write (a lease: a
 *   second call that died is taken over after `CONFIRMATION_LEASE_SECONDS`); `result_status` and
 *   `result_body` keep that write's final answer, which a retried second call replays.
 * - `write_audit` gains the channel (`api` | `mcp`), the MCP client and the person who signed in, so
 *   a write made through an assistant says so.
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
    CREATE TABLE assistant_confirmations (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      token_hash text NOT NULL UNIQUE,
      connection_id text NOT NULL REFERENCES api_keys(id),
      tool text NOT NULL,
      arguments_hash text NOT NULL,
      target_id text NOT NULL,
      state_fingerprint text NOT NULL,
      summary text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      used_at timestamptz,
      result_status integer,
      result_body text,
      CHECK ((result_status IS NULL) = (result_body IS NULL)),
      CHECK (result_status IS NULL OR used_at IS NOT NULL)
    );
    CREATE INDEX assistant_confirmations_by_connection ON assistant_confirmations (connection_id, created_at DESC);
    CREATE INDEX assistant_confirmations_by_expiry ON assistant_confirmations (expires_at);

    ALTER TABLE write_audit
      ADD COLUMN channel text NOT NULL DEFAULT 'api' CHECK (channel IN ('api', 'mcp')),
      ADD COLUMN client_id text,
      ADD COLUMN client_name text,
      ADD COLUMN person_id text,
      ADD COLUMN person_email text;
  `))
