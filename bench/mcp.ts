/**
 * `npm run bench:mcp`: the assistant's MCP reads (issue 16, deliverable 5) against the same REST
 * reads and the floor, in one run (target: MCP req/s ≥ 0.8 × REST req/s).
 *
 * 1. PostgreSQL: DATABASE_URL, or the embedded server under bench/.data (BENCH_PG_PORT). The bookings
 *    dataset of `npm run bench` (bench/generate.ts; reused when it is there), migrated to the current
 *    schema.
 * 2. The owner of operator #1 (who also administers #2 and #3) gets a fresh random password through
 *    the admin CLI's own service (AssistantAdmin.setPassword, as `npm run cli -- assistant
 *    set-password` does).
 * 3. The service (`src/main.ts serve`, JOBS=false) and the floor (bench/floor.ts), both with
 *    bench/sqlTrace.ts preloaded.
 * 4. A real OAuth connection, over HTTP against the started service, with the official MCP client
 *    (test/support/assistant.ts, the flow the assistant tests use): discovery, dynamic client
 *    registration, PKCE, sign-in and consent forms (operator #1; bookings:read, guests.contact:read,
 *    manifest:read), the code exchanged for an access token (valid an hour: the run takes minutes).
 * 5. Checks, per scenario: the REST answer, the floor's and the MCP tool's `structuredContent` are
 *    the same JSON (the tool not an `isError` result), with the statements each sent.
 * 6. Load: each scenario at BENCH_MCP_CONNECTIONS (1 and 8), REST, MCP and floor in turn (the order
 *    rotating), a warmup and a BENCH_DURATION s measurement each, re-measured when the machine was
 *    noisy (measureQuietest). MCP requests are what a client sends after initialize to a stateless
 *    server: POST /mcp with `tools/call`, `Accept: application/json, text/event-stream`,
 *    `MCP-Protocol-Version: 2025-11-25` and the bearer token (no session id: the server is stateless).
 *    After the measurements each MCP scenario is checked once more.
 * The table goes to stdout, the results to bench/mcp-results.json (BENCH_MCP_RESULTS).
 */
import { NodeRuntime } from "@effect/platform-node"
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import pg from "pg"
import { layerFromUrl } from "../src/db/Database.js"
import { connectAssistantAsync, rpc, setPassword } from "../test/support/assistant.js"
import { machine, startTracedServiceAndFloor, step } from "./children.js"
import { bodyDifference, readTrace } from "./compare.js"
import { ensureDataset } from "./generate.js"
import { migrate } from "./generateTours.js"
import { type LoadRequest, type LoadTarget, type Measurement, measureQuietest } from "./load.js"
import { benchServer } from "./server.js"
import { PROJECT_DIR, readSettings } from "./settings.js"

const RESULTS = path.resolve(PROJECT_DIR, process.env.BENCH_MCP_RESULTS || "bench/mcp-results.json")
const CONNECTIONS = (process.env.BENCH_MCP_CONNECTIONS ?? "1,8").split(",").map((s) => Number(s.trim()))
  .filter((n) => Number.isInteger(n) && n > 0)
/** Which of the three targets are loaded (all by default): e.g. `mcp` alone for a CPU profile of MCP calls only. */
const TARGETS = (process.env.BENCH_MCP_TARGETS ?? "rest,mcp,floor").split(",").map((s) => s.trim())
/**
 * A second service entry (e.g. a copy of src/ before a change) started beside the first, with its own
 * OAuth connection: its reads are the targets `rest-B` and `mcp-B` (name them in BENCH_MCP_TARGETS), so
 * that a before/after comparison is measured interleaved, in the same minutes (the machine is shared).
 */
const SERVICE_B = process.env.BENCH_MCP_SERVICE_B ?? ""
const SERVICE_APPLICATION_NAME = "tour-partner-service"
const FLOOR_APPLICATION_NAME = "bench-floor"
const TARGET = 0.8
const PROTOCOL_VERSION = "2025-11-25"
const SCOPES = ["bookings:read", "guests.contact:read", "manifest:read"]

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits
const pad = (s: string, n: number) => (s.length >= n ? s : s + " ".repeat(n - s.length))
const lpad = (s: string, n: number) => (s.length >= n ? s : " ".repeat(n - s.length) + s)
const addDays = (day: string, days: number) =>
  new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10)

