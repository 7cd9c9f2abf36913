/**
 * `npm run bench:sales`: GET /api/v1/sales (issue 13) against the floor, and the rollup job's cost.
 *
 * 1. PostgreSQL: DATABASE_URL, or the embedded server under bench/.data. The bookings dataset of
 *    `npm run bench` (bench/generate.ts: 1,000,000 bookings, 100 operators, two years; reused when it
 *    is there), migrated to the current schema, plus the sales dataset of bench/generateSales.ts
 *    (2,000,000 other-channel ledger lines over 400 days, accounts of 1-3 operators, rates of every
 *    banking day, a finance:read key over 10 operators, the rollups built once by SalesRollups).
 * 2. The service (`src/main.ts serve`, JOBS=false) and the floor (bench/floor.ts), both with
 *    bench/sqlTrace.ts preloaded.
 * 3. Checks, for currency NOK and EUR (and one operator through partner_id): both answer 200 with the
 *    same JSON from the same statements with the same parameters; other-channel figures available.
 * 4. Load: `GET /api/v1/sales?from=<today-365>&to=<today>&currency=NOK|EUR` (366 days) with the key
 *    over 10 operators, at BENCH_SALES_CONNECTIONS (1 and 4) connections, each a warmup and a
 *    measurement of BENCH_DURATION s per server (order alternating), re-measured when the machine
 *    was noisy; ratio = service / floor req/s.
 * 5. The rollup job (SalesRollups.refresh) after 10,000 changed bookings (status CONFIRMED ->
 *    CANCELLED, picked at random among the last 30 days' bookings), with 1,000,000 and then
 *    3,000,000 bookings of history, in a copy of the database (BENCH_SALES_ROLLUP_DB, dropped at the
 *    end): the extra history is the two years before, at the same daily density (the bookings
 *    copied 730 and 1,460 days back, their rollup rows with them). BENCH_SALES_ROLLUP_ROUNDS rounds
 *    each; the figures are checked against the bookings after every run.
 * The tables go to stdout, the results to bench/sales-results.json (BENCH_SALES_RESULTS).
 */
import { NodeRuntime } from "@effect/platform-node"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import pg from "pg"
import { machine, startServiceAndFloor, step } from "./children.js"
import { LOG_DIR } from "./children.js"
import { bodyDifference, normalizeSql, readTrace, statementDifferences, type TracedStatement } from "./compare.js"
import { ensureDataset } from "./generate.js"
import { ensureSalesDataset, KEY_OPERATORS, refreshRollups } from "./generateSales.js"
import { migrate } from "./generateTours.js"
import { type LoadTarget, type Measurement, measureQuietest } from "./load.js"
import { benchServer } from "./server.js"
import { databaseUrlFor, PROJECT_DIR, readSettings } from "./settings.js"

const RESULTS = path.resolve(PROJECT_DIR, process.env.BENCH_SALES_RESULTS || "bench/sales-results.json")
const CONNECTIONS = (process.env.BENCH_SALES_CONNECTIONS ?? "1,4").split(",").map((s) => Number(s.trim())).filter((
  n
) => Number.isInteger(n) && n > 0)
const ROLLUP_DB = process.env.BENCH_SALES_ROLLUP_DB || "partner_bench_rollups"
const ROLLUP_ROUNDS = Number(process.env.BENCH_SALES_ROLLUP_ROUNDS ?? 3)
const ROLLUP_CHANGED = Number(process.env.BENCH_SALES_ROLLUP_CHANGED ?? 10_000)
/** Which parts run: `load`, `rollups` (both by default). */
const PARTS = (process.env.BENCH_SALES_PARTS ?? "load,rollups").split(",").map((s) => s.trim())
const SERVICE_APPLICATION_NAME = "tour-partner-service"
const FLOOR_APPLICATION_NAME = "bench-floor"

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits
const pad = (s: string, n: number) => (s.length >= n ? s : s + " ".repeat(n - s.length))
const lpad = (s: string, n: number) => (s.length >= n ? s : " ".repeat(n - s.length) + s)
const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10)

const pool = (url: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const p = new pg.Pool({ connectionString: url, max: 1, application_name: "bench-runner" })
      p.on("error", (e) => console.error(`[bench] runner's database connection: ${e.message}`))
      return p
    }),
    (p) => Effect.promise(() => p.end())
  )

