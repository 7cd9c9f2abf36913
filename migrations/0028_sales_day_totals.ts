import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The sales summary's own read tables (GET /api/v1/sales; docs/api/sales.md "How the figures are
 * kept"): the per-day rollups of migration 0024 summed once more per operator, day and currency
 * (`sales_own_day_totals`) and per operator, day, channel label and currency
 * (`sales_channel_day_totals`), kept by the same per-group rebuild (src/sales/SalesRollupsRepo.ts) in
 * the same transaction. The wide tables (by site, tour and account) stay for the analytics reads; the
 * summary reads these, a third to a tenth of the rows (bench/README.md, "Issue 13").
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
    CREATE TABLE sales_own_day_totals (
      operator_id uuid NOT NULL REFERENCES operators(id),
      day date NOT NULL,
      currency char(3) NOT NULL,
      bookings integer NOT NULL,
      revenue_minor bigint NOT NULL,
      PRIMARY KEY (operator_id, day, currency)
    );
    INSERT INTO sales_own_day_totals (operator_id, day, currency, bookings, revenue_minor)
    SELECT operator_id, day, currency, sum(bookings), sum(revenue_minor)
    FROM sales_own_daily GROUP BY operator_id, day, currency;

    CREATE TABLE sales_channel_day_totals (
      operator_id uuid NOT NULL REFERENCES operators(id),
      day date NOT NULL,
      channel_label text NOT NULL,
      currency char(3) NOT NULL,
      bookings integer NOT NULL,
      participants integer NOT NULL,
      revenue_minor bigint NOT NULL,
      PRIMARY KEY (operator_id, day, channel_label, currency)
    );
    INSERT INTO sales_channel_day_totals (operator_id, day, channel_label, currency, bookings, participants, revenue_minor)
    SELECT operator_id, day, channel_label, currency, sum(bookings), sum(participants), sum(revenue_minor)
    FROM sales_channel_daily GROUP BY operator_id, day, channel_label, currency;
  `))
