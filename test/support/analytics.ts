/**
 * Analytics fixtures, inserted directly into the daily rollup tables the reads use (the rollup job
 * fills them for real), as ./sales.ts does for the sales tables.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export interface TrafficInput {
  readonly visitors: number
  readonly newVisitors?: number
  readonly sessions?: number
  readonly pageviews?: number
  readonly bounces?: number
  readonly durationSeconds?: number
}

export const insertTraffic = (siteId: string, day: string, t: TrafficInput) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`
      INSERT INTO analytics_site_daily (site_id, day, visitors, new_visitors, sessions, pageviews, bounces,
        duration_seconds)
      VALUES (${siteId}, ${day}, ${t.visitors}, ${t.newVisitors ?? t.visitors}, ${t.sessions ?? t.visitors},
        ${t.pageviews ?? t.visitors}, ${t.bounces ?? 0}, ${t.durationSeconds ?? 0})`.pipe(Effect.asVoid, Effect.orDie))

export const insertSource = (
  siteId: string,
  day: string,
  s: { dimension: string; label: string; visitors: number; conversions?: number; revenueEurMinor?: number }
) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`
      INSERT INTO analytics_source_daily (site_id, day, dimension, label, visitors, conversions, revenue_eur_minor)
      VALUES (${siteId}, ${day}, ${s.dimension}, ${s.label}, ${s.visitors}, ${s.conversions ?? 0},
        ${s.revenueEurMinor ?? 0})`.pipe(Effect.asVoid, Effect.orDie))

export const insertTourFunnel = (
  siteId: string,
  tourId: string,
  day: string,
  f: { views: number; checks: number; opens: number; attempts: number }
) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`
      INSERT INTO analytics_tour_daily (site_id, tour_id, day, views, availability_checks, checkout_opens,
        checkout_attempts)
      VALUES (${siteId}, ${tourId}, ${day}, ${f.views}, ${f.checks}, ${f.opens}, ${f.attempts})`.pipe(
      Effect.asVoid,
      Effect.orDie
    ))
