/**
 * `npm run bench`: the service against its floor, side by side, on the same database.
 *
 * 1. PostgreSQL: DATABASE_URL, or the embedded server under bench/.data (stopped at the end).
 * 2. The dataset (bench/generate.ts): reused when present, else generated.
 * 3. Two child processes on loopback ports: the service (`src/main.ts serve`) and the floor
 *    (bench/floor.ts), same pool size, both with bench/sqlTrace.ts preloaded.
 * 4. Checks, once per scenario: both answer 200 with the same JSON, and send PostgreSQL the same
 *    statements with the same parameters. Then tracing is switched off (SIGUSR2).
 * 5. Per scenario, service and floor in turn (the order alternates): warmup, then a measured
 *    autocannon run. Any non-2xx answer, error or timeout fails the scenario.
 * 6. Open loop (BENCH_OPEN_LOOP=0 skips it): per read scenario, service and floor in turn at a fixed
 *    offered rate of half the floor's closed-loop req/s of this run (bench/openLoop.ts), latency
 *    from each request's intended send time.
 * 7. The tables (req/s, p99, ratio, targets; open loop; peak RSS), CPU per request, and
 *    bench/results.json. The servers' resident memory is sampled during every load (bench/memory.ts).
 * Every child process is stopped when the run ends, fails or is interrupted.
 */
import { NodeRuntime } from "@effect/platform-node"
import autocannon from "autocannon"
import { Effect } from "effect"
import type { ChildProcess } from "node:child_process"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import pg from "pg"
import { LOG_DIR, machine, startChild, step } from "./children.js"
import {
  allProcesses,
  backendPids,
  cpuBetween,
  cpuByPid,
  cpuSeconds,
  machineCpu,
  NOISY_PERCENT,
  otherLoad,
  waitForQuiet
} from "./cpu.js"
import { type BenchKey, type Dataset, ensureDataset } from "./generate.js"
import { highWaterMb, maxMb, rssMb, withPeakRss } from "./memory.js"
import {
  measureOpenLoop,
  OPEN_LOOP_SHARE,
  type OpenLoopLine,
  type OpenLoopMeasurement,
  openLoopTable
} from "./openLoopPhase.js"
import { benchServer } from "./server.js"
import { DATA_DIR, PROJECT_DIR, readSettings, type Settings } from "./settings.js"

/** A scenario's targets; null where its issue sets none (the figure is reported only). */
interface Targets {
  /** Service req/s at least this share of the floor's. */
  readonly ratio: number | null
  /** Service p99 below this, in ms. */
  readonly p99Ms: number | null
  /** Issue 18: service p99 below this, in ms, at half the floor's throughput offered open loop. */
  readonly openLoopP99Ms: number | null
}
/** Issue 2: the bookings reads; issue 18: their open-loop p99. */
const BOOKINGS_TARGETS: Targets = { ratio: 0.7, p99Ms: 20, openLoopP99Ms: 20 }
/** Issue 3: the manifest of one day (the ratio to the floor is reported); issue 18: its open-loop p99. */
const MANIFEST_TARGETS: Targets = { ratio: null, p99Ms: 25, openLoopP99Ms: 30 }
/** Issue 3: a check-in write (its overhead over a bare write is reported; no open-loop run). */
const WRITE_TARGETS: Targets = { ratio: null, p99Ms: null, openLoopP99Ms: null }
/** Issue 18: the service's resident set under load below this, in MiB (sampled from /proc). */
const RSS_TARGET_MB = 300

type TargetName = "service" | "floor"

interface Target {
  readonly name: TargetName
  readonly base: string
  readonly child: ChildProcess
  readonly traceFile: string
  readonly applicationName: string
}

/** One request as autocannon sends it. */
interface BenchRequest {
  readonly method: "GET" | "POST"
  readonly path: string
  readonly headers?: Readonly<Record<string, string>>
  readonly body?: string
}

interface ScenarioCommon {
  readonly name: string
  readonly measures: string
  readonly key: BenchKey
  readonly targets: Targets
}

/**
 * A read: both servers must send PostgreSQL the same statements with the same parameters and
 * answer the same JSON (checked before measuring).
 */
interface ReadScenario extends ScenarioCommon {
  readonly kind: "read"
  /** One path, or several used in turn (the same sequence on both servers). */
  readonly paths: ReadonlyArray<string>
}

/**
 * A write measured against the floor's bare write: the same change of the same rows, without what
 * the service adds around it (idempotency, daily limit, audit). Not a same-SQL comparison: the
 * check compares the status and the shape of the JSON, and reports how many statements each sent.
 */
interface WriteScenario extends ScenarioCommon {
  readonly kind: "write"
  /** What the report shows as the request. */
  readonly describe: string
  /**
   * Puts the rows the writes change back in their starting state and gives the requests of one
   * run, in turn; called before every run (and before the check), so each run, whichever server
   * and however the last one stopped, starts from the same state.
   */
  readonly start: Effect.Effect<() => BenchRequest>
}

type Scenario = ReadScenario | WriteScenario

const firstRequest = (scenario: Scenario): Effect.Effect<BenchRequest> =>
  scenario.kind === "write"
    ? Effect.map(scenario.start, (next) => next())
    : Effect.succeed({ method: "GET", path: scenario.paths[0]! })