const query = <R extends pg.QueryResultRow>(p: pg.Pool, text: string, values: ReadonlyArray<unknown> = []) =>
  Effect.promise(() => p.query<R>(text, values as Array<unknown>))

/** What the ledger refresh job keeps doing: the accounts' ledgers complete up to now (not stale). */
const keepLedgerFresh = (admin: pg.Pool) =>
  query(admin, "UPDATE sales_ledger_accounts SET covered_until = now(), last_attempt_at = now(), last_outcome = 'ok'")

// ---- checks ----------------------------------------------------------------------------------------

interface Check {
  readonly name: string
  readonly path: string
  readonly ok: boolean
  readonly statements: { readonly service: number; readonly floor: number }
  readonly bytes: number
  readonly figures: { ownDays: number; channelDays: number; channels: number; available: boolean } | null
  readonly problems: ReadonlyArray<string>
}

const probe = (base: string, traceFile: string, p: string, token: string) =>
  Effect.promise(async () => {
    const from = fs.statSync(traceFile).size
    const response = await fetch(base + p, { headers: { authorization: `Bearer ${token}` } })
    const text = await response.text()
    await new Promise((resolve) => setTimeout(resolve, 50))
    return { status: response.status, text, statements: readTrace(traceFile, from) }
  })

const checkSame = (
  name: string,
  p: string,
  token: string,
  targets: { service: string; floor: string },
  traces: { service: string; floor: string }
) =>
  Effect.gen(function*() {
    const problems: Array<string> = []
    const s = yield* probe(targets.service, traces.service, p, token)
    const f = yield* probe(targets.floor, traces.floor, p, token)
    if (s.status !== 200 || f.status !== 200) {
      problems.push(
        `status service ${s.status}, floor ${f.status}: ${(s.status !== 200 ? s.text : f.text).slice(0, 300)}`
      )
    }
    const difference = bodyDifference(s.text, f.text)
    if (difference) problems.push(difference)
    // The three reads of SalesRepo go out at once, so their order in a trace varies from request to
    // request: the statements are compared in a canonical order (same texts, same parameters).
    const ordered = (statements: ReadonlyArray<TracedStatement>) =>
      [...statements].sort((a, b) => {
        const x = normalizeSql(a.text) + JSON.stringify(a.values)
        const y = normalizeSql(b.text) + JSON.stringify(b.values)
        return x < y ? -1 : x > y ? 1 : 0
      })
    problems.push(...statementDifferences(ordered(s.statements), ordered(f.statements)))
    let figures: Check["figures"] = null
    if (s.status === 200) {
      const body = JSON.parse(s.text)
      figures = {
        ownDays: body.panion.days.length,
        channelDays: body.other_channels.days.length,
        channels: body.other_channels.channels.length,
        available: body.other_channels.available
      }
      if (!figures.available) {
        problems.push(`other_channels unavailable: ${JSON.stringify(body.other_channels.unavailable)}`)
      }
      if (figures.ownDays === 0 || figures.channelDays === 0) problems.push("no own or no other-channel days")
    }
    return {
      name,
      path: p,
      ok: problems.length === 0,
      statements: { service: s.statements.length, floor: f.statements.length },
      bytes: Buffer.byteLength(s.text),
      figures,
      problems
    } satisfies Check
  })

// ---- load ------------------------------------------------------------------------------------------

interface Row {
  readonly name: string
  readonly path: string
  readonly connections: number
  readonly service: Measurement
  readonly floor: Measurement
  readonly ratio: number | null
}

