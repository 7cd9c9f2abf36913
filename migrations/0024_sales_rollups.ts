import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Per-day sales rollups (src/sales/SalesRollups.ts; docs/api/sales.md): what GET /api/v1/sales and the
 * analytics reads sum, so that no request scans a year of bookings.
 *
 * - `sales_own_daily`: the service's own sales, live bookings only (RESERVED, CONFIRMED) of the
 *   checkout (`bookings`) and confirmed desk sales of live desk keys (`quickbook_sales`), by the
 *   operator of the tour, the UTC day of the booking's creation (a desk sale's confirmation), site,
 *   tour and booking currency.
 * - `sales_channel_daily`: other-channel lines of the sales ledger (`sales_ledger_lines`), not
 *   cancelled and not sold by this service, by operator, UTC creation day, account, tour, channel
 *   label and line currency.
 * Both are rebuilt per (operator, day) group: a run finds the groups whose sources changed since its
 * last run (`sales_changed_at` below, the ledger's `changed_at`), deletes their rows and sums them
 * again, so a run costs what changed, not the history.
 *
 * `sales_changed_at` moves on insert and whenever a field the rollup reads changes (a trigger, so no
 * writer can forget it). A booking's operator and creation time never change after insert.
 * `sales_rollup_state`: each rollup's watermark (the start of its last complete run).
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
    CREATE FUNCTION sales_changed_now() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      NEW.sales_changed_at := now();
      RETURN NEW;
    END $$;

    ALTER TABLE bookings ADD COLUMN sales_changed_at timestamptz NOT NULL DEFAULT now();
    CREATE INDEX bookings_by_sales_change ON bookings (sales_changed_at);
    CREATE INDEX bookings_by_creation ON bookings (operator_id, created_at) WHERE status IN ('RESERVED', 'CONFIRMED');
    CREATE TRIGGER bookings_sales_changed BEFORE UPDATE ON bookings FOR EACH ROW
      WHEN ((OLD.status, OLD.amount_minor, OLD.currency, OLD.participants, OLD.site_id, OLD.tour_id)
        IS DISTINCT FROM (NEW.status, NEW.amount_minor, NEW.currency, NEW.participants, NEW.site_id, NEW.tour_id))
      EXECUTE FUNCTION sales_changed_now();

    ALTER TABLE quickbook_sales ADD COLUMN sales_changed_at timestamptz NOT NULL DEFAULT now();
    CREATE INDEX quickbook_sales_by_sales_change ON quickbook_sales (sales_changed_at);
    CREATE INDEX quickbook_sales_by_confirmation ON quickbook_sales (tour_id, confirmed_at) WHERE status = 'confirmed';
    CREATE TRIGGER quickbook_sales_sales_changed BEFORE UPDATE ON quickbook_sales FOR EACH ROW
      WHEN ((OLD.status, OLD.confirmed_at, OLD.total_minor) IS DISTINCT FROM (NEW.status, NEW.confirmed_at, NEW.total_minor))
      EXECUTE FUNCTION sales_changed_now();

    CREATE TABLE sales_own_daily (
      operator_id uuid NOT NULL REFERENCES operators(id),
      day date NOT NULL,
      source text NOT NULL CHECK (source IN ('checkout', 'desk')),
      site_id uuid,
      tour_id uuid,
      currency char(3) NOT NULL,
      bookings integer NOT NULL,
      participants integer NOT NULL,
      revenue_minor bigint NOT NULL
    );
    CREATE INDEX sales_own_daily_by_day ON sales_own_daily (operator_id, day)
      INCLUDE (currency, bookings, revenue_minor);

    CREATE TABLE sales_channel_daily (
      operator_id uuid NOT NULL REFERENCES operators(id),
      day date NOT NULL,
      account_id uuid NOT NULL,
      tour_id uuid,
      channel_class text,
      channel_label text NOT NULL,
      currency char(3) NOT NULL,
      bookings integer NOT NULL,
      participants integer NOT NULL,
      revenue_minor bigint NOT NULL
    );
    CREATE INDEX sales_channel_daily_by_day ON sales_channel_daily (operator_id, day)
      INCLUDE (channel_label, currency, bookings, participants, revenue_minor);

    -- Lines the mirror saw cancelled since a rollup's last run (its other-channel groups change too).
    CREATE INDEX manifest_rows_by_cancellation ON manifest_rows (cancelled_at) WHERE cancelled_at IS NOT NULL;

    CREATE TABLE sales_rollup_state (
      rollup text PRIMARY KEY CHECK (rollup IN ('own', 'channels')),
      watermark timestamptz NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now()
    );
  `))
