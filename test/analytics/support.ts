/**
 * Site analytics test data: site events inserted as the collection stores them (Contract 1), one run
 * of the rollups as the job runs it (with settings of the test's), and the rollup tables read back.
 */
import { SqlClient } from "@effect/sql"
import { ConfigProvider, Effect, TestClock, TestContext } from "effect"
import { randomUUID } from "node:crypto"
import { AnalyticsRollups } from "../../src/analytics/AnalyticsRollups.js"
import { ensureEventPartitions } from "../../src/demo/analyticsTraffic.js"

export interface EventInput {
  readonly at: string
  readonly site: string
  readonly visitor: string
  readonly kind?: "pageview" | "tour_view" | "availability_check" | "checkout_open" | "checkout_attempt"
  readonly newVisitor?: boolean
  readonly tourId?: string | null
  readonly path?: string
  readonly referrer?: string | null
  readonly channel?: string
  readonly utmSource?: string | null
  readonly utmCampaign?: string | null
  readonly country?: string | null
  readonly device?: string
  readonly browser?: string
  readonly bookingCode?: string | null
}

/** A visitor hash as the collection makes them (hex, 64 characters). */
export const visitor = () => randomUUID().replaceAll("-", "").padEnd(64, "0")

/** Inserts the events in one transaction (as one batched INSERT of the collection); answers their ids. */
export const insertEvents = (events: ReadonlyArray<EventInput>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const days = events.map((e) => e.at.slice(0, 10)).sort()
    yield* ensureEventPartitions(days[0]!, days[days.length - 1]!)
    const ids: Array<number> = []
    yield* sql.withTransaction(Effect.forEach(events, (e) =>
      Effect.map(
        sql<{ id: number }>`
          INSERT INTO site_events (at, site_id, kind, visitor, new_visitor, tour_id, path, referrer_host, channel,
            utm_source, utm_medium, utm_campaign, country, device, browser, os, booking_code)
          VALUES (${e.at}, ${e.site}, ${e.kind ?? "pageview"}, ${e.visitor}, ${e.newVisitor ?? false}, ${
          e.tourId ?? null
        },
            ${e.path ?? "/"}, ${e.referrer ?? null}, ${e.channel ?? "Direct"}, ${e.utmSource ?? null}, NULL,
            ${e.utmCampaign ?? null}, ${e.country === undefined ? "NO" : e.country}, ${e.device ?? "desktop"},
            ${e.browser ?? "Firefox"}, 'Linux', ${e.bookingCode ?? null})
          RETURNING id`,
        (rows) => ids.push(rows[0]!.id)
      )))
    return ids
  }).pipe(Effect.orDie)

/** One run of the rollups with `env` as its settings (CRASH_AT, ANALYTICS_ROLLUP_BATCH_SIZE …). */
export const runRollups = (env: Record<string, string> = {}) =>
  Effect.flatMap(AnalyticsRollups, (r) => r.refresh()).pipe(
    Effect.provide(AnalyticsRollups.Default),
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))
  )

/** One run as if the clock read `iso` (the monthly fold's "closed month" follows the clock). */
export const runRollupsAt = (iso: string, env: Record<string, string> = {}) =>
  Effect.zipRight(TestClock.setTime(Date.parse(iso)), runRollups(env)).pipe(Effect.provide(TestContext.TestContext))

export const siteDays = (site: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{
      day: string
      visitors: number
      new_visitors: number
      sessions: number
      pageviews: number
      bounces: number
      duration_seconds: number
    }>`
      SELECT day, visitors, new_visitors, sessions, pageviews, bounces, duration_seconds
      FROM analytics_site_daily WHERE site_id = ${site} ORDER BY day`).pipe(Effect.orDie)

export const sourceRows = (site: string, dimension: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ day: string; label: string; visitors: number; conversions: number; revenue_eur_minor: number }>`
      SELECT day, label, visitors, conversions, revenue_eur_minor FROM analytics_source_daily
      WHERE site_id = ${site} AND dimension = ${dimension} ORDER BY day, label`
  ).pipe(Effect.orDie)

export const tourRows = (site: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{
      tour_id: string
      day: string
      views: number
      availability_checks: number
      checkout_opens: number
      checkout_attempts: number
    }>`
      SELECT tour_id, day, views, availability_checks, checkout_opens, checkout_attempts FROM analytics_tour_daily
      WHERE site_id = ${site} ORDER BY tour_id, day`).pipe(Effect.orDie)

/** Everything the rollups keep for a site, for comparing two states. */
export const snapshot = (site: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.all({
      site: siteDays(site),
      sources: sql`SELECT * FROM analytics_source_daily WHERE site_id = ${site} ORDER BY day, dimension, label`,
      tours: tourRows(site),
      siteMonthly: sql`SELECT * FROM analytics_site_monthly WHERE site_id = ${site} ORDER BY month`,
      sourceMonthly:
        sql`SELECT * FROM analytics_source_monthly WHERE site_id = ${site} ORDER BY month, dimension, label`
    })).pipe(Effect.orDie)
