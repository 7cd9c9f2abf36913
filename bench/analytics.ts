/**
 * `npm run bench:analytics` (issue 14): the analytics reads against a floor, and the collection while
 * a rollup runs.
 *
 * 1. Dataset (bench/generateAnalytics.ts): 100 sites, 1,100 tours, 400 days of daily rollup rows,
 *    sales rollups and rates; database `partner_bench_analytics_reads` on the bench's PostgreSQL
 *    (DATABASE_URL or the embedded one under bench/.data, BENCH_PG_PORT), kept and reused.
 * 2. Reads: the service (`src/main.ts serve`, no jobs) and the floor (bench/floor.ts: node:http + pg,
 *    the same statements and the same pure rules). Checked first: each scenario's answer from both is
 *    the same JSON, and both sent the same statements with the same parameters (the statement timeout's
 *    milliseconds aside). Then per scenario, each server in turn (order alternating): warmup, and
 *    BENCH_DURATION seconds at one connection (BENCH_ANALYTICS_CONNECTIONS), with the CPU of Node, of
 *    its PostgreSQL backends and of the other processes on the machine.
 * 3. Collection: POST /api/v1/collect on the service at BENCH_COLLECT_RATE events/s (default 1,000)
 *    for BENCH_COLLECT_SECONDS (default 20) from 32 connections, 20 publishable keys of site #1 and a
 *    different client address per event (X-Forwarded-For, trusted for the bench), while the runner
 *    runs `AnalyticsRollups.refresh()` in a loop; then the events table is counted (every 202 must be
 *    a row, after the buffer's flush) and one last rollup takes everything in.
 * Results: bench/analytics-results.json (BENCH_ANALYTICS_RESULTS); figures in bench/README.md.
 */
import { NodeRuntime } from "@effect/platform-node"
import autocannon from "autocannon"
import { Duration, Effect, Fiber, Layer, Ref } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"
import { AnalyticsRollups } from "../src/analytics/AnalyticsRollups.js"
import { layerFromUrl } from "../src/db/Database.js"
import { ensureEventPartitions } from "../src/demo/analyticsTraffic.js"
import { type Child, machine, startServiceAndFloor, step } from "./children.js"
import { runCollectLoad, serverTimes } from "./collectLoadChild.js"
import { bodyDifference, readTrace, statementDifferences, type TracedStatement } from "./compare.js"
import {
  allProcesses,
  backendPids,
  cpuBetween,
  cpuByPid,
  cpuSeconds,
  NOISY_PERCENT,
  otherLoad,
  waitForQuiet
} from "./cpu.js"
import { ensureAnalyticsDataset } from "./generateAnalytics.js"
import { benchServer } from "./server.js"
import { DATA_DIR, PROJECT_DIR, readSettings } from "./settings.js"

const DATABASE = process.env.BENCH_ANALYTICS_DB || "partner_bench_analytics_reads"
const RESULTS = path.resolve(PROJECT_DIR, process.env.BENCH_ANALYTICS_RESULTS || "bench/analytics-results.json")
const CONNECTIONS = Number(process.env.BENCH_ANALYTICS_CONNECTIONS ?? 1)
const COLLECT_RATE = Number(process.env.BENCH_COLLECT_RATE ?? 1000)
const COLLECT_SECONDS = Number(process.env.BENCH_COLLECT_SECONDS ?? 20)
const COLLECT_CONNECTIONS = 32
/** BENCH_COLLECT_ROLLUPS=0: the collection without the rollup loop (to see what the rollups cost it). */
const ROLLUPS_DURING_COLLECT = process.env.BENCH_COLLECT_ROLLUPS !== "0"
const PARTS = (process.env.BENCH_ANALYTICS_PARTS ?? "reads,collect").split(",").map((s) => s.trim())
const SERVICE_APP = "tour-partner-service"
const FLOOR_APP = "bench-floor"

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits
const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10)

interface Measured {
  readonly reqPerSec: number
  readonly p50: number
  readonly p99: number
  readonly max: number
  readonly requests: number
  readonly non2xx: number
  readonly errors: number
  readonly nodeMsPerReq: number | null
  readonly pgMsPerReq: number | null
  readonly othersPercent: number
  readonly busiestOthers: ReadonlyArray<{ pid: number; name: string; percent: number }>
  readonly bodyBytes: number
}

/** The set_config of AnalyticsLimits carries the time left: masked before comparing. */
const masked = (statements: ReadonlyArray<TracedStatement>) =>
  statements.map((s) => s.text.includes("set_config('statement_timeout'") ? { ...s, values: ["(ms)", s.values[1]] } : s)

