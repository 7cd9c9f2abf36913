import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The analytics reads (src/partner/analytics/AnalyticsRepo.ts; docs/api/analytics.md): checkout sales
 * by site, for a site's sales and for every tour sold on the sites an operator owns (sales_own_daily is
 * otherwise indexed by operator only). The reads' limits need no table (advisory locks held by the
 * read's own transaction: docs/decisions.md "Analytics limits").
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
    CREATE INDEX sales_own_daily_by_site ON sales_own_daily (site_id, day)
      INCLUDE (operator_id, tour_id, currency, bookings, revenue_minor) WHERE source = 'checkout';
  `))