// ---- scenarios ---------------------------------------------------------------------------------------

interface Scenario {
  readonly name: string
  /** The REST read (GET), with its key's token; the floor answers the same request. */
  readonly rest: { readonly path: string; readonly token: string }
  /** The same read as an MCP tool call. */
  readonly tool: { readonly name: string; readonly arguments: Record<string, unknown> }
}

const restRequest = (s: Scenario): LoadRequest => ({
  path: s.rest.path,
  headers: { authorization: `Bearer ${s.rest.token}` }
})

const toolCall = (s: Scenario) => ({
  jsonrpc: "2.0",
  id: 1,
  method: "tools/call",
  params: { name: s.tool.name, arguments: s.tool.arguments }
})

/** The MCP request as a client sends it after initialize (a stateless server: no Mcp-Session-Id). */
const mcpRequest = (s: Scenario, accessToken: string): LoadRequest => ({
  path: "/mcp",
  method: "POST",
  headers: {
    authorization: `Bearer ${accessToken}`,
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": PROTOCOL_VERSION
  },
  body: JSON.stringify(toolCall(s))
})

// ---- checks ------------------------------------------------------------------------------------------

interface Check {
  readonly name: string
  readonly ok: boolean
  readonly statements: { readonly rest: number; readonly mcp: number; readonly floor: number }
  readonly bytes: { readonly rest: number; readonly mcp: number }
  readonly mcpContentType: string | null
  readonly problems: ReadonlyArray<string>
}

const traced = <A>(traceFile: string, run: () => Promise<A>) =>
  Effect.gen(function*() {
    const from = fs.statSync(traceFile).size
    const result = yield* Effect.promise(run)
    yield* Effect.sleep("50 millis")
    return { result, statements: readTrace(traceFile, from).length }
  })

const getText = async (url: string, token: string) => {
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } })
  return { status: response.status, text: await response.text() }
}

const checkScenario = (
  s: Scenario,
  accessToken: string,
  bases: { service: string; floor: string },
  traces: { service: string; floor: string }
) =>
  Effect.gen(function*() {
    const problems: Array<string> = []
    const rest = yield* traced(traces.service, () => getText(bases.service + s.rest.path, s.rest.token))
    const floor = yield* traced(traces.floor, () => getText(bases.floor + s.rest.path, s.rest.token))
    const mcp = yield* traced(traces.service, () => rpc(`${bases.service}/mcp`, accessToken, toolCall(s)))
    if (rest.result.status !== 200) problems.push(`REST ${rest.result.status}: ${rest.result.text.slice(0, 300)}`)
    if (floor.result.status !== 200) problems.push(`floor ${floor.result.status}: ${floor.result.text.slice(0, 300)}`)
    const result = mcp.result.json?.result as { isError?: boolean; structuredContent?: unknown } | undefined
    if (mcp.result.status !== 200 || result === undefined || result.isError === true) {
      problems.push(`MCP ${mcp.result.status}: ${mcp.result.text.slice(0, 300)}`)
    }
    const structured = JSON.stringify(result?.structuredContent ?? null)
    const restVsFloor = bodyDifference(rest.result.text, floor.result.text)
    if (restVsFloor) problems.push(`REST and floor: ${restVsFloor}`)
    const restVsMcp = bodyDifference(rest.result.text, structured)
    if (restVsMcp) problems.push(`REST and MCP structuredContent: ${restVsMcp}`)
    return {
      name: s.name,
      ok: problems.length === 0,
      statements: { rest: rest.statements, mcp: mcp.statements, floor: floor.statements },
      bytes: { rest: Buffer.byteLength(rest.result.text), mcp: Buffer.byteLength(mcp.result.text) },
      mcpContentType: mcp.result.headers.get("content-type"),
      problems
    } satisfies Check
  })

