/**
 * The SQL of GET /api/v1/analytics/tours and /analytics/sites: the sites the operators in view are on,
 * and the daily rollups (analytics_site_daily, analytics_source_daily, analytics_tour_daily; issue 13's
 * sales_own_daily and sales_channel_daily) summed over the range. Raw events are never read.
 * The visibility rule (spec §1.6) is applied here, in each statement's WHERE:
 * (a) own tours everywhere they are sold (a tour whose operator is in view, on any site; every
 * other-channel row of the operators in view); (b) whole-site traffic and sources of the sites the
 * operators are on (owner or added); (c) other operators' tours only on sites the operators own.
 *
 * And the two statements of the limits (AnalyticsLimits.ts): a concurrency slot of the key taken as a
 * transaction-level advisory lock, and the statement timeout of the transaction.
 *
 * A hot read (the issue's benchmark): plain `sql<Row>` typed rows, no spans of its own
 * (`repoEdge.untraced`; Analytics' spans and the driver's cover them).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { repoEdge } from "../../db/repoEdge.js"
import { toPgArray } from "../../db/sql.js"
import type { ChannelSalesRow, FunnelRow, SiteSalesRow } from "./rules.js"
import type { SiteDaySalesRow, SiteFunnelRow, SourceRow, TrafficDayRow, VisibleSite } from "./siteRules.js"

export interface DayRange {
  readonly from: string
  readonly to: string
}

export interface TourQuery extends DayRange {
  /** The operators in view. */
  readonly operatorIds: ReadonlyArray<string>
  /** The sites those operators own (other operators' tours are seen only there). */
  readonly ownedSiteIds: ReadonlyArray<string>
  readonly tourId: string | undefined
  /** Only this site (a `surface` that is a site domain). */
  readonly siteId: string | undefined
  /** One row per tour and surface for the range (the day column then reads `from`). */
  readonly total: boolean
}

