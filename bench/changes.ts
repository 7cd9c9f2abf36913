/**
 * `npm run bench:changes`: the two booking-change writes end to end against the sandboxes.
 *
 * - `POST /api/v1/bookings/{id}/cancel` (src/partner/cancels/Cancels.ts): the Bókun sandbox releases the
 *   seats, the Surfboard sandbox voids (paid today) or refunds (paid yesterday) the recorded
 *   payment, one transaction updates the booking and enqueues the emails.
 * - `POST /api/v1/bookings/{id}/reschedule` (src/partner/reschedules/Reschedules.ts): the booking's line is
 *   read, the day's availability read and the line moved in the Bókun sandbox, one transaction
 *   updates the booking and enqueues the emails.
 *
 * 1. PostgreSQL: DATABASE_URL, or the embedded server under bench/.data (as `npm run bench`). The
 *    database BENCH_CHANGES_DB (partner_bench_changes) is dropped, created afresh and migrated.
 * 2. The Bókun and the Surfboard sandbox, each a child process (bench/sandbox.ts) on that database
 *    (their own schemas), and the service (`src/main.ts serve`, DEMO_DATA=false, JOBS=false), all
 *    three with bench/httpTiming.ts preloaded: it records every HTTP exchange each process serves
 *    and every one the service sends (Node's diagnostics channels).
 * 3. Seeding, as test/partner/cancels/cancel.test.ts and test/partner/reschedules/reschedule.test.ts do it, in volume: an operator with
 *    an owner (the team e-mail), a Bókun vendor (one product, 10:00 and 14:30, no seat limit) as
 *    its booking-system account, a Surfboard merchant as its payment account (with the sandbox's
 *    base URL and credentials, as src/demo/paymentProvider.ts records it), a tour mapped to the
 *    product, and a key allowed to cancel and reschedule whose daily limits are raised to 10^9.
 *    BENCH_CHANGES_CANCELS bookings for the cancels and BENCH_CHANGES_RESCHEDULES for the
 *    reschedules (2 adults, 998 NOK, days D+5..D+34 at 10:00): each one in the Bókun sandbox
 *    (its service channel, our confirmation code as external reference) and in the service; each
 *    cancel booking also paid at the Surfboard sandbox (`createPaidOrder`) and recorded in
 *    `booking_payments`, every other one paid yesterday (the sandbox's clock moved back), so the
 *    cancels alternate between a refund and a void.
 * 4. One request of each kind is checked (200, the expected answer, the expected calls reached
 *    each sandbox); then a warmup pass; then for each connection count (BENCH_CHANGES_CONNECTIONS)
 *    and scenario: a warmup (BENCH_WARMUP s, discarded), a pause, and the measurement: autocannon
 *    sends about BENCH_DURATION seconds' worth of requests (a fixed `amount` sized from the warmup's
 *    rate, so every request of the measurement is answered before it ends and every booking it uses
 *    is accounted for). Every request has its own Idempotency-Key. Cancels hand out each booking
 *    once; reschedules cycle through their bookings, each request moving its booking to the other
 *    start time of the same day (same price).
 * 5. Reported per measurement: req/s and latency (autocannon), where the time goes (from the
 *    timing records of the measured requests: time inside the service, time waiting on each
 *    sandbox as the service saw it, and time the sandbox itself took), CPU per request of every
 *    process and their PostgreSQL backends, how busy the machine was. Any non-2xx answer, error or
 *    timeout fails the run (exit code 1). Afterwards the outcomes are read back from the databases
 *    (audit log, booking changes, refunds, the Bókun sandbox's bookings) and checked.
 * The table goes to stdout, the results to bench/changes-results.json (BENCH_CHANGES_RESULTS).
 */
