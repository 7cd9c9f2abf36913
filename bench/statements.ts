/**
 * `npm run bench:statements`: GET /api/v1/finance/statements on a month of 10,000 entries (issue 15;
 * target: under 100 ms).
 *
 * 1. PostgreSQL: DATABASE_URL, or the embedded server under bench/.data (BENCH_PG_PORT). A database of
 *    its own (BENCH_STATEMENTS_DB, rebuilt every run), migrated to the current schema.
 * 2. Data, written through the commission ledger's triggers (migration 0032) like any booking:
 *    100 operators; operator #1 has BENCH_STATEMENTS_ENTRIES (10,000) entries in the measured month
 *    (one in ten bookings inserted cancelled: a sale and a cancellation), the 99 others 500 each in
 *    that month and in the month before (about 110,000 entries in all); NOK, a tenth of #1's in EUR.
 * 3. The service (`src/main.ts serve`, no jobs, no demo) with a finance:read key over operators #1-#6.
 * 4. Checks: operator #1's statement lists 1000 entries per section oldest first, `entries_total`
 *    and the sums equal the ledger's own.
 * 5. Latency, one request at a time (BENCH_STATEMENTS_REQUESTS, at most 280: a key's 300 a minute, after 20
 *    warmups; a key per measurement): operator #1 alone
 *    (`partner_id`), and the six operators at once. p50/p95/p99/max to stdout and
 *    bench/statements-results.json (BENCH_STATEMENTS_RESULTS).
 */
import { NodeRuntime } from "@effect/platform-node"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"
import { machine, startChild, step } from "./children.js"
import { createKey } from "./generate.js"
import { migrate } from "./generateTours.js"
import { benchServer } from "./server.js"
import { DATA_DIR, databaseUrlFor, PROJECT_DIR, readSettings } from "./settings.js"

const DB = process.env.BENCH_STATEMENTS_DB || "partner_bench_statements"
const ENTRIES = Number(process.env.BENCH_STATEMENTS_ENTRIES ?? 10_000)
const REQUESTS = Math.min(280, Number(process.env.BENCH_STATEMENTS_REQUESTS ?? 200))
const RESULTS = path.resolve(PROJECT_DIR, process.env.BENCH_STATEMENTS_RESULTS || "bench/statements-results.json")
const MONTH = "2026-10"
const TARGET_MS = 100

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
const round = (n: number) => Math.round(n * 10) / 10

/** Bookings of operator `n` with `count` entries in month `month` (every tenth booking cancelled: 2 entries). */
const bookingsSql = (n: number, count: number, month: string, tag: string) => {
  // b bookings give b + floor(b / 10) entries.
  const bookings = Math.ceil((count * 10) / 11)
  return `
    INSERT INTO bookings (confirmation_code, status, operator_id, tour_name, experience_date, timezone, amount_minor,
      currency, payment_strategy, commission_amount_minor, commission_rate_percent, commission_currency, booked_at,
      created_at, updated_at)
    SELECT 'B${n}-${tag}-' || g, CASE WHEN g % 10 = 0 THEN 'CANCELLED' ELSE 'CONFIRMED' END, o.id,
      'Bench Tour ' || (g % 7), date '${month}-01' + 40, 'Europe/Oslo', 40000 + (g % 50) * 1000,
      CASE WHEN g % 10 = 3 THEN 'EUR' ELSE 'NOK' END, 'pay_now', (40000 + (g % 50) * 1000) / 10, 10,
      CASE WHEN g % 10 = 3 THEN 'EUR' ELSE 'NOK' END,
      timestamptz '${month}-01T00:00:00Z' + make_interval(secs => g * (2500000.0 / ${bookings})),
      timestamptz '${month}-01T00:00:00Z' + make_interval(secs => g * (2500000.0 / ${bookings})),
      CASE WHEN g % 10 = 0 THEN timestamptz '${month}-01T00:00:00Z' + make_interval(secs => g * (2500000.0 / ${bookings}) + 60) END
    FROM generate_series(1, ${bookings}) g, bench_ops o WHERE o.n = ${n}`
}

const nextMonth = (month: string) => {
  const [y, m] = month.split("-").map(Number) as [number, number]
  return new Date(Date.UTC(y, m, 1)).toISOString()
}

// The statements of src/partner/finance/statements/StatementsRepo.ts, with positional parameters.
const SECTIONS_SQL = `
  SELECT operator_id, currency, count(*) FILTER (WHERE type = 'sale')::int AS sales,
    count(*) FILTER (WHERE type = 'cancellation')::int AS cancellations,
    count(*) FILTER (WHERE type = 'difference')::int AS differences, sum(gross_minor)::int8 AS gross_minor,
    sum(commission_minor)::int8 AS commission_minor, sum(reserve_fee_minor)::int8 AS reserve_fee_minor,
    count(*)::int AS entries_total, bool_or(pending) AS pending
  FROM commission_entries WHERE operator_id = ANY($1::uuid[]) AND occurred_at >= $2 AND occurred_at < $3
  GROUP BY operator_id, currency`
