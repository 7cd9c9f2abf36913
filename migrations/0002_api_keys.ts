import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Partner API keys, the operators picked for each, rate-limit counters and service secrets. */
export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
    CREATE TABLE api_keys (
      id text PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9]{16,40}$'),
      secret_hash bytea NOT NULL,
      name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
      scopes text[] NOT NULL,
      created_by uuid NOT NULL REFERENCES users(id),
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      revoked_at timestamptz
    );
    CREATE INDEX api_keys_by_creator ON api_keys (created_by);

    CREATE TABLE api_key_operators (
      key_id text NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
      operator_id uuid NOT NULL REFERENCES operators(id) ON DELETE CASCADE,
      PRIMARY KEY (key_id, operator_id)
    );

    -- Fixed-window request counters shared by every instance. Unlogged: a crash only resets
    -- the current windows, and the hot counter rows cost no WAL flush per request.
    CREATE UNLOGGED TABLE rate_limit_counters (
      bucket text PRIMARY KEY,
      window_start timestamptz NOT NULL,
      count integer NOT NULL
    );

    -- Secrets the instances share, created once (e.g. the key that signs list cursors).
    CREATE TABLE service_secrets (
      name text PRIMARY KEY,
      value bytea NOT NULL
    );
    INSERT INTO service_secrets (name, value) VALUES (
      'cursor',
      decode(replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', ''), 'hex')
    );
  `))