const loadPart = (settings: ReturnType<typeof readSettings>, url: string, token: string, operatorIds: Array<string>) =>
  Effect.scoped(Effect.gen(function*() {
    const admin = yield* pool(url)
    yield* keepLedgerFresh(admin)
    const traces = {
      service: path.join(LOG_DIR, "sales-service.sql.jsonl"),
      floor: path.join(LOG_DIR, "sales-floor.sql.jsonl")
    }
    fs.mkdirSync(LOG_DIR, { recursive: true })
    for (const file of Object.values(traces)) fs.writeFileSync(file, "")
    const { floor, service } = yield* startServiceAndFloor({
      prefix: "sales",
      serviceEntry: settings.serviceEntry,
      floorEntry: "bench/floor.ts",
      env: { DATABASE_URL: url, DB_POOL_SIZE: String(settings.poolSize), RATE_LIMIT_PER_MINUTE: "1000000000" },
      traces,
      serviceTiming: path.join(LOG_DIR, "sales-service.http.jsonl")
    })
    const today = utcDay(Date.now())
    const from = utcDay(Date.now() - 365 * 86_400_000)
    const pathOf = (currency: string, extra = "") =>
      `/api/v1/sales?from=${from}&to=${today}&currency=${currency}${extra}`

    yield* step("checking that both servers answer the same JSON from the same SQL")
    const checks: Array<Check> = []
    for (
      const [name, p] of [
        ["366 days, NOK", pathOf("NOK")],
        ["366 days, EUR", pathOf("EUR")],
        ["366 days, EUR, one operator (partner_id)", pathOf("EUR", `&partner_id=${operatorIds[6]}`)],
        ["31 days, default currency", `/api/v1/sales?from=${utcDay(Date.now() - 30 * 86_400_000)}&to=${today}`]
      ] as const
    ) {
      const c = yield* checkSame(name, p, token, { service: service.base, floor: floor.base }, traces)
      checks.push(c)
      yield* step(
        `  ${pad(name, 44)} ${
          c.ok
            ? `ok (${c.statements.service} statements each, ${c.bytes} bytes, ${JSON.stringify(c.figures)})`
            : `FAILED\n${c.problems.join("\n")}`
        }`
      )
    }
    if (checks.some((c) => !c.ok)) return yield* Effect.fail(new Error("a check failed"))
    service.child.kill("SIGUSR2")
    floor.child.kill("SIGUSR2")

    const targets: Record<"service" | "floor", LoadTarget> = {
      service: {
        name: "service",
        base: service.base,
        pid: service.child.pid!,
        applicationName: SERVICE_APPLICATION_NAME
      },
      floor: { name: "floor", base: floor.base, pid: floor.child.pid!, applicationName: FLOOR_APPLICATION_NAME }
    }
    const headers = { authorization: `Bearer ${token}` }
    if (settings.warmup > 0) {
      yield* step(`warming both servers up (${settings.warmup * 3} s each)`)
      for (const t of [targets.service, targets.floor]) {
        yield* measureQuietest([t], {
          path: pathOf("NOK"),
          headers,
          connections: 4,
          seconds: settings.warmup * 3,
          admin,
          database: new URL(url).pathname.slice(1),
          warmup: 0,
          retries: 0,
          quietTimeout: 0
        }, "warmup")
      }
    }
    const rows: Array<Row> = []
    let index = 0
    for (const connections of CONNECTIONS) {
      for (const currency of ["NOK", "EUR"]) {
        const name = `366 days, ${currency}, ${connections} conn.`
        if (settings.only.length > 0 && !settings.only.some((o) => name.includes(o))) continue
        yield* keepLedgerFresh(admin)
        const order = index++ % 2 === 0 ? [targets.service, targets.floor] : [targets.floor, targets.service]
        const results = yield* measureQuietest(order, {
          path: pathOf(currency),
          headers,
          connections,
          seconds: settings.duration,
          admin,
          database: new URL(url).pathname.slice(1),
          warmup: settings.warmup,
          retries: settings.noisyRetries,
          quietTimeout: settings.quietTimeout
        }, name)
        const s = results.find((m) => m.target === "service")!
        const f = results.find((m) => m.target === "floor")!
        rows.push({
          name,
          path: pathOf(currency),
          connections,
          service: s,
          floor: f,
          ratio: f.requestsPerSecond > 0 ? round(s.requestsPerSecond / f.requestsPerSecond, 3) : null
        })
      }
    }
    return { checks, rows, from, to: today }
  }))