interface Measurement {
  readonly requestsPerSecond: number
  readonly latencyMs: {
    readonly p50: number
    readonly p90: number
    readonly p99: number
    readonly average: number
    readonly max: number
  }
  readonly requests: number
  readonly non2xx: number
  readonly errors: number
  readonly timeouts: number
  readonly ok: boolean
  /** Peak VmRSS of the server's process during the warmup and the measurement, MiB. */
  readonly rssPeakMb: number | null
  /** CPU milliseconds per request: the server's Node process, its PostgreSQL backends, autocannon (this process). */
  readonly cpuMsPerRequest: {
    readonly node: number | null
    readonly postgres: number | null
    readonly loadGenerator: number | null
  }
  /** CPU use of the whole machine during the measurement, in percent of all cores. */
  readonly machine: {
    readonly busyPercent: number
    /** CPU used by processes outside the benchmark (other people's jobs). */
    readonly otherPercent: number
    readonly busiestOthers: ReadonlyArray<{ pid: number; name: string; percent: number }>
  } | null
}

interface Check {
  readonly sameStatus: boolean
  /** Reads: the same JSON. Writes: JSON of the same shape (keys and types). */
  readonly sameJson: boolean
  /** null: not compared (a write against a bare write). */
  readonly sameSql: boolean | null
  /** Statements each server sent for the request. */
  readonly statements: { readonly service: number; readonly floor: number }
  readonly detail: string | undefined
}

const checkFailed = (c: Check) => !c.sameStatus || !c.sameJson || c.sameSql === false

// ---- the two servers ------------------------------------------------------------------------------

/** Starts a server under test (stopped when the scope closes) with the SQL trace preloaded. */
const startTarget = (
  name: TargetName,
  script: ReadonlyArray<string>,
  env: Record<string, string>,
  applicationName: string
) =>
  Effect.gen(function*() {
    const traceFile = path.join(LOG_DIR, `${name}.sql.jsonl`)
    fs.mkdirSync(LOG_DIR, { recursive: true })
    fs.writeFileSync(traceFile, "")
    const { base, child } = yield* startChild({
      name,
      args: script,
      env: { ...env, BENCH_SQL_TRACE: traceFile },
      readyPath: "/healthz",
      preload: ["./bench/sqlTrace.ts"]
    })
    return { name, base, child, traceFile, applicationName } satisfies Target
  })

// ---- scenarios --------------------------------------------------------------------------------------

const authHeaders = (key: BenchKey) => ({ authorization: `Bearer ${key.token}` })

const send = async (base: string, request: BenchRequest, key: BenchKey) => {
  const response = await fetch(base + request.path, {
    method: request.method,
    headers: { ...authHeaders(key), ...request.headers },
    ...(request.body === undefined ? {} : { body: request.body })
  })
  const text = await response.text()
  return { status: response.status, text }
}

const getJson = (base: string, path: string, key: BenchKey) => send(base, { method: "GET", path }, key)

const addDays = (day: string, days: number) =>
  new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10)

const DEEP_PAGES = 20

/**
 * Check-ins over `rows` in turn: the first pass marks each row checked_in, the next no_show, and so
 * on, so each write changes what the previous pass left (the rows start without a check-in). Each
 * request has its own Idempotency-Key, unique across runs.
 */
const checkinSequence = (rows: ReadonlyArray<string>) => {
  const run = randomUUID()
  let n = 0
  return (): BenchRequest => {
    const i = n++
    const status = Math.floor(i / rows.length) % 2 === 0 ? "checked_in" : "no_show"
    return {
      method: "POST",
      path: `/api/v1/manifest/${rows[i % rows.length]}/checkin`,
      headers: { "content-type": "application/json", "idempotency-key": `bench-${run}-${i}` },
      body: JSON.stringify({ status })
    }
  }
}

