/**
 * All SQL of the site analytics rollups (migration 0026; src/analytics/AnalyticsRollups.ts): the safe
 * window over `site_events`, a batch of new events, the dedupe keys (insert-if-absent, answering how
 * many were new), the additive counters, sessions, attributions, the monthly fold and the pruning.
 * A database error is a defect at this edge (repoEdge), once.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { repoEdge } from "../db/repoEdge.js"
import type { Attempt, SeenKey, Session, SiteDelta, SiteEvent, SourceDelta, StepKey } from "./rules.js"

/** The one rollup of events this repository keeps a watermark for (analytics_rollup_state.rollup). */
export const EVENTS_ROLLUP = "events"

/** Days an attribution whose revenue waits for an exchange rate is checked again (rates arrive a day or two late). */
const RATE_RETRY_DAYS = 14

/**
 * A PostgreSQL array literal of texts, each element quoted (labels and paths may hold commas,
 * quotes or braces); null elements as NULL. Sent as one parameter and cast (`::text[]`, `::uuid[]` …).
 */
export const pgArray = (values: ReadonlyArray<string | number | boolean | null>) =>
  `{${
    values.map((v) =>
      v === null
        ? "NULL"
        : typeof v === "string"
        ? `"${v.replaceAll("\\", "\\\\").replaceAll("\"", "\\\"")}"`
        : String(v)
    ).join(",")
  }}`

/** Each row's labels joined with the unit separator (split again in SQL: `string_to_array(x, chr(31))`). */
const SEPARATOR = "\u001f"
const joinedLabels = (rows: ReadonlyArray<{ labels: ReadonlyArray<string> }>) =>
  pgArray(rows.map((r) => r.labels.map((l) => l.replaceAll(SEPARATOR, " ")).join(SEPARATOR)))

/** A site_events row as the batch reads it (plain `sql<Row>`: 50,000 rows a batch, no per-row decoding). */
interface EventRow {
  readonly id: number
  readonly at: Date
  readonly site_id: string
  readonly kind: string
  readonly visitor: string
  readonly new_visitor: boolean
  readonly tour_id: string | null
  readonly path: string
  readonly referrer_host: string | null
  readonly channel: string
  readonly utm_source: string | null
  readonly utm_medium: string | null
  readonly utm_campaign: string | null
  readonly country: string | null
  readonly device: string
  readonly browser: string
  readonly os: string
  readonly booking_code: string | null
}

const toEvent = (r: EventRow): SiteEvent => ({
  id: r.id,
  at: r.at.getTime(),
  siteId: r.site_id,
  kind: r.kind,
  visitor: r.visitor,
  newVisitor: r.new_visitor,
  tourId: r.tour_id,
  path: r.path,
  referrerHost: r.referrer_host,
  channel: r.channel,
  utmSource: r.utm_source,
  utmMedium: r.utm_medium,
  utmCampaign: r.utm_campaign,
  country: r.country === null ? null : r.country.trim(),
  device: r.device,
  browser: r.browser,
  os: r.os,
  bookingCode: r.booking_code
})

const SessionRow = Schema.Struct({
  id: Schema.Number,
  site_id: Schema.String,
  visitor: Schema.String,
  started_at: Schema.DateFromSelf,
  last_at: Schema.DateFromSelf,
  start_day: Schema.String,
  pageviews: Schema.Number,
  labels: Schema.Array(Schema.String)
})

const SeenCount = Schema.Struct({
  site_id: Schema.String,
  day: Schema.String,
  dimension: Schema.String,
  label: Schema.String,
  n: Schema.Number
})
export type SeenCount = typeof SeenCount.Type

const StepCount = Schema.Struct({
  site_id: Schema.String,
  tour_id: Schema.String,
  day: Schema.String,
  kind: Schema.String,
  n: Schema.Number
})
export type StepCount = typeof StepCount.Type

/** An attribution with the booking its code names on its site (nulls: no such booking). */
export const AttributionRow = Schema.Struct({
  site_id: Schema.String,
  booking_code: Schema.String,
  session_id: Schema.Number,
  start_day: Schema.String,
  labels: Schema.Array(Schema.String),
  live: Schema.Boolean,
  revenue_eur_minor: Schema.Number,
  rate_missing: Schema.Boolean,
  booking_status: Schema.NullOr(Schema.String),
  amount_minor: Schema.NullOr(Schema.Number),
  currency: Schema.NullOr(Schema.String),
  booking_day: Schema.NullOr(Schema.String)
})
export type AttributionRow = typeof AttributionRow.Type

export interface SiteCounters extends SiteDelta {
  visitors: number
  newVisitors: number
}

/** A site's day with nothing counted yet. */
export const noSiteCounters = (siteId: string, day: string): SiteCounters => ({
  siteId,
  day,
  visitors: 0,
  newVisitors: 0,
  sessions: 0,
  pageviews: 0,
  bounces: 0,
  durationSeconds: 0
})

export interface SourceCounters extends SourceDelta {
  visitors: number
}

export interface TourCounters {
  readonly siteId: string
  readonly tourId: string
  readonly day: string
  views: number
  availabilityChecks: number
  checkoutOpens: number
  checkoutAttempts: number
}

export class AnalyticsRollupsRepo extends Effect.Service<AnalyticsRollupsRepo>()("Analytics/AnalyticsRollupsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** One rollup at a time, whichever instance runs it (held until the transaction ends). */
    const lock = () => sql`SELECT pg_advisory_xact_lock(hashtext('analytics-rollups'))`

    /**
     * The safe window's upper id, or none when writers did not let go within `lockTimeoutMs`.
     * Every INSERT into site_events holds the table's ROW EXCLUSIVE lock from before it draws its
     * ids until its transaction ends; SHARE conflicts with it, so once this statement holds SHARE no
     * transaction that drew an id is still in flight, and every id up to the sequence's value read
     * under the lock is committed (or rolled back: a gap, never a row that appears later). The lock
     * is held only for the read of the sequence (new inserts wait that long). Runs in its own
     * transaction (the caller's `inTransaction`).
     */
    const safeId = (lockTimeoutMs: number) =>
      Effect.gen(function*() {
        yield* sql`SELECT set_config('lock_timeout', ${`${Math.max(1, lockTimeoutMs)}ms`}, true)`
        const locked = yield* sql`LOCK TABLE site_events IN SHARE MODE`.pipe(
          Effect.as(true),
          Effect.catchIf(
            (e) => (e.cause as { code?: unknown } | undefined)?.code === "55P03",
            () => Effect.succeed(false)
          )
        )
        if (!locked) return Option.none<number>()
        const rows = yield* sql<{ last_value: number; is_called: boolean }>`
          SELECT last_value, is_called FROM site_events_id_seq`
        const row = rows[0]!
        return Option.some(row.is_called ? row.last_value : row.last_value - 1)
      })

    const watermark = () =>
      Effect.map(
        sql<{ last_id: number }>`SELECT last_id FROM analytics_rollup_state WHERE rollup = ${EVENTS_ROLLUP}`,
        (rows) => rows[0]?.last_id ?? 0
      )

    const setWatermark = (lastId: number) =>
      sql`
        INSERT INTO analytics_rollup_state (rollup, last_id, updated_at) VALUES (${EVENTS_ROLLUP}, ${lastId}, now())
        ON CONFLICT (rollup) DO UPDATE SET last_id = excluded.last_id, updated_at = excluded.updated_at`

    /** Up to `limit` events with ids in (after, upTo], by id (the events table's id index). */
    const batch = (after: number, upTo: number, limit: number) =>
      Effect.map(
        sql<EventRow>`
          SELECT id, at, site_id, kind, visitor, new_visitor, tour_id, path, referrer_host, channel, utm_source,
            utm_medium, utm_campaign, country, device, browser, os, booking_code
          FROM site_events WHERE id > ${after} AND id <= ${upTo} ORDER BY id LIMIT ${limit}`,
        (rows) => rows.map(toEvent)
      )

    /** The latest session of each (site, visitor) whose last event is at most 30 minutes before `from`. */
    const openSessions = (keys: ReadonlyArray<{ siteId: string; visitor: string; from: number }>) =>
      keys.length === 0 ? Effect.succeed([] as Array<Session>) : Effect.map(
        SqlSchema.findAll({
          Request: Schema.Void,
          Result: SessionRow,
          execute: () =>
            sql`
              SELECT s.id, s.site_id, s.visitor, s.started_at, s.last_at, s.start_day::text AS start_day, s.pageviews,
                s.labels
              FROM unnest(${pgArray(keys.map((k) => k.siteId))}::uuid[], ${pgArray(keys.map((k) => k.visitor))}::text[],
                ${
              pgArray(keys.map((k) => new Date(k.from).toISOString()))
            }::timestamptz[]) AS k(site_id, visitor, from_at)
              CROSS JOIN LATERAL (
                SELECT * FROM analytics_sessions s
                WHERE s.site_id = k.site_id AND s.visitor = k.visitor AND s.last_at >= k.from_at - interval '30 minutes'
                ORDER BY s.last_at DESC LIMIT 1
              ) s`
        })(undefined),
        (rows) =>
          rows.map((r): Session => ({
            id: r.id,
            siteId: r.site_id,
            visitor: r.visitor,
            startedAt: r.started_at.getTime(),
            lastAt: r.last_at.getTime(),
            startDay: r.start_day,
            pageviews: r.pageviews,
            labels: r.labels
          }))
      )

    const saveSessions = (sessions: ReadonlyArray<Session>) =>
      sessions.length === 0 ? Effect.void : sql`
        INSERT INTO analytics_sessions (id, site_id, visitor, started_at, last_at, start_day, pageviews, labels)
        SELECT s.id, s.site_id, s.visitor, s.started_at, s.last_at, s.start_day, s.pageviews,
          string_to_array(s.labels, chr(31))
        FROM unnest(${pgArray(sessions.map((s) => s.id))}::bigint[], ${pgArray(sessions.map((s) => s.siteId))}::uuid[],
          ${pgArray(sessions.map((s) => s.visitor))}::text[],
          ${pgArray(sessions.map((s) => new Date(s.startedAt).toISOString()))}::timestamptz[],
          ${pgArray(sessions.map((s) => new Date(s.lastAt).toISOString()))}::timestamptz[],
          ${pgArray(sessions.map((s) => s.startDay))}::date[], ${pgArray(sessions.map((s) => s.pageviews))}::int[],
          ${
        joinedLabels(sessions)
      }::text[]) AS s(id, site_id, visitor, started_at, last_at, start_day, pageviews, labels)
        ON CONFLICT (id) DO UPDATE SET started_at = excluded.started_at, last_at = excluded.last_at,
          pageviews = excluded.pageviews`.pipe(Effect.asVoid)

    /** Inserts the keys not there yet; answers how many were new per (site, day, dimension, label). */
    const insertSeen = (keys: ReadonlyArray<SeenKey>) =>
      keys.length === 0 ? Effect.succeed([] as ReadonlyArray<SeenCount>) : SqlSchema.findAll({
        Request: Schema.Void,
        Result: SeenCount,
        execute: () =>
          sql`
            WITH new AS (
              INSERT INTO analytics_seen_visitors (site_id, day, dimension, label, visitor)
              SELECT * FROM unnest(${pgArray(keys.map((k) => k.siteId))}::uuid[], ${
            pgArray(keys.map((k) => k.day))
          }::date[],
                ${pgArray(keys.map((k) => k.dimension))}::text[], ${pgArray(keys.map((k) => k.label))}::text[],
                ${pgArray(keys.map((k) => k.visitor))}::text[])
              ON CONFLICT DO NOTHING
              RETURNING site_id, day, dimension, label
            )
            SELECT site_id, day::text AS day, dimension, label, count(*)::int AS n FROM new GROUP BY 1, 2, 3, 4`
      })(undefined)

    /** Inserts the step keys not there yet; answers how many were new per (site, tour, day, step). */
    const insertSteps = (keys: ReadonlyArray<StepKey>) =>
      keys.length === 0 ? Effect.succeed([] as ReadonlyArray<StepCount>) : SqlSchema.findAll({
        Request: Schema.Void,
        Result: StepCount,
        execute: () =>
          sql`
            WITH new AS (
              INSERT INTO analytics_seen_steps (site_id, tour_id, day, kind, session_id)
              SELECT * FROM unnest(${pgArray(keys.map((k) => k.siteId))}::uuid[], ${
            pgArray(keys.map((k) => k.tourId))
          }::uuid[],
                ${pgArray(keys.map((k) => k.day))}::date[], ${pgArray(keys.map((k) => k.kind))}::text[],
                ${pgArray(keys.map((k) => k.sessionId))}::bigint[])
              ON CONFLICT DO NOTHING
              RETURNING site_id, tour_id, day, kind
            )
            SELECT site_id, tour_id, day::text AS day, kind, count(*)::int AS n FROM new GROUP BY 1, 2, 3, 4`
      })(undefined)

    const addSiteDaily = (rows: ReadonlyArray<SiteCounters>) =>
      rows.length === 0 ? Effect.void : sql`
        INSERT INTO analytics_site_daily AS t
          (site_id, day, visitors, new_visitors, sessions, pageviews, bounces, duration_seconds)
        SELECT * FROM unnest(${pgArray(rows.map((r) => r.siteId))}::uuid[], ${pgArray(rows.map((r) => r.day))}::date[],
          ${pgArray(rows.map((r) => r.visitors))}::int[], ${pgArray(rows.map((r) => r.newVisitors))}::int[],
          ${pgArray(rows.map((r) => r.sessions))}::int[], ${pgArray(rows.map((r) => r.pageviews))}::int[],
          ${pgArray(rows.map((r) => r.bounces))}::int[], ${pgArray(rows.map((r) => r.durationSeconds))}::bigint[])
        ON CONFLICT (site_id, day) DO UPDATE SET visitors = t.visitors + excluded.visitors,
          new_visitors = t.new_visitors + excluded.new_visitors, sessions = t.sessions + excluded.sessions,
          pageviews = t.pageviews + excluded.pageviews, bounces = t.bounces + excluded.bounces,
          duration_seconds = t.duration_seconds + excluded.duration_seconds`.pipe(Effect.asVoid)

    const addSourceDaily = (rows: ReadonlyArray<SourceCounters>) =>
      rows.length === 0 ? Effect.void : sql`
        INSERT INTO analytics_source_daily AS t
          (site_id, day, dimension, label, visitors, conversions, revenue_eur_minor)
        SELECT * FROM unnest(${pgArray(rows.map((r) => r.siteId))}::uuid[], ${pgArray(rows.map((r) => r.day))}::date[],
          ${pgArray(rows.map((r) => r.dimension))}::text[], ${pgArray(rows.map((r) => r.label))}::text[],
          ${pgArray(rows.map((r) => r.visitors))}::int[], ${pgArray(rows.map((r) => r.conversions))}::int[],
          ${pgArray(rows.map((r) => r.revenue))}::bigint[])
        ON CONFLICT (site_id, day, dimension, label) DO UPDATE SET visitors = t.visitors + excluded.visitors,
          conversions = t.conversions + excluded.conversions,
          revenue_eur_minor = t.revenue_eur_minor + excluded.revenue_eur_minor`.pipe(Effect.asVoid)

    const addTourDaily = (rows: ReadonlyArray<TourCounters>) =>
      rows.length === 0 ? Effect.void : sql`
        INSERT INTO analytics_tour_daily AS t
          (site_id, tour_id, day, views, availability_checks, checkout_opens, checkout_attempts)
        SELECT * FROM unnest(${pgArray(rows.map((r) => r.siteId))}::uuid[], ${
        pgArray(rows.map((r) => r.tourId))
      }::uuid[],
          ${pgArray(rows.map((r) => r.day))}::date[], ${pgArray(rows.map((r) => r.views))}::int[],
          ${pgArray(rows.map((r) => r.availabilityChecks))}::int[], ${pgArray(rows.map((r) => r.checkoutOpens))}::int[],
          ${pgArray(rows.map((r) => r.checkoutAttempts))}::int[])
        ON CONFLICT (site_id, tour_id, day) DO UPDATE SET views = t.views + excluded.views,
          availability_checks = t.availability_checks + excluded.availability_checks,
          checkout_opens = t.checkout_opens + excluded.checkout_opens,
          checkout_attempts = t.checkout_attempts + excluded.checkout_attempts`.pipe(Effect.asVoid)

    /** A booking code's first session keeps it; it counts nothing until the attributions are checked. */
    const insertAttributions = (attempts: ReadonlyArray<Attempt>) =>
      attempts.length === 0 ? Effect.void : sql`
        INSERT INTO analytics_attributions (site_id, booking_code, session_id, start_day, labels)
        SELECT a.site_id, a.booking_code, a.session_id, a.start_day, string_to_array(a.labels, chr(31))
        FROM unnest(${pgArray(attempts.map((a) => a.siteId))}::uuid[], ${
        pgArray(attempts.map((a) => a.bookingCode))
      }::text[],
          ${pgArray(attempts.map((a) => a.sessionId))}::bigint[], ${pgArray(attempts.map((a) => a.startDay))}::date[],
          ${joinedLabels(attempts)}::text[]) AS a(site_id, booking_code, session_id, start_day, labels)
        ON CONFLICT (site_id, booking_code) DO NOTHING`.pipe(Effect.asVoid)

    /** The (site, month) pairs whose days changed: folded into the monthly tier once the month is closed. */
    const markDirty = (pairs: ReadonlyArray<{ siteId: string; month: string }>) =>
      pairs.length === 0 ? Effect.void : sql`
        INSERT INTO analytics_dirty_months (site_id, month)
        SELECT * FROM unnest(${pgArray(pairs.map((p) => p.siteId))}::uuid[], ${
        pgArray(pairs.map((p) => p.month))
      }::date[])
        ON CONFLICT DO NOTHING`.pipe(Effect.asVoid)

    const now = () => Effect.map(sql<{ now: Date }>`SELECT now() AS now`, (rows) => rows[0]!.now)

    const attributionWatermark = () =>
      Effect.map(
        sql<{ changed_at: Date }>`SELECT changed_at FROM analytics_attribution_state`,
        (rows) => Option.fromNullable(rows[0]?.changed_at)
      )

    const setAttributionWatermark = (at: Date) =>
      sql`
        INSERT INTO analytics_attribution_state (id, changed_at) VALUES (true, ${at})
        ON CONFLICT (id) DO UPDATE SET changed_at = excluded.changed_at`.pipe(Effect.asVoid)

    const attributionColumns = sql.literal(`
      a.site_id, a.booking_code, a.session_id, a.start_day::text AS start_day, a.labels, a.live, a.revenue_eur_minor,
      a.rate_missing, b.status AS booking_status, b.amount_minor, b.currency::text AS currency,
      (b.created_at AT TIME ZONE 'UTC')::date::text AS booking_day`)

    /**
     * Attributions to look at: those not checked yet, those whose revenue waits for a rate (for
     * RATE_RETRY_DAYS; after that their revenue stays 0 until the booking changes), those
     * whose booking changed after `since` (bookings.sales_changed_at moves on insert and on every
     * change of status or amount), and every other attribution of the same sessions (a session
     * converts once however many bookings it made).
     */
    const attributionsToCheck = (since: Date | null) =>
      SqlSchema.findAll({
        Request: Schema.Void,
        Result: AttributionRow,
        execute: () =>
          sql`
            WITH due AS (
              SELECT site_id, booking_code, session_id FROM analytics_attributions
              WHERE NOT checked OR (rate_missing AND start_day >= current_date - ${RATE_RETRY_DAYS}::int)
              ${
            since === null ? sql`` : sql`
              UNION
              SELECT a.site_id, a.booking_code, a.session_id FROM bookings b
              JOIN analytics_attributions a ON a.booking_code = b.confirmation_code
              WHERE b.sales_changed_at > ${since}`
          }
            )
            SELECT ${attributionColumns}
            FROM analytics_attributions a
            LEFT JOIN bookings b ON b.confirmation_code = a.booking_code AND b.site_id = a.site_id
            WHERE a.session_id IN (SELECT session_id FROM due)`
      })(undefined)

    const saveAttributions = (
      rows: ReadonlyArray<{ siteId: string; bookingCode: string; live: boolean; revenue: number; rateMissing: boolean }>
    ) =>
      rows.length === 0 ? Effect.void : sql`
        UPDATE analytics_attributions a SET checked = true, live = r.live, revenue_eur_minor = r.revenue,
          rate_missing = r.rate_missing
        FROM unnest(${pgArray(rows.map((r) => r.siteId))}::uuid[], ${pgArray(rows.map((r) => r.bookingCode))}::text[],
          ${pgArray(rows.map((r) => r.live))}::boolean[], ${pgArray(rows.map((r) => r.revenue))}::bigint[],
          ${
        pgArray(rows.map((r) => r.rateMissing))
      }::boolean[]) AS r(site_id, booking_code, live, revenue, rate_missing)
        WHERE a.site_id = r.site_id AND a.booking_code = r.booking_code`.pipe(Effect.asVoid)

    /**
     * Folds the closed months (before `currentMonth`) whose days changed: their monthly rows are the
     * sums of their daily rows again. Answers how many (site, month) pairs it folded.
     */
    const foldClosedMonths = (currentMonth: string) =>
      Effect.gen(function*() {
        const pairs = yield* sql<{ site_id: string; month: string }>`
          DELETE FROM analytics_dirty_months WHERE month < ${currentMonth}::date RETURNING site_id, month::text AS month`
        if (pairs.length === 0) return 0
        const sites = pgArray(pairs.map((p) => p.site_id))
        const months = pgArray(pairs.map((p) => p.month))
        const dirty = sql`unnest(${sites}::uuid[], ${months}::date[]) AS p(site_id, month)`
        yield* sql`DELETE FROM analytics_site_monthly m USING ${dirty} WHERE m.site_id = p.site_id AND m.month = p.month`
        yield* sql`
          DELETE FROM analytics_source_monthly m USING ${dirty} WHERE m.site_id = p.site_id AND m.month = p.month`
        yield* sql`
          INSERT INTO analytics_site_monthly
            (site_id, month, visitors, new_visitors, sessions, pageviews, bounces, duration_seconds)
          SELECT p.site_id, p.month, sum(d.visitors), sum(d.new_visitors), sum(d.sessions), sum(d.pageviews),
            sum(d.bounces), sum(d.duration_seconds)
          FROM ${dirty}
          JOIN analytics_site_daily d ON d.site_id = p.site_id
            AND d.day >= p.month AND d.day < (p.month + interval '1 month')::date
          GROUP BY p.site_id, p.month`
        yield* sql`
          INSERT INTO analytics_source_monthly
            (site_id, month, dimension, label, visitors, conversions, revenue_eur_minor)
          SELECT p.site_id, p.month, d.dimension, d.label, sum(d.visitors), sum(d.conversions), sum(d.revenue_eur_minor)
          FROM ${dirty}
          JOIN analytics_source_daily d ON d.site_id = p.site_id
            AND d.day >= p.month AND d.day < (p.month + interval '1 month')::date
          GROUP BY p.site_id, p.month, d.dimension, d.label`
        return pairs.length
      })

    /** Deletes dedupe keys of days before `beforeDay` and sessions whose last event is before `beforeAt`. */
    const prune = (beforeDay: string, beforeAt: Date) =>
      Effect.gen(function*() {
        const rows = yield* sql<{ visitor_keys: number; step_keys: number; sessions: number }>`
          WITH v AS (DELETE FROM analytics_seen_visitors WHERE day < ${beforeDay}::date RETURNING 1),
            s AS (DELETE FROM analytics_seen_steps WHERE day < ${beforeDay}::date RETURNING 1),
            x AS (DELETE FROM analytics_sessions WHERE last_at < ${beforeAt} RETURNING 1)
          SELECT (SELECT count(*) FROM v)::int AS visitor_keys, (SELECT count(*) FROM s)::int AS step_keys,
            (SELECT count(*) FROM x)::int AS sessions`
        const r = rows[0]!
        return { visitorKeys: r.visitor_keys, stepKeys: r.step_keys, sessions: r.sessions }
      })

    return repoEdge("AnalyticsRollupsRepo", {
      lock,
      safeId,
      watermark,
      setWatermark,
      batch,
      openSessions,
      saveSessions,
      insertSeen,
      insertSteps,
      addSiteDaily,
      addSourceDaily,
      addTourDaily,
      insertAttributions,
      markDirty,
      now,
      attributionWatermark,
      setAttributionWatermark,
      attributionsToCheck,
      saveAttributions,
      foldClosedMonths,
      prune
    })
  })
}) {}
