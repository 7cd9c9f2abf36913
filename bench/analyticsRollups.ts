/**
 * `npm run bench:analytics-rollups`: one run of the site analytics rollups (src/analytics/AnalyticsRollups.ts)
 * taking in 50,000 new events, timed on a small and on a much larger history, to show that a run costs
 * what is new, not what is there.
 *
 * 1. PostgreSQL: DATABASE_URL, or the embedded server under bench/.data (BENCH_PG_PORT, as `npm run bench`).
 *    One database per history size (partner_bench_analytics_<events>), dropped, created and migrated.
 * 2. History, written in SQL: BENCH_ANALYTICS_HISTORY (default 1000000,10000000) events of 100 sites and
 *    1,000 tours over the 35 days before today (UTC), four events per visit, all already taken in
 *    (the watermark at the last id), with what the rollups keep about them: the dedupe keys and
 *    sessions of the last day (the rest is pruned), and 400 days of daily rows (site, 30 source
 *    labels per site and day, tours).
 * 3. Measured BENCH_ANALYTICS_RUNS (3) times: 50,000 new events of today (12,500 new visits) are
 *    inserted, then one `refresh()` is timed (wall time; the run's own batch count is checked).
 * The table goes to stdout; the figures are in bench/README.md ("Issue 14: the analytics rollups").
 */
import { NodeRuntime } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { Duration, Effect, Layer } from "effect"
import { AnalyticsRollups } from "../src/analytics/AnalyticsRollups.js"
import { layerFromUrl } from "../src/db/Database.js"
import { createDatabase } from "../src/db/embedded.js"
import { ensureEventPartitions } from "../src/demo/analyticsTraffic.js"
import { step } from "./children.js"
import { benchServer } from "./server.js"
import { readSettings } from "./settings.js"

const NEW_EVENTS = 50_000
const SITES = 100
const DAY_MS = 86_400_000

const histories = (process.env.BENCH_ANALYTICS_HISTORY ?? "1000000,10000000").split(",").map((s) => Number(s.trim()))
  .filter((n) => Number.isInteger(n) && n > 0)
const runs = Math.max(1, Number(process.env.BENCH_ANALYTICS_RUNS ?? 3))

/** The columns of a generated event `g` of visit `g / 4` (SQL fragment over `g` and `ts`). */
const EVENT_COLUMNS = `
  ts,
  ('00000000-0000-0000-0000-' || lpad(((g / 4) % ${SITES})::text, 12, '0'))::uuid,
  (ARRAY['pageview', 'pageview', 'tour_view', 'availability_check'])[1 + g % 4],
  md5((g / 4)::text) || md5((g / 4 + 1)::text),
  (g / 4) % 3 = 0,
  CASE WHEN g % 4 >= 2 THEN ('00000000-0000-0000-0001-' || lpad(((g / 4) % ${SITES * 10})::text, 12, '0'))::uuid END,
  (ARRAY['/', '/tours', '/about', '/tours/a', '/tours/b', '/tours/c', '/blog/x', '/contact'])[1 + (g / 4 * 7) % 8],
  (ARRAY[NULL, 'google.com', 'facebook.com', 'tripadvisor.com', 'bing.com', NULL])[1 + (g / 4 * 5) % 6],
  (ARRAY['Direct', 'Organic Search', 'Organic Social', 'Referral', 'Organic Search', 'Email'])[1 + (g / 4 * 5) % 6],
  CASE WHEN (g / 4) % 6 = 5 THEN 'newsletter' END,
  CASE WHEN (g / 4) % 6 = 5 THEN 'email' END,
  CASE WHEN (g / 4) % 6 = 5 THEN 'monthly' END,
  (ARRAY['NO', 'DE', 'US', 'GB', 'SE', 'PT', 'ES', 'FR', 'NL', NULL])[1 + (g / 4 * 3) % 10],
  (ARRAY['mobile', 'desktop', 'tablet'])[1 + (g / 4) % 3],
  (ARRAY['Chrome', 'Safari', 'Firefox', 'Microsoft Edge'])[1 + (g / 4 * 11) % 4],
  (ARRAY['Android', 'iOS', 'Windows', 'macOS', 'Linux'])[1 + (g / 4 * 13) % 5],
  NULL`

const INSERT = `INSERT INTO site_events (at, site_id, kind, visitor, new_visitor, tour_id, path, referrer_host, channel,
  utm_source, utm_medium, utm_campaign, country, device, browser, os, booking_code)`