/** The scenario URLs; dates are relative to the dataset's generation so they select the same rows on every run. */
const makeScenarios = (dataset: Dataset, service: Target, admin: pg.Pool) =>
  Effect.gen(function*() {
    const single = dataset.singleKey
    const multi = dataset.multiKey
    const anchorDay = dataset.generatedAt.slice(0, 10)
    const updatedSince = new Date(Date.parse(dataset.generatedAt) - 7 * 86_400_000).toISOString().replace(
      /\.\d{3}Z$/,
      "Z"
    )

    // Walk the API 20 pages deep to get a real cursor (the floor shares the cursor secret).
    let cursor: string | null = null
    for (let page = 0; page < DEEP_PAGES; page++) {
      const url: string = `/api/v1/bookings?limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`
      const { status, text } = yield* Effect.promise(() => getJson(service.base, url, single))
      if (status !== 200) {
        return yield* Effect.fail(new Error(`walking to the deep cursor: ${url} answered ${status}: ${text}`))
      }
      cursor = (JSON.parse(text) as { next_cursor: string | null }).next_cursor
      if (!cursor) return yield* Effect.fail(new Error(`operator #1 has fewer than ${DEEP_PAGES + 1} pages`))
    }

    const manifest = dataset.manifest
    const { ids, writeRows } = yield* Effect.promise(async () => {
      const client = new pg.Client({ connectionString: dataset.url })
      await client.connect()
      try {
        // 1,000 bookings of operator #1 taken at random over its whole history, for GET /bookings/{id}.
        const { rows } = await client.query<{ id: string }>(
          `SELECT id FROM bookings
           WHERE operator_id = $1 AND status IN ('RESERVED', 'CONFIRMED', 'CANCELLED', 'REFUNDED')
           ORDER BY md5(id::text) LIMIT 1000`,
          [single.operatorIds[0]]
        )
        // The check-in writes go to the live rows of the second mirrored day, in a fixed order.
        const live = await client.query<{ id: string }>(
          `SELECT id FROM manifest_rows WHERE account_id = $1 AND departure_date = $2 AND status <> 'CANCELLED'
           ORDER BY reference`,
          [manifest.accountId, manifest.writeDate]
        )
        return { ids: rows.map((r) => r.id), writeRows: live.rows.map((r) => r.id) }
      } finally {
        await client.end()
      }
    })

    const list = "/api/v1/bookings?limit=50"
    const bookings: Array<Omit<ReadScenario, "targets" | "kind">> = [
      { name: "list: first page", measures: "newest 50 of operator #1", key: single, paths: [list] },
      {
        name: `list: cursor page ${DEEP_PAGES + 1}`,
        measures: `the page after ${DEEP_PAGES * 50} rows (keyset cursor)`,
        key: single,
        paths: [`${list}&cursor=${encodeURIComponent(cursor!)}`]
      },
      {
        name: "list: date_from+date_to",
        measures: `experience dates ${anchorDay}..${addDays(anchorDay, 30)}`,
        key: single,
        paths: [`${list}&date_from=${anchorDay}&date_to=${addDays(anchorDay, 30)}`]
      },
      {
        name: "list: updated_since",
        measures: `created or changed since ${updatedSince}`,
        key: single,
        paths: [`${list}&updated_since=${encodeURIComponent(updatedSince)}`]
      },
      {
        name: "list: status=CANCELLED",
        measures: "cancelled bookings of operator #1",
        key: single,
        paths: [`${list}&status=CANCELLED`]
      },
      {
        name: "list: 3 operators",
        measures: "first page of the multi-operator key (LATERAL x3)",
        key: multi,
        paths: [list]
      },
      {
        name: "list: partner_id",
        measures: "multi-operator key narrowed to operator #2",
        key: multi,
        paths: [`${list}&partner_id=${multi.operatorIds[1]}`]
      },
      {
        name: "get: /bookings/{id}",
        measures: "1,000 random bookings of operator #1, in turn",
        key: single,
        paths: ids.map((id) => `/api/v1/bookings/${id}`)
      }
    ]
    return [
      ...bookings.map((scenario): Scenario => ({ ...scenario, kind: "read", targets: BOOKINGS_TARGETS })),
      {
        kind: "read",
        name: "manifest: 1 day",
        measures: `operator #1 on ${manifest.date}: ${manifest.rows} rows, ${manifest.departures} departures, ` +
          `${manifest.passengers} passengers, with guest contact`,
        key: manifest.key,
        paths: [`/api/v1/manifest?date=${manifest.date}`],
        targets: MANIFEST_TARGETS
      },
      {
        kind: "write",
        name: "write: check-in",
        measures:
          `check-in with a fresh Idempotency-Key each, ${writeRows.length} rows of ${manifest.writeDate} in turn, ` +
          "checked_in and no_show alternating (a real change every time); floor: the bare write",
        describe: "POST /api/v1/manifest/{id}/checkin",
        key: manifest.key,
        // Every run starts with none of these rows checked in.
        start: Effect.promise(() =>
          admin.query("DELETE FROM manifest_checkins WHERE row_id = ANY($1::uuid[])", [writeRows])
        ).pipe(Effect.as(checkinSequence(writeRows))),
        targets: WRITE_TARGETS
      }
    ] satisfies Array<Scenario>
  })

// ---- checks: same status, same JSON, same SQL ----------------------------------------------------

interface TracedStatement {
  readonly text: string
  readonly values: ReadonlyArray<unknown>
}

const readTrace = (file: string, from: number): Array<TracedStatement> =>
  fs.readFileSync(file, "utf8").slice(from).split("\n").filter((l) => l !== "").map((l) =>
    JSON.parse(l) as TracedStatement
  )

/** Whitespace only differs between a template literal in src/ and its copy in the floor. */
const normalizeSql = (text: string) => text.replace(/\s+/g, " ").replace(/\( /g, "(").replace(/ \)/g, ")").trim()

/** JSON with object keys sorted, so two bodies compare by content. */
const canonical = (text: string) => {
  const sort = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(sort)
      : value !== null && typeof value === "object"
      ? Object.fromEntries(Object.keys(value).sort().map((k) => [k, sort((value as Record<string, unknown>)[k])]))
      : value
  try {
    return JSON.stringify(sort(JSON.parse(text)))
  } catch {
    return text
  }
}

/** Parameters compare by their JSON form (strings, numbers, ISO dates). */
const sameValues = (a: ReadonlyArray<unknown>, b: ReadonlyArray<unknown>) => JSON.stringify(a) === JSON.stringify(b)

/** The JSON with every leaf replaced by its type: two bodies of the same shape compare equal. */
const shapeOf = (text: string) => {
  const shape = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(shape)
      : value !== null && typeof value === "object"
      ? Object.fromEntries(Object.keys(value).sort().map((k) => [k, shape((value as Record<string, unknown>)[k])]))
      : value === null
      ? "null"
      : typeof value
  try {
    return JSON.stringify(shape(JSON.parse(text)))
  } catch {
    return text
  }
}

