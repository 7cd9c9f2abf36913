/**
 * `npm run bench:mirror`: a full refresh of the booking-system mirror, timed.
 *
 * 1. PostgreSQL: DATABASE_URL, or the embedded server under bench/.data (as `npm run bench`). The
 *    database BENCH_MIRROR_DB (partner_bench_mirror) is dropped and created afresh, and migrated.
 * 2. The Bókun sandbox (src/sandbox/bokun) in a child process (bench/sandbox.ts) on that database,
 *    seeded over its admin API: one vendor with 8 products × 4 start times (no capacity limit), and
 *    BENCH_MIRROR_LINES (100,000) one-line bookings over the nightly window (today and the next
 *    MIRROR_NIGHTLY_DAYS days in Europe/Oslo), from its bulk generator (fixed seed).
 * 3. In this process, the service's own code: an operator and a booking-system account pointing at
 *    the sandbox (Operators, BookingSystemAccounts, with the vendor's service channel), and the service's
 *    mirror wiring (MirrorLive of src/app.ts: Mirror.refresh through the real Bókun adapter it also
 *    gives, signed HTTP, booking search page by page, BOKUN_SEARCH_PAGE_SIZE per page) over the
 *    nightly window, with the service's pool size, config and observability (tracing off, as without
 *    an OTLP endpoint).
 * 4. Measured, one after the other on an empty mirror:
 *    - refresh 1: every line is new (inserts); the first use of the adapter in the process;
 *    - refresh 2: nothing changed;
 *    - then 1% of the lines are moved to another start time of their day through the adapter's
 *      `move` (Bókun's booking edit), not timed;
 *    - refresh 3: those lines changed (updates);
 *    - fetch only: the adapter reads every line again (no database write): what a refresh spends
 *      talking to the booking system;
 *    - sales ledger: the ledger's first read of the account (issue 13), every line by its booking's
 *      creation day through the port's creation-date search, unpaced, into an empty ledger.
 *    Each is wall time, lines/s, and CPU seconds of this process, the sandbox process and the
 *    PostgreSQL backends of each (by application_name). The counts are checked (refresh 1 inserts
 *    every line, refresh 2 changes none, refresh 3 updates exactly the moved lines).
 * 5. A series during which other processes used more than 10% of the CPUs is run again on an
 *    emptied mirror (BENCH_NOISY_RETRIES); the quietest series is kept. The table goes to stdout and
 *    the results to bench/mirror-results.json (BENCH_MIRROR_RESULTS).
 */
import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import pg from "pg"
import { BookingSystemConfig } from "../src/adapters/config.js"
import { MirrorLive } from "../src/app.js"
import { layerFromUrl } from "../src/db/Database.js"
import { createDatabase } from "../src/db/embedded.js"
import { mirrorWindow } from "../src/domain/localDay.js"
import { MirrorConfig } from "../src/mirror/config.js"
import { Mirror } from "../src/mirror/Mirror.js"
import { ObservabilityLive } from "../src/observability.js"
import { BookingSystemAccounts } from "../src/operators/BookingSystemAccounts.js"
import { Operators } from "../src/operators/Operators.js"
import { BookingSystem } from "../src/ports/BookingSystem.js"
import { SalesLedger } from "../src/sales/SalesLedger.js"
import type { SandboxVendor, VendorSpec } from "../src/sandbox/bokun/index.js"
import { machine, startChild, step } from "./children.js"
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
import { benchServer } from "./server.js"
import { PROJECT_DIR, readSettings, SANDBOX_APPLICATION_NAME } from "./settings.js"

/** The service's pool names its connections so (src/db/Database.ts). */
const SERVICE_APPLICATION_NAME = "tour-partner-service"
const TIME_ZONE = "Europe/Oslo"
/** Share of the lines changed before refresh 3. */
const CHANGED_SHARE = 0.01
const BULK_SEED = 2026

const PRODUCTS = [
  "Fjord Cruise",
  "Whale Safari",
  "Kayak Adventure",
  "RIB Speedboat",
  "Glacier Hike",
  "Old Town Walk",
  "Food and Wine Walk",
  "Northern Lights Chase"
]