const loadTable = (rows: ReadonlyArray<Row>) => {
  const header = [
    pad("scenario", 26),
    lpad("service req/s", 13),
    lpad("p50/p99 ms", 11),
    lpad("floor req/s", 12),
    lpad("p50/p99 ms", 11),
    lpad("ratio", 6),
    lpad("CPU ms/req svc node+pg", 23),
    lpad("floor node+pg", 14),
    lpad("busy/other %", 14)
  ].join(" ")
  const lines = [header, "-".repeat(header.length)]
  const f = (n: number | null) => (n === null ? "-" : n.toFixed(2))
  for (const r of rows) {
    lines.push([
      pad(r.name, 26),
      lpad(String(r.service.requestsPerSecond), 13),
      lpad(`${r.service.latencyMs.p50}/${r.service.latencyMs.p99}`, 11),
      lpad(String(r.floor.requestsPerSecond), 12),
      lpad(`${r.floor.latencyMs.p50}/${r.floor.latencyMs.p99}`, 11),
      lpad(r.ratio === null ? "-" : r.ratio.toFixed(2), 6),
      lpad(`${f(r.service.cpuMsPerRequest.node)}+${f(r.service.cpuMsPerRequest.postgres)}`, 23),
      lpad(`${f(r.floor.cpuMsPerRequest.node)}+${f(r.floor.cpuMsPerRequest.postgres)}`, 14),
      lpad(
        [r.service.machine, r.floor.machine].map((
          m
        ) => (m ? `${m.busyPercent.toFixed(0)}/${m.otherPercent.toFixed(0)}` : "-"))
          .join(" "),
        14
      ) + (r.service.ok && r.floor.ok ? "" : "  FAILED")
    ].join(" "))
  }
  return lines.join("\n")
}

// ---- the rollup job --------------------------------------------------------------------------------

interface RollupRun {
  readonly history: number
  readonly round: number
  readonly changed: number
  readonly seconds: number
  readonly ownGroups: number
  readonly channelGroups: number
  readonly consistent: boolean
}

/** Live bookings against what the own rollup holds from the checkout: must be equal after a run. */
const consistency = (admin: pg.Pool) =>
  Effect.map(
    query<{ live: number; rolled: number }>(
      admin,
      `SELECT (SELECT count(*) FROM bookings WHERE status IN ('RESERVED', 'CONFIRMED'))::int8 AS live,
         (SELECT coalesce(sum(bookings), 0) FROM sales_own_daily WHERE source = 'checkout')::int8 AS rolled`
    ),
    (r) => r.rows[0]!
  )

const changeBookings = (admin: pg.Pool, count: number) =>
  query(
    admin,
    `UPDATE bookings SET status = 'CANCELLED', updated_at = now(), cancel_reason = 'customer_request'
     WHERE id IN (
       SELECT id FROM bookings WHERE status = 'CONFIRMED' AND created_at > now() - interval '30 days'
       ORDER BY random() LIMIT $1)`,
    [count]
  )

const timedRounds = (url: string, admin: pg.Pool, history: number) =>
  Effect.gen(function*() {
    const runs: Array<RollupRun> = []
    for (let r = 1; r <= ROLLUP_ROUNDS; r++) {
      const changed = (yield* changeBookings(admin, ROLLUP_CHANGED)).rowCount ?? 0
      const run = yield* refreshRollups(url)
      const c = yield* consistency(admin)
      const one: RollupRun = {
        history,
        round: r,
        changed,
        seconds: round(run.seconds, 3),
        ownGroups: run.own.groups,
        channelGroups: run.channels.groups,
        consistent: Number(c.live) === Number(c.rolled)
      }
      runs.push(one)
      yield* step(
        `  ${history.toLocaleString("en")} bookings, round ${r}: ${changed} changed -> ${one.seconds} s ` +
          `(${one.ownGroups} own groups, ${one.channelGroups} channel groups; live ${c.live}, rolled up ${c.rolled}${
            one.consistent ? "" : " MISMATCH"
          })`
      )
    }
    return runs
  })

