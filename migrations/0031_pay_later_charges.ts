import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Pay-later charging (issue 15, part B; docs/api/pay-later.md): one `pay_later_charges` row per
 * pay-later booking and one `pay_later_attempts` row per charge attempt at the provider.
 *
 * - state upcoming | failed | collected | cancelled (spec §3), `retrying` (failed and tried again at
 *   `next_attempt_at`), `refunded` (cancelled after it was collected), `attempts`, the last and next
 *   attempt, the failure message, `final_deadline_at` (the last moment the balance may be charged:
 *   charge_at + 72 h, but no later than 24 h before the tour's day starts, and never before
 *   charge_at), `collected_at`, and the saved card's provider token id (`token_id`; never card data).
 * - `pay_later_attempts`: the attempt's idempotency reference (`paylater:<charge id>:<n>`, also the
 *   provider order's referenceId) is recorded BEFORE the provider is called; `outcome` stays null
 *   until the answer is known (a crash or a lost answer leaves it null: the next run reads the
 *   charge at the provider by that reference before it tries anything new).
 * - The booking's `pay_later_status`/`pay_later_paid_at` (what GET /bookings shows) and this row
 *   agree in every transaction, whoever moves them: triggers on `bookings` add the row when a
 *   pay-later booking is inserted, and carry every change of `pay_later_status`, `pay_later_paid_at`
 *   or `pay_later_charge_at` into it in the same statement (a cancel: cancelled, refunded when it was
 *   collected; a paid balance link: collected, no more attempts). The charger writes the booking's
 *   columns and its own columns in one transaction.
 * - Backfill: a row for every existing pay-later booking.
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
    CREATE TABLE pay_later_charges (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      booking_id uuid NOT NULL UNIQUE REFERENCES bookings(id),
      operator_id uuid NOT NULL REFERENCES operators(id),
      amount_minor bigint NOT NULL,
      currency char(3) NOT NULL,
      charge_at timestamptz NOT NULL,
      final_deadline_at timestamptz NOT NULL,
      state text NOT NULL CHECK (state IN ('upcoming', 'failed', 'collected', 'cancelled')),
      retrying boolean NOT NULL DEFAULT false,
      refunded boolean NOT NULL DEFAULT false,
      attempts integer NOT NULL DEFAULT 0,
      last_attempt_at timestamptz,
      next_attempt_at timestamptz,
      failure_message text,
      collected_at timestamptz,
      token_id text,
      claimed_until timestamptz,
      link_emailed_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CHECK (NOT retrying OR state = 'failed'),
      CHECK (NOT refunded OR state = 'cancelled')
    );
    -- The read: an operator's charges by charge time (keyset), with or without a state.
    CREATE INDEX pay_later_charges_by_operator ON pay_later_charges (operator_id, charge_at, id);
    CREATE INDEX pay_later_charges_by_state ON pay_later_charges (operator_id, state, charge_at, id);
    -- The charger: what is due.
    CREATE INDEX pay_later_charges_due ON pay_later_charges ((coalesce(next_attempt_at, charge_at)))
      WHERE state = 'upcoming' OR (state = 'failed' AND retrying);

    CREATE TABLE pay_later_attempts (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      charge_id uuid NOT NULL REFERENCES pay_later_charges(id),
      number integer NOT NULL,
      idempotency_reference text NOT NULL UNIQUE,
      merchant_id text NOT NULL,
      amount_minor bigint NOT NULL,
      currency char(3) NOT NULL,
      started_at timestamptz NOT NULL,
      outcome text CHECK (outcome IN ('paid', 'soft_decline', 'hard_decline', 'sca_required', 'not_found')),
      decline_reason text,
      provider_order_id text,
      finished_at timestamptz,
      UNIQUE (charge_id, number)
    );
    CREATE INDEX pay_later_attempts_unknown ON pay_later_attempts (charge_id) WHERE outcome IS NULL;

    CREATE FUNCTION pay_later_deadline(charge_at timestamptz, experience_date date, tz text) RETURNS timestamptz
      LANGUAGE sql STABLE AS $$
        SELECT greatest(charge_at, least(charge_at + interval '72 hours',
          coalesce((experience_date::timestamp AT TIME ZONE tz) - interval '24 hours', 'infinity'::timestamptz)))
      $$;

    CREATE FUNCTION pay_later_charge_added() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE due timestamptz;
    BEGIN
      IF NEW.payment_strategy = 'pay_later' AND NEW.pay_later_status IS NOT NULL THEN
        due := coalesce(NEW.pay_later_charge_at, NEW.booked_at, NEW.created_at);
        INSERT INTO pay_later_charges (booking_id, operator_id, amount_minor, currency, charge_at, final_deadline_at,
          state, collected_at, refunded, link_emailed_at)
        VALUES (NEW.id, NEW.operator_id, NEW.pay_later_amount_minor, coalesce(NEW.pay_later_currency, NEW.currency), due,
          pay_later_deadline(due, NEW.experience_date, NEW.timezone),
          CASE WHEN NEW.pay_later_status IN ('upcoming', 'failed', 'collected', 'cancelled') THEN NEW.pay_later_status
               ELSE 'upcoming' END,
          CASE WHEN NEW.pay_later_status = 'collected' THEN coalesce(NEW.pay_later_paid_at, NEW.created_at) END,
          -- Cancelled with a paid time: it was collected, then refunded.
          NEW.pay_later_status = 'cancelled' AND NEW.pay_later_paid_at IS NOT NULL,
          -- A booking that arrives failed was dealt with elsewhere: no notice from the charger.
          CASE WHEN NEW.pay_later_status = 'failed' THEN now() END)
        ON CONFLICT (booking_id) DO NOTHING;
      END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER pay_later_charge_added AFTER INSERT ON bookings
      FOR EACH ROW EXECUTE FUNCTION pay_later_charge_added();

    CREATE FUNCTION pay_later_charge_follows() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.pay_later_status IS DISTINCT FROM OLD.pay_later_status
         AND NEW.pay_later_status IN ('upcoming', 'failed', 'collected', 'cancelled') THEN
        UPDATE pay_later_charges SET
          state = NEW.pay_later_status,
          refunded = refunded OR (OLD.pay_later_status = 'collected' AND NEW.pay_later_status = 'cancelled'),
          retrying = retrying AND NEW.pay_later_status = 'failed',
          next_attempt_at = CASE WHEN NEW.pay_later_status IN ('upcoming', 'failed') THEN next_attempt_at END,
          collected_at = CASE WHEN NEW.pay_later_status = 'collected'
            THEN coalesce(NEW.pay_later_paid_at, collected_at, now()) ELSE collected_at END,
          updated_at = now()
        WHERE booking_id = NEW.id;
      ELSIF NEW.pay_later_paid_at IS DISTINCT FROM OLD.pay_later_paid_at AND NEW.pay_later_status = 'collected' THEN
        UPDATE pay_later_charges SET collected_at = NEW.pay_later_paid_at, updated_at = now() WHERE booking_id = NEW.id;
      END IF;
      IF NEW.pay_later_charge_at IS DISTINCT FROM OLD.pay_later_charge_at AND NEW.pay_later_charge_at IS NOT NULL THEN
        UPDATE pay_later_charges SET charge_at = NEW.pay_later_charge_at,
          final_deadline_at = pay_later_deadline(NEW.pay_later_charge_at, NEW.experience_date, NEW.timezone),
          updated_at = now()
        WHERE booking_id = NEW.id AND state = 'upcoming' AND attempts = 0;
      END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER pay_later_charge_follows AFTER UPDATE OF pay_later_status, pay_later_paid_at, pay_later_charge_at
      ON bookings FOR EACH ROW EXECUTE FUNCTION pay_later_charge_follows();

    INSERT INTO pay_later_charges (booking_id, operator_id, amount_minor, currency, charge_at, final_deadline_at, state,
      collected_at, refunded, link_emailed_at)
    SELECT b.id, b.operator_id, b.pay_later_amount_minor, coalesce(b.pay_later_currency, b.currency),
      coalesce(b.pay_later_charge_at, b.booked_at, b.created_at),
      pay_later_deadline(coalesce(b.pay_later_charge_at, b.booked_at, b.created_at), b.experience_date, b.timezone),
      CASE WHEN b.pay_later_status IN ('upcoming', 'failed', 'collected', 'cancelled') THEN b.pay_later_status
           ELSE 'upcoming' END,
      CASE WHEN b.pay_later_status = 'collected' THEN coalesce(b.pay_later_paid_at, b.created_at) END,
      b.pay_later_status = 'cancelled' AND b.pay_later_paid_at IS NOT NULL,
      CASE WHEN b.pay_later_status = 'failed' THEN now() END
    FROM bookings b
    WHERE b.payment_strategy = 'pay_later' AND b.pay_later_status IS NOT NULL
    ON CONFLICT (booking_id) DO NOTHING;
  `))