const prepare = (history: number, today: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const day0 = new Date(today - 36 * DAY_MS).toISOString().slice(0, 10)
    yield* ensureEventPartitions(day0, new Date(today).toISOString().slice(0, 10))
    const from = new Date(today - 35 * DAY_MS).toISOString()
    // History: ids in time order over the 35 days before today, a visit's four events seconds apart.
    for (let start = 0; start < history; start += 1_000_000) {
      const end = Math.min(history, start + 1_000_000) - 1
      yield* sql.unsafe(`
        ${INSERT}
        SELECT ${EVENT_COLUMNS} FROM (
          SELECT g, '${from}'::timestamptz + (g::float8 / ${history}) * interval '35 days' AS ts
          FROM generate_series(${start}, ${end}) g
        ) x`)
    }
    yield* sql.unsafe(`ANALYZE site_events`)
    // All taken in already: the watermark, the last day's dedupe keys and sessions, 400 days of daily rows.
    yield* sql.unsafe(`
      INSERT INTO analytics_rollup_state (rollup, last_id, updated_at) SELECT 'events', max(id), now() FROM site_events;
      INSERT INTO analytics_seen_visitors (site_id, day, dimension, label, visitor)
      SELECT DISTINCT site_id, (at AT TIME ZONE 'UTC')::date, d.dimension, d.label, visitor
      FROM site_events CROSS JOIN LATERAL (VALUES ('_site', ''), ('channel', channel), ('path', path),
        ('country', coalesce(country, '(none)')), ('device', device), ('browser', browser), ('os', os),
        ('referrer', coalesce(referrer_host, '(none)')), ('utm_source', coalesce(utm_source, '(none)')),
        ('utm_medium', coalesce(utm_medium, '(none)')), ('utm_campaign', coalesce(utm_campaign, '(none)'))) d(dimension, label)
      WHERE at >= '${new Date(today - DAY_MS).toISOString()}';
      INSERT INTO analytics_sessions (id, site_id, visitor, started_at, last_at, start_day, pageviews, labels)
      SELECT min(id), site_id, visitor, min(at), max(at), (min(at) AT TIME ZONE 'UTC')::date,
        count(*) FILTER (WHERE kind = 'pageview'), ARRAY['Direct', '(none)', '(none)', '(none)', '(none)', 'NO', 'mobile', 'Chrome', 'iOS', '/']
      FROM site_events WHERE at >= '${new Date(today - DAY_MS).toISOString()}' GROUP BY site_id, visitor;
      INSERT INTO analytics_site_daily (site_id, day, visitors, new_visitors, sessions, pageviews, bounces, duration_seconds)
      SELECT ('00000000-0000-0000-0000-' || lpad(s::text, 12, '0'))::uuid, current_date - d, 500, 300, 520, 900, 200, 50000
      FROM generate_series(0, ${SITES - 1}) s, generate_series(1, 400) d;
      INSERT INTO analytics_source_daily (site_id, day, dimension, label, visitors, conversions, revenue_eur_minor)
      SELECT ('00000000-0000-0000-0000-' || lpad(s::text, 12, '0'))::uuid, current_date - d,
        (ARRAY['channel', 'referrer', 'utm_source', 'utm_medium', 'utm_campaign', 'country', 'device', 'browser', 'os', 'path'])[1 + l % 10],
        'label ' || (l / 10), 40, 1, 9000
      FROM generate_series(0, ${SITES - 1}) s, generate_series(1, 400) d, generate_series(0, 29) l;
      INSERT INTO analytics_tour_daily (site_id, tour_id, day, views, availability_checks, checkout_opens, checkout_attempts)
      SELECT ('00000000-0000-0000-0000-' || lpad((t % ${SITES})::text, 12, '0'))::uuid,
        ('00000000-0000-0000-0001-' || lpad(t::text, 12, '0'))::uuid, current_date - d, 50, 20, 10, 5
      FROM generate_series(0, ${SITES * 10 - 1}) t, generate_series(1, 400) d;
      ANALYZE`)
  })

/** 50,000 new events of today, visits numbered after every earlier one (new visitors). */
const insertNew = (history: number, run: number, today: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const first = history + run * NEW_EVENTS
    const from = new Date(today + run * 2 * 3_600_000).toISOString()
    return sql.unsafe(`
      ${INSERT}
      SELECT ${EVENT_COLUMNS} FROM (
        SELECT g, '${from}'::timestamptz + ((g - ${first})::float8 / ${NEW_EVENTS}) * interval '2 hours' AS ts
        FROM generate_series(${first}, ${first + NEW_EVENTS - 1}) g
      ) x`)
  })

const main = Effect.gen(function*() {
  const settings = readSettings()
  const server = yield* benchServer(settings)
  yield* step(`database server: ${server.description}`)
  // Today's first hours: the bench's own clock for the events (the rollups read no clock but the fold's).
  const today = Math.floor(Date.now() / DAY_MS) * DAY_MS
  const rows: Array<{ history: number; runs: Array<number> }> = []
  for (const history of histories) {
    const name = `partner_bench_analytics_${history}`
    yield* step(`history ${history.toLocaleString("en")} events: creating ${name} afresh`)
    const url = yield* createDatabase(server.adminUrl, name)
    const timings = yield* Effect.scoped(Effect.gen(function*() {
      const context = yield* Layer.build(AnalyticsRollups.Default.pipe(Layer.provideMerge(layerFromUrl(url, 4))))
      const [prepared] = yield* Effect.timed(prepare(history, today).pipe(Effect.provide(context)))
      yield* step(`history written in ${Math.round(Duration.toSeconds(prepared))} s`)
      const out: Array<number> = []
      for (let run = 0; run < runs; run++) {
        yield* insertNew(history, run, today).pipe(Effect.provide(context))
        const [took, result] = yield* Effect.timed(
          Effect.flatMap(AnalyticsRollups, (r) => r.refresh()).pipe(Effect.provide(context))
        )
        if (result.events !== NEW_EVENTS) {
          return yield* Effect.dieMessage(`run ${run + 1} took in ${result.events} events, not ${NEW_EVENTS}`)
        }
        out.push(Duration.toMillis(took))
        yield* step(`run ${run + 1}: ${Math.round(Duration.toMillis(took))} ms (${result.batches} batch)`)
      }
      return out
    }))
    rows.push({ history, runs: timings })
  }
  const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  console.log("\nhistory (events)  runs (ms)                 median (ms)  ratio to the first")
  for (const r of rows) {
    console.log(
      `${r.history.toLocaleString("en").padEnd(18)}${r.runs.map((t) => Math.round(t)).join(", ").padEnd(26)}${
        String(Math.round(median(r.runs))).padEnd(13)
      }${(median(r.runs) / median(rows[0]!.runs)).toFixed(2)}`
    )
  }
})

NodeRuntime.runMain(Effect.scoped(main), { disableErrorReporting: false })