/** Copies bookings (and their own-sales rollup rows) `shifts` × 730 days into the past. */
const extendHistory = (admin: pg.Pool) =>
  Effect.gen(function*() {
    const t0 = Date.now()
    const { rows: columns } = yield* query<{ name: string; type: string }>(
      admin,
      `SELECT column_name AS name, data_type AS type FROM information_schema.columns
       WHERE table_schema = 'public' AND table_name = 'bookings' AND column_name <> 'id' ORDER BY ordinal_position`
    )
    const SHIFTED = new Set([
      "created_at",
      "booked_at",
      "updated_at",
      "experience_date",
      "pay_later_charge_at",
      "pay_later_paid_at",
      "sales_changed_at"
    ])
    const source = (shift: number) => (c: { name: string; type: string }) =>
      c.name === "confirmation_code"
        ? `'H${shift}' || confirmation_code`
        : c.name === "provider_reference"
        ? `CASE WHEN provider_reference IS NOT NULL THEN 'H${shift}' || provider_reference END`
        : SHIFTED.has(c.name)
        ? (c.type === "date" ? `${c.name} - ${730 * shift}` : `${c.name} - interval '${730 * 24 * shift} hours'`)
        : c.name
    const indexes = (yield* query<{ name: string; def: string }>(
      admin,
      `SELECT i.relname AS name, pg_get_indexdef(i.oid) AS def
       FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
       WHERE x.indrelid = 'bookings'::regclass
         AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.oid)`
    )).rows
    yield* query(admin, "SET maintenance_work_mem = '512MB'")
    yield* query(admin, "BEGIN")
    for (const index of indexes) yield* query(admin, `DROP INDEX ${pg.escapeIdentifier(index.name)}`)
    yield* query(admin, "SET LOCAL session_replication_role = replica")
    for (const shift of [1, 2]) {
      yield* query(
        admin,
        `INSERT INTO bookings (${columns.map((c) => c.name).join(", ")})
         SELECT ${columns.map(source(shift)).join(", ")} FROM bookings WHERE confirmation_code NOT LIKE 'H%'`
      )
    }
    // The copies' rollup rows: the originals' moved by the same whole days (one statement, so no
    // copy is copied again).
    yield* query(
      admin,
      `INSERT INTO sales_own_daily (operator_id, day, source, site_id, tour_id, currency, bookings, participants, revenue_minor)
       SELECT operator_id, day - 730 * shift, source, site_id, tour_id, currency, bookings, participants, revenue_minor
       FROM sales_own_daily CROSS JOIN (VALUES (1), (2)) AS s(shift) WHERE source = 'checkout'`
    )
    yield* query(admin, "SET LOCAL session_replication_role = origin")
    for (const index of indexes) yield* query(admin, index.def)
    yield* query(admin, "COMMIT")
    yield* query(admin, "VACUUM (ANALYZE) bookings, sales_own_daily")
    const { rows: [n] } = yield* query<{ n: number }>(admin, "SELECT count(*)::int8 AS n FROM bookings")
    yield* step(`history extended to ${n!.n} bookings in ${round((Date.now() - t0) / 1000)} s`)
    return Number(n!.n)
  })

const rollupPart = (adminUrl: string, sourceDb: string) =>
  Effect.scoped(Effect.gen(function*() {
    const server = yield* pool(adminUrl)
    yield* step(`copying ${sourceDb} to ${ROLLUP_DB} for the rollup runs`)
    yield* query(server, `DROP DATABASE IF EXISTS ${pg.escapeIdentifier(ROLLUP_DB)}`)
    const t0 = Date.now()
    yield* query(
      server,
      `CREATE DATABASE ${pg.escapeIdentifier(ROLLUP_DB)} TEMPLATE ${pg.escapeIdentifier(sourceDb)} STRATEGY FILE_COPY`
    )
    yield* step(`  copied in ${round((Date.now() - t0) / 1000)} s`)
    yield* Effect.addFinalizer(() =>
      query(server, `DROP DATABASE IF EXISTS ${pg.escapeIdentifier(ROLLUP_DB)}`).pipe(
        Effect.zipRight(step(`${ROLLUP_DB} dropped`))
      )
    )
    const url = databaseUrlFor(adminUrl, ROLLUP_DB)
    const result = yield* Effect.scoped(Effect.gen(function*() {
      const admin = yield* pool(url)
      // The bookings as history: changed when they were made, not when migration 0024 added the
      // column; the rollups are complete (built by the generator), so both watermarks are now.
      const t1 = Date.now()
      yield* query(admin, "UPDATE bookings SET sales_changed_at = coalesce(updated_at, created_at)")
      yield* query(admin, "VACUUM (ANALYZE) bookings")
      yield* query(
        admin,
        `INSERT INTO sales_rollup_state (rollup, watermark) VALUES ('own', now()), ('channels', now())
         ON CONFLICT (rollup) DO UPDATE SET watermark = excluded.watermark`
      )
      yield* step(`bookings' change times set to their history in ${round((Date.now() - t1) / 1000)} s`)
      const before = yield* consistency(admin)
      if (Number(before.live) !== Number(before.rolled)) {
        return yield* Effect.fail(new Error(`rollups incomplete before the runs: ${JSON.stringify(before)}`))
      }
      const { rows: [n1] } = yield* query<{ n: number }>(admin, "SELECT count(*)::int8 AS n FROM bookings")
      yield* step(`rollup job after ${ROLLUP_CHANGED} changed bookings, ${ROLLUP_ROUNDS} rounds per history size`)
      const small = yield* timedRounds(url, admin, Number(n1!.n))
      const history = yield* extendHistory(admin)
      yield* query(
        admin,
        "UPDATE sales_rollup_state SET watermark = now()"
      )
      const large = yield* timedRounds(url, admin, history)
      return { small, large }
    }))
    return result
  }))

