import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The commission ledger's writers (issue 15; src/commissions/; docs/api/statements.md; the choice of
 * triggers: docs/decisions.md "Commission ledger: written by triggers on bookings").
 *
 * Triggers on `bookings` write `commission_entries` (migration 0029) in the transaction of the booking
 * change itself, whoever makes it (the cancel feature and its recovery, the pay-later charger, the
 * checkout, the seed, a test, a hand-run statement). Only bookings that carry commission (a rate or an
 * amount) move the ledger. Live = RESERVED or CONFIRMED.
 *
 * - `sale`: a booking inserted live, or becoming live (a hold confirmed), or inserted already cancelled
 *   after it was booked (`booked_at` set: the sale, then its cancellation). +gross (the price),
 *   +commission (the booking's commission amount, else price × rate), +reserve fee (the reservation
 *   fee paid at booking on a pay-later booking: price − balance; 0 when paid in full).
 *   `occurred_at`: `booked_at` (else `created_at`) for an insert; the change's time for an update.
 * - `cancellation`: a live booking becoming CANCELLED or REFUNDED: the booking's net entries reversed
 *   (negative gross, commission and reserve fee: the commission given back).
 * - `difference`: a live booking whose price, commission or reservation fee changed: what the booking
 *   says now less what its entries already say (commission: the booking's commission amount when the
 *   writer changed it or the rate, else the price's change × rate). A change of date or time alone (a
 *   reschedule) writes nothing.
 * `source_key`: 'sale:<booking>', 'cancellation:<booking>', 'difference:<booking>:<n>' (a second sale
 * or cancellation of a booking brought back to life gets ':<n>'); ON CONFLICT DO NOTHING.
 *
 * `pending` (the entry's money is not final yet; cleared, never set again, by `commission_settle`):
 * - a sale or difference of a live pay-later booking whose balance is not collected
 *   (`pay_later_paid_at` null): cleared when the balance is collected or the booking is cancelled;
 * - a cancellation while a refund of the booking is still unsettled (`booking_refunds` requested,
 *   settling or partial): cleared when the last of them settles.
 *
 * `commission_statements`: the statement number of an operator's month (UTC), assigned with the first
 * entry of that month, from a counter per month updated under its row lock (`CS-YYYYMM-NNNN`, NNNN the
 * order in which the month's operators got their first entry): stable and distinct, no gaps.
 *
 * The existing bookings are backfilled in the order they were booked.
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
    CREATE TABLE commission_statement_counters (
      month date PRIMARY KEY,
      last integer NOT NULL DEFAULT 0
    );
    CREATE TABLE commission_statements (
      operator_id uuid NOT NULL REFERENCES operators(id),
      month date NOT NULL CHECK (extract(day FROM month) = 1),
      seq integer NOT NULL CHECK (seq >= 1),
      number text NOT NULL UNIQUE,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (operator_id, month),
      UNIQUE (month, seq)
    );
    CREATE INDEX commission_entries_by_operator_currency ON commission_entries (operator_id, currency, occurred_at, id);
    CREATE INDEX commission_entries_pending ON commission_entries (booking_id) WHERE pending;

    CREATE FUNCTION commission_has(b bookings) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
      SELECT b.commission_rate_percent IS NOT NULL OR b.commission_amount_minor IS NOT NULL
    $$;
    CREATE FUNCTION commission_of(b bookings) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
      SELECT coalesce(b.commission_amount_minor, round(b.amount_minor * coalesce(b.commission_rate_percent, 0) / 100)::bigint)
    $$;
    CREATE FUNCTION commission_reserve_fee(b bookings) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
      SELECT CASE WHEN b.payment_strategy = 'pay_later' AND b.pay_later_amount_minor IS NOT NULL
        THEN greatest(b.amount_minor - b.pay_later_amount_minor, 0) ELSE 0 END
    $$;
    -- A sale or difference of this booking is pending while its pay-later balance is not collected.
    CREATE FUNCTION commission_balance_open(b bookings) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
      SELECT b.status IN ('RESERVED', 'CONFIRMED') AND b.payment_strategy = 'pay_later' AND b.pay_later_paid_at IS NULL
    $$;
    CREATE FUNCTION commission_refund_open(booking uuid) RETURNS boolean LANGUAGE sql STABLE AS $$
      SELECT EXISTS (SELECT 1 FROM booking_refunds r WHERE r.booking_id = booking AND r.state IN ('requested', 'settling', 'partial'))
    $$;
    -- The key of the next entry of a kind written by a change: a booking's n-th life (brought back to
    -- life after a cancellation) has 'sale:<booking>:<n>' and 'cancellation:<booking>:<n>' (n > 1);
    -- differences are numbered. A replay of the same change finds the same key.
    CREATE FUNCTION commission_key(kind text, booking uuid) RETURNS text LANGUAGE plpgsql STABLE AS $$
    DECLARE sales integer; cancellations integer; differences integer; life integer;
    BEGIN
      SELECT count(*) FILTER (WHERE type = 'sale'), count(*) FILTER (WHERE type = 'cancellation'),
          count(*) FILTER (WHERE type = 'difference')
        INTO sales, cancellations, differences
      FROM commission_entries WHERE booking_id = booking;
      IF kind = 'difference' THEN RETURN 'difference:' || booking || ':' || (differences + 1); END IF;
      life := CASE WHEN kind = 'sale' THEN cancellations + 1 ELSE greatest(sales, 1) END;
      RETURN kind || ':' || booking || CASE WHEN life = 1 THEN '' ELSE ':' || life END;
    END $$;

    CREATE FUNCTION commission_write_sale(b bookings, at timestamptz, key text) RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO commission_entries (booking_id, operator_id, type, occurred_at, currency, gross_minor,
        commission_rate_percent, commission_minor, reserve_fee_minor, pending, source_key)
      VALUES (b.id, b.operator_id, 'sale', at, b.currency, b.amount_minor, coalesce(b.commission_rate_percent, 0),
        commission_of(b), commission_reserve_fee(b), commission_balance_open(b), key)
      ON CONFLICT (source_key) DO NOTHING;
    END $$;

    -- The booking's net entries reversed (nothing when they already net to zero).
    CREATE FUNCTION commission_write_cancellation(b bookings, at timestamptz, key text) RETURNS void LANGUAGE plpgsql AS $$
    DECLARE g bigint; c bigint; r bigint; n integer;
    BEGIN
      SELECT count(*), coalesce(sum(gross_minor), 0), coalesce(sum(commission_minor), 0), coalesce(sum(reserve_fee_minor), 0)
        INTO n, g, c, r
      FROM commission_entries WHERE booking_id = b.id AND currency = b.currency;
      IF n = 0 OR (g = 0 AND c = 0 AND r = 0) THEN RETURN; END IF;
      INSERT INTO commission_entries (booking_id, operator_id, type, occurred_at, currency, gross_minor,
        commission_rate_percent, commission_minor, reserve_fee_minor, pending, source_key)
      VALUES (b.id, b.operator_id, 'cancellation', at, b.currency, -g, coalesce(b.commission_rate_percent, 0), -c, -r,
        commission_refund_open(b.id), key)
      ON CONFLICT (source_key) DO NOTHING;
    END $$;

    -- The booking's price, commission and reserve fee now, less what its entries already say.
    CREATE FUNCTION commission_write_difference(o bookings, b bookings, at timestamptz) RETURNS void LANGUAGE plpgsql AS $$
    DECLARE g bigint; c bigint; r bigint; n integer;
    BEGIN
      SELECT count(*) FILTER (WHERE type = 'sale'), b.amount_minor - coalesce(sum(gross_minor), 0),
          commission_of(b) - coalesce(sum(commission_minor), 0), commission_reserve_fee(b) - coalesce(sum(reserve_fee_minor), 0)
        INTO n, g, c, r
      FROM commission_entries WHERE booking_id = b.id AND currency = b.currency;
      IF n = 0 THEN RETURN; END IF;
      -- A writer that changed the price but not the commission amount: the price's change at the rate.
      IF (b.commission_amount_minor, b.commission_rate_percent) IS NOT DISTINCT FROM (o.commission_amount_minor, o.commission_rate_percent) THEN
        c := round(g * coalesce(b.commission_rate_percent, 0) / 100)::bigint;
      END IF;
      IF g = 0 AND c = 0 AND r = 0 THEN RETURN; END IF;
      INSERT INTO commission_entries (booking_id, operator_id, type, occurred_at, currency, gross_minor,
        commission_rate_percent, commission_minor, reserve_fee_minor, pending, source_key)
      VALUES (b.id, b.operator_id, 'difference', at, b.currency, g, coalesce(b.commission_rate_percent, 0), c, r,
        commission_balance_open(b), commission_key('difference', b.id))
      ON CONFLICT (source_key) DO NOTHING;
    END $$;

    -- Clears what became final: never sets pending again.
    CREATE FUNCTION commission_settle(booking uuid) RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE commission_entries e SET pending = false
      FROM bookings b
      WHERE e.booking_id = booking AND e.pending AND b.id = e.booking_id
        AND CASE WHEN e.type = 'cancellation' THEN NOT commission_refund_open(booking)
                 ELSE NOT commission_balance_open(b) END;
    END $$;

    -- A booking as inserted (and the backfill; a replay adds nothing): its sale, and its cancellation
    -- when it is already over.
    CREATE FUNCTION commission_record_new(b bookings) RETURNS void LANGUAGE plpgsql AS $$
    DECLARE sold_at timestamptz := coalesce(b.booked_at, b.created_at);
    BEGIN
      IF NOT commission_has(b) THEN RETURN; END IF;
      IF b.status IN ('RESERVED', 'CONFIRMED') THEN
        PERFORM commission_write_sale(b, sold_at, 'sale:' || b.id);
      ELSIF b.status IN ('CANCELLED', 'REFUNDED') AND b.booked_at IS NOT NULL THEN
        PERFORM commission_write_sale(b, sold_at, 'sale:' || b.id);
        PERFORM commission_write_cancellation(b, greatest(coalesce(b.updated_at, sold_at), sold_at), 'cancellation:' || b.id);
      END IF;
    END $$;

    CREATE FUNCTION commission_on_booking_insert() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM commission_record_new(NEW);
      RETURN NULL;
    END $$;

    CREATE FUNCTION commission_on_booking_update() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      was_live boolean := OLD.status IN ('RESERVED', 'CONFIRMED');
      is_live boolean := NEW.status IN ('RESERVED', 'CONFIRMED');
    BEGIN
      IF commission_has(NEW) OR commission_has(OLD) THEN
        IF is_live AND NOT was_live THEN
          PERFORM commission_write_sale(NEW, now(), commission_key('sale', NEW.id));
        ELSIF was_live AND NEW.status IN ('CANCELLED', 'REFUNDED') THEN
          PERFORM commission_write_difference(OLD, NEW, now());
          PERFORM commission_write_cancellation(NEW, now(), commission_key('cancellation', NEW.id));
        ELSIF was_live AND is_live THEN
          PERFORM commission_write_difference(OLD, NEW, now());
        END IF;
      END IF;
      PERFORM commission_settle(NEW.id);
      RETURN NULL;
    END $$;

    CREATE FUNCTION commission_on_refund_update() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM commission_settle(NEW.booking_id);
      RETURN NULL;
    END $$;

    -- The statement number of the entry's operator and UTC month, assigned once.
    CREATE FUNCTION commission_number_statement() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE m date := date_trunc('month', NEW.occurred_at AT TIME ZONE 'UTC')::date; n integer;
    BEGIN
      IF EXISTS (SELECT 1 FROM commission_statements WHERE operator_id = NEW.operator_id AND month = m) THEN
        RETURN NULL;
      END IF;
      INSERT INTO commission_statement_counters (month) VALUES (m) ON CONFLICT DO NOTHING;
      PERFORM 1 FROM commission_statement_counters WHERE month = m FOR UPDATE;
      -- Looked at again under the counter's lock: another transaction may have numbered it meanwhile.
      IF EXISTS (SELECT 1 FROM commission_statements WHERE operator_id = NEW.operator_id AND month = m) THEN
        RETURN NULL;
      END IF;
      UPDATE commission_statement_counters SET last = last + 1 WHERE month = m RETURNING last INTO n;
      INSERT INTO commission_statements (operator_id, month, seq, number)
      VALUES (NEW.operator_id, m, n, 'CS-' || to_char(m, 'YYYYMM') || '-' || lpad(n::text, 4, '0'));
      RETURN NULL;
    END $$;

    CREATE TRIGGER commission_entries_statement AFTER INSERT ON commission_entries
      FOR EACH ROW EXECUTE FUNCTION commission_number_statement();
    CREATE TRIGGER bookings_commission_insert AFTER INSERT ON bookings
      FOR EACH ROW EXECUTE FUNCTION commission_on_booking_insert();
    CREATE TRIGGER bookings_commission_update AFTER UPDATE ON bookings FOR EACH ROW
      WHEN ((OLD.status, OLD.amount_minor, OLD.currency, OLD.commission_amount_minor, OLD.commission_rate_percent,
             OLD.payment_strategy, OLD.pay_later_amount_minor, OLD.pay_later_paid_at)
        IS DISTINCT FROM (NEW.status, NEW.amount_minor, NEW.currency, NEW.commission_amount_minor, NEW.commission_rate_percent,
             NEW.payment_strategy, NEW.pay_later_amount_minor, NEW.pay_later_paid_at))
      EXECUTE FUNCTION commission_on_booking_update();
    CREATE TRIGGER booking_refunds_commission AFTER UPDATE OF state ON booking_refunds FOR EACH ROW
      WHEN (NEW.state NOT IN ('requested', 'settling', 'partial'))
      EXECUTE FUNCTION commission_on_refund_update();

    -- The backfill: what commission_record_new writes for each booking, set-based (a database with a
    -- million bookings takes it in one statement per kind), sales in booking order, then cancellations.
    INSERT INTO commission_entries (booking_id, operator_id, type, occurred_at, currency, gross_minor,
      commission_rate_percent, commission_minor, reserve_fee_minor, pending, source_key)
    SELECT b.id, b.operator_id, 'sale', coalesce(b.booked_at, b.created_at), b.currency, b.amount_minor,
      coalesce(b.commission_rate_percent, 0), commission_of(b), commission_reserve_fee(b), commission_balance_open(b),
      'sale:' || b.id
    FROM bookings b
    WHERE commission_has(b) AND (b.status IN ('RESERVED', 'CONFIRMED')
      OR (b.status IN ('CANCELLED', 'REFUNDED') AND b.booked_at IS NOT NULL))
    ORDER BY coalesce(b.booked_at, b.created_at), b.id
    ON CONFLICT (source_key) DO NOTHING;
    INSERT INTO commission_entries (booking_id, operator_id, type, occurred_at, currency, gross_minor,
      commission_rate_percent, commission_minor, reserve_fee_minor, pending, source_key)
    SELECT b.id, b.operator_id, 'cancellation', greatest(coalesce(b.updated_at, b.booked_at), b.booked_at), b.currency,
      -b.amount_minor, coalesce(b.commission_rate_percent, 0), -commission_of(b), -commission_reserve_fee(b),
      commission_refund_open(b.id), 'cancellation:' || b.id
    FROM bookings b
    WHERE commission_has(b) AND b.status IN ('CANCELLED', 'REFUNDED') AND b.booked_at IS NOT NULL
      AND (b.amount_minor, commission_of(b), commission_reserve_fee(b)) <> (0, 0, 0)
    ORDER BY greatest(coalesce(b.updated_at, b.booked_at), b.booked_at), b.id
    ON CONFLICT (source_key) DO NOTHING;
  `))
