/**
 * `npm run bench:finance`: the five finance lists of issue 15 (GET /api/v1/finance/payouts,
 * chargebacks, pay-later, statements, invoices) against the floor (target: service ≥ 0.85 × floor, issue 18
 * item 6; issue 15 asked 0.8).
 *
 * 1. PostgreSQL: DATABASE_URL, or the embedded server under bench/.data (BENCH_PG_PORT). The bookings
 *    dataset of `npm run bench` (bench/generate.ts: 1,000,000 bookings, 100 operators, two years;
 *    reused when it is there), migrated to the current schema, plus the finance year of
 *    bench/generateFinance.ts (reused when it is there; about 8 minutes to build).
 * 2. The service (`src/main.ts serve`, JOBS=false) and the floor (bench/floor.ts with
 *    bench/financeFloor.ts), both with bench/sqlTrace.ts preloaded.
 * 3. Checks, for every scenario: both answer 200 with the same JSON (the invoice file links' base,
 *    `exp` and `sig`, and `expires_at` aside: they name each server's own address and the second of
 *    the request) from the same statements with the same parameters (compared in a canonical order:
 *    the reads send some at once).
 * 4. Load: each scenario with the key over 10 operators (finance:read), at BENCH_FINANCE_CONNECTIONS
 *    (1 and 4) connections, a warmup and a measurement of BENCH_DURATION s per server (order
 *    alternating), re-measured when the machine was noisy (measureQuietest); ratio = service / floor
 *    req/s. BENCH_SCENARIOS picks scenarios by name.
 * The table goes to stdout, the results to bench/finance-results.json (BENCH_FINANCE_RESULTS).
 */
import { NodeRuntime } from "@effect/platform-node"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import pg from "pg"
import { LOG_DIR, machine, startServiceAndFloor, step } from "./children.js"
import { bodyDifference, normalizeSql, readTrace, statementDifferences, type TracedStatement } from "./compare.js"
import { ensureDataset } from "./generate.js"
import { ensureFinanceDataset, FINANCE_KEY_OPERATORS } from "./generateFinance.js"
import { migrate } from "./generateTours.js"
import { type LoadTarget, type Measurement, measureQuietest } from "./load.js"
import { benchServer } from "./server.js"
import { PROJECT_DIR, readSettings } from "./settings.js"

const RESULTS = path.resolve(PROJECT_DIR, process.env.BENCH_FINANCE_RESULTS || "bench/finance-results.json")
const CONNECTIONS = (process.env.BENCH_FINANCE_CONNECTIONS ?? "1,4").split(",").map((s) => Number(s.trim()))
  .filter((n) => Number.isInteger(n) && n > 0)
const SERVICE_APPLICATION_NAME = "tour-partner-service"
const FLOOR_APPLICATION_NAME = "bench-floor"
const TARGET = 0.85

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits
const pad = (s: string, n: number) => (s.length >= n ? s : s + " ".repeat(n - s.length))
const lpad = (s: string, n: number) => (s.length >= n ? s : " ".repeat(n - s.length) + s)

const query = <R extends pg.QueryResultRow>(p: pg.Pool, text: string, values: ReadonlyArray<unknown> = []) =>
  Effect.promise(() => p.query<R>(text, values as Array<unknown>))

const pool = (url: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const p = new pg.Pool({ connectionString: url, max: 1, application_name: "bench-runner" })
      p.on("error", (e) => console.error(`[bench] runner's database connection: ${e.message}`))
      return p
    }),
    (p) => Effect.promise(() => p.end())
  )

// ---- scenarios ---------------------------------------------------------------------------------------

interface Scenario {
  readonly name: string
  readonly path: string
}

/** The invoice file links name each server's own address and the second they were made. */
const maskLinks = (text: string) =>
  text.replace(/http:\/\/127\.0\.0\.1:\d+/g, "BASE").replace(/exp=\d+&sig=[A-Za-z0-9_-]+/g, "exp=E&sig=S")
    .replace(/"expires_at":"[^"]*"/g, "\"expires_at\":\"E\"")