const VENDOR: VendorSpec = {
  title: "Bench Fjord Tours",
  timezone: TIME_ZONE,
  currency: "NOK",
  codePrefix: "BFT",
  products: PRODUCTS.map((title) => ({
    title,
    startTimes: ["09:00", "11:30", "14:00", "16:30"],
    capacity: null,
    durationMinutes: 120,
    pricingCategories: [{ title: "Adult", isDefault: true }, { title: "Child", minAge: 3, maxAge: 15 }],
    rates: [{ title: "Standard", prices: { Adult: 59900, Child: 29900 } }]
  }))
}

interface Counts {
  readonly linesSeen: number
  readonly inserted: number | null
  readonly updated: number | null
  readonly cancelled: number | null
}

interface Measurement extends Counts {
  readonly name: string
  readonly seconds: number
  readonly linesPerSecond: number
  /** CPU seconds during the step. */
  readonly cpuSeconds: {
    readonly mirror: number
    readonly mirrorPostgres: number | null
    readonly sandbox: number | null
    readonly sandboxPostgres: number | null
  }
  readonly machine: {
    readonly busyPercent: number
    readonly otherPercent: number
    readonly busiestOthers: ReadonlyArray<{ pid: number; name: string; percent: number }>
  } | null
}

const postJson = (base: string, route: string, body: unknown) =>
  Effect.promise(async () => {
    const response = await fetch(base + route, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body)
    })
    const text = await response.text()
    if (!response.ok) throw new Error(`POST ${route} answered ${response.status}: ${text.slice(0, 500)}`)
    return JSON.parse(text) as unknown
  })

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits

// ---- report ------------------------------------------------------------------------------------------

const pad = (s: string, n: number) => (s.length >= n ? s : s + " ".repeat(n - s.length))
const lpad = (s: string, n: number) => (s.length >= n ? s : " ".repeat(n - s.length) + s)

const table = (rows: ReadonlyArray<Measurement>) => {
  const f = (n: number | null, digits = 1) => (n === null ? "-" : n.toFixed(digits))
  const header = [
    pad("step", 24),
    lpad("lines", 7),
    lpad("new", 7),
    lpad("changed", 7),
    lpad("cancel", 6),
    lpad("seconds", 8),
    lpad("lines/s", 8),
    "  CPU s:",
    lpad("mirror", 6),
    lpad("pg", 5),
    lpad("sandbox", 7),
    lpad("pg", 5),
    lpad("busy/other %", 13)
  ].join(" ")
  const lines = [header, "-".repeat(header.length)]
  for (const r of rows) {
    lines.push([
      pad(r.name, 24),
      lpad(String(r.linesSeen), 7),
      lpad(r.inserted === null ? "-" : String(r.inserted), 7),
      lpad(r.updated === null ? "-" : String(r.updated), 7),
      lpad(r.cancelled === null ? "-" : String(r.cancelled), 6),
      lpad(f(r.seconds, 2), 8),
      lpad(String(r.linesPerSecond), 8),
      "        ",
      lpad(f(r.cpuSeconds.mirror), 6),
      lpad(f(r.cpuSeconds.mirrorPostgres), 5),
      lpad(f(r.cpuSeconds.sandbox), 7),
      lpad(f(r.cpuSeconds.sandboxPostgres), 5),
      lpad(r.machine ? `${r.machine.busyPercent.toFixed(0)}/${r.machine.otherPercent.toFixed(0)}` : "-", 13)
    ].join(" "))
  }
  return lines.join("\n")
}

// ---- main --------------------------------------------------------------------------------------------

