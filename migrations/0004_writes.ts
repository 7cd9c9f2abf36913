import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * What every write shares: idempotency records, daily write counters and per-key overrides of the
 * daily limits, and the audit log of write attempts. See docs/decisions.md ("Writes: ...").
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
    -- One row per (API key, Idempotency-Key) for 24 hours. 'running' while a request holds the claim
    -- (until lease_until, renewed while it runs); 'done' holds the response to replay.
    CREATE TABLE idempotency_records (
      key_id text NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
      idempotency_key text NOT NULL CHECK (length(idempotency_key) BETWEEN 1 AND 255),
      action text NOT NULL,
      -- sha256 (hex) of method, path and canonical body: "the same request"
      fingerprint text NOT NULL,
      state text NOT NULL CHECK (state IN ('running', 'done')),
      -- Which attempt holds the claim: every update is fenced on it.
      claim_token uuid NOT NULL,
      lease_until timestamptz NOT NULL,
      -- The UTC day whose daily-limit slot this attempt holds (reused if a retry takes over).
      slot_day date,
      response_status integer,
      response_content_type text,
      response_headers jsonb,
      -- The exact body bytes as text, so that a replay is byte-identical (jsonb would reorder keys).
      response_body text,
      created_at timestamptz NOT NULL DEFAULT now(),
      completed_at timestamptz,
      expires_at timestamptz NOT NULL,
      PRIMARY KEY (key_id, idempotency_key),
      CHECK (state = 'running' OR (response_status IS NOT NULL AND response_body IS NOT NULL))
    );
    CREATE INDEX idempotency_records_by_expiry ON idempotency_records (expires_at);
    CREATE UNIQUE INDEX idempotency_records_by_claim ON idempotency_records (claim_token);

    -- Writes counted per key, action and UTC day (database clock). Only successful, non-no-op
    -- writes stay counted: a reserved slot is given back when the outcome is refused or a no-op.
    CREATE TABLE daily_write_counters (
      key_id text NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
      action text NOT NULL CHECK (action IN ('checkins', 'payment_links', 'cancels', 'reschedules')),
      day date NOT NULL,
      used integer NOT NULL CHECK (used >= 0),
      PRIMARY KEY (key_id, action, day)
    );

    -- Per-key overrides of the default daily limits (absent: the default applies).
    CREATE TABLE api_key_daily_limits (
      key_id text NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
      action text NOT NULL CHECK (action IN ('checkins', 'payment_links', 'cancels', 'reschedules')),
      daily_limit integer NOT NULL CHECK (daily_limit >= 0),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (key_id, action)
    );

    -- Every write attempt that reached a write endpoint's handler, whatever its outcome.
    -- Rows are never updated or deleted by the service. Keys are revoked, never deleted, so the
    -- foreign key keeps the log complete.
    CREATE TABLE write_audit (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      at timestamptz NOT NULL DEFAULT now(),
      key_id text NOT NULL REFERENCES api_keys(id),
      -- The target's operator; null when the target was not found (or not the key's).
      operator_id uuid REFERENCES operators(id),
      action text NOT NULL CHECK (action IN ('checkins', 'payment_links', 'cancels', 'reschedules')),
      target_id text NOT NULL,
      request_id text NOT NULL,
      idempotency_key text,
      outcome text NOT NULL CHECK (outcome IN ('done', 'noop', 'replayed', 'refused', 'failed')),
      status integer NOT NULL,
      -- Problem type slug of a refusal or failure (e.g. daily-limit-reached, not-found).
      reason text,
      detail text
    );
    CREATE INDEX write_audit_by_key ON write_audit (key_id, id DESC);
    CREATE INDEX write_audit_by_operator ON write_audit (operator_id, id DESC) WHERE operator_id IS NOT NULL;
  `))