const NUMBERS_SQL = `
  SELECT operator_id, number FROM commission_statements
  WHERE operator_id = ANY($1::uuid[]) AND month = ($2::timestamptz AT TIME ZONE 'UTC')::date AND $3::text IS NOT NULL`
const ENTRIES_SQL = `
  SELECT s.operator_id, e.type, e.occurred_at, s.currency, b.confirmation_code, coalesce(b.tour_name, t.title, '') AS tour,
    b.experience_date, e.gross_minor, e.commission_rate_percent, e.commission_minor, e.reserve_fee_minor
  FROM unnest($1::uuid[], $2::text[]) AS s(operator_id, currency)
  CROSS JOIN LATERAL (
    SELECT * FROM commission_entries c WHERE c.operator_id = s.operator_id AND c.currency = s.currency
      AND c.occurred_at >= $3 AND c.occurred_at < $4 ORDER BY c.occurred_at, c.id LIMIT 1000
  ) e
  JOIN bookings b ON b.id = e.booking_id LEFT JOIN tours t ON t.id = b.tour_id
  ORDER BY s.operator_id, s.currency, e.occurred_at, e.id`

const program = Effect.gen(function*() {
  const settings = readSettings()
  const server = yield* benchServer(settings)
  yield* step(`PostgreSQL: ${server.description}`)
  const admin = new pg.Client({ connectionString: server.adminUrl })
  yield* Effect.promise(() => admin.connect())
  yield* Effect.promise(() => admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(DB)} WITH (FORCE)`))
  yield* Effect.promise(() => admin.query(`CREATE DATABASE ${pg.escapeIdentifier(DB)}`))
  yield* Effect.promise(() => admin.end())
  const url = databaseUrlFor(server.adminUrl, DB)
  yield* migrate(url)
  yield* step("migrated")

  const client = new pg.Client({ connectionString: url })
  yield* Effect.promise(() => client.connect())
  const q = <R extends pg.QueryResultRow>(text: string, values: Array<unknown> = []) =>
    Effect.promise(() => client.query<R>(text, values))
  const started = Date.now()
  yield* q(`CREATE TABLE bench_ops AS SELECT n, gen_random_uuid() AS id FROM generate_series(1, 100) n`)
  yield* q(`INSERT INTO operators (id, name) SELECT id, 'Bench Operator ' || lpad(n::text, 3, '0') FROM bench_ops`)
  const [user] = (yield* q<{ id: string }>(
    `INSERT INTO users (email, name) VALUES ('bench-statements@example.com', 'Bench') RETURNING id`
  )).rows
  yield* q(`INSERT INTO memberships (operator_id, user_id, role) SELECT id, $1, 'owner' FROM bench_ops`, [user!.id])
  yield* q(bookingsSql(1, ENTRIES, MONTH, "a"))
  for (let n = 2; n <= 100; n++) {
    yield* q(bookingsSql(n, 500, MONTH, "a"))
    yield* q(bookingsSql(n, 500, "2026-09", "b"))
  }
  yield* q("ANALYZE")
  const [{ total }] = (yield* q<{ total: string }>("SELECT count(*) AS total FROM commission_entries")).rows as [
    { total: string }
  ]
  const ops = (yield* q<{ id: string }>("SELECT id FROM bench_ops WHERE n <= 6 ORDER BY n")).rows.map((r) => r.id)
  const target = ops[0]!
  const ledger = (yield* q<{ currency: string; n: string; gross: string; commission: string }>(
    `SELECT currency, count(*) AS n, sum(gross_minor) AS gross, sum(commission_minor) AS commission
     FROM commission_entries WHERE operator_id = $1 AND occurred_at >= '${MONTH}-01' AND occurred_at < date '${MONTH}-01' + interval '1 month'
     GROUP BY currency ORDER BY currency`,
    [target]
  )).rows
  // One key per measurement: each stays under the 300 requests a minute of a key.
  const keys: Array<string> = []
  for (let i = 0; i < 3; i++) {
    const made = yield* Effect.promise(() =>
      createKey(client, user!.id, `bench: statements, 6 operators (${i + 1})`, ops, ["finance:read"])
    )
    keys.push(made.token)
  }
  // The SQL alone (the repository's three statements, as the service sends them), for comparison.
  const sqlTimes: Array<number> = []
  const range = [[target], `${MONTH}-01T00:00:00Z`, nextMonth(MONTH)]
  for (let i = 0; i < 60; i++) {
    const t0 = performance.now()
    const sections = (yield* q<{ operator_id: string; currency: string }>(SECTIONS_SQL, range)).rows
    yield* q(NUMBERS_SQL, range)
    yield* q(ENTRIES_SQL, [sections.map((r) => r.operator_id), sections.map((r) => r.currency), range[1], range[2]])
    if (i >= 10) sqlTimes.push(performance.now() - t0)
  }
  sqlTimes.sort((a, b) => a - b)
  const sqlAlone = { p50_ms: round(percentile(sqlTimes, 50)), p95_ms: round(percentile(sqlTimes, 95)) }
  yield* step(`the SQL alone, operator #1: p50 ${sqlAlone.p50_ms} ms, p95 ${sqlAlone.p95_ms} ms`)
  yield* Effect.promise(() => client.end())
  const entriesOfTarget = ledger.reduce((n, r) => n + Number(r.n), 0)
  yield* step(`data: ${total} entries, ${entriesOfTarget} of operator #1 in ${MONTH} (${Date.now() - started} ms)`)

  const service = yield* startChild({
    name: "statements-service",
    args: ["src/main.ts", "serve"],
    env: {
      DATABASE_URL: url,
      DEMO_DATA: "false",
      JOBS: "false",
      LOG_LEVEL: "Warning",
      DATA_DIR: path.join(DATA_DIR, "statements-service")
    },
    readyPath: "/healthz"
  })
  const get = (query: string, key = keys[0]!) =>
    Effect.promise(async () => {
      const t0 = performance.now()
      const res = await fetch(`${service.base}/api/v1/finance/statements?${query}`, {
        headers: { authorization: `Bearer ${key}` }
      })
      const body = await res.json() as any
      return { ms: performance.now() - t0, status: res.status, body }
    })

  // Checks.
  const one = yield* get(`month=${MONTH}&partner_id=${target}`)
  if (one.status !== 200) return yield* Effect.die(new Error(`status ${one.status}: ${JSON.stringify(one.body)}`))
  const sections = one.body.statements[0].sections as Array<any>
  for (const row of ledger) {
    const s = sections.find((x) => x.currency === row.currency)
    const ok = s && s.entries_total === Number(row.n) && s.gross_minor === Number(row.gross) &&
      s.commission_minor === Number(row.commission) && s.entries.length === Math.min(1000, Number(row.n))
    if (!ok) return yield* Effect.die(new Error(`section ${row.currency} does not match the ledger`))
    const times = s.entries.map((e: any) => e.occurred_at)
    if ([...times].sort().join() !== times.join()) return yield* Effect.die(new Error("entries not oldest first"))
  }
  yield* step(
    `checks: operator #1's sections match the ledger (${
      sections.map((s) => `${s.currency} ${s.entries_total}`).join(", ")
    })`
  )

  const measure = (name: string, query: string, key: string) =>
    Effect.gen(function*() {
      for (let i = 0; i < 20; i++) yield* get(query, key)
      const times: Array<number> = []
      for (let i = 0; i < REQUESTS; i++) {
        const r = yield* get(query, key)
        if (r.status !== 200) return yield* Effect.die(new Error(`status ${r.status}`))
        times.push(r.ms)
      }
      times.sort((a, b) => a - b)
      const result = {
        name,
        requests: REQUESTS,
        p50_ms: round(percentile(times, 50)),
        p95_ms: round(percentile(times, 95)),
        p99_ms: round(percentile(times, 99)),
        max_ms: round(times.at(-1)!),
        target_ms: TARGET_MS,
        met: percentile(times, 99) < TARGET_MS,
        load_average: os.loadavg().map((n) => round(n))
      }
      yield* step(
        `${name}: p50 ${result.p50_ms} ms, p95 ${result.p95_ms} ms, p99 ${result.p99_ms} ms, max ${result.max_ms} ms ` +
          `(p99 target < ${TARGET_MS} ms: ${result.met ? "met" : "MISSED"}; load average ${
            result.load_average[0]
          } on ` +
          `${os.cpus().length} cores)`
      )
      return result
    })
  const results = [
    yield* measure(`one operator, ${entriesOfTarget} entries`, `month=${MONTH}&partner_id=${target}`, keys[1]!),
    yield* measure("six operators (the key's limit)", `month=${MONTH}`, keys[2]!)
  ]
  fs.writeFileSync(
    RESULTS,
    JSON.stringify(
      {
        at: new Date().toISOString(),
        machine: machine(),
        month: MONTH,
        entries_total: Number(total),
        sql_alone: sqlAlone,
        results
      },
      null,
      2
    ) + "\n"
  )
  yield* step(`results in ${path.relative(PROJECT_DIR, RESULTS)}`)
})

NodeRuntime.runMain(Effect.scoped(program))