const get = (base: string, p: string, token: string) =>
  Effect.promise(async () => {
    const response = await fetch(base + p, { headers: { authorization: `Bearer ${token}` } })
    return { status: response.status, text: await response.text() }
  })

/** The scenarios; the cursor pages take their cursor from the service's first page. */
const scenarios = (base: string, token: string, operator1: string, since: string) =>
  Effect.gen(function*() {
    const cursorOf = (p: string) =>
      Effect.map(get(base, p, token), (r) => {
        if (r.status !== 200) throw new Error(`${p}: ${r.status} ${r.text.slice(0, 300)}`)
        const cursor = JSON.parse(r.text).next_cursor as string | null
        if (cursor === null) throw new Error(`${p}: no next page`)
        return encodeURIComponent(cursor)
      })
    const to = new Date(Date.parse(`${since}T00:00:00Z`) + 364 * 86_400_000).toISOString().slice(0, 10)
    const payouts = "/api/v1/finance/payouts"
    const chargebacks = "/api/v1/finance/chargebacks"
    const payLater = "/api/v1/finance/pay-later"
    const failed = `${payLater}?state=failed&from=${since}&to=${to}`
    const invoices = "/api/v1/finance/invoices"
    const credits = `${invoices}?type=credit_note&limit=10`
    const list: Array<Scenario> = [
      { name: "payouts", path: payouts },
      { name: "payouts, page 2", path: `${payouts}?cursor=${yield* cursorOf(payouts)}` },
      { name: "chargebacks", path: chargebacks },
      { name: "chargebacks, page 2", path: `${chargebacks}?cursor=${yield* cursorOf(chargebacks)}` },
      { name: "pay-later", path: payLater },
      { name: "pay-later, page 2", path: `${payLater}?cursor=${yield* cursorOf(payLater)}` },
      { name: "pay-later, failed, year", path: failed },
      { name: "statements, 1 operator", path: `/api/v1/finance/statements?partner_id=${operator1}` },
      { name: "invoices", path: invoices },
      { name: "invoices, credit notes p.2", path: `${credits}&cursor=${yield* cursorOf(credits)}` }
    ]
    return list
  })

// ---- checks ------------------------------------------------------------------------------------------

interface Check {
  readonly name: string
  readonly path: string
  readonly ok: boolean
  readonly statements: { readonly service: number; readonly floor: number }
  readonly bytes: number
  readonly items: number | null
  readonly problems: ReadonlyArray<string>
}

const probe = (base: string, traceFile: string, p: string, token: string) =>
  Effect.gen(function*() {
    const from = fs.statSync(traceFile).size
    const r = yield* get(base, p, token)
    yield* Effect.sleep("50 millis")
    return { ...r, statements: readTrace(traceFile, from) }
  })

const ordered = (statements: ReadonlyArray<TracedStatement>) =>
  [...statements].sort((a, b) => {
    const x = normalizeSql(a.text) + JSON.stringify(a.values)
    const y = normalizeSql(b.text) + JSON.stringify(b.values)
    return x < y ? -1 : x > y ? 1 : 0
  })

const checkSame = (
  scenario: Scenario,
  token: string,
  targets: { service: string; floor: string },
  traces: { service: string; floor: string }
) =>
  Effect.gen(function*() {
    const problems: Array<string> = []
    const s = yield* probe(targets.service, traces.service, scenario.path, token)
    const f = yield* probe(targets.floor, traces.floor, scenario.path, token)
    if (s.status !== 200 || f.status !== 200) {
      problems.push(
        `status service ${s.status}, floor ${f.status}: ${(s.status !== 200 ? s.text : f.text).slice(0, 300)}`
      )
    }
    const difference = bodyDifference(maskLinks(s.text), maskLinks(f.text))
    if (difference) problems.push(difference)
    problems.push(...statementDifferences(ordered(s.statements), ordered(f.statements)))
    let items: number | null = null
    if (s.status === 200) {
      const body = JSON.parse(s.text)
      items = Array.isArray(body.data)
        ? body.data.length
        : Array.isArray(body.statements)
        ? body.statements.length
        : null
      if (items === 0) problems.push("an empty answer")
      if (body.too_many === true) problems.push("too_many")
    }
    return {
      name: scenario.name,
      path: scenario.path,
      ok: problems.length === 0,
      statements: { service: s.statements.length, floor: f.statements.length },
      bytes: Buffer.byteLength(s.text),
      items,
      problems
    } satisfies Check
  })

