/**
 * The other-channel sales ledger (src/sales/SalesLedger.ts) on a real PostgreSQL, reading the Bókun
 * sandbox over real HTTP through the real adapter (pages of 5), with SalesLedgerConfig from a
 * ConfigProvider: lines by the booking's creation day whatever the departure, the operator of each
 * line as the mirror resolves it, idempotent refreshes (`changed_at` kept), a cancellation moving
 * `changed_at`, the backfill walking back in saved steps and resuming after a failure, a failing
 * account recorded while the other one refreshes, and the coverage bookkeeping.
 *
 * Creation instants are put at least an hour inside their UTC day and tests read `today` when they
 * start, so a UTC midnight passing during a test changes nothing they assert.
 */
import { NodeHttpClient } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { bookingSystemLayer, type BookingSystemOptions } from "../../src/adapters/BookingSystemLive.js"
import { BookingSystemAccounts } from "../../src/operators/BookingSystemAccounts.js"
import { Operators } from "../../src/operators/Operators.js"
import { BookingSystem, BookingSystemUnavailable } from "../../src/ports/BookingSystem.js"
import { SalesLedger } from "../../src/sales/SalesLedger.js"
import { BokunSandbox, BokunSandboxLive, type BookingSpec } from "../../src/sandbox/bokun/index.js"
import { smallVendor } from "../sandbox/env.js"
import { linkSandboxVendor } from "../support/mirror.js"
import { testServer } from "../support/server.js"

const ADAPTER: BookingSystemOptions = { timeout: "2 seconds", retries: 1, retryBase: "10 millis", searchPageSize: 5 }

const CONFIG = {
  SALES_LEDGER_PAGE_PAUSE_MS: "1",
  SALES_LEDGER_RETRIES: "0",
  SALES_LEDGER_BACKFILL_DAYS: "40",
  SALES_LEDGER_BACKFILL_CHUNK_DAYS: "7",
  SALES_LEDGER_NIGHTLY_DAYS: "30",
  SALES_LEDGER_CONCURRENCY: "2"
}

/**
 * What the ledger asked the booking system (every page), and a switch that makes every creation
 * search reaching back before a day fail as a booking system that does not answer.
 */
const asked: Array<{ accountId: string; from: string; to: string; page: number }> = []
let failBefore: string | null = null

const recordingBookingSystem = Layer.effect(
  BookingSystem,
  Effect.map(BookingSystem, (bs) => ({
    ...bs,
    createdBookingLines: (account, query) =>
      Effect.suspend(() => {
        asked.push({ accountId: account.id, ...query })
        return failBefore !== null && query.from < failBefore
          ? Effect.fail(
            new BookingSystemUnavailable({
              accountId: account.id,
              operation: "bookingSearch",
              reason: "http_5xx",
              detail: "HTTP 503"
            })
          )
          : bs.createdBookingLines(account, query)
      })
  }))
)

const env = () =>
  SalesLedger.Default.pipe(
    Layer.provideMerge(BookingSystemAccounts.Default),
    Layer.provideMerge(
      Layer.mergeAll(BokunSandboxLive(), recordingBookingSystem.pipe(Layer.provide(bookingSystemLayer(ADAPTER))))
    ),
    Layer.provide(NodeHttpClient.layerUndici),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(CONFIG))))),
    Layer.provideMerge(testServer())
  )

const DAY = 86_400_000
const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10)
const addDays = (day: string, n: number) => utcDay(Date.parse(`${day}T00:00:00Z`) + n * DAY)
/** An instant on the UTC day `n` days from `today`, `hour` hours into it (1..22). */
const onDay = (today: string, n: number, hour = 12) =>
  new Date(Date.parse(`${addDays(today, n)}T00:00:00Z`) + hour * 3_600_000)

