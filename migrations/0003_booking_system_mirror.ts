import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Booking-system accounts, the operators linked to them, the mirror of every booking line with a
 * departure in the mirrored window (all sales channels), per-day sync times, job and refresh runs, check-ins.
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
    CREATE TABLE booking_system_accounts (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      kind text NOT NULL CHECK (kind IN ('bokun')),
      name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
      base_url text NOT NULL CHECK (base_url ~ '^https?://'),
      access_key text NOT NULL,
      secret_key text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );

    -- Several operators may share one account: it is mirrored once.
    ALTER TABLE operators ADD COLUMN booking_system_account_id uuid REFERENCES booking_system_accounts(id);
    CREATE INDEX operators_by_booking_system_account ON operators (booking_system_account_id);

    -- The booking system's product behind a tour (Bókun activity id), within the operator's account.
    ALTER TABLE tours ADD COLUMN booking_system_product_id text;
    CREATE INDEX tours_by_booking_system_product ON tours (booking_system_product_id)
      WHERE booking_system_product_id IS NOT NULL;

    -- One row per booking line. The id is ours and stable for the line (manifest row id).
    -- Rows are never deleted: a line that disappears from the booking system becomes CANCELLED.
    CREATE TABLE manifest_rows (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      account_id uuid NOT NULL REFERENCES booking_system_accounts(id),
      line_id text NOT NULL,
      booking_id text NOT NULL,
      reference text,
      external_reference text,
      -- The operator whose product it is (its tour's operator; else the account's first operator).
      operator_id uuid NOT NULL REFERENCES operators(id),
      tour_id uuid REFERENCES tours(id),
      -- Our own booking, when the service's checkout sold it.
      service_booking_id uuid REFERENCES bookings(id),
      status text NOT NULL CHECK (status IN ('CONFIRMED', 'RESERVED', 'CANCELLED')),
      product_id text NOT NULL,
      product_title text,
      rate_id text,
      rate_title text,
      start_time_id text,
      departure_date date NOT NULL,
      start_time text CHECK (start_time ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'),
      timezone text NOT NULL,
      participants integer NOT NULL CHECK (participants >= 0),
      pax_breakdown jsonb,
      channel_class text,
      channel_source text,
      channel_title text,
      guest_name text,
      guest_email text,
      guest_phone text,
      pickup_place text,
      pickup_time text,
      payment_status text,
      total_minor bigint,
      currency char(3),
      booked_at timestamptz,
      source_updated_at timestamptz,
      first_seen_at timestamptz NOT NULL DEFAULT now(),
      synced_at timestamptz NOT NULL DEFAULT now(),
      cancelled_at timestamptz,
      UNIQUE (account_id, line_id)
    );
    CREATE INDEX manifest_rows_by_day ON manifest_rows (operator_id, departure_date);
    CREATE INDEX manifest_rows_by_account_day ON manifest_rows (account_id, departure_date);
    CREATE INDEX manifest_rows_by_service_booking ON manifest_rows (service_booking_id)
      WHERE service_booking_id IS NOT NULL;

    -- When the mirror last refreshed an account's departure day (successfully).
    CREATE TABLE mirror_days (
      account_id uuid NOT NULL REFERENCES booking_system_accounts(id) ON DELETE CASCADE,
      departure_date date NOT NULL,
      synced_at timestamptz NOT NULL,
      PRIMARY KEY (account_id, departure_date)
    );

    -- Every run of a scheduled job (jobs/): one row per run, whichever instance ran it.
    CREATE TABLE job_runs (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      job text NOT NULL,
      instance text NOT NULL,
      started_at timestamptz NOT NULL DEFAULT now(),
      finished_at timestamptz,
      outcome text NOT NULL CHECK (outcome IN ('running', 'ok', 'failed')),
      summary jsonb
    );
    CREATE INDEX job_runs_by_job ON job_runs (job, started_at DESC);

    -- One run of the mirror refresh per account (for operators: what ran, what it found).
    CREATE TABLE mirror_runs (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      account_id uuid NOT NULL REFERENCES booking_system_accounts(id) ON DELETE CASCADE,
      job_run_id uuid REFERENCES job_runs(id),
      kind text NOT NULL,
      date_from date NOT NULL,
      date_to date NOT NULL,
      started_at timestamptz NOT NULL,
      finished_at timestamptz,
      outcome text NOT NULL CHECK (outcome IN ('running', 'ok', 'failed')),
      lines_seen integer NOT NULL DEFAULT 0,
      inserted integer NOT NULL DEFAULT 0,
      updated integer NOT NULL DEFAULT 0,
      cancelled integer NOT NULL DEFAULT 0,
      error text
    );
    CREATE INDEX mirror_runs_by_account ON mirror_runs (account_id, started_at DESC);

    -- Check-in state of a manifest row. Kept apart from the mirror, which never touches it.
    CREATE TABLE manifest_checkins (
      row_id uuid PRIMARY KEY REFERENCES manifest_rows(id),
      status text NOT NULL CHECK (status IN ('checked_in', 'no_show')),
      present integer CHECK (present >= 0),
      updated_at timestamptz NOT NULL DEFAULT now(),
      updated_by_key text REFERENCES api_keys(id),
      CHECK (present IS NULL OR status = 'checked_in')
    );
  `))