// ---- load --------------------------------------------------------------------------------------------

interface Row {
  readonly name: string
  readonly path: string
  readonly connections: number
  readonly bytes: number
  readonly service: Measurement
  readonly floor: Measurement
  readonly ratio: number | null
}

const loadPart = (
  settings: ReturnType<typeof readSettings>,
  url: string,
  token: string,
  operator1: string,
  since: string
) =>
  Effect.scoped(Effect.gen(function*() {
    const admin = yield* pool(url)
    const traces = {
      service: path.join(LOG_DIR, "finance-service.sql.jsonl"),
      floor: path.join(LOG_DIR, "finance-floor.sql.jsonl")
    }
    fs.mkdirSync(LOG_DIR, { recursive: true })
    for (const file of Object.values(traces)) fs.writeFileSync(file, "")
    const { floor, service } = yield* startServiceAndFloor({
      prefix: "finance",
      serviceEntry: settings.serviceEntry,
      floorEntry: "bench/floor.ts",
      env: { DATABASE_URL: url, DB_POOL_SIZE: String(settings.poolSize), RATE_LIMIT_PER_MINUTE: "1000000000" },
      traces,
      serviceTiming: path.join(LOG_DIR, "finance-service.http.jsonl")
    })
    const all = yield* scenarios(service.base, token, operator1, since)
    const chosen = all.filter((s) => settings.only.length === 0 || settings.only.some((o) => s.name.includes(o)))

    yield* step("checking that both servers answer the same JSON from the same SQL")
    const checks: Array<Check> = []
    for (const scenario of chosen) {
      const c = yield* checkSame(scenario, token, { service: service.base, floor: floor.base }, traces)
      checks.push(c)
      yield* step(
        `  ${pad(scenario.name, 28)} ${
          c.ok
            ? `ok (${c.statements.service} statements each, ${c.items} items, ${c.bytes} bytes)`
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
    const database = new URL(url).pathname.slice(1)
    if (settings.warmup > 0) {
      yield* step(`warming both servers up (${settings.warmup * 2} s each per list)`)
      for (const scenario of chosen.filter((s) => !s.name.includes(","))) {
        for (const t of [targets.service, targets.floor]) {
          yield* measureQuietest([t], {
            path: scenario.path,
            headers,
            connections: 4,
            seconds: settings.warmup * 2,
            admin,
            database,
            warmup: 0,
            retries: 0,
            quietTimeout: 0
          }, `warmup ${scenario.name}`)
        }
      }
    }
    const rows: Array<Row> = []
    let index = 0
    for (const connections of CONNECTIONS) {
      for (const scenario of chosen) {
        const name = `${scenario.name}, ${connections} conn.`
        const order = index++ % 2 === 0 ? [targets.service, targets.floor] : [targets.floor, targets.service]
        const results = yield* measureQuietest(order, {
          path: scenario.path,
          headers,
          connections,
          seconds: settings.duration,
          admin,
          database,
          warmup: settings.warmup,
          retries: settings.noisyRetries,
          quietTimeout: settings.quietTimeout
        }, name)
        const s = results.find((m) => m.target === "service")!
        const f = results.find((m) => m.target === "floor")!
        rows.push({
          name,
          path: scenario.path,
          connections,
          bytes: checks.find((c) => c.name === scenario.name)?.bytes ?? 0,
          service: s,
          floor: f,
          ratio: f.requestsPerSecond > 0 ? round(s.requestsPerSecond / f.requestsPerSecond, 3) : null
        })
      }
    }
    return { checks, rows }
  }))

const loadTable = (rows: ReadonlyArray<Row>) => {
  const header = [
    pad("scenario", 38),
    lpad("service req/s", 13),
    lpad("p50/p99 ms", 11),
    lpad("floor req/s", 12),
    lpad("p50/p99 ms", 11),
    lpad("ratio", 6),
    lpad("CPU ms/req svc node+pg", 23),
    lpad("floor node+pg", 14),
    lpad("others %", 9)
  ].join(" ")
  const lines = [header, "-".repeat(header.length)]
  const f = (n: number | null) => (n === null ? "-" : n.toFixed(2))
  for (const r of rows) {
    lines.push([
      pad(r.name, 38),
      lpad(String(r.service.requestsPerSecond), 13),
      lpad(`${r.service.latencyMs.p50}/${r.service.latencyMs.p99}`, 11),
      lpad(String(r.floor.requestsPerSecond), 12),
      lpad(`${r.floor.latencyMs.p50}/${r.floor.latencyMs.p99}`, 11),
      lpad(r.ratio === null ? "-" : r.ratio.toFixed(2), 6),
      lpad(`${f(r.service.cpuMsPerRequest.node)}+${f(r.service.cpuMsPerRequest.postgres)}`, 23),
      lpad(`${f(r.floor.cpuMsPerRequest.node)}+${f(r.floor.cpuMsPerRequest.postgres)}`, 14),
      lpad(
        [r.service.machine, r.floor.machine].map((m) => (m ? m.otherPercent.toFixed(0) : "-")).join("/"),
        9
      ) + (r.service.ok && r.floor.ok ? "" : "  FAILED") + (r.ratio !== null && r.ratio < TARGET ? `  < ${TARGET}` : "")
    ].join(" "))
  }
  return lines.join("\n")
}

// ---- main --------------------------------------------------------------------------------------------

const main = Effect.gen(function*() {
  const settings = readSettings()
  const started = Date.now()
  const server = yield* benchServer(settings)
  yield* step(`database server: ${server.description}`)
  const dataset = yield* ensureDataset(server.adminUrl, settings)
  yield* step("migrating the bookings dataset to the current schema")
  yield* migrate(dataset.url)
  const finance = yield* ensureFinanceDataset(dataset.url, dataset.operatorIds)
  const { rows: [pgInfo] } = yield* Effect.scoped(
    Effect.flatMap(pool(dataset.url), (p) => query<{ v: string }>(p, "SELECT current_setting('server_version') AS v"))
  )
  const loadAt = new Date().toISOString()
  const load = yield* loadPart(settings, dataset.url, finance.key.token, dataset.operatorIds[0]!, finance.since)
  console.log(`\n${loadTable(load.rows)}\n`)
  const report = {
    finishedAt: new Date().toISOString(),
    loadStartedAt: loadAt,
    command: "npm run bench:finance",
    machine: { ...machine(), postgres: pgInfo!.v, database: server.description },
    settings: {
      durationSeconds: settings.duration,
      warmupSeconds: settings.warmup,
      connections: CONNECTIONS,
      poolSize: settings.poolSize,
      serviceEntry: settings.serviceEntry,
      noisyRetries: settings.noisyRetries
    },
    dataset: {
      bookings: dataset.bookings,
      operators: dataset.operators,
      bookingsGeneratedAt: dataset.generatedAt,
      finance: {
        generatedAt: finance.generatedAt,
        generationSeconds: finance.seconds,
        since: finance.since,
        months: finance.months,
        counts: finance.counts,
        key: { id: finance.key.id, operators: FINANCE_KEY_OPERATORS }
      }
    },
    method: {
      requestsPerSecond: "2xx answers / wall seconds of the measurement (autocannon)",
      ratio: "service req/s / floor req/s",
      target: TARGET
    },
    load,
    seconds: Math.round((Date.now() - started) / 1000)
  }
  fs.writeFileSync(RESULTS, JSON.stringify(report, null, 2) + "\n")
  yield* step(`results written to ${path.relative(PROJECT_DIR, RESULTS)}`)
  if (load.rows.some((r) => !r.service.ok || !r.floor.ok)) process.exitCode = 1
  if (settings.strict && load.rows.some((r) => r.ratio !== null && r.ratio < TARGET)) process.exitCode = 1
})

process.env.LOG_LEVEL = "Warning"
delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT

NodeRuntime.runMain(Effect.scoped(main), { disableErrorReporting: false })