// ---- main ------------------------------------------------------------------------------------------

const main = Effect.gen(function*() {
  const settings = readSettings()
  const started = Date.now()
  const server = yield* benchServer(settings)
  yield* step(`database server: ${server.description}`)
  const dataset = yield* ensureDataset(server.adminUrl, settings)
  yield* step("migrating the bookings dataset to the current schema")
  yield* migrate(dataset.url)
  const sales = yield* ensureSalesDataset(dataset.url)
  const { rows: [pgInfo] } = yield* Effect.scoped(
    Effect.flatMap(pool(dataset.url), (p) => query<{ v: string }>(p, "SELECT current_setting('server_version') AS v"))
  )
  const loadAt = new Date().toISOString()
  const load = PARTS.includes("load")
    ? yield* loadPart(settings, dataset.url, sales.key.token, [...sales.key.operatorIds])
    : null
  if (load) console.log(`\n${loadTable(load.rows)}\n`)
  const rollups = PARTS.includes("rollups") ? yield* rollupPart(server.adminUrl, settings.databaseName) : null
  let rollupSummary = null
  if (rollups) {
    const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
    const small = median(rollups.small.map((r) => r.seconds))
    const large = median(rollups.large.map((r) => r.seconds))
    rollupSummary = {
      changedBookings: ROLLUP_CHANGED,
      medianSeconds: { [rollups.small[0]!.history]: small, [rollups.large[0]!.history]: large },
      ratio: round(large / small, 2),
      consistent: [...rollups.small, ...rollups.large].every((r) => r.consistent)
    }
    console.log(
      `\nrollup job after ${ROLLUP_CHANGED} changed bookings (median of ${ROLLUP_ROUNDS}): ` +
        `${rollups.small[0]!.history} bookings ${small} s, ${rollups.large[0]!.history} bookings ${large} s, ` +
        `ratio ${rollupSummary.ratio} (target < 1.3)\n`
    )
  }
  const report = {
    finishedAt: new Date().toISOString(),
    loadStartedAt: loadAt,
    command: "npm run bench:sales",
    machine: { ...machine(), postgres: pgInfo!.v, database: server.description },
    settings: {
      durationSeconds: settings.duration,
      warmupSeconds: settings.warmup,
      connections: CONNECTIONS,
      poolSize: settings.poolSize,
      serviceEntry: settings.serviceEntry,
      rollupRounds: ROLLUP_ROUNDS,
      rollupChangedBookings: ROLLUP_CHANGED
    },
    dataset: {
      bookings: dataset.bookings,
      operators: dataset.operators,
      bookingsGeneratedAt: dataset.generatedAt,
      sales: { ...sales, key: { id: sales.key.id, operators: KEY_OPERATORS } }
    },
    method: {
      requestsPerSecond: "2xx answers / wall seconds of the measurement (autocannon)",
      ratio: "service req/s / floor req/s",
      rollupSeconds: "wall time of SalesRollups.refresh() (both rollups, one transaction each) in the runner's process"
    },
    load,
    rollups: rollups ? { ...rollupSummary, runs: [...rollups.small, ...rollups.large] } : null,
    seconds: Math.round((Date.now() - started) / 1000)
  }
  fs.writeFileSync(RESULTS, JSON.stringify(report, null, 2) + "\n")
  yield* step(`results written to ${path.relative(PROJECT_DIR, RESULTS)}`)
  if (load && load.rows.some((r) => !r.service.ok || !r.floor.ok)) process.exitCode = 1
  if (rollupSummary && !rollupSummary.consistent) process.exitCode = 1
})

process.env.LOG_LEVEL = "Warning"
delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT

NodeRuntime.runMain(Effect.scoped(main), { disableErrorReporting: false })