// ---- load --------------------------------------------------------------------------------------------

interface Row {
  readonly name: string
  readonly connections: number
  readonly rest: Measurement
  readonly mcp: Measurement
  readonly floor: Measurement
  /** MCP req/s over REST req/s (the target), and REST over the floor. */
  readonly mcpToRest: number | null
  readonly restToFloor: number | null
}

const ratio = (a: Measurement, b: Measurement) =>
  b.requestsPerSecond > 0 ? round(a.requestsPerSecond / b.requestsPerSecond, 3) : null

const loadPart = (
  settings: ReturnType<typeof readSettings>,
  url: string,
  person: { email: string; password: string },
  dataset: {
    readonly operator1: string
    readonly day: string
    readonly bookingsToken: string
    readonly manifestToken: string
  }
) =>
  Effect.scoped(Effect.gen(function*() {
    const admin = yield* Effect.acquireRelease(
      Effect.sync(() => new pg.Pool({ connectionString: url, max: 1, application_name: "bench-runner" })),
      (p) => Effect.promise(() => p.end())
    )
    const { floor, service, traces } = yield* startTracedServiceAndFloor("mcp", settings, url)

    yield* step(`connecting an assistant: OAuth as ${person.email} (operator #1; ${SCOPES.join(", ")})`)
    const connected = yield* Effect.promise(() =>
      connectAssistantAsync(service.base, { ...person, operatorIds: [dataset.operator1], scopes: SCOPES })
    )
    const accessToken = connected.tokens.access_token
    yield* Effect.promise(() => connected.close())
    const serviceB = SERVICE_B === "" ? undefined : yield* Effect.gen(function*() {
      const b = yield* startTracedServiceAndFloor("mcpB", { ...settings, serviceEntry: SERVICE_B }, url)
      const c = yield* Effect.promise(() =>
        connectAssistantAsync(b.service.base, { ...person, operatorIds: [dataset.operator1], scopes: SCOPES })
      )
      yield* Effect.promise(() => c.close())
      return { service: b.service, accessToken: c.tokens.access_token }
    })

    const list = "/api/v1/bookings?limit=50"
    const to = addDays(dataset.day, 30)
    const all: Array<Scenario> = [
      {
        name: "manifest: 1 day",
        rest: { path: `/api/v1/manifest?date=${dataset.day}`, token: dataset.manifestToken },
        tool: { name: "get_manifest", arguments: { date: dataset.day } }
      },
      {
        name: "bookings: first page",
        rest: { path: list, token: dataset.bookingsToken },
        tool: { name: "list_bookings", arguments: { limit: 50 } }
      },
      {
        name: "bookings: date_from+date_to",
        rest: { path: `${list}&date_from=${dataset.day}&date_to=${to}`, token: dataset.bookingsToken },
        tool: { name: "list_bookings", arguments: { limit: 50, date_from: dataset.day, date_to: to } }
      }
    ]
    const chosen = all.filter((s) => settings.only.length === 0 || settings.only.some((o) => s.name.includes(o)))
    const bases = { service: service.base, floor: floor.base }

    yield* step("checking that REST, MCP (structuredContent) and the floor answer the same JSON")
    const checks: Array<Check> = []
    for (const s of chosen) {
      const c = yield* checkScenario(s, accessToken, bases, traces)
      checks.push(c)
      yield* step(
        `  ${pad(s.name, 28)} ${
          c.ok
            ? `ok (statements REST ${c.statements.rest}, MCP ${c.statements.mcp}, floor ${c.statements.floor}; ` +
              `${c.bytes.rest} bytes REST, ${c.bytes.mcp} bytes MCP as ${c.mcpContentType})`
            : `FAILED\n${c.problems.join("\n")}`
        }`
      )
    }
    if (checks.some((c) => !c.ok)) return yield* Effect.fail(new Error("a check failed"))
    service.child.kill("SIGUSR2")
    floor.child.kill("SIGUSR2")

    const database = new URL(url).pathname.slice(1)
    const targetsOf = (s: Scenario): ReadonlyArray<LoadTarget> => {
      const svc = { base: service.base, pid: service.child.pid!, applicationName: SERVICE_APPLICATION_NAME }
      const all: ReadonlyArray<LoadTarget> = [
        { ...svc, name: "rest", request: restRequest(s) },
        { ...svc, name: "mcp", request: mcpRequest(s, accessToken) },
        {
          name: "floor",
          base: floor.base,
          pid: floor.child.pid!,
          applicationName: FLOOR_APPLICATION_NAME,
          request: restRequest(s)
        }
      ]
      const b: ReadonlyArray<LoadTarget> = serviceB === undefined ? [] : [
        {
          ...svc,
          base: serviceB.service.base,
          pid: serviceB.service.child.pid!,
          name: "rest-B",
          request: restRequest(s)
        },
        {
          ...svc,
          base: serviceB.service.base,
          pid: serviceB.service.child.pid!,
          name: "mcp-B",
          request: mcpRequest(s, serviceB.accessToken)
        }
      ]
      return [...all, ...b].filter((t) => TARGETS.includes(t.name))
    }
    const common = { path: "/", admin, database }
    if (settings.warmup > 0) {
      yield* step(`warming the servers up (${settings.warmup * 2} s per scenario and request)`)
      for (const s of chosen) {
        yield* measureQuietest(targetsOf(s), {
          ...common,
          connections: 4,
          seconds: settings.warmup * 2,
          warmup: 0,
          retries: 0,
          quietTimeout: 0
        }, `warmup ${s.name}`)
      }
    }
    const rows: Array<Row> = []
    let index = 0
    for (const connections of CONNECTIONS) {
      for (const s of chosen) {
        const targets = targetsOf(s)
        const shift = index++ % targets.length
        const order = [...targets.slice(shift), ...targets.slice(0, shift)]
        const results = yield* measureQuietest(order, {
          ...common,
          connections,
          seconds: settings.duration,
          warmup: settings.warmup,
          retries: settings.noisyRetries,
          quietTimeout: settings.quietTimeout
        }, `${s.name}, ${connections} conn.`)
        const by = (name: string) => results.find((m) => m.target === name)
        const [rest, mcp, fl] = [by("rest"), by("mcp"), by("floor")]
        if (rest === undefined || mcp === undefined || fl === undefined) {
          yield* step(
            results.map((m) => `  ${m.target}: ${m.requestsPerSecond} req/s, node ${m.cpuMsPerRequest.node} ms/req`)
              .join("\n")
          )
          continue
        }
        rows.push({
          name: s.name,
          connections,
          rest,
          mcp,
          floor: fl,
          mcpToRest: ratio(mcp, rest),
          restToFloor: ratio(rest, fl)
        })
      }
    }
    yield* step("checking the MCP answers once more after the load")
    for (const s of chosen) {
      const c = yield* checkScenario(s, accessToken, bases, traces)
      if (!c.ok) return yield* Effect.fail(new Error(`${s.name} after the load:\n${c.problems.join("\n")}`))
    }
    return { checks, rows }
  }))