const probe = (target: Target, scenario: Scenario) =>
  Effect.flatMap(firstRequest(scenario), (request) =>
    Effect.promise(async () => {
      const from = fs.statSync(target.traceFile).size
      const response = await send(target.base, request, scenario.key)
      return { ...response, statements: readTrace(target.traceFile, from) }
    }))

const check = (service: Target, floor: Target, scenario: Scenario) =>
  Effect.gen(function*() {
    const s = yield* probe(service, scenario)
    const f = yield* probe(floor, scenario)
    const problems: Array<string> = []
    const sameStatus = s.status === 200 && f.status === 200
    if (!sameStatus) {
      problems.push(
        `status service ${s.status}, floor ${f.status}: ${(s.status !== 200 ? s.text : f.text).slice(0, 300)}`
      )
    }
    const compared = scenario.kind === "write" ? shapeOf : canonical
    const sameJson = compared(s.text) === compared(f.text)
    if (!sameJson) {
      const a = compared(s.text)
      const b = compared(f.text)
      let at = 0
      while (at < a.length && a[at] === b[at]) at++
      problems.push(
        `the JSON ${scenario.kind === "write" ? "shapes" : "bodies"} differ from character ${at}:\n  service: …${
          a.slice(Math.max(0, at - 80), at + 120)
        }\n  floor:   …${b.slice(Math.max(0, at - 80), at + 120)}`
      )
    }
    const statements = { service: s.statements.length, floor: f.statements.length }
    if (scenario.kind === "write") {
      return {
        sameStatus,
        sameJson,
        sameSql: null,
        statements,
        detail: problems.length > 0 ? problems.join("\n") : undefined
      } satisfies Check
    }
    let sameSql = s.statements.length === f.statements.length && s.statements.length > 0
    if (!sameSql) problems.push(`service sent ${s.statements.length} statements, floor ${f.statements.length}`)
    s.statements.forEach((st, i) => {
      const other = f.statements[i]
      if (!other) return
      if (normalizeSql(st.text) !== normalizeSql(other.text)) {
        sameSql = false
        problems.push(
          `statement ${i + 1} differs:\n  service: ${normalizeSql(st.text)}\n  floor:   ${normalizeSql(other.text)}`
        )
      } else if (!sameValues(st.values, other.values)) {
        sameSql = false
        problems.push(
          `statement ${i + 1} parameters differ: service ${JSON.stringify(st.values)}, floor ${
            JSON.stringify(other.values)
          }`
        )
      }
    })
    return {
      sameStatus,
      sameJson,
      sameSql,
      statements,
      detail: problems.length > 0 ? problems.join("\n") : undefined
    } satisfies Check
  })

// ---- load ------------------------------------------------------------------------------------------

/** The requests of one run: a fixed one, several paths in turn, or a write's next request each time. */
const requestsOf = (scenario: Scenario): Effect.Effect<Pick<autocannon.Options, "requests">> => {
  if (scenario.kind === "write") {
    const headers = authHeaders(scenario.key)
    return Effect.map(scenario.start, (next) => ({
      requests: [{
        setupRequest: (request) => {
          const r = next()
          return { ...request, ...r, headers: { ...headers, ...r.headers } }
        }
      }]
    }))
  }
  const paths = scenario.paths
  if (paths.length === 1) return Effect.succeed({})
  let next = 0
  return Effect.succeed({
    requests: [{ setupRequest: (request) => ({ ...request, path: paths[next++ % paths.length] }) }]
  })
}

const load = (target: Target, scenario: Scenario, settings: Settings, seconds: number) =>
  Effect.flatMap(requestsOf(scenario), (requests) =>
    Effect.promise(() =>
      autocannon({
        url: target.base + (scenario.kind === "read" ? scenario.paths[0] : "/"),
        connections: settings.connections,
        duration: seconds,
        timeout: 10,
        headers: authHeaders(scenario.key),
        ...requests
      })
    ))

/** measureOnce with the server's resident set sampled during the warmup and the measurement. */
const measure = (target: Target, scenario: Scenario, settings: Settings, admin: pg.Pool, database: string) =>
  withPeakRss(target.child.pid!, measureOnce(target, scenario, settings, admin, database)).pipe(
    Effect.map(([m, rssPeakMb]): Measurement => ({ ...m, rssPeakMb }))
  )