const main = Effect.gen(function*() {
  const settings = readSettings()
  const uptimeBefore = os.loadavg()
  const server = yield* benchServer(settings)
  yield* step(`database server: ${server.description}`)
  const { url, dataset } = yield* ensureAnalyticsDataset(server.adminUrl, DATABASE, settings.regenerate)
  const admin = new pg.Pool({ connectionString: url, max: 2, application_name: "bench-runner" })
  yield* Effect.addFinalizer(() => Effect.promise(() => admin.end()))
  // Today's (and tomorrow's) partition of the events, as the rollup job's partition upkeep would have.
  const context = yield* Layer.build(AnalyticsRollups.Default.pipe(Layer.provideMerge(layerFromUrl(url, 4))))
  yield* ensureEventPartitions(day(-1), day(2)).pipe(Effect.provide(context))

  const traces = {
    service: path.join(DATA_DIR, "analytics-service.sql"),
    floor: path.join(DATA_DIR, "analytics-floor.sql")
  }
  for (const f of Object.values(traces)) fs.writeFileSync(f, "")
  const timingFile = path.join(DATA_DIR, "analytics-service-timing.jsonl")
  const { service, floor } = yield* startServiceAndFloor({
    prefix: "analytics",
    serviceEntry: settings.serviceEntry,
    floorEntry: "bench/floor.ts",
    env: {
      DATABASE_URL: url,
      DB_POOL_SIZE: String(settings.poolSize),
      RATE_LIMIT_PER_MINUTE: "100000000",
      ANALYTICS_COLLECT_PER_MINUTE: "100000000",
      ANALYTICS_CLIENT_IP_HEADER: "x-forwarded-for"
    },
    traces,
    serviceTiming: timingFile
  })

  const from = day(-399)
  const to = day(0)
  const scenarios = [
    { name: "sites, 400 days", path: `/api/v1/analytics/sites?from=${from}&to=${to}` },
    { name: "tours by day, 400 days", path: `/api/v1/analytics/tours?from=${from}&to=${to}` },
    { name: "tours total, 400 days", path: `/api/v1/analytics/tours?from=${from}&to=${to}&granularity=total` }
  ]
  const auth = { authorization: `Bearer ${dataset.key.token}` }
  const results: Record<string, unknown> = {}
  const rows: Array<{ name: string; service: Measured; floor: Measured; ratio: number }> = []

  if (PARTS.includes("reads")) {
    // Checks: the same answer from the same statements.
    const checks = []
    for (const s of scenarios) {
      const at = { service: fs.statSync(traces.service).size, floor: fs.statSync(traces.floor).size }
      const get = (base: string) =>
        Effect.promise(async () => {
          const r = await fetch(base + s.path, { headers: auth })
          return { status: r.status, text: await r.text() }
        })
      const a = yield* get(service.base)
      const b = yield* get(floor.base)
      if (a.status !== 200 || b.status !== 200) {
        return yield* Effect.dieMessage(
          `${s.name}: service ${a.status}, floor ${b.status}\n${a.text.slice(0, 400)}\n${b.text.slice(0, 400)}`
        )
      }
      const difference = bodyDifference(a.text, b.text)
      if (difference) return yield* Effect.dieMessage(`${s.name}: ${difference}`)
      const problems = statementDifferences(
        masked(readTrace(traces.service, at.service)),
        masked(readTrace(traces.floor, at.floor))
      )
      if (problems.length > 0) return yield* Effect.dieMessage(`${s.name}:\n${problems.join("\n")}`)
      const statements = readTrace(traces.floor, at.floor).length
      const parsed = JSON.parse(a.text)
      checks.push({
        name: s.name,
        bytes: a.text.length,
        statements,
        rows: parsed.rows?.length,
        sites: parsed.sites?.length
      })
      yield* step(
        `check ${s.name}: same answer (${Math.round(a.text.length / 1024)} KB) from the same ${statements} statements`
      )
    }
    results.checks = checks
    for (const c of [service, floor]) c.child.kill("SIGUSR2")

    const measure = (target: Child, app: string, p: string, seconds: number) =>
      Effect.gen(function*() {
        const pids = yield* backendPids(admin, DATABASE, app)
        const pgBefore = cpuByPid(pids)
        const nodeBefore = cpuSeconds(target.child.pid!)
        const procsBefore = allProcesses()
        const started = performance.now()
        let bodyBytes = 0
        const r = yield* Effect.promise(() =>
          autocannon({
            url: target.base + p,
            connections: CONNECTIONS,
            duration: seconds,
            timeout: 20,
            headers: auth,
            requests: [{ onResponse: (_s, body) => void (bodyBytes = body.length) }]
          })
        )
        const wall = (performance.now() - started) / 1000
        const nodeAfter = cpuSeconds(target.child.pid!)
        const pgUsed = cpuBetween(pgBefore, cpuByPid(yield* backendPids(admin, DATABASE, app)))
        const ours = new Set([process.pid, target.child.pid!, service.child.pid!, floor.child.pid!, ...pids])
        const others = otherLoad(procsBefore, allProcesses(), ours, wall)
        const n = r.requests.total
        return {
          reqPerSec: round(n / wall),
          p50: r.latency.p50,
          p99: r.latency.p99,
          max: r.latency.max,
          requests: n,
          non2xx: r.non2xx,
          errors: r.errors,
          nodeMsPerReq: nodeBefore === null || nodeAfter === null ? null : round((nodeAfter - nodeBefore) * 1000 / n),
          pgMsPerReq: pgUsed === null ? null : round(pgUsed * 1000 / n),
          othersPercent: others.percent,
          busiestOthers: others.busiest,
          bodyBytes
        } satisfies Measured
      })

    let order = 0
    for (const s of scenarios) {
      if (settings.only.length > 0 && !settings.only.some((o) => s.name.includes(o))) continue
      const both: Partial<Record<"service" | "floor", Measured>> = {}
      const turn = order++ % 2 === 0 ? (["service", "floor"] as const) : (["floor", "service"] as const)
      for (const which of turn) {
        const target = which === "service" ? service : floor
        const app = which === "service" ? SERVICE_APP : FLOOR_APP
        // Measured again while other processes used over NOISY_PERCENT of the CPUs; the quietest attempt kept.
        let m: Measured | undefined
        for (let attempt = 0; attempt <= settings.noisyRetries; attempt++) {
          yield* waitForQuiet(settings.quietTimeout)
          if (settings.warmup > 0) yield* measure(target, app, s.path, settings.warmup)
          const next = yield* measure(target, app, s.path, settings.duration)
          if (!m || next.othersPercent < m.othersPercent) m = next
          if (m.othersPercent <= NOISY_PERCENT) break
          yield* step(`  ${which}: others used ${next.othersPercent}% of the CPUs; measuring again`)
        }
        if (!m) return yield* Effect.dieMessage("no measurement")
        if (m.non2xx > 0 || m.errors > 0) {
          return yield* Effect.dieMessage(`${s.name} on the ${which}: ${m.non2xx} non-2xx, ${m.errors} errors`)
        }
        both[which] = m
        yield* step(
          `${s.name}, ${which}: ${m.reqPerSec} req/s, p50 ${m.p50} / p99 ${m.p99} ms, Node ${m.nodeMsPerReq} + PG ${m.pgMsPerReq} ms/req, others ${m.othersPercent}%`
        )
      }
      rows.push({
        name: s.name,
        service: both.service!,
        floor: both.floor!,
        ratio: round(both.service!.reqPerSec / both.floor!.reqPerSec, 2)
      })
    }
    results.reads = rows
  }

  if (PARTS.includes("collect")) {
    const sql = (text: string) => Effect.promise(() => admin.query(text).then((r) => r.rows))
    const [{ max: before }] = yield* sql("SELECT coalesce(max(id), 0)::int8 AS max FROM site_events")
    const rollups = yield* Ref.make<Array<{ ms: number; events: number }>>([])
    const running = yield* Ref.make(true)
    // The rollup loop: one refresh after another while the load runs (the 5-minute job, back to back).
    const loop = yield* Effect.fork(
      Effect.gen(function*() {
        while (ROLLUPS_DURING_COLLECT && (yield* Ref.get(running))) {
          const [took, r] = yield* Effect.timed(Effect.flatMap(AnalyticsRollups, (x) => x.refresh()))
          yield* Ref.update(rollups, (xs) => [...xs, { ms: Math.round(Duration.toMillis(took)), events: r.events }])
          yield* Effect.sleep("200 millis")
        }
      }).pipe(Effect.provide(context))
    )
    yield* Effect.sleep("1 second")
    const timingAt = fs.statSync(timingFile).size
    const nodeBefore = cpuSeconds(service.child.pid!)
    const procsBefore = allProcesses()
    const started = performance.now()
    // The load from a process of its own (bench/collectLoad.ts), open loop.
    const load = yield* runCollectLoad({
      base: service.base,
      rate: COLLECT_RATE,
      seconds: COLLECT_SECONDS,
      connections: COLLECT_CONNECTIONS,
      keys: dataset.publishableKeys,
      domain: dataset.site.domain
    })
    const r = load.result
    const n = r.sent
    const accepted = r.ok2xx
    const wall = (performance.now() - started) / 1000
    const nodeAfter = cpuSeconds(service.child.pid!)
    const others = otherLoad(
      procsBefore,
      allProcesses(),
      new Set([process.pid, service.child.pid!, floor.child.pid!, load.pid]),
      wall
    )

    yield* Ref.set(running, false)
    yield* Fiber.join(loop)
    // The buffer flushes every second: wait for it, then count.
    yield* Effect.sleep("3 seconds")
    const server = serverTimes(timingFile, timingAt, "/api/v1/collect")
    const [{ n: stored }] = yield* sql(`SELECT count(*)::int AS n FROM site_events WHERE id > ${before}`)
    const [finalTook, final] = yield* Effect.timed(Effect.flatMap(AnalyticsRollups, (x) => x.refresh())).pipe(
      Effect.provide(context)
    )
    const [{ last_id, max }] = yield* sql(
      "SELECT (SELECT last_id FROM analytics_rollup_state WHERE rollup = 'events') AS last_id, max(id) AS max FROM site_events"
    )
    const runs = yield* Ref.get(rollups)
    const collect = {
      rate: COLLECT_RATE,
      rollupLoop: ROLLUPS_DURING_COLLECT,
      seconds: COLLECT_SECONDS,
      connections: COLLECT_CONNECTIONS,
      generator: "open loop in a child process (bench/collectLoad.ts)",
      sent: n,
      accepted,
      non2xx: r.non2xx,
      errors: r.errors,
      timeouts: r.timeouts,
      eventsPerSec: round(accepted / wall),
      // From each request's intended send time (the open loop's latency: a stall is charged to every request due in it).
      p50: r.latencyMs.p50,
      p90: r.latencyMs.p90,
      p99: r.latencyMs.p99,
      max: r.latencyMs.max,
      fromSendMs: r.fromSendMs,
      sendLagMs: r.sendLagMs,
      peakInFlight: r.peakInFlight,
      server,
      nodeMsPerEvent: nodeBefore === null || nodeAfter === null
        ? null
        : round((nodeAfter - nodeBefore) * 1000 / n, 2),
      generatorMsPerEvent: round(load.cpuMs / n, 2),
      othersPercent: others.percent,
      started: n,
      stored,
      // Requests still in flight when the load stopped are not counted as answered, but may be stored.
      allArrived: stored >= accepted && stored <= n,
      rollupsDuringLoad: runs,
      finalRollup: { ms: Math.round(Duration.toMillis(finalTook)), events: final.events },
      watermarkAtLastEvent: String(last_id) === String(max)
    }
    results.collect = collect
    yield* step(
      `collect: ${collect.eventsPerSec} events/s accepted (${accepted} of ${collect.sent}), p50 ${collect.p50} / p90 ${collect.p90} / p99 ${collect.p99} / max ${collect.max} ms ` +
        `(server ${server.p50} / ${server.p99} / max ${server.max} ms; Node ${collect.nodeMsPerEvent} ms/event; send lag p99 ${r.sendLagMs.p99} ms); ` +
        `${stored} rows stored (${
          collect.allArrived ? "all arrived" : "MISSING"
        }); ${runs.length} rollups during the load ` +
        `(${runs.map((x) => `${x.events} ev ${x.ms} ms`).join(", ")}); last rollup ${final.events} events`
    )
  }

  const output = {
    when: new Date().toISOString(),
    machine: machine(),
    loadAverage: { before: uptimeBefore.map((x) => round(x, 2)), after: os.loadavg().map((x) => round(x, 2)) },
    settings: {
      duration: settings.duration,
      warmup: settings.warmup,
      connections: CONNECTIONS,
      poolSize: settings.poolSize
    },
    dataset: { counts: dataset.counts, events: dataset.events, site: dataset.site.domain },
    ...results
  }
  fs.writeFileSync(RESULTS, JSON.stringify(output, null, 2) + "\n")
  console.log("\nscenario                   service req/s  p50/p99 ms     floor req/s  p50/p99 ms     ratio")
  for (const row of rows) {
    console.log(
      `${row.name.padEnd(27)}${String(row.service.reqPerSec).padEnd(15)}${
        `${row.service.p50}/${row.service.p99}`.padEnd(15)
      }${String(row.floor.reqPerSec).padEnd(13)}${`${row.floor.p50}/${row.floor.p99}`.padEnd(15)}${row.ratio}`
    )
  }
  yield* step(
    `results in ${path.relative(PROJECT_DIR, RESULTS)}; load average ${os.loadavg().map((x) => x.toFixed(2)).join(" ")}`
  )
})

NodeRuntime.runMain(Effect.scoped(main), { disableErrorReporting: false })