import { NodeRuntime } from "@effect/platform-node"
import autocannon from "autocannon"
import { Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import pg from "pg"
import { layerFromUrl } from "../src/db/Database.js"
import { createDatabase } from "../src/db/embedded.js"
import { BookingSystemAccounts } from "../src/operators/BookingSystemAccounts.js"
import { Operators } from "../src/operators/Operators.js"
import { DailyLimits } from "../src/partner/writes/DailyLimits.js"
import { canVoid } from "../src/ports/PaymentProvider.js"
import {
  addDays,
  localDay,
  type SandboxVendor,
  type SeededBooking,
  type VendorSpec
} from "../src/sandbox/bokun/index.js"
import type { SandboxMerchant } from "../src/sandbox/surfboard/index.js"
import { type Child, machine, startChild, step } from "./children.js"
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
import {
  BOKUN_SANDBOX_APPLICATION_NAME,
  DATA_DIR,
  PROJECT_DIR,
  readSettings,
  type Settings,
  SURFBOARD_SANDBOX_APPLICATION_NAME
} from "./settings.js"
import { now, operationOf, timingFile, type TimingRecord } from "./timing.js"

/** The service's pool names its connections so (src/db/Database.ts). */
const SERVICE_APPLICATION_NAME = "tour-partner-service"
const TIME_ZONE = "Europe/Oslo"
const PRICE_ADULT = 49_900
const PARTY = 2
const AMOUNT = PRICE_ADULT * PARTY
const TIMES = ["10:00", "14:30"] as const
/** Bookings are spread over this many days from D+5 (none starts during the run). */
const DAYS = 30
const SEED_CONCURRENCY = 8
const CANCEL_REASON = "Bench: the guest asked to cancel"

const VENDOR: VendorSpec = {
  title: "Bench Harbour Tours",
  timezone: TIME_ZONE,
  currency: "NOK",
  codePrefix: "BHT",
  products: [{
    title: "Harbour Cruise",
    startTimes: [...TIMES],
    capacity: null,
    durationMinutes: 90,
    pricingCategories: [{ title: "Adult", isDefault: true, minAge: 16 }, { title: "Child", minAge: 3, maxAge: 15 }],
    rates: [{ title: "Standard", prices: { Adult: PRICE_ADULT, Child: 24_950 } }]
  }]
}

type ScenarioName = "cancel" | "reschedule"

/** One request as autocannon sends it. */
interface BenchRequest {
  readonly method: "POST"
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

interface Scenario {
  readonly name: ScenarioName
  readonly describe: string
  /** Called before every run: reads the state the run starts from. */
  readonly prepare: Effect.Effect<void>
  /** The next request; undefined when no booking is left for it. */
  readonly next: () => BenchRequest | undefined
  /** Bookings left (null: unlimited, a cycle). */
  readonly remaining: () => number | null
}

// ---- helpers -------------------------------------------------------------------------------------

const request = <A>(method: "POST" | "PUT" | "DELETE", base: string, route: string, body?: unknown) =>
  Effect.promise(async () => {
    const response = await fetch(base + route, {
      method,
      headers: { "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const text = await response.text()
    if (!response.ok) throw new Error(`${method} ${route} answered ${response.status}: ${text.slice(0, 500)}`)
    return JSON.parse(text) as A
  })

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits

const mean = (sum: number, n: number) => (n === 0 ? 0 : sum / n)

// ---- seeding -------------------------------------------------------------------------------------

interface Prepared {
  readonly token: string
  readonly keyId: string
  readonly operatorId: string
  readonly accountId: string
  readonly vendor: SandboxVendor
  readonly merchant: SandboxMerchant
  /** Booking ids for the cancels, in the order they are used. */
  readonly cancels: ReadonlyArray<string>
  /** Booking ids the reschedules cycle through. */
  readonly reschedules: ReadonlyArray<string>
  readonly seedSeconds: number
}

const seed = (
  settings: Settings,
  url: string,
  admin: pg.Pool,
  bokun: Child,
  surfboard: Child
) =>
  Effect.gen(function*() {
    const started = Date.now()
    const admins = yield* Operators
    const accounts = yield* BookingSystemAccounts
    const limits = yield* DailyLimits
    const { cancels, reschedules } = settings.changes

    const operatorId = yield* admins.createOperator({ name: VENDOR.title, timezone: TIME_ZONE })
    const owner = yield* admins.createUser({ email: "owner@bench-harbour.example", name: "Bench Owner" })
    yield* admins.setMembership(operatorId, owner, "owner")
    const key = yield* admins.createKey({
      createdBy: owner,
      name: "Bench changes",
      scopes: ["bookings:read", "bookings.cancel:write", "bookings.reschedule:write"],
      operatorIds: [operatorId],
      expiresAt: new Date(Date.now() + 365 * 86_400_000)
    })
    yield* limits.setOverrides(key.id, { cancels: 1_000_000_000, reschedules: 1_000_000_000 })

    // The booking system: a vendor of the Bókun sandbox as the operator's account.
    const vendor = yield* request<SandboxVendor>("POST", bokun.base, "/sandbox/vendors", VENDOR)
    const product = vendor.products[0]!
    const accountId = yield* accounts.create({
      kind: "bokun",
      name: `${VENDOR.title} (sandbox)`,
      baseUrl: bokun.base,
      accessKey: vendor.accessKey,
      secretKey: vendor.secretKey,
      serviceChannelId: String(vendor.serviceChannelId)
    })
    yield* accounts.link(operatorId, accountId)

    // The payment provider: a merchant of the Surfboard sandbox with the sandbox's address and
    // credentials on the row (as the demo records it; no SURFBOARD_* setting needed).
    const merchant = yield* request<SandboxMerchant>("POST", surfboard.base, "/sandbox/merchants", {
      name: VENDOR.title
    })
    const q = <R extends pg.QueryResultRow>(text: string, values: ReadonlyArray<unknown> = []) =>
      Effect.promise(() => admin.query<R>(text, values as Array<unknown>))
    yield* q(
      `INSERT INTO operator_payment_accounts (operator_id, merchant_id, payment_page_terminal_id, base_url, api_key, api_secret)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [operatorId, merchant.id, merchant.paymentPageTerminalId, surfboard.base, merchant.apiKey, merchant.apiSecret]
    )
    const { rows: [tour] } = yield* q<{ id: string }>(
      `INSERT INTO tours (operator_id, title, status, timezone, currency, booking_system_product_id)
       VALUES ($1, 'Harbour Cruise', 'published', $2, 'NOK', $3) RETURNING id`,
      [operatorId, TIME_ZONE, String(product.id)]
    )

    // The bookings: first in the booking system (our confirmation code as its external reference).
    const today = localDay(Date.now(), TIME_ZONE)
    const total = cancels + reschedules
    const specs = Array.from({ length: total }, (_, i) => ({
      code: `BCH-${String(i + 1).padStart(6, "0")}`,
      date: addDays(today, 5 + (i % DAYS)),
      guest: `guest-${i + 1}@bench-harbour.example`,
      cancel: i < cancels
    }))
    yield* step(`seeding ${total} bookings in the Bókun sandbox (${cancels} to cancel, ${reschedules} to reschedule)`)
    const seeded = yield* Effect.forEach(specs, (s) =>
      request<SeededBooking>("POST", bokun.base, `/sandbox/vendors/${vendor.id}/bookings`, {
        productId: product.id,
        date: s.date,
        startTime: TIMES[0],
        rateId: product.rates[0]!.id,
        participants: PARTY,
        channel: "service",
        externalReference: s.code,
        guest: { firstName: "Bench", lastName: `Guest ${s.code}`, email: s.guest }
      }), { concurrency: SEED_CONCURRENCY })

    // The payments of the bookings to cancel: every other one yesterday (refunded), the rest today (voided).
    const yesterday = new Date(Date.now() - 86_400_000 - 3_600_000)
    const payments = new Map<string, { orderId: string; paymentId: string; paidAt: Date }>()
    const pay = (indexes: ReadonlyArray<number>, paidAt: Date) =>
      Effect.forEach(indexes, (i) =>
        request<{ orderId: string; paymentId: string | null }>("POST", surfboard.base, "/sandbox/sales", {
          merchantId: merchant.id,
          amountMinor: AMOUNT,
          currency: "NOK",
          referenceId: specs[i]!.code
        }).pipe(Effect.map((sale) => {
          if (sale.paymentId === null) {
            throw new Error(`the sale for ${specs[i]!.code} has no payment`)
          }
          payments.set(specs[i]!.code, { orderId: sale.orderId, paymentId: sale.paymentId, paidAt })
        })), { concurrency: SEED_CONCURRENCY, discard: true })
    const toCancel = specs.map((s, i) => (s.cancel ? i : -1)).filter((i) =>
      i >= 0
    )
    yield* step(`paying ${toCancel.length} bookings at the Surfboard sandbox (half of them yesterday)`)
    yield* request("PUT", surfboard.base, "/sandbox/clock", { now: yesterday.toISOString() })
    yield* pay(
      toCancel.filter((i) =>
        i % 2 === 0
      ),
      yesterday
    ).pipe(
      Effect.ensuring(Effect.orDie(Effect.ignore(request("DELETE", surfboard.base, "/sandbox/clock"))))
    )
    yield* pay(
      toCancel.filter((i) =>
        i % 2 === 1
      ),
      new Date()
    )

    // Then in the service, in two statements.
    yield* step("recording the bookings and their payments in the service")
    const { rows: inserted } = yield* q<{ id: string; confirmation_code: string }>(
      `INSERT INTO bookings (
         confirmation_code, status, operator_id, tour_id, tour_name, experience_date, start_time, timezone,
         participants, amount_minor, currency, channel, guest_name, guest_email, guest_phone, provider_reference,
         payment_strategy, commission_amount_minor, commission_rate_percent, commission_currency, commission_status,
         booked_at, created_at)
       SELECT code, 'CONFIRMED', $1, $2, 'Harbour Cruise', day, $3, $4, $5, $6, 'NOK', 'website',
         'Bench Guest ' || code, email, '+4712345678', reference, 'pay_now', $7, 8, 'NOK', 'pending', now(), now()
       FROM unnest($8::text[], $9::date[], $10::text[], $11::text[]) AS t(code, day, email, reference)
       RETURNING id, confirmation_code`,
      [
        operatorId,
        tour!.id,
        TIMES[0],
        TIME_ZONE,
        PARTY,
        AMOUNT,
        Math.round(AMOUNT * 0.08),
        specs.map((s) =>
          s.code
        ),
        specs.map((s) => s.date),
        specs.map((s) => s.guest),
        seeded.map((b) => b.confirmationCode)
      ]
    )
    const idOf = new Map(inserted.map((r) => [r.confirmation_code, r.id]))
    const paid = [...payments.entries()]
    yield* q(
      `INSERT INTO booking_payments (booking_id, purpose, merchant_id, provider_order_id, provider_payment_id, amount_minor, currency, paid_at)
       SELECT booking_id, 'full', $1, order_id, payment_id, $2, 'NOK', paid_at
       FROM unnest($3::uuid[], $4::text[], $5::text[], $6::timestamptz[]) AS t(booking_id, order_id, payment_id, paid_at)`,
      [
        merchant.id,
        AMOUNT,
        paid.map(([code]) => idOf.get(code)!),
        paid.map(([, p]) => p.orderId),
        paid.map(([, p]) => p.paymentId),
        paid.map(([, p]) => p.paidAt)
      ]
    )
    yield* q("ANALYZE")
    const seedSeconds = round((Date.now() - started) / 1000)
    yield* step(`  seeded in ${seedSeconds} s`)
    return {
      token: key.token,
      keyId: key.id,
      operatorId,
      accountId,
      vendor,
      merchant,
      cancels: specs.filter((s) => s.cancel).map((s) => idOf.get(s.code)!),
      reschedules: specs.filter((s) => !s.cancel).map((s) => idOf.get(s.code)!),
      seedSeconds
    } satisfies Prepared
  }).pipe(Effect.provide(
    Layer.mergeAll(Operators.Default, BookingSystemAccounts.Default, DailyLimits.Default).pipe(
      Layer.provideMerge(layerFromUrl(url, 2))
    )
  ))

// ---- scenarios -----------------------------------------------------------------------------------

const makeScenarios = (prepared: Prepared, admin: pg.Pool): ReadonlyArray<Scenario> => {
  const run = randomUUID()
  let n = 0
  const headers = () => ({
    authorization: `Bearer ${prepared.token}`,
    "content-type": "application/json",
    "idempotency-key": `bench-${run}-${n++}`
  })

  let nextCancel = 0
  const cancel: Scenario = {
    name: "cancel",
    describe: "POST /api/v1/bookings/{id}/cancel",
    prepare: Effect.void,
    next: () => {
      const id = prepared.cancels[nextCancel]
      if (id === undefined) return undefined
      nextCancel++
      return {
        method: "POST",
        path: `/api/v1/bookings/${id}/cancel`,
        headers: headers(),
        body: JSON.stringify({ reason: CANCEL_REASON })
      }
    },
    remaining: () => prepared.cancels.length - nextCancel
  }

  const product = prepared.vendor.products[0]!
  const timeId = new Map(product.startTimes.map((s) => [s.time, String(s.id)]))
  const state = new Map<string, { date: string; time: string }>()
  let nextReschedule = 0
  const reschedule: Scenario = {
    name: "reschedule",
    describe: "POST /api/v1/bookings/{id}/reschedule",
    // Where each booking is now (a run cut short leaves some moved): the next move goes to the other time.
    prepare: Effect.promise(() =>
      admin.query<{ id: string; date: string; start_time: string }>(
        "SELECT id, experience_date::text AS date, start_time FROM bookings WHERE id = ANY($1::uuid[])",
        [prepared.reschedules]
      )
    ).pipe(Effect.map(({ rows }) => {
      for (const r of rows) state.set(r.id, { date: r.date, time: r.start_time })
    })),
    next: () => {
      const id = prepared.reschedules[nextReschedule++ % prepared.reschedules.length]!
      const now = state.get(id)!
      const time = now.time === TIMES[0] ? TIMES[1] : TIMES[0]
      state.set(id, { date: now.date, time })
      return {
        method: "POST",
        path: `/api/v1/bookings/${id}/reschedule`,
        headers: headers(),
        body: JSON.stringify({ date: now.date, start_time_id: timeId.get(time)! })
      }
    },
    remaining: () => null
  }
  return [cancel, reschedule]
}

// ---- load ----------------------------------------------------------------------------------------

/** A request for no booking: sent (404) only when a scenario ran out of bookings, which fails the run. */
const EXHAUSTED: BenchRequest = {
  method: "POST",
  path: "/api/v1/bookings/00000000-0000-0000-0000-000000000000/cancel",
  headers: { "content-type": "application/json", "idempotency-key": "bench-exhausted" },
  body: JSON.stringify({ reason: CANCEL_REASON })
}

const load = (
  service: Child,
  scenario: Scenario,
  connections: number,
  size: { readonly seconds: number } | { readonly amount: number }
) =>
  Effect.async<{ result: autocannon.Result; exhausted: boolean }>((resume) => {
    let exhausted = false
    const instance = autocannon({
      url: service.base,
      connections,
      ...("amount" in size ? { amount: size.amount } : { duration: size.seconds }),
      timeout: 30,
      requests: [{
        setupRequest: (raw) => {
          const next = scenario.next()
          if (next === undefined && !exhausted) {
            exhausted = true
            setImmediate(() => instance.stop())
          }
          return { ...raw, ...(next ?? EXHAUSTED) }
        }
      }]
    })
    instance.then((result) => resume(Effect.succeed({ result, exhausted })), (e) => resume(Effect.die(e)))
  })

// ---- measurement -----------------------------------------------------------------------------------

interface Processes {
  readonly service: Child
  readonly bokun: Child
  readonly surfboard: Child
}

interface Timings {
  readonly service: ReturnType<typeof timingFile>
  readonly bokun: ReturnType<typeof timingFile>
  readonly surfboard: ReturnType<typeof timingFile>
}

interface SandboxWait {
  /** Calls the service made to the sandbox, per request. */
  readonly callsPerRequest: number
  /** Time the service waited for them (undici: queued → body received), ms per request. */
  readonly waitMsPerRequest: number
  /** Time the sandbox process took to answer them (its HTTP server: request → response sent), ms per request. */
  readonly sandboxMsPerRequest: number
  /** Share of the time inside the service spent waiting on this sandbox, percent. */
  readonly sharePercent: number
  /** The sandbox's own answering time as a share of the time inside the service, percent. */
  readonly sandboxSharePercent: number
  /** Per operation: calls per request and mean ms per call (service side). */
  readonly operations: Record<string, { readonly callsPerRequest: number; readonly meanMs: number }>
}

interface Measurement {
  readonly scenario: ScenarioName
  readonly connections: number
  readonly requestsPerSecond: number
  readonly latencyMs: {
    readonly p50: number
    readonly p90: number
    readonly p99: number
    readonly average: number
    readonly max: number
  }
  readonly requests: number
  readonly seconds: number
  readonly non2xx: number
  readonly errors: number
  readonly timeouts: number
  readonly ok: boolean
  /** Where the time of a request goes, from the timing records of the measured requests. */
  readonly time: {
    /** Requests the service answered in the measurement (its HTTP server). */
    readonly served: number
    /** Mean time inside the service per request (request received → response sent), ms. */
    readonly serviceMsPerRequest: number
    readonly bokun: SandboxWait
    readonly surfboard: SandboxWait
    /** Share of the time inside the service spent waiting on either sandbox, percent. */
    readonly sandboxesSharePercent: number
    /** The same with the sandboxes' own answering time (excludes the transport and the client side). */
    readonly sandboxesOwnSharePercent: number
    /** Calls to anything else than the two sandboxes (expected: none). */
    readonly otherCalls: number
  }
  /** CPU ms per request of each process and its PostgreSQL backends, and of autocannon (this process). */
  readonly cpuMsPerRequest: {
    readonly service: number | null
    readonly servicePostgres: number | null
    readonly bokun: number | null
    readonly bokunPostgres: number | null
    readonly surfboard: number | null
    readonly surfboardPostgres: number | null
    readonly loadGenerator: number | null
  }
  readonly machine: {
    readonly busyPercent: number
    readonly otherPercent: number
    readonly busiestOthers: ReadonlyArray<{ pid: number; name: string; percent: number }>
  } | null
}

const waitOn = (
  calls: ReadonlyArray<TimingRecord>,
  served: ReadonlyArray<TimingRecord>,
  requests: number,
  serviceMs: number
): SandboxWait => {
  const wait = calls.reduce((s, r) => s + r.d, 0)
  const own = served.reduce((s, r) => s + r.d, 0)
  const byOperation = new Map<string, { n: number; ms: number }>()
  for (const c of calls) {
    const op = operationOf(c.m, c.u)
    const entry = byOperation.get(op) ?? { n: 0, ms: 0 }
    entry.n++
    entry.ms += c.d
    byOperation.set(op, entry)
  }
  return {
    callsPerRequest: round(mean(calls.length, requests), 2),
    waitMsPerRequest: round(mean(wait, requests), 2),
    sandboxMsPerRequest: round(mean(own, requests), 2),
    sharePercent: round(mean(wait, serviceMs) * 100),
    sandboxSharePercent: round(mean(own, serviceMs) * 100),
    operations: Object.fromEntries(
      [...byOperation].sort((a, b) => b[1].ms - a[1].ms).map((
        [op, e]
      ) => [op, { callsPerRequest: round(e.n / requests, 2), meanMs: round(e.ms / e.n, 2) }])
    )
  }
}

const measure = (
  processes: Processes,
  timings: Timings,
  scenario: Scenario,
  connections: number,
  settings: Settings,
  admin: pg.Pool
) =>
  Effect.gen(function*() {
    const pids = [processes.service, processes.bokun, processes.surfboard].map((c) => c.child.pid!)
    const database = settings.changes.databaseName
    const backends = () =>
      Effect.all([
        backendPids(admin, database, SERVICE_APPLICATION_NAME),
        backendPids(admin, database, BOKUN_SANDBOX_APPLICATION_NAME),
        backendPids(admin, database, SURFBOARD_SANDBOX_APPLICATION_NAME)
      ]).pipe(Effect.map((lists) => lists.map(cpuByPid)))

    // Warmup (discarded), sized in time; its rate sizes the measurement.
    yield* scenario.prepare
    const warm = yield* load(processes.service, scenario, connections, { seconds: settings.warmup })
    if (warm.exhausted) {
      return yield* Effect.fail(
        new Error(`${scenario.name}: no booking left during the warmup; raise BENCH_CHANGES_CANCELS`)
      )
    }
    if (warm.result.non2xx > 0 || warm.result.errors > 0) {
      yield* step(
        `  warmup: ${warm.result.non2xx} non-2xx, ${warm.result.errors} errors (see ${
          path.relative(PROJECT_DIR, processes.service.logFile)
        })`
      )
    }
    const warmRate = warm.result["2xx"] / Math.max(warm.result.duration, 0.001)
    // Requests the warmup left in flight (autocannon closes its connections) finish on the server.
    yield* Effect.sleep("2 seconds")
    yield* scenario.prepare

    let amount = Math.max(connections * 5, Math.round(warmRate * settings.duration / connections) * connections)
    const left = scenario.remaining()
    if (left !== null && amount > left) {
      yield* step(`  only ${left} bookings left: measuring ${left} requests instead of ${amount}`)
      amount = left - (left % connections)
    }
    if (amount <= 0) {
      return yield* Effect.fail(new Error(`${scenario.name}: no booking left to measure; raise BENCH_CHANGES_CANCELS`))
    }

    const pg0 = yield* backends()
    const cpu0 = pids.map(cpuSeconds)
    const self0 = process.cpuUsage()
    const machine0 = machineCpu()
    const procs0 = allProcesses()
    const t0 = now()
    const { result, exhausted } = yield* load(processes.service, scenario, connections, { amount })
    const t1 = now()
    const self1 = process.cpuUsage(self0)
    const machine1 = machineCpu()
    const procs1 = allProcesses()
    const cpu1 = pids.map(cpuSeconds)
    const pg1 = yield* backends()
    // Let the preloads write their last records (every 100 ms).
    yield* Effect.sleep("500 millis")

    const within = (r: TimingRecord) => r.t >= t0 && r.t <= t1
    const servedAll = timings.service.read().filter((r) =>
      r.k === "server" && within(r) && r.u.startsWith("/api/v1/bookings/")
    )
    const calls = timings.service.read().filter((r) => r.k === "client" && within(r))
    const bokunCalls = calls.filter((r) => r.u.startsWith(processes.bokun.base))
    const surfboardCalls = calls.filter((r) => r.u.startsWith(processes.surfboard.base))
    const notAdmin = (r: TimingRecord) => r.k === "server" && within(r) && !r.u.startsWith("/sandbox")
    const bokunServed = timings.bokun.read().filter(notAdmin)
    const surfboardServed = timings.surfboard.read().filter(notAdmin)
    const served = servedAll.length
    const serviceMs = servedAll.reduce((s, r) => s + r.d, 0)
    const bokun = waitOn(bokunCalls, bokunServed, served, serviceMs)
    const surfboard = waitOn(surfboardCalls, surfboardServed, served, serviceMs)

    const requests = result["2xx"] + result.non2xx
    const perRequest = (seconds: number | null) =>
      seconds === null || requests === 0 ? null : round(seconds * 1000 / requests, 3)
    const delta = (i: number) => (cpu0[i] === null || cpu1[i] === null ? null : cpu1[i]! - cpu0[i]!)
    const busy = machine0 && machine1 ? machine1.busy - machine0.busy : null
    const wall = machine0 && machine1 ? machine1.total - machine0.total : null
    const ours = new Set([
      process.pid,
      ...pids,
      ...pg0.flatMap((m) => [...m.keys()]),
      ...pg1.flatMap((m) => [...m.keys()])
    ])
    const seconds = (t1 - t0) / 1000
    return {
      scenario: scenario.name,
      connections,
      requestsPerSecond: round(result["2xx"] / seconds),
      latencyMs: {
        p50: result.latency.p50,
        p90: result.latency.p90,
        p99: result.latency.p99,
        average: round(result.latency.average, 2),
        max: result.latency.max
      },
      requests,
      seconds: round(seconds, 2),
      non2xx: result.non2xx,
      errors: result.errors,
      timeouts: result.timeouts,
      ok: !exhausted && result.non2xx === 0 && result.errors === 0 && result.timeouts === 0 && result["2xx"] === amount,
      time: {
        served,
        serviceMsPerRequest: round(mean(serviceMs, served), 2),
        bokun,
        surfboard,
        sandboxesSharePercent: round(bokun.sharePercent + surfboard.sharePercent),
        sandboxesOwnSharePercent: round(bokun.sandboxSharePercent + surfboard.sandboxSharePercent),
        otherCalls: calls.length - bokunCalls.length - surfboardCalls.length
      },
      cpuMsPerRequest: {
        service: perRequest(delta(0)),
        servicePostgres: perRequest(cpuBetween(pg0[0]!, pg1[0]!)),
        bokun: perRequest(delta(1)),
        bokunPostgres: perRequest(cpuBetween(pg0[1]!, pg1[1]!)),
        surfboard: perRequest(delta(2)),
        surfboardPostgres: perRequest(cpuBetween(pg0[2]!, pg1[2]!)),
        loadGenerator: perRequest((self1.user + self1.system) / 1e6)
      },
      machine: busy === null || wall === null ? null : (() => {
        const other = otherLoad(procs0, procs1, ours, wall)
        return { busyPercent: round(busy / wall * 100), otherPercent: other.percent, busiestOthers: other.busiest }
      })()
    } satisfies Measurement
  })

// ---- the check before measuring --------------------------------------------------------------------

interface Expected {
  readonly label: string
  readonly bokunCalls: number
  /** The operations the service sends the Surfboard sandbox, in order. */
  readonly surfboardOperations: ReadonlyArray<string>
}

/** One request through the service: 200, the answer expected, and the calls expected at each sandbox. */
const check = (processes: Processes, timings: Timings, scenario: Scenario, expected: Expected) =>
  Effect.gen(function*() {
    yield* scenario.prepare
    const next = scenario.next()!
    const t0 = now()
    const response = yield* Effect.promise(() =>
      fetch(processes.service.base + next.path, { method: next.method, headers: next.headers, body: next.body }).then(
        async (r) => ({
          status: r.status,
          body: await r.text()
        })
      )
    )
    yield* Effect.sleep("300 millis")
    const t1 = now()
    const calls = timings.service.read().filter((r) => r.k === "client" && r.t >= t0 && r.t <= t1)
    const operations = calls.map((c) => operationOf(c.m, c.u))
    const bokun = calls.filter((c) => c.u.startsWith(processes.bokun.base)).length
    const surfboard = calls.filter((c) => c.u.startsWith(processes.surfboard.base)).map((c) => operationOf(c.m, c.u))
    const problems: Array<string> = []
    if (response.status !== 200) problems.push(`answered ${response.status}: ${response.body.slice(0, 500)}`)
    else {
      const body = JSON.parse(response.body) as Record<string, unknown>
      if (scenario.name === "cancel") {
        const refund = body.refund as { outcome?: string; amount_minor?: number } | undefined
        if (
          body.status !== "REFUNDED" || body.already_cancelled !== false || refund?.outcome !== "refunded" ||
          refund.amount_minor !== AMOUNT
        ) {
          problems.push(`unexpected answer: ${response.body}`)
        }
      } else if (body.already_on_date !== false || body.previous_start_time === body.start_time) {
        problems.push(`unexpected answer: ${response.body}`)
      }
    }
    if (bokun !== expected.bokunCalls) problems.push(`expected ${expected.bokunCalls} Bókun calls, saw ${bokun}`)
    if (surfboard.join(", ") !== expected.surfboardOperations.join(", ")) {
      problems.push(
        `expected the Surfboard calls [${expected.surfboardOperations.join(", ")}], saw [${surfboard.join(", ")}]`
      )
    }
    return {
      label: expected.label,
      ok: problems.length === 0,
      status: response.status,
      body: response.body,
      operations,
      problems
    }
  })

// ---- outcomes read back ------------------------------------------------------------------------------

const outcomes = (admin: pg.Pool, prepared: Prepared) =>
  Effect.promise(async () => {
    const q = async <R extends pg.QueryResultRow>(text: string, values: Array<unknown> = []) =>
      (await admin.query<R>(text, values)).rows
    const audit = await q<{ action: string; outcome: string; n: number }>(
      "SELECT action, outcome, count(*)::int AS n FROM write_audit WHERE key_id = $1 GROUP BY 1, 2 ORDER BY 1, 2",
      [prepared.keyId]
    )
    const changes = await q<{ kind: string; state: string; n: number }>(
      "SELECT kind, state, count(*)::int AS n FROM booking_changes GROUP BY 1, 2 ORDER BY 1, 2"
    )
    const refunds = await q<{ method: string; state: string; n: number }>(
      "SELECT method, state, count(*)::int AS n FROM booking_refunds GROUP BY 1, 2 ORDER BY 1, 2"
    )
    const bookings = await q<{ status: string; n: number }>(
      "SELECT status, count(*)::int AS n FROM bookings WHERE id = ANY($1::uuid[]) GROUP BY 1 ORDER BY 1",
      [prepared.cancels]
    )
    const bokun = await q<{ status: string; n: number }>(
      "SELECT status, count(*)::int AS n FROM bokun_sandbox.bookings WHERE vendor_id = $1 GROUP BY 1 ORDER BY 1",
      [prepared.vendor.id]
    )
    const surfboard = await q<{ what: string; n: number }>(
      `SELECT 'voided payments' AS what, count(*)::int AS n FROM surfboard_sandbox.payments WHERE void_status = 'VOIDED'
       UNION ALL
       SELECT 'refund orders', count(*)::int FROM surfboard_sandbox.orders WHERE type = 'return'`
    )
    const emails = await q<{ template: string; n: number }>(
      "SELECT template, count(*)::int AS n FROM email_outbox GROUP BY 1 ORDER BY 1"
    )
    const pairs = <R extends { n: number }>(rows: ReadonlyArray<R>, key: (r: R) => string) =>
      Object.fromEntries(rows.map((r) => [key(r), r.n]))
    return {
      audit: pairs(audit, (r) => `${r.action} ${r.outcome}`),
      changes: pairs(changes, (r) => `${r.kind} ${r.state}`),
      refunds: pairs(refunds, (r) => `${r.method} ${r.state}`),
      cancelBookings: pairs(bookings, (r) => r.status),
      bokunBookings: pairs(bokun, (r) => r.status),
      surfboard: pairs(surfboard, (r) => r.what),
      emails: pairs(emails, (r) => r.template)
    }
  })

// ---- report ----------------------------------------------------------------------------------------

const pad = (s: string, n: number) => (s.length >= n ? s : s + " ".repeat(n - s.length))
const lpad = (s: string, n: number) => (s.length >= n ? s : " ".repeat(n - s.length) + s)

const table = (rows: ReadonlyArray<Measurement>) => {
  const header = [
    pad("scenario", 11),
    lpad("conns", 5),
    lpad("req/s", 7),
    lpad("p50 ms", 7),
    lpad("p99 ms", 7),
    lpad("in service", 11),
    lpad("Bókun calls", 17),
    lpad("Surfboard calls", 17),
    lpad("rest", 9),
    lpad("sandboxes share", 16),
    lpad("own", 5)
  ].join(" ")
  const lines = [header, "-".repeat(header.length)]
  for (const r of rows) {
    const calls = (
      w: SandboxWait
    ) => (w.callsPerRequest === 0 ? "-" : `${w.callsPerRequest} = ${w.waitMsPerRequest.toFixed(1)} ms`)
    const rest = r.time.serviceMsPerRequest - r.time.bokun.waitMsPerRequest - r.time.surfboard.waitMsPerRequest
    lines.push(
      [
        pad(r.scenario, 11),
        lpad(String(r.connections), 5),
        lpad(r.requestsPerSecond.toFixed(1), 7),
        lpad(String(r.latencyMs.p50), 7),
        lpad(String(r.latencyMs.p99), 7),
        lpad(`${r.time.serviceMsPerRequest.toFixed(1)} ms`, 11),
        lpad(calls(r.time.bokun), 17),
        lpad(calls(r.time.surfboard), 17),
        lpad(`${rest.toFixed(1)} ms`, 9),
        lpad(`${r.time.sandboxesSharePercent.toFixed(0)}%`, 16),
        lpad(`${r.time.sandboxesOwnSharePercent.toFixed(0)}%`, 5)
      ].join(" ") + (r.ok ? "" : "  FAILED") +
        (r.machine && r.machine.otherPercent > NOISY_PERCENT
          ? `  [noisy: other processes used ${r.machine.otherPercent.toFixed(0)}%]`
          : "")
    )
  }
  return lines.join("\n")
}

/** Per measurement, each sandbox operation: calls per request x mean ms per call (as the service waited). */
const operationsTable = (rows: ReadonlyArray<Measurement>) =>
  rows.map((r) =>
    `${pad(`${r.scenario} x${r.connections}`, 16)} ` +
    [...Object.entries(r.time.bokun.operations), ...Object.entries(r.time.surfboard.operations)]
      .map(([op, o]) => `${op} ${o.callsPerRequest} x ${o.meanMs} ms`).join("; ")
  ).join("\n")

const cpuTable = (rows: ReadonlyArray<Measurement>) => {
  const f = (n: number | null) => (n === null ? "-" : n.toFixed(2))
  const header = [
    pad("CPU ms per request", 22),
    lpad("service", 8),
    lpad("pg", 6),
    lpad("Bókun", 7),
    lpad("pg", 6),
    lpad("Surfbd", 7),
    lpad("pg", 6),
    lpad("autocannon", 10),
    lpad("busy/other %", 13)
  ].join(" ")
  const lines = [header, "-".repeat(header.length)]
  for (const r of rows) {
    const c = r.cpuMsPerRequest
    lines.push([
      pad(`${r.scenario} x${r.connections}`, 22),
      lpad(f(c.service), 8),
      lpad(f(c.servicePostgres), 6),
      lpad(f(c.bokun), 7),
      lpad(f(c.bokunPostgres), 6),
      lpad(f(c.surfboard), 7),
      lpad(f(c.surfboardPostgres), 6),
      lpad(f(c.loadGenerator), 10),
      lpad(r.machine ? `${r.machine.busyPercent.toFixed(0)}/${r.machine.otherPercent.toFixed(0)}` : "-", 13)
    ].join(" "))
  }
  return lines.join("\n")
}

// ---- main ------------------------------------------------------------------------------------------

const main = Effect.gen(function*() {
  const settings = readSettings()
  const { databaseName, connections } = settings.changes
  const server = yield* benchServer(settings)
  yield* step(`database server: ${server.description}`)
  yield* step(`creating database ${databaseName} afresh`)
  const url = yield* createDatabase(server.adminUrl, databaseName)

  const admin = yield* Effect.acquireRelease(
    Effect.sync(() => {
      const pool = new pg.Pool({ connectionString: url, max: 1, application_name: "bench-runner" })
      // An idle connection that fails (say, PostgreSQL stopping first) must not crash the runner.
      pool.on("error", (e) => console.error(`[bench] runner's database connection: ${e.message}`))
      return pool
    }),
    (p) => Effect.promise(() => p.end())
  )
  const pgVersion = yield* Effect.promise(() =>
    admin.query<{ v: string }>("SELECT current_setting('server_version') AS v").then((r) => r.rows[0]!.v)
  )

  const timings: Timings = {
    service: timingFile("changes-service"),
    bokun: timingFile("changes-bokun"),
    surfboard: timingFile("changes-surfboard")
  }
  const sandbox = (kind: "bokun" | "surfboard", applicationName: string) =>
    startChild({
      name: `${kind}-sandbox`,
      args: ["bench/sandbox.ts", kind],
      env: {
        DATABASE_URL: url,
        BENCH_SANDBOX_APPLICATION_NAME: applicationName,
        BENCH_HTTP_TIMING: timings[kind].file
      },
      readyPath: "/sandbox/faults",
      preload: ["./bench/httpTiming.ts"]
    })
  const bokun = yield* sandbox("bokun", BOKUN_SANDBOX_APPLICATION_NAME)
  const surfboard = yield* sandbox("surfboard", SURFBOARD_SANDBOX_APPLICATION_NAME)

  // Migrations (the service would run them too), then the data.
  const prepared = yield* seed(settings, url, admin, bokun, surfboard)

  const service = yield* startChild({
    name: "service",
    args: [settings.serviceEntry, "serve"],
    env: {
      DATABASE_URL: url,
      DB_POOL_SIZE: String(settings.poolSize),
      RATE_LIMIT_PER_MINUTE: "1000000000",
      DEMO_DATA: "false",
      // No scheduled jobs (outbox, refund follow-up) in the measured process.
      JOBS: "false",
      LOG_LEVEL: "Warning",
      DATA_DIR: path.join(DATA_DIR, "service"),
      BENCH_HTTP_TIMING: timings.service.file
    },
    readyPath: "/healthz",
    preload: ["./bench/httpTiming.ts"]
  })
  const processes: Processes = { service, bokun, surfboard }
  const all = makeScenarios(prepared, admin)
  const scenarios = settings.only.length === 0 ? all : all.filter((s) => settings.only.some((o) => s.name.includes(o)))

  // The first cancel booking was paid yesterday (refund), the second today (void, until 23:00 UTC).
  const refundCalls = [
    "GET /orders/:id",
    "GET /orders/:id/status",
    "POST /orders",
    "GET /orders/:id",
    "GET /orders/:id/status"
  ]
  const expectations = ([
    [all[0]!, { label: "cancel, paid yesterday (refund)", bokunCalls: 1, surfboardOperations: refundCalls }],
    [all[0]!, {
      label: "cancel, paid today (void)",
      bokunCalls: 1,
      surfboardOperations: canVoid(new Date(), new Date()) ? ["PUT /payments/:id/void"] : refundCalls
    }],
    [all[1]!, { label: "reschedule", bokunCalls: 3, surfboardOperations: [] }]
  ] satisfies Array<[Scenario, Expected]>).filter(([scenario]) => scenarios.includes(scenario))
  yield* step("checking one request of each kind")
  const checks: Array<Effect.Effect.Success<ReturnType<typeof check>>> = []
  for (const [scenario, expected] of expectations) {
    const c = yield* check(processes, timings, scenario, expected)
    checks.push(c)
    yield* step(
      `  ${pad(c.label, 32)} ${c.ok ? "ok" : `FAILED: ${c.problems.join("; ")}`} (${c.operations.join(", ")})`
    )
  }
  if (checks.some((c) => !c.ok)) {
    return yield* Effect.fail(new Error(`the check failed; see ${path.relative(PROJECT_DIR, service.logFile)}`))
  }

  // One pass first, so the first measurement does not pay for JIT compilation the later ones do not.
  if (settings.warmup > 0) {
    const top = Math.max(...connections)
    yield* step(`warming up: each scenario for ${settings.warmup * 2} s at ${top} connections`)
    for (const scenario of scenarios) {
      yield* scenario.prepare
      const warm = yield* load(service, scenario, top, { seconds: settings.warmup * 2 })
      if (warm.exhausted) {
        return yield* Effect.fail(new Error("no booking left during the warmup; raise BENCH_CHANGES_CANCELS"))
      }
      yield* Effect.sleep("1 second")
    }
  }

  const rows: Array<Measurement> = []
  for (const c of connections) {
    for (const scenario of scenarios) {
      let best: Measurement | undefined
      for (let attempt = 0; attempt <= settings.noisyRetries; attempt++) {
        yield* waitForQuiet(settings.quietTimeout)
        yield* step(
          `${scenario.name} at ${c} connection${
            c === 1 ? "" : "s"
          } (${settings.warmup} s warmup + about ${settings.duration} s)`
        )
        const m = yield* measure(processes, timings, scenario, c, settings, admin)
        const others = m.machine?.busiestOthers.map((p) => `${p.name} ${p.percent}%`).join(", ")
        yield* step(
          `  ${m.requestsPerSecond} req/s, p50 ${m.latencyMs.p50} ms, p99 ${m.latencyMs.p99} ms, ${m.non2xx} non-2xx, ${m.errors} errors; ` +
            `in the service ${m.time.serviceMsPerRequest} ms/request, waiting on the sandboxes ${m.time.sandboxesSharePercent}% ` +
            `(Bókun ${m.time.bokun.sharePercent}%, Surfboard ${m.time.surfboard.sharePercent}%); machine ${
              m.machine?.busyPercent ?? "?"
            }% busy` +
            (others ? ` (others: ${others})` : "")
        )
        if (best === undefined || (m.machine?.otherPercent ?? 0) < (best.machine?.otherPercent ?? 0)) best = m
        if ((m.machine?.otherPercent ?? 0) <= NOISY_PERCENT || !m.ok) break
        const left = scenario.remaining()
        if (left !== null && left < m.requests * 1.5) break
        if (attempt < settings.noisyRetries) {
          yield* step(`  other processes used ${m.machine!.otherPercent.toFixed(0)}% of the CPUs: measuring again`)
        }
      }
      rows.push(best!)
      yield* Effect.sleep("1 second")
    }
  }

  // Everything answered: let the last requests' records settle, then read the outcomes back.
  yield* Effect.sleep("1 second")
  const found = yield* outcomes(admin, prepared)
  const cancelled = (found.cancelBookings.REFUNDED ?? 0) + (found.cancelBookings.CANCELLED ?? 0)
  const done = found.changes["cancel done"] ?? 0
  const consistent = [
    cancelled === done,
    (found.audit["cancels noop"] ?? 0) === 0,
    (found.audit["reschedules noop"] ?? 0) === 0,
    (found.changes["cancel releasing"] ?? 0) + (found.changes["cancel released"] ?? 0) === 0,
    (found.changes["reschedule moving"] ?? 0) + (found.changes["reschedule moved"] ?? 0) === 0,
    (found.refunds["void requested"] ?? 0) + (found.refunds["refund requested"] ?? 0) +
        (found.refunds["refund failed"] ?? 0) === 0
  ].every(Boolean)

  console.log(`\n${table(rows)}\n\n${operationsTable(rows)}\n\n${cpuTable(rows)}\n`)
  console.log(
    "in service: mean time per request inside the service (its HTTP server: request received -> response sent); " +
      "calls: per request = ms waited per request (undici in the service: queued -> answer received); rest: in service minus " +
      "those waits; sandboxes share: the waits / time in service; own: the sandboxes' own answering time (their HTTP servers) / " +
      "time in service\n"
  )
  console.log(`outcomes: ${JSON.stringify(found)}; ${consistent ? "consistent" : "NOT CONSISTENT"}\n`)

  const report = {
    finishedAt: new Date().toISOString(),
    command: "npm run bench:changes",
    machine: { ...machine(), postgres: pgVersion, database: server.description },
    settings: {
      connections,
      durationSeconds: settings.duration,
      warmupSeconds: settings.warmup,
      poolSize: settings.poolSize,
      cancelBookings: settings.changes.cancels,
      rescheduleBookings: settings.changes.reschedules,
      serviceEntry: settings.serviceEntry
    },
    seeding: { seconds: prepared.seedSeconds },
    method: {
      requestsPerSecond: "2xx answers / wall seconds of the measurement (autocannon with a fixed amount of requests)",
      latency: "autocannon's latency histogram",
      serviceMsPerRequest:
        "the service's HTTP server, request received -> response sent (bench/httpTiming.ts, diagnostics channel)",
      waitMsPerRequest:
        "the service's undici requests to the sandbox, created (queued) -> answer body received (bench/httpTiming.ts)",
      sandboxMsPerRequest: "the sandbox's HTTP server, request received -> response sent (bench/httpTiming.ts)",
      sharePercent:
        "sum of the waits / sum of the times in the service, over the requests started during the measurement"
    },
    checks,
    measurements: rows,
    outcomes: found,
    consistent
  }
  fs.writeFileSync(settings.changes.resultsFile, JSON.stringify(report, null, 2) + "\n")
  yield* step(`results written to ${path.relative(PROJECT_DIR, settings.changes.resultsFile)}`)
  if (rows.some((r) => !r.ok) || !consistent) process.exitCode = 1
})

// What the runner gives the service in `npm run bench`: warnings only, no span export.
process.env.LOG_LEVEL = "Warning"
delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT

NodeRuntime.runMain(Effect.scoped(main), { disableErrorReporting: false })