const measureOnce = (target: Target, scenario: Scenario, settings: Settings, admin: pg.Pool, database: string) =>
  Effect.gen(function*() {
    if (settings.warmup > 0) {
      yield* load(target, scenario, settings, settings.warmup)
      // autocannon closes its connections with requests in flight; the service then interrupts those
      // requests, and @effect/sql-pg cancels their statements with pg_cancel_backend on the pooled
      // backend, which can land on the next request's statement (Effect-TS/effect#8068; see the
      // README). Let that settle so it does not fail the measurement that follows.
      yield* Effect.sleep("1 second")
    }
    const pg0 = cpuByPid(yield* backendPids(admin, database, target.applicationName))
    const node0 = cpuSeconds(target.child.pid!)
    const self0 = process.cpuUsage()
    const machine0 = machineCpu()
    const procs0 = allProcesses()
    const result = yield* load(target, scenario, settings, settings.duration)
    const self1 = process.cpuUsage(self0)
    const machine1 = machineCpu()
    const procs1 = allProcesses()
    const node1 = cpuSeconds(target.child.pid!)
    const pg1 = cpuByPid(yield* backendPids(admin, database, target.applicationName))
    const requests = result["2xx"] + result.non2xx
    const nodeSeconds = node0 === null || node1 === null ? null : node1 - node0
    const pgSeconds = cpuBetween(pg0, pg1)
    const selfSeconds = (self1.user + self1.system) / 1e6
    const busy = machine0 && machine1 ? machine1.busy - machine0.busy : null
    const wall = machine0 && machine1 ? machine1.total - machine0.total : null
    const perRequest = (seconds: number | null) =>
      seconds === null || requests === 0 ? null : Math.round((seconds * 1000 / requests) * 1000) / 1000
    return {
      requestsPerSecond: Math.round(result.requests.average),
      latencyMs: {
        p50: result.latency.p50,
        p90: result.latency.p90,
        p99: result.latency.p99,
        average: Math.round(result.latency.average * 100) / 100,
        max: result.latency.max
      },
      requests,
      non2xx: result.non2xx,
      errors: result.errors,
      timeouts: result.timeouts,
      ok: result.non2xx === 0 && result.errors === 0 && result.timeouts === 0 && result["2xx"] > 0,
      cpuMsPerRequest: {
        node: perRequest(nodeSeconds),
        postgres: perRequest(pgSeconds),
        loadGenerator: perRequest(selfSeconds)
      },
      machine: busy === null || wall === null ? null : {
        busyPercent: Math.round(busy / wall * 1000) / 10,
        /** Busy CPU not used by the server, its backends or autocannon (other processes, kernel threads). */
        ...(() => {
          const other = otherLoad(
            procs0,
            procs1,
            new Set([process.pid, target.child.pid!, ...pg0.keys(), ...pg1.keys()]),
            wall
          )
          return { otherPercent: other.percent, busiestOthers: other.busiest }
        })()
      }
    } satisfies Omit<Measurement, "rssPeakMb">
  })

// ---- report ----------------------------------------------------------------------------------------

const pad = (s: string, n: number) => (s.length >= n ? s : s + " ".repeat(n - s.length))
const lpad = (s: string, n: number) => (s.length >= n ? s : " ".repeat(n - s.length) + s)

interface Row {
  readonly scenario: Scenario
  readonly check: Check
  readonly service: Measurement
  readonly floor: Measurement
  readonly ratio: number
  /** null: the scenario has no such target. */
  readonly ratioMet: boolean | null
  readonly p99Met: boolean | null
  readonly failed: boolean
  /** Writes: the service's audit outcomes (done, noop, ...) of the scenario's measurements and warmups. */
  readonly audited: Readonly<Record<string, number>> | null
}

/** "ratio ok, p99 MISSED", the targets a scenario has; "no target" when it has none. */
const targetsText = (r: Pick<Row, "ratioMet" | "p99Met">) => {
  const parts = [
    r.ratioMet === null ? "" : `ratio ${r.ratioMet ? "ok" : "MISSED"}`,
    r.p99Met === null ? "" : `p99 ${r.p99Met ? "ok" : "MISSED"}`
  ].filter(Boolean)
  return parts.length === 0 ? "no target" : parts.join(", ")
}

/** The targets of the scenarios in the run, one line per distinct set. */
const targetsLegend = (rows: ReadonlyArray<Row>) => {
  const sets = new Map<string, Array<string>>()
  for (const r of rows) {
    const t = r.scenario.targets
    const text = [
      t.ratio === null ? "" : `service/floor req/s >= ${t.ratio}`,
      t.p99Ms === null ? "" : `service p99 < ${t.p99Ms} ms`
    ].filter(Boolean).join(", ") || "none (reported only)"
    sets.set(text, [...(sets.get(text) ?? []), r.scenario.name])
  }
  return [...sets].map(([text, names]) =>
    `targets: ${text} (${names.length === rows.length ? "every scenario" : names.join("; ")})`
  )
}

const table = (rows: ReadonlyArray<Row>, settings: Settings) => {
  const header = [
    pad("scenario", 26),
    lpad("service req/s", 13),
    lpad("p99 ms", 7),
    lpad("floor req/s", 12),
    lpad("p99 ms", 7),
    lpad("ratio", 6),
    "  targets"
  ].join(" ")
  const lines = [header, "-".repeat(header.length + 24)]
  for (const r of rows) {
    const targets = r.failed
      ? `FAILED (${
        [
          !r.service.ok ? `service ${r.service.non2xx} non-2xx/${r.service.errors} errors` : "",
          !r.floor.ok ? `floor ${r.floor.non2xx} non-2xx/${r.floor.errors} errors` : "",
          checkFailed(r.check) ? "check failed" : ""
        ].filter(Boolean).join(", ")
      })`
      : targetsText(r)
    const other = Math.max(r.service.machine?.otherPercent ?? 0, r.floor.machine?.otherPercent ?? 0)
    const noisy = other > NOISY_PERCENT ? ` [noisy: other processes used ${other.toFixed(0)}% of the CPUs]` : ""
    lines.push([
      pad(r.scenario.name, 26),
      lpad(String(r.service.requestsPerSecond), 13),
      lpad(String(r.service.latencyMs.p99), 7),
      lpad(String(r.floor.requestsPerSecond), 12),
      lpad(String(r.floor.latencyMs.p99), 7),
      lpad(r.ratio.toFixed(2), 6),
      "  " + targets + noisy
    ].join(" "))
  }
  lines.push(
    "",
    ...targetsLegend(rows),
    `${settings.connections} connections, ${settings.duration} s measured after ${settings.warmup} s warmup, pool ${settings.poolSize}`
  )
  return lines.join("\n")
}

