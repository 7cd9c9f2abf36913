import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Progress records of booking changes made through the booking system (reschedules today). A row
 * is written (`moving`) before the booking system is asked to move the line, marked `moved` when
 * it answered, and `done` when the service's booking, the mirror row and the emails committed
 * together; `abandoned` when the booking system did not move it. The row's id is the occurrence
 * id of the change's email dedupe keys. A row left at `moving`/`moved` past its lease is finished
 * by the booking-change recovery job (src/jobs/bookingChangeRecovery.ts).
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
    CREATE TABLE booking_changes (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      booking_id uuid NOT NULL REFERENCES bookings(id),
      kind text NOT NULL CHECK (kind IN ('reschedule')),
      state text NOT NULL CHECK (state IN ('moving', 'moved', 'done', 'abandoned')),
      key_id text REFERENCES api_keys(id),
      request_id text,
      account_id uuid NOT NULL REFERENCES booking_system_accounts(id),
      booking_reference text NOT NULL,
      line_id text NOT NULL,
      from_date date NOT NULL,
      from_start_time text,
      from_start_time_id text,
      from_rate_id text,
      from_rate_title text,
      to_date date NOT NULL,
      to_start_time text,
      to_start_time_id text NOT NULL,
      to_rate_id text,
      to_rate_title text,
      change_rate boolean NOT NULL DEFAULT false,
      -- Who runs it: a live request renews nothing; past lease_until a crash is assumed.
      lease_until timestamptz NOT NULL,
      attempts integer NOT NULL DEFAULT 0,
      last_error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      moved_at timestamptz,
      finished_at timestamptz
    );
    -- At most one unfinished change per booking.
    CREATE UNIQUE INDEX booking_changes_open ON booking_changes (booking_id) WHERE state IN ('moving', 'moved');
    CREATE INDEX booking_changes_stale ON booking_changes (lease_until) WHERE state IN ('moving', 'moved');
    CREATE INDEX booking_changes_by_booking ON booking_changes (booking_id, created_at DESC);
  `))