/** Operators (the first one primary by name), a sandbox vendor, an account linked to all of them. */
const setUp = (operatorNames: ReadonlyArray<string> = ["Alpha"]) =>
  Effect.gen(function*() {
    const sandbox = yield* BokunSandbox
    const admin = yield* Operators
    const tag = randomUUID().slice(0, 6)
    const operators: Array<string> = []
    for (const name of operatorNames) {
      operators.push(
        yield* admin.createOperator({ name: `${name} ${tag}`, timezone: "Europe/Oslo" }).pipe(Effect.orDie)
      )
    }
    const vendor = yield* sandbox.createVendor({
      ...smallVendor(`Ledger Vendor ${tag}`, { capacity: null }),
      products: [smallVendor("x", { capacity: null }).products[0]!, {
        title: "Whale Safari",
        startTimes: ["08:30"],
        capacity: null
      }]
    })
    const accountId = yield* linkSandboxVendor(sandbox.baseUrl, vendor, operators)
    const book = (createdAt: Date, spec: Partial<Omit<BookingSpec, "vendorId" | "createdAt">> = {}) =>
      sandbox.addBooking({
        vendorId: vendor.id,
        productId: vendor.products[0]!.id,
        date: addDays(utcDay(createdAt.getTime()), 60),
        createdAt,
        ...spec
      })
    return { sandbox, vendor, accountId, operators, book }
  })

interface LedgerRow {
  readonly line_id: string
  readonly booking_id: string
  readonly operator_id: string
  readonly tour_id: string | null
  readonly status: string
  readonly channel_class: string | null
  readonly channel_title: string | null
  readonly participants: number
  readonly total_minor: number
  readonly currency: string
  readonly created_at: Date
  readonly changed_at: Date
}

const linesOf = (accountId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<LedgerRow>`
      SELECT line_id, booking_id, operator_id, tour_id, status, channel_class, channel_title, participants,
        total_minor, currency::text AS currency, created_at, changed_at
      FROM sales_ledger_lines WHERE account_id = ${accountId} ORDER BY created_at, line_id`).pipe(Effect.orDie)

interface CoverageRow {
  readonly covered_from: string | null
  readonly covered_until: Date | null
  readonly last_outcome: string | null
  readonly last_error: string | null
  readonly last_attempt_at: Date | null
}

const coverageOf = (accountId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<CoverageRow>`
      SELECT covered_from, covered_until, last_outcome, last_error, last_attempt_at
      FROM sales_ledger_accounts WHERE account_id = ${accountId}`).pipe(
      Effect.orDie,
      Effect.map((rows) => rows[0])
    )

const recent = (accountId: string) =>
  Effect.flatMap(SalesLedger, (ledger) => ledger.refreshRecent({ accountId })).pipe(Effect.map((s) => s.results[0]!))

const backfill = (accountId: string) =>
  Effect.flatMap(SalesLedger, (ledger) => ledger.backfill({ accountId })).pipe(Effect.map((s) => s.results[0]))