const cpuTable = (rows: ReadonlyArray<Row>) => {
  const f = (n: number | null) => (n === null ? "-" : n.toFixed(3))
  const header = [
    pad("CPU ms per request", 26),
    lpad("service node", 12),
    lpad("pg", 6),
    lpad("autocannon", 10),
    lpad("floor node", 11),
    lpad("pg", 6),
    lpad("autocannon", 10),
    lpad("machine busy/other %", 22)
  ].join(" ")
  const lines = [header, "-".repeat(header.length)]
  for (const r of rows) {
    lines.push([
      pad(r.scenario.name, 26),
      lpad(f(r.service.cpuMsPerRequest.node), 12),
      lpad(f(r.service.cpuMsPerRequest.postgres), 6),
      lpad(f(r.service.cpuMsPerRequest.loadGenerator), 10),
      lpad(f(r.floor.cpuMsPerRequest.node), 11),
      lpad(f(r.floor.cpuMsPerRequest.postgres), 6),
      lpad(f(r.floor.cpuMsPerRequest.loadGenerator), 10),
      lpad(
        [r.service.machine, r.floor.machine].map((
          m
        ) => (m ? `${m.busyPercent.toFixed(0)}/${m.otherPercent.toFixed(0)}` : "-")).join(" | "),
        22
      )
    ].join(" "))
  }
  return lines.join("\n")
}

/** Peak resident set per scenario (closed and open loop), and over the run. */
const rssTable = (
  rows: ReadonlyArray<Row>,
  openLoops: ReadonlyMap<Scenario, OpenLoopLine>,
  overall: Record<TargetName, { startedMb: number | null; peakMb: number | null; highWaterMb: number | null }>,
  met: boolean | null
) => {
  const f = (n: number | null) => (n === null ? "-" : n.toFixed(0))
  const header = [pad("peak RSS MiB", 26), lpad("service", 8), lpad("floor", 8)].join(" ")
  const lines = [
    header,
    "-".repeat(header.length),
    [pad("started, before any load", 26), lpad(f(overall.service.startedMb), 8), lpad(f(overall.floor.startedMb), 8)]
      .join(" ")
  ]
  for (const r of rows) {
    const open = openLoops.get(r.scenario)
    lines.push([
      pad(r.scenario.name, 26),
      lpad(f(maxMb(r.service.rssPeakMb, open?.service.rssPeakMb ?? null)), 8),
      lpad(f(maxMb(r.floor.rssPeakMb, open?.floor.rssPeakMb ?? null)), 8)
    ].join(" "))
  }
  lines.push(
    [pad("all scenarios", 26), lpad(f(overall.service.peakMb), 8), lpad(f(overall.floor.peakMb), 8)].join(" "),
    [pad("VmHWM (whole life)", 26), lpad(f(overall.service.highWaterMb), 8), lpad(f(overall.floor.highWaterMb), 8)]
      .join(" "),
    "",
    `target: service peak RSS under load < ${RSS_TARGET_MB} MiB: ${
      met === null ? "not measured" : met ? "ok" : "MISSED"
    } (VmRSS sampled every 100 ms during each warmup and measurement; VmHWM includes startup)`
  )
  return lines.join("\n")
}

// ---- main ------------------------------------------------------------------------------------------