const main = Effect.gen(function*() {
  const settings = readSettings()
  const { lines, databaseName } = settings.mirror
  const server = yield* benchServer(settings)
  yield* step(`database server: ${server.description}`)
  yield* step(`creating database ${databaseName} afresh`)
  const url = yield* createDatabase(server.adminUrl, databaseName)

  const sandbox = yield* startChild({
    name: "sandbox",
    args: ["bench/sandbox.ts"],
    env: { DATABASE_URL: url },
    readyPath: "/sandbox/faults"
  })
  const sandboxPid = sandbox.child.pid!

  const admin = yield* Effect.acquireRelease(
    Effect.sync(() => new pg.Pool({ connectionString: url, max: 1, application_name: "bench-runner" })),
    (p) => Effect.promise(() => p.end())
  )

  const mirrorConfig = yield* MirrorConfig
  const { searchPageSize } = yield* BookingSystemConfig
  const daysAhead = mirrorConfig.nightlyDays
  const window = mirrorWindow([TIME_ZONE], new Date(), daysAhead)

  // The booking system's data: a vendor and its bookings, seeded over the sandbox's admin API.
  yield* step(`seeding the sandbox: ${lines} one-line bookings over ${window.from}..${window.to}`)
  const seedStarted = Date.now()
  const vendor = (yield* postJson(sandbox.base, "/sandbox/vendors", VENDOR)) as SandboxVendor
  const bulk = (yield* postJson(sandbox.base, `/sandbox/vendors/${vendor.id}/bulk`, {
    lines,
    from: window.from,
    to: window.to,
    seed: BULK_SEED
  })) as { lines: number }
  const seedSeconds = round((Date.now() - seedStarted) / 1000)
  yield* step(`  ${bulk.lines} lines in ${seedSeconds} s`)

  const measureStep = <A, E, R>(name: string, effect: Effect.Effect<A, E, R>, counts: (a: A) => Counts) =>
    Effect.gen(function*() {
      yield* waitForQuiet(settings.quietTimeout)
      yield* step(`${name}`)
      const mirrorPg0 = cpuByPid(yield* backendPids(admin, databaseName, SERVICE_APPLICATION_NAME))
      const sandboxPg0 = cpuByPid(yield* backendPids(admin, databaseName, SANDBOX_APPLICATION_NAME))
      const self0 = process.cpuUsage()
      const sandbox0 = cpuSeconds(sandboxPid)
      const machine0 = machineCpu()
      const procs0 = allProcesses()
      const started = performance.now()
      const result = yield* effect
      const seconds = (performance.now() - started) / 1000
      const self1 = process.cpuUsage(self0)
      const sandbox1 = cpuSeconds(sandboxPid)
      const machine1 = machineCpu()
      const procs1 = allProcesses()
      const mirrorPg1 = cpuByPid(yield* backendPids(admin, databaseName, SERVICE_APPLICATION_NAME))
      const sandboxPg1 = cpuByPid(yield* backendPids(admin, databaseName, SANDBOX_APPLICATION_NAME))
      const c = counts(result)
      const busy = machine0 && machine1 ? machine1.busy - machine0.busy : null
      const wall = machine0 && machine1 ? machine1.total - machine0.total : null
      const measurement: Measurement = {
        name,
        ...c,
        seconds: round(seconds, 2),
        linesPerSecond: Math.round(c.linesSeen / seconds),
        cpuSeconds: {
          mirror: round((self1.user + self1.system) / 1e6, 2),
          mirrorPostgres: nullableRound(cpuBetween(mirrorPg0, mirrorPg1)),
          sandbox: sandbox0 === null || sandbox1 === null ? null : round(sandbox1 - sandbox0, 2),
          sandboxPostgres: nullableRound(cpuBetween(sandboxPg0, sandboxPg1))
        },
        machine: busy === null || wall === null ? null : (() => {
          const other = otherLoad(
            procs0,
            procs1,
            new Set([process.pid, sandboxPid, ...mirrorPg1.keys(), ...sandboxPg1.keys()]),
            wall
          )
          return { busyPercent: round(busy / wall * 100), otherPercent: other.percent, busiestOthers: other.busiest }
        })()
      }
      yield* step(
        `  ${c.linesSeen} lines in ${measurement.seconds} s (${measurement.linesPerSecond} lines/s)` +
          (c.inserted === null ? "" : `: ${c.inserted} new, ${c.updated} changed, ${c.cancelled} cancelled`) +
          `; machine ${measurement.machine?.busyPercent ?? "?"}% busy, others ${
            measurement.machine?.otherPercent ?? "?"
          }%`
      )
      return measurement
    })

  const program = Effect.gen(function*() {
    const admins = yield* Operators
    const accounts = yield* BookingSystemAccounts
    const bookingSystem = yield* BookingSystem
    const mirror = yield* Mirror
    const ledger = yield* SalesLedger

    const operatorId = yield* admins.createOperator({ name: VENDOR.title, timezone: TIME_ZONE })
    const accountId = yield* accounts.create({
      kind: "bokun",
      name: `${VENDOR.title} (sandbox)`,
      baseUrl: sandbox.base,
      accessKey: vendor.accessKey,
      secretKey: vendor.secretKey,
      serviceChannelId: String(vendor.serviceChannelId)
    })
    yield* accounts.link(operatorId, accountId)
    const mirrored = yield* accounts.byId(accountId)
    const refresh = mirror.refresh({ kind: "manual", daysAhead, accountId })
    const refreshCounts = (s: Effect.Effect.Success<typeof refresh>): Counts => {
      if (s.failed > 0) throw new Error(`the refresh failed: ${s.results.map((r) => r.error).join("; ")}`)
      return { linesSeen: s.linesSeen, inserted: s.inserted, updated: s.updated, cancelled: s.cancelled }
    }
    const startTimes = new Map(vendor.products.map((p) => [String(p.id), p.startTimes.map((t) => String(t.id))]))

    /** Moves CHANGED_SHARE of the confirmed lines to the next start time of their product, same day. */
    const changeLines = Effect.gen(function*() {
      const { rows } = yield* Effect.promise(() =>
        admin.query<
          {
            reference: string
            line_id: string
            date: string
            product_id: string
            start_time_id: string
            rate_id: string | null
          }
        >(
          `SELECT reference, line_id, departure_date::text AS date, product_id, start_time_id, rate_id
           FROM manifest_rows WHERE account_id = $1 AND status = 'CONFIRMED'
           ORDER BY md5(line_id) LIMIT $2`,
          [accountId, Math.round(lines * CHANGED_SHARE)]
        )
      )
      const started = Date.now()
      yield* Effect.forEach(rows, (row) => {
        const times = startTimes.get(row.product_id)!
        const next = times[(times.indexOf(row.start_time_id) + 1) % times.length]!
        return bookingSystem.move(mirrored.account, {
          bookingReference: row.reference,
          lineId: row.line_id,
          date: row.date,
          startTimeId: next,
          rateId: row.rate_id
        })
      }, { concurrency: 8, discard: true })
      yield* step(
        `  moved ${rows.length} lines to another start time through the adapter in ${
          round((Date.now() - started) / 1000)
        } s`
      )
      return rows.length
    })

    /**
     * The sales ledger's read of the same account: every line by its booking's creation day (the
     * backfill's first read, unpaced: SALES_LEDGER_PAGE_PAUSE_MS paces a real booking system).
     */
    const emptyLedger = Effect.promise(() => admin.query("TRUNCATE sales_ledger_lines, sales_ledger_accounts"))
    const ledgerRead = ledger.backfill({ accountId, pagePauseMs: 0, chunkDays: 400, retries: 0 })
    const ledgerCounts = (s: Effect.Effect.Success<typeof ledgerRead>): Counts => {
      if (s.failed > 0) throw new Error(`the ledger read failed: ${JSON.stringify(s.results)}`)
      return { linesSeen: s.linesSeen, inserted: s.inserted, updated: s.updated, cancelled: s.cancelled }
    }

    // CASCADE: whatever refers to the mirror's rows (check-ins, later tables) is bench data too.
    const emptyMirror = Effect.promise(() => admin.query("TRUNCATE manifest_rows, mirror_days, mirror_runs CASCADE"))

    /** One series on an empty mirror: refresh 1 (new), 2 (unchanged), change, 3 (changed), fetch only. */
    const series = Effect.gen(function*() {
      yield* emptyMirror
      const first = yield* measureStep("refresh 1: empty mirror", refresh, refreshCounts)
      const second = yield* measureStep("refresh 2: no change", refresh, refreshCounts)
      const moved = yield* changeLines
      const third = yield* measureStep(`refresh 3: ${CHANGED_SHARE * 100}% changed`, refresh, refreshCounts)
      const fetch = yield* measureStep(
        "fetch only (adapter)",
        bookingSystem.bookingLines(mirrored.account, window),
        (found) => ({ linesSeen: found.length, inserted: null, updated: null, cancelled: null })
      )
      yield* emptyLedger
      const salesLedger = yield* measureStep("sales ledger (by creation)", ledgerRead, ledgerCounts)
      const expected = [
        salesLedger.inserted === bulk.lines && salesLedger.linesSeen === bulk.lines,
        first.inserted === bulk.lines && first.linesSeen === bulk.lines,
        second.linesSeen === bulk.lines && second.inserted === 0 && second.updated === 0 && second.cancelled === 0,
        third.linesSeen === bulk.lines && third.inserted === 0 && third.updated === moved && third.cancelled === 0
      ]
      return { steps: [first, second, third, fetch, salesLedger], moved, countsAsExpected: expected.every(Boolean) }
    })

    let best: Effect.Effect.Success<typeof series> | undefined
    let bestNoise = Infinity
    let attempts = 0
    for (let attempt = 0; attempt <= settings.noisyRetries; attempt++) {
      attempts++
      const result = yield* series
      const noise = Math.max(...result.steps.map((s) => s.machine?.otherPercent ?? 0))
      if (noise < bestNoise) {
        bestNoise = noise
        best = result
      }
      if (noise <= NOISY_PERCENT) break
      if (attempt < settings.noisyRetries) {
        yield* step(`other processes used ${noise.toFixed(0)}% of the CPUs: running the series again`)
      }
    }
    return { ...best!, attempts, noisy: bestNoise > NOISY_PERCENT ? bestNoise : null }
  })

  // The service's own mirror wiring (src/app.ts), which also gives the BookingSystem port it uses
  // (for the fetch-only pass and the moves).
  const services = Layer.mergeAll(MirrorLive, Operators.Default).pipe(
    Layer.provideMerge(layerFromUrl(url, settings.poolSize))
  )
  const result = yield* program.pipe(Effect.provide(services), Effect.provide(ObservabilityLive))

  const printed = table(result.steps)
  console.log(`\n${printed}\n`)
  console.log(
    `${lines} one-line bookings over ${window.from}..${window.to} (${daysAhead + 1} days), ` +
      `${searchPageSize} bookings per search page, pool ${settings.poolSize}; ` +
      `counts ${result.countsAsExpected ? "as expected" : "NOT as expected"}` +
      (result.noisy === null ? "" : `; [noisy: other processes used ${result.noisy.toFixed(0)}% of the CPUs]`) + "\n"
  )
  const report = {
    finishedAt: new Date().toISOString(),
    machine: machine(),
    settings: {
      lines,
      window,
      daysAhead,
      searchPageSize,
      poolSize: settings.poolSize,
      changedShare: CHANGED_SHARE
    },
    seeding: { lines: bulk.lines, seconds: seedSeconds },
    attempts: result.attempts,
    noisyPercent: result.noisy,
    countsAsExpected: result.countsAsExpected,
    moved: result.moved,
    steps: result.steps
  }
  fs.writeFileSync(settings.mirror.resultsFile, JSON.stringify(report, null, 2) + "\n")
  yield* step(`results written to ${path.relative(PROJECT_DIR, settings.mirror.resultsFile)}`)
  if (!result.countsAsExpected) process.exitCode = 1
})

const nullableRound = (n: number | null) => (n === null ? null : round(n, 2))

// What the runner gives the service in `npm run bench`: warnings only, no span export.
process.env.LOG_LEVEL = "Warning"
delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT

NodeRuntime.runMain(Effect.scoped(main), { disableErrorReporting: false })