const table = (rows: ReadonlyArray<Row>) => {
  const header = [
    pad("scenario", 36),
    lpad("REST req/s", 10),
    lpad("p50/p99", 9),
    lpad("MCP req/s", 10),
    lpad("p50/p99", 9),
    lpad("floor req/s", 11),
    lpad("p50/p99", 9),
    lpad("MCP/REST", 9),
    lpad("REST/floor", 11),
    lpad("CPU ms/req node+pg REST", 24),
    lpad("MCP", 12),
    lpad("others %", 9)
  ].join(" ")
  const lines = [header, "-".repeat(header.length)]
  const f = (n: number | null) => (n === null ? "-" : n.toFixed(2))
  const lat = (m: Measurement) => `${m.latencyMs.p50}/${m.latencyMs.p99}`
  for (const r of rows) {
    lines.push([
      pad(`${r.name}, ${r.connections} conn.`, 36),
      lpad(String(r.rest.requestsPerSecond), 10),
      lpad(lat(r.rest), 9),
      lpad(String(r.mcp.requestsPerSecond), 10),
      lpad(lat(r.mcp), 9),
      lpad(String(r.floor.requestsPerSecond), 11),
      lpad(lat(r.floor), 9),
      lpad(f(r.mcpToRest), 9),
      lpad(f(r.restToFloor), 11),
      lpad(`${f(r.rest.cpuMsPerRequest.node)}+${f(r.rest.cpuMsPerRequest.postgres)}`, 24),
      lpad(`${f(r.mcp.cpuMsPerRequest.node)}+${f(r.mcp.cpuMsPerRequest.postgres)}`, 12),
      lpad([r.rest, r.mcp, r.floor].map((m) => (m.machine ? m.machine.otherPercent.toFixed(0) : "-")).join("/"), 9) +
      (r.rest.ok && r.mcp.ok && r.floor.ok ? "" : "  FAILED") +
      (r.mcpToRest !== null && r.mcpToRest < TARGET ? `  < ${TARGET}` : "")
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
  const operator1 = dataset.singleKey.operatorIds[0]!
  const { email, pgVersion } = yield* Effect.acquireUseRelease(
    Effect.sync(() => new pg.Client({ connectionString: dataset.url })),
    (client) =>
      Effect.promise(async () => {
        await client.connect()
        const owner = await client.query<{ email: string }>(
          `SELECT u.email FROM users u JOIN memberships m ON m.user_id = u.id
           WHERE m.operator_id = $1 AND m.role = 'owner'`,
          [operator1]
        )
        const v = await client.query<{ v: string }>("SELECT current_setting('server_version') AS v")
        return { email: owner.rows[0]!.email, pgVersion: v.rows[0]!.v }
      }),
    (client) => Effect.promise(() => client.end())
  )
  const password = randomBytes(18).toString("base64url")
  yield* setPassword(email, password).pipe(Effect.provide(layerFromUrl(dataset.url, 1)))
  const loadAt = new Date().toISOString()
  const load = yield* loadPart(settings, dataset.url, { email, password }, {
    operator1,
    day: dataset.manifest.date,
    bookingsToken: dataset.singleKey.token,
    manifestToken: dataset.manifest.key.token
  })
  console.log(`\n${table(load.rows)}\n`)
  const report = {
    finishedAt: new Date().toISOString(),
    loadStartedAt: loadAt,
    command: "npm run bench:mcp",
    machine: { ...machine(), postgres: pgVersion, database: server.description },
    settings: {
      durationSeconds: settings.duration,
      warmupSeconds: settings.warmup,
      connections: CONNECTIONS,
      poolSize: settings.poolSize,
      serviceEntry: settings.serviceEntry,
      noisyRetries: settings.noisyRetries
    },
    dataset: { bookings: dataset.bookings, operators: dataset.operators, generatedAt: dataset.generatedAt },
    method: {
      requestsPerSecond: "2xx answers / wall seconds of the measurement (autocannon)",
      ratio: "MCP req/s / REST req/s (the target); REST req/s / floor req/s for reference",
      target: TARGET,
      mcpRequest:
        `POST /mcp tools/call, Accept: application/json, text/event-stream, MCP-Protocol-Version: ${PROTOCOL_VERSION}, ` +
        "bearer token of a real OAuth connection (no session: the server is stateless)"
    },
    load,
    seconds: Math.round((Date.now() - started) / 1000)
  }
  fs.writeFileSync(RESULTS, JSON.stringify(report, null, 2) + "\n")
  yield* step(`results written to ${path.relative(PROJECT_DIR, RESULTS)}`)
  if (load.rows.some((r) => !r.rest.ok || !r.mcp.ok || !r.floor.ok)) process.exitCode = 1
  if (settings.strict && load.rows.some((r) => r.mcpToRest !== null && r.mcpToRest < TARGET)) process.exitCode = 2
})

process.env.LOG_LEVEL = "Warning"
delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT

NodeRuntime.runMain(Effect.scoped(main), { disableErrorReporting: false })