const main = Effect.gen(function*() {
  const settings = readSettings()
  fs.mkdirSync(LOG_DIR, { recursive: true })
  const server = yield* benchServer(settings)
  yield* step(`database server: ${server.description}`)
  const dataset = yield* ensureDataset(server.adminUrl, settings)

  const admin = yield* Effect.acquireRelease(
    Effect.sync(() => new pg.Pool({ connectionString: dataset.url, max: 1, application_name: "bench-runner" })),
    (p) => Effect.promise(() => p.end())
  )
  const pgVersion = yield* Effect.promise(() =>
    admin.query<{ v: string }>("SELECT current_setting('server_version') AS v").then((r) => r.rows[0]!.v)
  )

  const common = {
    DATABASE_URL: dataset.url,
    DB_POOL_SIZE: String(settings.poolSize),
    RATE_LIMIT_PER_MINUTE: "1000000000"
  }
  const service = yield* startTarget("service", [settings.serviceEntry, "serve"], {
    ...common,
    DEMO_DATA: "false",
    // No scheduled jobs (mirror refreshes) in the measured process; bench/mirror.ts measures those.
    JOBS: "false",
    LOG_LEVEL: "Warning",
    DATA_DIR: path.join(DATA_DIR, "service")
  }, "tour-partner-service")
  const floor = yield* startTarget("floor", ["bench/floor.ts"], common, "bench-floor")

  // Resident memory once started, before any load (the RSS table sets the peaks against it).
  const startedRss = { service: rssMb(service.child.pid!), floor: rssMb(floor.child.pid!) }

  const all = yield* makeScenarios(dataset, service, admin)
  const scenarios = settings.only.length === 0 ? all : all.filter((s) => settings.only.some((o) => s.name.includes(o)))

  yield* step("checking that both servers answer the same JSON from the same SQL")
  const checks = new Map<Scenario, Check>()
  for (const scenario of scenarios) {
    const result = yield* check(service, floor, scenario)
    checks.set(scenario, result)
    const verdict = checkFailed(result)
      ? `FAILED\n${result.detail}`
      : result.sameSql === null
      ? `ok: same status and JSON shape; ${result.statements.service} statements against the floor's ` +
        `${result.statements.floor} (a bare write, not compared)`
      : `ok (${result.statements.service} statements each)`
    yield* step(`  ${pad(scenario.name, 26)} ${verdict}`)
  }
  service.child.kill("SIGUSR2")
  floor.child.kill("SIGUSR2")
  yield* Effect.sleep("200 millis")

  // One pass over every scenario on both servers first (BENCH_WARMUP seconds each), so the first
  // measurement does not pay for JIT compilation and cold caches that the later ones do not: under
  // load the service needs some 30 s to reach its steady state.
  if (settings.warmup > 0) {
    yield* step(`warming both servers up on every scenario (${settings.warmup} s each)`)
    for (const scenario of scenarios) {
      for (const target of [service, floor]) yield* load(target, scenario, settings, settings.warmup)
    }
    yield* Effect.sleep("1 second")
  }

  /** The database clock, to find the audit entries of a write scenario's runs. */
  const dbNow = Effect.promise(() => admin.query<{ now: Date }>("SELECT now()").then((r) => r.rows[0]!.now))
  /** How the service's audit log records the key's writes since `since`, by outcome. */
  const auditedSince = (key: BenchKey, since: Date) =>
    Effect.promise(() =>
      admin.query<{ outcome: string; n: number }>(
        "SELECT outcome, count(*)::int AS n FROM write_audit WHERE key_id = $1 AND at >= $2 GROUP BY outcome ORDER BY outcome",
        [key.id, since]
      ).then((r) => Object.fromEntries(r.rows.map((row) => [row.outcome, row.n])))
    )

  const rows: Array<Row> = []
  for (const [index, scenario] of scenarios.entries()) {
    const order: ReadonlyArray<Target> = index % 2 === 0 ? [service, floor] : [floor, service]
    const started = yield* dbNow
    let results = {} as Record<TargetName, Measurement>
    // A pair measured while other processes took a share of the CPUs is measured again (up to
    // BENCH_NOISY_RETRIES times); the quietest attempt is kept.
    let bestNoise = Infinity
    for (let attempt = 0; attempt <= settings.noisyRetries; attempt++) {
      yield* waitForQuiet(settings.quietTimeout)
      const attemptResults = {} as Record<TargetName, Measurement>
      for (const target of order) {
        yield* step(`${scenario.name} -> ${target.name} (${settings.warmup} s warmup + ${settings.duration} s)`)
        const m = yield* measure(target, scenario, settings, admin, settings.databaseName)
        attemptResults[target.name] = m
        const others = m.machine?.busiestOthers.map((p) => `${p.name} ${p.percent}%`).join(", ")
        yield* step(
          `  ${m.requestsPerSecond} req/s, p50 ${m.latencyMs.p50} ms, p99 ${m.latencyMs.p99} ms, ` +
            `${m.non2xx} non-2xx, ${m.errors} errors; machine ${m.machine?.busyPercent ?? "?"}% busy` +
            (others ? ` (others: ${others})` : "")
        )
        yield* Effect.sleep("1 second")
      }
      const noise = Math.max(
        attemptResults.service.machine?.otherPercent ?? 0,
        attemptResults.floor.machine?.otherPercent ?? 0
      )
      if (noise < bestNoise) {
        bestNoise = noise
        results = attemptResults
      }
      if (noise <= NOISY_PERCENT) break
      if (attempt < settings.noisyRetries) {
        yield* step(`  other processes used ${noise.toFixed(0)}% of the CPUs: measuring again`)
      }
    }
    const c = checks.get(scenario)!
    const ratio = results.floor.requestsPerSecond > 0
      ? results.service.requestsPerSecond / results.floor.requestsPerSecond
      : 0
    rows.push({
      scenario,
      check: c,
      service: results.service,
      floor: results.floor,
      ratio,
      ratioMet: scenario.targets.ratio === null ? null : ratio >= scenario.targets.ratio,
      p99Met: scenario.targets.p99Ms === null ? null : results.service.latencyMs.p99 < scenario.targets.p99Ms,
      failed: !results.service.ok || !results.floor.ok || checkFailed(c),
      audited: scenario.kind === "write" ? yield* auditedSince(scenario.key, started) : null
    })
  }

  // Open loop: half the floor's saturation throughput (its closed-loop req/s above), offered to
  // each server in turn; latency from each request's intended send time.
  const openLoops = new Map<Scenario, OpenLoopLine>()
  if (settings.openLoop.enabled) {
    for (const [index, row] of rows.entries()) {
      const scenario = row.scenario
      if (scenario.kind !== "read" || scenario.targets.openLoopP99Ms === null || row.failed) continue
      const rate = Math.max(1, Math.round(row.floor.requestsPerSecond * OPEN_LOOP_SHARE))
      const order: ReadonlyArray<Target> = index % 2 === 0 ? [service, floor] : [floor, service]
      const results = {} as Record<TargetName, OpenLoopMeasurement>
      yield* waitForQuiet(settings.quietTimeout)
      for (const target of order) {
        yield* step(`open loop: ${scenario.name} -> ${target.name} (${rate} req/s offered for ${settings.duration} s)`)
        const m = yield* measureOpenLoop({ name: target.name, base: target.base, pid: target.child.pid! }, {
          paths: scenario.paths,
          headers: authHeaders(scenario.key),
          rate,
          seconds: settings.duration,
          connections: settings.openLoop.connections,
          timeoutMs: 10_000
        })
        results[target.name] = m
        yield* step(
          `  got ${m.achievedPerSecond} req/s; p50 ${m.latencyMs.p50} ms, p99 ${m.latencyMs.p99} ms, max ` +
            `${m.latencyMs.max} ms; ${m.non2xx} non-2xx, ${m.errors} errors, ${m.timeouts} timeouts; ` +
            `peak ${m.peakInFlight} in flight; RSS peak ${m.rssPeakMb} MiB; machine ${
              m.machine?.busyPercent ?? "?"
            }% busy, others ${m.machine?.otherPercent ?? "?"}%`
        )
        yield* Effect.sleep("1 second")
      }
      const target = scenario.targets.openLoopP99Ms
      openLoops.set(scenario, {
        name: scenario.name,
        offeredPerSecond: rate,
        service: results.service,
        floor: results.floor,
        p99TargetMs: target,
        p99Met: results.service.latencyMs.p99 < target
      })
    }
  }
  const rss = (name: TargetName, pid: number) => {
    const peakMb = rows.reduce<number | null>(
      (peak, r) => maxMb(peak, maxMb(r[name].rssPeakMb, openLoops.get(r.scenario)?.[name].rssPeakMb ?? null)),
      null
    )
    return { startedMb: startedRss[name], peakMb, highWaterMb: highWaterMb(pid) }
  }
  const rssOverall = {
    targetMb: RSS_TARGET_MB,
    service: rss("service", service.child.pid!),
    floor: rss("floor", floor.child.pid!)
  }
  const rssMet = rssOverall.service.peakMb === null ? null : rssOverall.service.peakMb < RSS_TARGET_MB

  const printed = table(rows, settings)
  const audits = rows.filter((r) => r.audited !== null).map((r) =>
    `${r.scenario.name}: the service's audit log of these runs: ` +
    Object.entries(r.audited!).map(([outcome, n]) => `${n} ${outcome}`).join(", ") +
    " (a noop would be a write that found its row already in the asked state: not a real change)"
  )
  const openLoopLines = rows.flatMap((r) => openLoops.get(r.scenario) ?? [])
  console.log(
    `\n${printed}\n\n${cpuTable(rows)}\n${audits.length > 0 ? `\n${audits.join("\n")}\n` : ""}` +
      (openLoopLines.length > 0 ? `\n${openLoopTable(openLoopLines, settings.openLoop.connections)}\n` : "") +
      `\n${rssTable(rows, openLoops, rssOverall, rssMet)}\n`
  )

  const report = {
    finishedAt: new Date().toISOString(),
    machine: { ...machine(), postgres: pgVersion, database: server.description },
    settings: {
      connections: settings.connections,
      serviceEntry: settings.serviceEntry,
      durationSeconds: settings.duration,
      warmupSeconds: settings.warmup,
      poolSize: settings.poolSize,
      openLoop: settings.openLoop.enabled
        ? { share: OPEN_LOOP_SHARE, connections: settings.openLoop.connections }
        : null
    },
    dataset: {
      bookings: dataset.bookings,
      operators: dataset.operators,
      generatedAt: dataset.generatedAt,
      generationSeconds: dataset.generationSeconds,
      reused: dataset.reused
    },
    scenarios: rows.map((r) => ({
      name: r.scenario.name,
      measures: r.scenario.measures,
      path: r.scenario.kind === "write"
        ? r.scenario.describe
        : r.scenario.paths.length === 1
        ? r.scenario.paths[0]
        : `${r.scenario.paths.length} paths in turn`,
      compared: r.scenario.kind === "write"
        ? "bare write: status and JSON shape (not the same SQL)"
        : "same SQL, same parameters, same JSON",
      targets: r.scenario.targets,
      check: r.check,
      service: r.service,
      floor: r.floor,
      ratio: Math.round(r.ratio * 1000) / 1000,
      ratioMet: r.ratioMet,
      p99Met: r.p99Met,
      failed: r.failed,
      ...(r.audited === null ? {} : { serviceAudit: r.audited }),
      openLoop: openLoops.get(r.scenario) ?? null,
      rssPeakMb: {
        service: maxMb(r.service.rssPeakMb, openLoops.get(r.scenario)?.service.rssPeakMb ?? null),
        floor: maxMb(r.floor.rssPeakMb, openLoops.get(r.scenario)?.floor.rssPeakMb ?? null)
      }
    })),
    rss: { ...rssOverall, met: rssMet }
  }
  fs.writeFileSync(settings.resultsFile, JSON.stringify(report, null, 2) + "\n")
  yield* step(`results written to ${path.relative(PROJECT_DIR, settings.resultsFile)}`)

  const openLoopFailed = openLoopLines.some((l) => !l.service.ok || !l.floor.ok)
  const failed = rows.some((r) => r.failed) || openLoopFailed
  const missed = rows.some((r) => r.ratioMet === false || r.p99Met === false) ||
    openLoopLines.some((l) => l.p99Met === false) || rssMet === false
  if (failed) process.exitCode = 1
  else if (missed && settings.strict) process.exitCode = 2
})

NodeRuntime.runMain(Effect.scoped(main), { disableErrorReporting: false })
