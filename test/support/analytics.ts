/**
 * Analytics fixtures, inserted directly into the daily rollup tables the reads use (the rollup job
 * fills them for real), as ./sales.ts does for the sales tables.
 *
 * `ensureRollupTables` creates the daily tables of issue 14's Contract 2 (analytics_site_daily,
 * analytics_source_daily, analytics_tour_daily) when they are not there: a test copy for as long as
 * the rollups' migration (0026) is not merged. Once it is, the tables exist and this does nothing.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export const ensureRollupTables = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
    CREATE TABLE IF NOT EXISTS analytics_site_daily (
      site_id uuid NOT NULL, day date NOT NULL, visitors int NOT NULL, new_visitors int NOT NULL,
      sessions int NOT NULL, pageviews int NOT NULL, bounces int NOT NULL, duration_seconds bigint NOT NULL,
      PRIMARY KEY (site_id, day));
    CREATE TABLE IF NOT EXISTS analytics_source_daily (
      site_id uuid NOT NULL, day date NOT NULL, dimension text NOT NULL, label text NOT NULL,
      visitors int NOT NULL, conversions int NOT NULL, revenue_eur_minor bigint NOT NULL,
      PRIMARY KEY (site_id, day, dimension, label));
    CREATE TABLE IF NOT EXISTS analytics_tour_daily (
      site_id uuid NOT NULL, tour_id uuid NOT NULL, day date NOT NULL, views int NOT NULL,
      availability_checks int NOT NULL, checkout_opens int NOT NULL, checkout_attempts int NOT NULL,
      PRIMARY KEY (site_id, tour_id, day));
    CREATE INDEX IF NOT EXISTS analytics_tour_daily_by_tour ON analytics_tour_daily (tour_id, day);
  `).pipe(Effect.asVoid, Effect.orDie))

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