layer(env(), { excludeTestServices: true, timeout: 120_000 })("sales ledger", (it) => {
  describe("refresh", () => {
    it.effect("stores the lines of bookings created yesterday and today, whatever their departure, with their operator", () =>
      Effect.gen(function*() {
        const { accountId, book, operators, vendor } = yield* setUp(["Alpha", "Beta"])
        const sql = yield* SqlClient.SqlClient
        // Beta's tour is the second product: its lines are Beta's; the first product is no one's tour (Alpha: primary).
        const [tour] = yield* sql<{ id: string }>`
          INSERT INTO tours (operator_id, title, status, timezone, currency)
          VALUES (${operators[1]!}, 'Whale Safari', 'published', 'Europe/Oslo', 'NOK') RETURNING id`
        yield* (yield* BookingSystemAccounts).mapTour(tour!.id, String(vendor.products[1]!.id)).pipe(Effect.orDie)
        const today = utcDay(Date.now())
        const viator = yield* book(onDay(today, -1, 2), { channel: "ota", participants: 3 })
        const direct = yield* book(onDay(today, 0, 0), { channel: "direct", date: addDays(today, 200) })
        const ours = yield* book(onDay(today, -1, 20), { channel: "service", externalReference: "T-OURS1" })
        const whale = yield* book(onDay(today, 0, 0), { productId: vendor.products[1]!.id, channel: "reseller" })
        yield* book(onDay(today, -2, 22)) // created before yesterday: not read by the recent refresh

        const before = Date.now()
        const result = yield* recent(accountId)
        expect(result).toMatchObject({ ok: true, inserted: 4, updated: 0, cancelled: 0, linesSeen: 4 })
        const rows = yield* linesOf(accountId)
        const byLine = new Map(rows.map((r) => [r.line_id, r]))
        expect(rows.length).toBe(4)
        const v = byLine.get(String(viator.lineIds[0]))!
        expect(v).toMatchObject({
          booking_id: String(viator.bookingId),
          operator_id: operators[0],
          tour_id: null,
          status: "CONFIRMED",
          channel_class: "ota",
          channel_title: "Viator",
          participants: 3,
          total_minor: 3 * 49900,
          currency: "NOK"
        })
        expect(v.created_at.toISOString()).toBe(onDay(today, -1, 2).toISOString())
        expect(byLine.get(String(direct.lineIds[0]))!.channel_class).toBe("direct")
        // The service's own sales stay in the ledger, marked as such (the rollup leaves them out).
        expect(byLine.get(String(ours.lineIds[0]))!.channel_class).toBe("service")
        expect(byLine.get(String(whale.lineIds[0]))).toMatchObject({ operator_id: operators[1], tour_id: tour!.id })

        const coverage = (yield* coverageOf(accountId))!
        expect(coverage).toMatchObject({ covered_from: addDays(today, -1), last_outcome: "ok", last_error: null })
        // covered_until is when the refresh started.
        expect(coverage.covered_until!.getTime()).toBeGreaterThanOrEqual(before - 1000)
        expect(coverage.covered_until!.getTime()).toBeLessThanOrEqual(Date.now())
      }))

    it.effect("a second refresh changes nothing (changed_at kept); a cancelled booking's line is updated and its changed_at moves", () =>
      Effect.gen(function*() {
        const { accountId, book, sandbox, vendor } = yield* setUp()
        const today = utcDay(Date.now())
        const made = []
        for (let i = 0; i < 7; i++) made.push(yield* book(onDay(today, -1, 1 + i)))
        expect((yield* recent(accountId)).inserted).toBe(7)
        const first = yield* linesOf(accountId)

        const again = yield* recent(accountId)
        expect(again).toMatchObject({ ok: true, linesSeen: 7, inserted: 0, updated: 0, cancelled: 0 })
        const second = yield* linesOf(accountId)
        expect(second.map((r) => r.changed_at.getTime())).toEqual(first.map((r) => r.changed_at.getTime()))

        yield* sandbox.cancelBooking(vendor.id, made[2]!.confirmationCode)
        // A deleted booking (or a hold that lapsed) is no longer listed: its line is cancelled too.
        yield* sandbox.deleteBooking(vendor.id, made[5]!.confirmationCode)
        const third = yield* recent(accountId)
        expect(third).toMatchObject({ ok: true, linesSeen: 6, inserted: 0, updated: 1, cancelled: 1 })
        const after = new Map((yield* linesOf(accountId)).map((r) => [r.line_id, r]))
        for (const [i, row] of first.entries()) {
          const now = after.get(row.line_id)!
          const touched = row.line_id === String(made[2]!.lineIds[0]) || row.line_id === String(made[5]!.lineIds[0])
          expect(now.status).toBe(touched ? "CANCELLED" : "CONFIRMED")
          if (touched) expect(now.changed_at.getTime()).toBeGreaterThan(row.changed_at.getTime())
          else expect(now.changed_at.getTime(), `line ${i}`).toBe(row.changed_at.getTime())
        }
      }))
  })

  describe("one account failing", () => {
    it.effect("is recorded as failed with its error, keeps its coverage, and the other account still refreshes", () =>
      Effect.gen(function*() {
        const failing = yield* setUp(["Failing"])
        const healthy = yield* setUp(["Healthy"])
        const today = utcDay(Date.now())
        yield* failing.book(onDay(today, 0, 0))
        yield* healthy.book(onDay(today, 0, 0))
        yield* healthy.book(onDay(today, -1, 5))
        const ledger = yield* SalesLedger
        // Both once, fine.
        yield* recent(failing.accountId)
        const covered = (yield* coverageOf(failing.accountId))!

        yield* failing.sandbox.faults.set({ failCreationSearch: true }, { vendorId: failing.vendor.id })
        const summary = yield* ledger.refreshRecent().pipe(Effect.ensuring(failing.sandbox.faults.reset))
        const byAccount = new Map(summary.results.map((r) => [r.accountId, r]))
        expect(byAccount.get(failing.accountId)).toMatchObject({ ok: false })
        expect(byAccount.get(failing.accountId)!.error).toContain("BookingSystemUnavailable")
        expect(byAccount.get(healthy.accountId)).toMatchObject({ ok: true, inserted: 2 })
        expect(summary.failed).toBeGreaterThanOrEqual(1)

        const failed = (yield* coverageOf(failing.accountId))!
        expect(failed.last_outcome).toBe("failed")
        expect(failed.last_error).toContain("http_5xx")
        expect(failed.covered_from).toBe(covered.covered_from)
        expect(failed.covered_until!.getTime()).toBe(covered.covered_until!.getTime())
        expect(failed.last_attempt_at!.getTime()).toBeGreaterThan(covered.last_attempt_at!.getTime())
        expect((yield* coverageOf(healthy.accountId))!.last_outcome).toBe("ok")
        expect((yield* linesOf(healthy.accountId)).length).toBe(2)

        // The next refresh that works clears it.
        expect((yield* recent(failing.accountId)).ok).toBe(true)
        expect(yield* coverageOf(failing.accountId)).toMatchObject({ last_outcome: "ok", last_error: null })
      }))

    it.effect("an account that never refreshed and fails has a failed row and no coverage", () =>
      Effect.gen(function*() {
        const { accountId, sandbox, vendor } = yield* setUp(["Never"])
        yield* sandbox.faults.set({ failCreationSearch: true }, { vendorId: vendor.id })
        const result = yield* backfill(accountId).pipe(Effect.ensuring(sandbox.faults.reset))
        expect(result).toMatchObject({ ok: false })
        expect(yield* coverageOf(accountId)).toMatchObject({
          covered_from: null,
          covered_until: null,
          last_outcome: "failed"
        })
      }))
  })

  describe("backfill", () => {
    it.effect("walks a new account back to the horizon in saved steps, and resumes from its saved progress after a failure", () =>
      Effect.gen(function*() {
        const { accountId, book } = yield* setUp(["Walker"])
        const today = utcDay(Date.now())
        const horizon = addDays(today, -40)
        const made = new Set<string>()
        // One booking every day from 45 days back (the 5 oldest are beyond the horizon).
        for (let n = -45; n <= 0; n++) {
          const b = yield* book(onDay(today, n, 1 + ((n + 45) % 20)))
          if (n >= -40) made.add(String(b.lineIds[0]))
        }
        const ofAccount = () => asked.filter((a) => a.accountId === accountId && a.page === 1)

        // The booking system stops answering for anything created before 20 days back.
        failBefore = addDays(today, -20)
        const broken = yield* backfill(accountId).pipe(Effect.ensuring(Effect.sync(() => (failBefore = null))))
        expect(broken).toMatchObject({ ok: false })
        const firstRanges = ofAccount().map((a) => `${a.from}..${a.to}`)
        // The recent refresh first (a new account), then steps of 7 days back from yesterday.
        expect(firstRanges).toEqual([
          `${addDays(today, -1)}..${today}`,
          `${addDays(today, -8)}..${addDays(today, -2)}`,
          `${addDays(today, -15)}..${addDays(today, -9)}`,
          `${addDays(today, -22)}..${addDays(today, -16)}`
        ])
        const stopped = (yield* coverageOf(accountId))!
        expect(stopped).toMatchObject({ covered_from: addDays(today, -15), last_outcome: "failed" })
        expect((yield* linesOf(accountId)).length).toBe(16) // created from 15 days back to today

        // Resumed: from where it stopped, never reading the steps already saved again.
        const resumed = yield* backfill(accountId)
        expect(resumed).toMatchObject({ ok: true })
        const secondRanges = ofAccount().slice(firstRanges.length).map((a) => `${a.from}..${a.to}`)
        expect(secondRanges).toEqual([
          `${addDays(today, -22)}..${addDays(today, -16)}`,
          `${addDays(today, -29)}..${addDays(today, -23)}`,
          `${addDays(today, -36)}..${addDays(today, -30)}`,
          `${horizon}..${addDays(today, -37)}`
        ])
        expect(yield* coverageOf(accountId)).toMatchObject({ covered_from: horizon, last_outcome: "ok" })
        const lines = yield* linesOf(accountId)
        expect(new Set(lines.map((l) => l.line_id))).toEqual(made)

        // Covered back to the horizon: the next backfill has nothing to do for it.
        const count = asked.length
        expect(yield* backfill(accountId)).toBeUndefined()
        expect(asked.length).toBe(count)
      }))
  })

  describe("coverage", () => {
    it.effect("a refresh after an outage reads from where the coverage ended; the nightly one re-reads 30 days", () =>
      Effect.gen(function*() {
        const { accountId, book } = yield* setUp(["Outage"])
        const sql = yield* SqlClient.SqlClient
        const today = utcDay(Date.now())
        yield* recent(accountId)
        yield* backfill(accountId)
        expect(yield* coverageOf(accountId)).toMatchObject({ covered_from: addDays(today, -40) })
        // Nothing was read for five days (every refresh failed): covered_until is five days old.
        yield* sql`
          UPDATE sales_ledger_accounts SET covered_until = ${onDay(today, -5, 6)}
          WHERE account_id = ${accountId}`
        const late = yield* book(onDay(today, -4))
        const seen = asked.length
        const result = yield* recent(accountId)
        expect(result).toMatchObject({ ok: true, inserted: 1 })
        expect(asked.slice(seen).filter((a) => a.page === 1).map((a) => a.from)).toEqual([addDays(today, -5)])
        expect((yield* linesOf(accountId)).map((l) => l.line_id)).toContain(String(late.lineIds[0]))
        const after = (yield* coverageOf(accountId))!
        expect(after.covered_from).toBe(addDays(today, -40))
        expect(after.covered_until!.getTime()).toBeGreaterThan(Date.now() - 60_000)

        // Sixty days without a refresh that worked: longer than the nightly's 30 days.
        yield* sql`
          UPDATE sales_ledger_accounts SET covered_until = ${onDay(today, -60, 6)}
          WHERE account_id = ${accountId}`
        const nightly = asked.length
        yield* Effect.flatMap(SalesLedger, (l) => l.refreshNightly({ accountId }))
        // The nightly refresh widens its 30 days back to where the coverage ended (60 days back).
        expect(asked.slice(nightly).filter((a) => a.page === 1).map((a) => a.from)).toEqual([addDays(today, -60)])
        expect(yield* coverageOf(accountId)).toMatchObject({ covered_from: addDays(today, -60), last_outcome: "ok" })
      }))
  })
})