export class AnalyticsRepo extends Effect.Service<AnalyticsRepo>()("Partner/AnalyticsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const ids = (xs: ReadonlyArray<string>) => sql`${toPgArray(xs)}::uuid[]`

    // ---- the limits (run first in the request's transaction)

    /**
     * Takes the first free one of the key's `slots` concurrency slots: a transaction-level advisory lock
     * on a 64-bit hash of (key, slot), never waiting; answers the slot, or null when all are taken.
     * The lock goes with the transaction (commit, rollback, or the connection closing).
     */
    const takeSlot = (keyId: string, slots: number) =>
      Effect.map(
        sql<{ slot: number }>`
          SELECT s AS slot FROM generate_series(0, ${slots - 1}) AS s
          WHERE pg_try_advisory_xact_lock(hashtextextended(${`analytics-slot:${keyId}:`} || s, 0))
          LIMIT 1`,
        (rows) => rows[0]?.slot ?? null
      )

    /**
     * The time the next statements of this transaction may run (`SET LOCAL`: it ends with the
     * transaction), and how long the connection may sit idle inside it (a stalled instance then loses
     * the transaction, its slot with it).
     */
    const limitStatements = (statementMs: number, idleMs: number) =>
      sql`SELECT set_config('statement_timeout', ${String(statementMs)}, true),
        set_config('idle_in_transaction_session_timeout', ${String(idleMs)}, true)`

    // ---- sites

    /** The sites the operators are on, as owner (`owner`) or only added; only `domain` when given. */
    const visibleSites = (operatorIds: ReadonlyArray<string>, domain: string | undefined) =>
      sql<VisibleSite>`
        SELECT s.id, s.domain, s.name, s.owner_operator_id = ANY(${ids(operatorIds)}) AS owner
        FROM sites s
        WHERE (s.owner_operator_id = ANY(${ids(operatorIds)}) OR EXISTS (
            SELECT 1 FROM site_operators so WHERE so.site_id = s.id AND so.operator_id = ANY(${ids(operatorIds)})))
          ${domain === undefined ? sql`` : sql`AND s.domain = ${domain}`}
        ORDER BY s.domain`

    const sitesByIds = (siteIds: ReadonlyArray<string>) =>
      sql<{ id: string; domain: string; name: string }>`
        SELECT id, domain, name FROM sites WHERE id = ANY(${ids(siteIds)})`

    const siteByDomain = (domain: string) =>
      Effect.map(sql<{ id: string }>`SELECT id FROM sites WHERE domain = ${domain}`, (rows) => rows[0]?.id)

    const traffic = (siteIds: ReadonlyArray<string>, r: DayRange) =>
      sql<TrafficDayRow>`
        SELECT site_id, day, visitors, new_visitors, sessions, pageviews, bounces, duration_seconds
        FROM analytics_site_daily
        WHERE site_id = ANY(${ids(siteIds)}) AND day BETWEEN ${r.from}::date AND ${r.to}::date
        ORDER BY site_id, day`

    /** The top `limit` labels per site and dimension by visitors over the range (then by label). */
    const sources = (siteIds: ReadonlyArray<string>, r: DayRange, limit: number) =>
      sql<SourceRow>`
        SELECT site_id, dimension, label, visitors, conversions, revenue_eur_minor FROM (
          SELECT site_id, dimension, label, sum(visitors)::int8 AS visitors, sum(conversions)::int8 AS conversions,
            sum(revenue_eur_minor)::int8 AS revenue_eur_minor,
            row_number() OVER (PARTITION BY site_id, dimension ORDER BY sum(visitors) DESC, label) AS rank
          FROM analytics_source_daily
          WHERE site_id = ANY(${ids(siteIds)}) AND day BETWEEN ${r.from}::date AND ${r.to}::date
          GROUP BY site_id, dimension, label
        ) ranked
        WHERE rank <= ${limit}`

    /** The tour funnel of whole sites (every tour), summed over the range. */
    const siteFunnels = (siteIds: ReadonlyArray<string>, r: DayRange) =>
      sql<SiteFunnelRow>`
        SELECT site_id, sum(views)::int8 AS views, sum(availability_checks)::int8 AS availability_checks,
          sum(checkout_opens)::int8 AS checkout_opens, sum(checkout_attempts)::int8 AS checkout_attempts
        FROM analytics_tour_daily
        WHERE site_id = ANY(${ids(siteIds)}) AND day BETWEEN ${r.from}::date AND ${r.to}::date
        GROUP BY site_id`

    /** Checkout sales per site, day and currency: every tour on owned sites, the operators' own on the others. */
    const siteDaySales = (
      q: DayRange & {
        readonly ownedSiteIds: ReadonlyArray<string>
        readonly addedSiteIds: ReadonlyArray<string>
        readonly operatorIds: ReadonlyArray<string>
      }
    ) =>
      sql<SiteDaySalesRow>`
        SELECT site_id, day, currency, sum(bookings)::int8 AS bookings, sum(revenue_minor)::int8 AS revenue_minor
        FROM sales_own_daily
        WHERE source = 'checkout' AND day BETWEEN ${q.from}::date AND ${q.to}::date
          AND (site_id = ANY(${ids(q.ownedSiteIds)})
            OR (site_id = ANY(${ids(q.addedSiteIds)}) AND operator_id = ANY(${ids(q.operatorIds)})))
        GROUP BY site_id, day, currency`

    // ---- tours

    const dayColumn = (q: TourQuery, column: string) => q.total ? sql`${q.from}::date` : sql.literal(column)

    /**
     * Funnel rows of visible tours: the operators' own on every site, any tour on the sites they own.
     * Both halves of the OR are index conditions (the tours' ids by (tour_id, day), the sites by the
     * primary key), so PostgreSQL reads only those rows, never the whole table.
     */
    const tourFunnels = (q: TourQuery) =>
      sql<FunnelRow>`
        SELECT d.site_id, d.tour_id, t.operator_id, ${dayColumn(q, "d.day")} AS day,
          sum(d.views)::int8 AS views, sum(d.availability_checks)::int8 AS availability_checks,
          sum(d.checkout_opens)::int8 AS checkout_opens, sum(d.checkout_attempts)::int8 AS checkout_attempts
        FROM analytics_tour_daily d
        LEFT JOIN tours t ON t.id = d.tour_id
        WHERE d.day BETWEEN ${q.from}::date AND ${q.to}::date
          AND (d.tour_id = ANY(ARRAY(SELECT id FROM tours WHERE operator_id = ANY(${ids(q.operatorIds)})))
            OR d.site_id = ANY(${ids(q.ownedSiteIds)}))
          ${q.tourId === undefined ? sql`` : sql`AND d.tour_id = ${q.tourId}`}
          ${q.siteId === undefined ? sql`` : sql`AND d.site_id = ${q.siteId}`}
        GROUP BY 1, 2, 3, 4`

    /** Checkout sales on sites of visible tours, per day and currency (converted per day, so always by day). */
    const tourSiteSales = (q: TourQuery) =>
      sql<SiteSalesRow>`
        SELECT site_id, tour_id, operator_id, day, currency, sum(bookings)::int8 AS bookings,
          sum(revenue_minor)::int8 AS revenue_minor
        FROM sales_own_daily
        WHERE source = 'checkout' AND site_id IS NOT NULL AND day BETWEEN ${q.from}::date AND ${q.to}::date
          AND (operator_id = ANY(${ids(q.operatorIds)}) OR site_id = ANY(${ids(q.ownedSiteIds)}))
          ${q.tourId === undefined ? sql`` : sql`AND tour_id = ${q.tourId}`}
          ${q.siteId === undefined ? sql`` : sql`AND site_id = ${q.siteId}`}
        GROUP BY site_id, tour_id, operator_id, day, currency`

    /** Other-channel sales of the operators' own tours, per day and line currency. */
    const tourChannelSales = (q: TourQuery) =>
      sql<ChannelSalesRow>`
        SELECT tour_id, operator_id, channel_label AS label, day, currency, sum(bookings)::int8 AS bookings,
          sum(participants)::int8 AS participants, sum(revenue_minor)::int8 AS revenue_minor
        FROM sales_channel_daily
        WHERE operator_id = ANY(${ids(q.operatorIds)}) AND day BETWEEN ${q.from}::date AND ${q.to}::date
          ${q.tourId === undefined ? sql`` : sql`AND tour_id = ${q.tourId}`}
        GROUP BY tour_id, operator_id, channel_label, day, currency`

    const tours = (tourIds: ReadonlyArray<string>) =>
      sql<{ id: string; title: string; operator_id: string }>`
        SELECT id, title, operator_id FROM tours WHERE id = ANY(${ids(tourIds)})`

    const operators = (operatorIds: ReadonlyArray<string>) =>
      sql<{ id: string; name: string }>`SELECT id, name FROM operators WHERE id = ANY(${ids(operatorIds)})`

    return repoEdge.untraced({
      takeSlot,
      limitStatements,
      visibleSites,
      sitesByIds,
      siteByDomain,
      traffic,
      sources,
      siteFunnels,
      siteDaySales,
      tourFunnels,
      tourSiteSales,
      tourChannelSales,
      tours,
      operators
    })
  })
}) {}
