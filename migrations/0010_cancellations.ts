import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Cancel with a full refund (POST /api/v1/bookings/{id}/cancel; src/partner/cancels/Cancels.ts).
 *
 * `booking_payments`: the money a booking took at the payment provider (Surfboard orders): the
 * whole price of a pay-now booking, the reservation fee of a pay-later booking, and its balance
 * once collected. A cancel refunds exactly these.
 *
 * `booking_changes` gains the `cancel` kind. A cancel row is written `releasing` before the booking
 * system is asked to cancel, becomes `released` (together with its refund rows) when the booking
 * system has released the seats, and `done` when the booking, its mirror rows and the emails
 * committed together. The reschedule-only columns become optional for it.
 *
 * `booking_refunds`: one row per money-moving call of a cancel, written BEFORE the call with our
 * idempotency reference, so that a retry after a crash or a lost answer sends the same reference
 * and the provider never returns money twice. `requested`: not confirmed yet (call again with the
 * same reference); `settling`: accepted, still settling (read its status); `completed`; `partial`:
 * the provider returned less (a new row asks for the rest); `superseded`: a void the provider
 * refused because the payment had settled (a refund row replaces it); `failed`: the provider said
 * no, a person has to look (the row is alerted).
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
    CREATE TABLE booking_payments (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      booking_id uuid NOT NULL REFERENCES bookings(id),
      purpose text NOT NULL CHECK (purpose IN ('full', 'reservation_fee', 'balance')),
      merchant_id text NOT NULL,
      provider_order_id text NOT NULL,
      provider_payment_id text,
      amount_minor bigint NOT NULL CHECK (amount_minor > 0),
      currency char(3) NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
      paid_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (merchant_id, provider_order_id)
    );
    CREATE INDEX booking_payments_by_booking ON booking_payments (booking_id);

    ALTER TABLE booking_changes DROP CONSTRAINT booking_changes_kind_check;
    ALTER TABLE booking_changes ADD CONSTRAINT booking_changes_kind_check CHECK (kind IN ('reschedule', 'cancel'));
    ALTER TABLE booking_changes DROP CONSTRAINT booking_changes_state_check;
    ALTER TABLE booking_changes ADD CONSTRAINT booking_changes_state_check
      CHECK (state IN ('moving', 'moved', 'releasing', 'released', 'done', 'abandoned'));
    ALTER TABLE booking_changes ALTER COLUMN line_id DROP NOT NULL;
    ALTER TABLE booking_changes ALTER COLUMN from_date DROP NOT NULL;
    ALTER TABLE booking_changes ALTER COLUMN to_date DROP NOT NULL;
    ALTER TABLE booking_changes ALTER COLUMN to_start_time_id DROP NOT NULL;
    ALTER TABLE booking_changes ALTER COLUMN account_id DROP NOT NULL;
    ALTER TABLE booking_changes ALTER COLUMN booking_reference DROP NOT NULL;
    ALTER TABLE booking_changes ADD CONSTRAINT booking_changes_reschedule_columns CHECK (
      kind <> 'reschedule' OR (line_id IS NOT NULL AND from_date IS NOT NULL AND to_date IS NOT NULL
        AND to_start_time_id IS NOT NULL AND account_id IS NOT NULL AND booking_reference IS NOT NULL));
    ALTER TABLE booking_changes ADD CONSTRAINT booking_changes_states_of_kind CHECK (
      (kind = 'reschedule' AND state IN ('moving', 'moved', 'done', 'abandoned'))
      OR (kind = 'cancel' AND state IN ('releasing', 'released', 'done', 'abandoned')));
    -- The reason given with a cancel (3 to 500 characters), and what its refund came to.
    ALTER TABLE booking_changes ADD COLUMN reason text;
    ALTER TABLE booking_changes ADD COLUMN refund_outcome text CHECK (refund_outcome IN ('refunded', 'none', 'pending'));
    DROP INDEX booking_changes_open;
    DROP INDEX booking_changes_stale;
    -- At most one unfinished change per booking, whatever its kind.
    CREATE UNIQUE INDEX booking_changes_open ON booking_changes (booking_id)
      WHERE state IN ('moving', 'moved', 'releasing', 'released');
    CREATE INDEX booking_changes_stale ON booking_changes (lease_until)
      WHERE state IN ('moving', 'moved', 'releasing', 'released');

    CREATE TABLE booking_refunds (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      change_id uuid NOT NULL REFERENCES booking_changes(id),
      booking_id uuid NOT NULL REFERENCES bookings(id),
      payment_id uuid NOT NULL REFERENCES booking_payments(id),
      -- 1 for the first call for a payment; a void replaced by a refund, or the rest after a
      -- partial refund, is the next number.
      seq integer NOT NULL CHECK (seq >= 1),
      method text NOT NULL CHECK (method IN ('void', 'refund')),
      idempotency_reference text NOT NULL UNIQUE,
      amount_minor bigint NOT NULL CHECK (amount_minor > 0),
      currency char(3) NOT NULL,
      state text NOT NULL CHECK (state IN ('requested', 'settling', 'completed', 'partial', 'superseded', 'failed')),
      refunded_minor bigint NOT NULL DEFAULT 0 CHECK (refunded_minor >= 0 AND refunded_minor <= amount_minor),
      provider_refund_order_id text,
      attempts integer NOT NULL DEFAULT 0,
      last_error text,
      next_attempt_at timestamptz NOT NULL DEFAULT now(),
      alerted_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      completed_at timestamptz,
      UNIQUE (change_id, payment_id, seq)
    );
    CREATE INDEX booking_refunds_due ON booking_refunds (next_attempt_at) WHERE state IN ('requested', 'settling', 'partial');
    CREATE INDEX booking_refunds_by_booking ON booking_refunds (booking_id);
  `))
