/**
 * The mirror refresh (src/mirror/Mirror.ts) on a real PostgreSQL, reading the Bókun sandbox over
 * real HTTP through the real adapter (short timeouts and backoff), with MirrorConfig from a
 * ConfigProvider: every sales channel and field, which operator a line belongs to, a shared account
 * read once, cancellations, deletions and moves, `synced_at` per account and local day, a failing
 * account isolated from the others, retries, check-ins left alone, and the manifest over HTTP.
 *
 * Days are computed here with the sandbox's own `localDay` (not the mirror's `mirrorWindow`). Lines
 * are put on days after today where the test allows it, so that a local midnight passing during a
 * test does not move them out of the window.
 */
import { NodeHttpClient } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { ConfigProvider, Effect, Fiber, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { bookingSystemLayer, type BookingSystemOptions } from "../../src/adapters/BookingSystemLive.js"
import { Mirror } from "../../src/mirror/Mirror.js"
import { BookingSystemAccounts } from "../../src/operators/BookingSystemAccounts.js"
import { Operators } from "../../src/operators/Operators.js"
import { BookingSystem } from "../../src/ports/BookingSystem.js"
import {
  addDays,
  BokunSandbox,
  BokunSandboxLive,
  type BookingSpec,
  localDay,
  type SandboxVendor,
  type SeededBooking,
  type VendorSpec
} from "../../src/sandbox/bokun/index.js"
import { createKey, insertBooking, makeWorld } from "../support/fixtures.js"
import { get } from "../support/http.js"
import { linkSandboxVendor, setCheckIn } from "../support/mirror.js"
import { testServer } from "../support/server.js"

const ADAPTER: BookingSystemOptions = { timeout: "500 millis", retries: 1, retryBase: "10 millis", searchPageSize: 5 }

/** One mirror retry, 300 ms apart: long enough for a test to end a transient fault in between. */
const MIRROR_CONFIG = { MIRROR_RETRY_BASE_MS: "300", MIRROR_RETRIES: "1", MIRROR_CONCURRENCY: "2" }

const SEARCH = "/booking.json/booking-search"

/** The HTTP server on a fresh database, the sandbox on the same database, the adapter and the mirror. */
const env = () =>
  Mirror.Default.pipe(
    Layer.provideMerge(BookingSystemAccounts.Default),
    Layer.provideMerge(Layer.mergeAll(BokunSandboxLive(), bookingSystemLayer(ADAPTER))),
    Layer.provide(NodeHttpClient.layerUndici),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(MIRROR_CONFIG))))),
    Layer.provideMerge(testServer())
  )

const today = (timeZone: string) => localDay(Date.now(), timeZone)

const vendorSpec = (title: string, timezone = "Europe/Oslo", extra: Partial<VendorSpec> = {}): VendorSpec => ({
  title: `${title} ${randomUUID().slice(0, 6)}`,
  timezone,
  currency: "NOK",
  products: [
    {
      title: "Harbour Cruise",
      startTimes: ["10:00", "14:30"],
      capacity: 40,
      pricingCategories: [{ title: "Adult", isDefault: true, minAge: 16 }, { title: "Child", minAge: 3, maxAge: 15 }],
      rates: [
        { title: "Standard", prices: { Adult: 49900, Child: 24950 } },
        { title: "With lunch", prices: { Adult: 64900, Child: 32450 } }
      ],
      pickupPlaces: [{ title: "Grand Hotel", minutesBefore: 20 }]
    },
    { title: "Whale Safari", startTimes: ["08:30"], capacity: 40 }
  ],
  ...extra
})

/**
 * Operators (created in this order, each in its zone), a sandbox vendor and an account for it in
 * the service, linked to all of them.
 */
const setUp = (options: {
  operators: ReadonlyArray<{ name: string; timezone?: string }>
  vendor?: VendorSpec
  serviceChannel?: boolean
  secretKey?: string
}) =>
  Effect.gen(function*() {
    const sandbox = yield* BokunSandbox
    const admin = yield* Operators
    const accounts = yield* BookingSystemAccounts
    const tag = randomUUID().slice(0, 6)
    const operators: Array<{ id: string; name: string; timezone: string }> = []
    for (const o of options.operators) {
      const name = `${o.name} ${tag}`
      const timezone = o.timezone ?? "Europe/Oslo"
      operators.push({ id: yield* admin.createOperator({ name, timezone }).pipe(Effect.orDie), name, timezone })
    }
    const vendor = yield* sandbox.createVendor(options.vendor ?? vendorSpec("Vendor", operators[0]!.timezone))
    const accountId = yield* accounts.create({
      kind: "bokun",
      name: vendor.title,
      baseUrl: sandbox.baseUrl,
      accessKey: vendor.accessKey,
      secretKey: options.secretKey ?? vendor.secretKey,
      serviceChannelId: options.serviceChannel === false ? null : String(vendor.serviceChannelId)
    }).pipe(Effect.orDie)
    for (const o of operators) yield* accounts.link(o.id, accountId).pipe(Effect.orDie)
    const book = (date: string, spec: Partial<Omit<BookingSpec, "vendorId" | "date">> = {}) =>
      sandbox.addBooking({ vendorId: vendor.id, productId: vendor.products[0]!.id, date, ...spec })
    return { sandbox, vendor, accountId, operators, book }
  })

const refreshOne = (accountId: string, daysAhead: number) =>
  Effect.flatMap(Mirror, (mirror) => mirror.refresh({ kind: "manual", daysAhead, accountId })).pipe(
    Effect.map((summary) => {
      expect(summary.accounts).toBe(1)
      return summary.results[0]!
    })
  )

interface MirrorRow {
  readonly id: string
  readonly line_id: string
  readonly booking_id: string
  readonly reference: string | null
  readonly external_reference: string | null
  readonly operator_id: string
  readonly tour_id: string | null
  readonly service_booking_id: string | null
  readonly status: string
  readonly product_id: string
  readonly product_title: string | null
  readonly rate_title: string | null
  readonly departure_date: string
  readonly start_time: string | null
  readonly timezone: string
  readonly participants: number
  readonly pax_breakdown: unknown
  readonly channel_class: string | null
  readonly channel_source: string | null
  readonly channel_title: string | null
  readonly guest_name: string | null
  readonly guest_email: string | null
  readonly guest_phone: string | null
  readonly pickup_place: string | null
  readonly pickup_time: string | null
  readonly payment_status: string | null
  readonly total_minor: number | null
  readonly currency: string | null
  readonly synced_at: Date
  readonly cancelled_at: Date | null
}

const rowsOf = (accountId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<MirrorRow>`SELECT * FROM manifest_rows WHERE account_id = ${accountId} ORDER BY reference, line_id`.pipe(
        Effect.orDie
      )
  )

/** The account's rows by the booking system's reference (one line per booking in these tests). */
const rowsByReference = (accountId: string) =>
  Effect.map(rowsOf(accountId), (rows) => {
    const byRef = new Map<string, MirrorRow>()
    for (const r of rows) {
      expect(byRef.has(r.reference!), `one row per booking: ${r.reference}`).toBe(false)
      byRef.set(r.reference!, r)
    }
    return byRef
  })

const daysOf = (accountId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ departure_date: string; synced_at: Date }>`
      SELECT departure_date, synced_at FROM mirror_days WHERE account_id = ${accountId} ORDER BY departure_date`.pipe(
      Effect.orDie
    ))

const runsOf = (accountId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{
      kind: string
      date_from: string
      date_to: string
      outcome: string
      lines_seen: number
      inserted: number
      updated: number
      cancelled: number
      error: string | null
      finished_at: Date | null
    }>`
      SELECT kind, date_from, date_to, outcome, lines_seen, inserted, updated, cancelled, error, finished_at
      FROM mirror_runs WHERE account_id = ${accountId} ORDER BY started_at, id`.pipe(Effect.orDie))

const accountOf = (accountId: string) =>
  Effect.flatMap(BookingSystemAccounts, (accounts) => accounts.byId(accountId)).pipe(
    Effect.orDie,
    Effect.map((m) => m.account)
  )

/** Moves a booking's line in the booking system, through the adapter (as the service would). */
const moveLine = (accountId: string, booking: SeededBooking, date: string, startTimeId: number | null = null) =>
  Effect.gen(function*() {
    const bs = yield* BookingSystem
    yield* bs.move(yield* accountOf(accountId), {
      bookingReference: booking.confirmationCode,
      lineId: String(booking.lineIds[0]),
      date,
      startTimeId: startTimeId === null ? null : String(startTimeId),
      rateId: null
    })
  }).pipe(Effect.orDie)

const insertTour = (operatorId: string, title: string, productId: number | null) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [tour] = yield* sql<{ id: string }>`
      INSERT INTO tours (operator_id, title, status, timezone, currency)
      VALUES (${operatorId}, ${title}, 'published', 'Europe/Oslo', 'NOK') RETURNING id`
    if (productId !== null) yield* (yield* BookingSystemAccounts).mapTour(tour!.id, String(productId))
    return tour!.id
  }).pipe(Effect.orDie)

const searchCalls = (vendor: SandboxVendor) =>
  Effect.flatMap(BokunSandbox, (sandbox) => sandbox.requests.count({ path: SEARCH, accessKey: vendor.accessKey }))

layer(env(), { excludeTestServices: true, timeout: 120_000 })("Mirror.refresh of one account", (it) => {
  it.effect("mirrors every sales channel with its class, source and title, passengers by category, pickup, guest and payment", () =>
    Effect.gen(function*() {
      const { accountId, operators, vendor, book } = yield* setUp({ operators: [{ name: "Fjord Line" }] })
      const [alpha] = operators
      const day1 = addDays(today("Europe/Oslo"), 1)
      const day2 = addDays(today("Europe/Oslo"), 2)
      const [adult, child] = vendor.products[0]!.pricingCategories
      const lunch = vendor.products[0]!.rates[1]!
      const ours = yield* insertBooking({ operatorId: alpha!.id, experienceDate: day1 })
      const sql = yield* SqlClient.SqlClient
      const [{ code }] = yield* sql<{ code: string }>`SELECT confirmation_code AS code FROM bookings WHERE id = ${ours}`
        .pipe(Effect.orDie)

      const service = yield* book(day1, {
        channel: "service",
        externalReference: code,
        pax: [{ pricingCategoryId: adult!.id, quantity: 2 }, { pricingCategoryId: child!.id, quantity: 1 }],
        guest: { firstName: "Nora", lastName: "Lie", email: "nora@example.com", phone: "+4791234567" },
        pickupPlaceId: vendor.products[0]!.pickupPlaces[0]!.id,
        paymentStatus: "PAID"
      })
      const viator = yield* book(day1, {
        channel: vendor.channels.find((c) => c.title === "Viator")!.id,
        externalReference: "VIA-12345",
        startTime: "14:30",
        rateId: lunch.id,
        participants: 4,
        guest: { firstName: "Ola", lastName: "Nordmann" },
        paidMinor: 0
      })
      const direct = yield* book(day2, {
        channel: "direct",
        participants: 1,
        status: "RESERVED",
        guest: { firstName: "Kari", lastName: "Nilsen", phone: "+4740000000" },
        paymentStatus: "INVOICED"
      })
      const reseller = yield* book(day2, { channel: "reseller", productId: vendor.products[1]!.id, participants: 2 })
      // Outside the window (today and the next 2 days): not read.
      yield* book(addDays(day2, 1), { channel: "direct" })

      const result = yield* refreshOne(accountId, 2)
      expect(result).toMatchObject({ ok: true, linesSeen: 4, inserted: 4, updated: 0, cancelled: 0 })

      const rows = yield* rowsByReference(accountId)
      expect([...rows.keys()].sort()).toEqual(
        [service.confirmationCode, viator.confirmationCode, direct.confirmationCode, reseller.confirmationCode].sort()
      )
      for (const row of rows.values()) {
        expect(row.operator_id).toBe(alpha!.id)
        expect(row.timezone).toBe("Europe/Oslo")
        expect(row.currency).toBe("NOK")
        expect(row.cancelled_at).toBeNull()
      }
      expect(rows.get(service.confirmationCode)).toMatchObject({
        line_id: String(service.lineIds[0]),
        booking_id: String(service.bookingId),
        external_reference: code,
        service_booking_id: ours,
        status: "CONFIRMED",
        product_id: String(vendor.products[0]!.id),
        product_title: "Harbour Cruise",
        rate_title: "Standard",
        departure_date: day1,
        start_time: "10:00",
        participants: 3,
        pax_breakdown: [{ title: "Adult", quantity: 2 }, { title: "Child", quantity: 1 }],
        channel_class: "service",
        channel_source: "checkout",
        channel_title: "Partner checkout (API)",
        guest_name: "Nora Lie",
        guest_email: "nora@example.com",
        guest_phone: "+4791234567",
        pickup_place: "Grand Hotel",
        pickup_time: "09:40",
        payment_status: "PAID",
        total_minor: 2 * 49900 + 24950
      })
      expect(rows.get(viator.confirmationCode)).toMatchObject({
        external_reference: "VIA-12345",
        service_booking_id: null,
        status: "CONFIRMED",
        rate_title: "With lunch",
        departure_date: day1,
        start_time: "14:30",
        participants: 4,
        pax_breakdown: [{ title: "Adult", quantity: 4 }],
        channel_class: "ota",
        channel_source: "viator",
        channel_title: "Viator",
        guest_name: "Ola Nordmann",
        guest_email: null,
        guest_phone: null,
        pickup_place: null,
        pickup_time: null,
        payment_status: "NOT_PAID"
      })
      expect(rows.get(direct.confirmationCode)).toMatchObject({
        status: "RESERVED",
        departure_date: day2,
        participants: 1,
        channel_class: "direct",
        channel_source: "direct-booking",
        channel_title: "Direct booking",
        guest_name: "Kari Nilsen",
        guest_phone: "+4740000000",
        payment_status: "INVOICED"
      })
      expect(rows.get(reseller.confirmationCode)).toMatchObject({
        product_title: "Whale Safari",
        start_time: "08:30",
        channel_class: "reseller",
        channel_source: "hotel-concierge-desk",
        channel_title: "Hotel Concierge Desk"
      })
    }))

  it.effect("without the account's service channel, the service's own sales are just another reseller", () =>
    Effect.gen(function*() {
      const { accountId, book } = yield* setUp({ operators: [{ name: "No Channel" }], serviceChannel: false })
      const sale = yield* book(addDays(today("Europe/Oslo"), 1), {
        channel: "service",
        externalReference: "T-not-ours"
      })
      yield* refreshOne(accountId, 2)
      const rows = yield* rowsByReference(accountId)
      expect(rows.get(sale.confirmationCode)).toMatchObject({
        channel_class: "reseller",
        channel_title: "Partner checkout (API)",
        external_reference: "T-not-ours",
        service_booking_id: null
      })
    }))

  it.effect("a line belongs to the operator whose tour is its product, else to the account's first operator by name", () =>
    Effect.gen(function*() {
      // Created Zeta first: the first operator by name (Alpha) is not the first created.
      const { accountId, operators, vendor, book } = yield* setUp({
        operators: [{ name: "Zeta Boats" }, { name: "Alpha Tours" }]
      })
      const [zeta, alpha] = operators
      const [cruise, safari] = vendor.products
      const zetaTour = yield* insertTour(zeta!.id, "Harbour Cruise", cruise!.id)
      // A tour of an operator not linked to the account never claims the account's lines.
      const stranger = yield* Effect.flatMap(
        Operators,
        (a) => a.createOperator({ name: `Stranger ${randomUUID().slice(0, 6)}` })
      ).pipe(Effect.orDie)
      yield* insertTour(stranger, "Someone else's safari", safari!.id)
      const day = addDays(today("Europe/Oslo"), 1)
      const onCruise = yield* book(day, { productId: cruise!.id })
      const onSafari = yield* book(day, { productId: safari!.id })

      yield* refreshOne(accountId, 2)
      let rows = yield* rowsByReference(accountId)
      expect(rows.get(onCruise.confirmationCode)).toMatchObject({ operator_id: zeta!.id, tour_id: zetaTour })
      expect(rows.get(onSafari.confirmationCode)).toMatchObject({ operator_id: alpha!.id, tour_id: null })

      // The tour no longer is that product: the line moves to the first operator on the next refresh.
      yield* Effect.flatMap(BookingSystemAccounts, (a) => a.mapTour(zetaTour, null)).pipe(Effect.orDie)
      const again = yield* refreshOne(accountId, 2)
      expect(again).toMatchObject({ ok: true, inserted: 0, updated: 1, cancelled: 0 })
      rows = yield* rowsByReference(accountId)
      expect(rows.get(onCruise.confirmationCode)).toMatchObject({ operator_id: alpha!.id, tour_id: null })
    }))

  it.effect("cancelled and deleted bookings become CANCELLED; a line moved out of the window is updated, not cancelled; nothing changed, nothing written", () =>
    Effect.gen(function*() {
      const { accountId, sandbox, vendor, book } = yield* setUp({ operators: [{ name: "Cancel Cruises" }] })
      const day1 = addDays(today("Europe/Oslo"), 1)
      const day2 = addDays(today("Europe/Oslo"), 2)
      const kept = yield* book(day1)
      const toCancel = yield* book(day1, { participants: 3 })
      const toDelete = yield* book(day2)
      const toMove = yield* book(day2, { participants: 5 })
      expect(yield* refreshOne(accountId, 2)).toMatchObject({
        ok: true,
        linesSeen: 4,
        inserted: 4,
        updated: 0,
        cancelled: 0
      })
      const before = yield* rowsByReference(accountId)

      yield* sandbox.cancelBooking(vendor.id, toCancel.confirmationCode)
      yield* sandbox.deleteBooking(vendor.id, toDelete.confirmationCode)
      const farDay = addDays(day2, 10)
      yield* moveLine(accountId, toMove, farDay)
      yield* sandbox.requests.clear

      // The cancelled booking is still listed (CANCELLED); the deleted one and the moved line are
      // missing from the window: each booking is read once to tell which is which. Both cancellations
      // count as cancelled, the move as an update.
      expect(yield* refreshOne(accountId, 2)).toMatchObject({
        ok: true,
        linesSeen: 2,
        inserted: 0,
        updated: 1,
        cancelled: 2
      })
      expect(yield* sandbox.requests.count({ path: `/booking.json/booking/${toDelete.confirmationCode}` })).toBe(1)
      expect(yield* sandbox.requests.count({ path: `/booking.json/booking/${toMove.confirmationCode}` })).toBe(1)
      expect(yield* sandbox.requests.count({ path: `/booking.json/booking/${kept.confirmationCode}` })).toBe(0)

      const after = yield* rowsByReference(accountId)
      expect(after.get(kept.confirmationCode)).toEqual(before.get(kept.confirmationCode))
      const cancelled = after.get(toCancel.confirmationCode)!
      expect(cancelled).toMatchObject({
        id: before.get(toCancel.confirmationCode)!.id,
        status: "CANCELLED",
        participants: 3
      })
      expect(cancelled.cancelled_at).toBeInstanceOf(Date)
      const deleted = after.get(toDelete.confirmationCode)!
      expect(deleted).toMatchObject({
        id: before.get(toDelete.confirmationCode)!.id,
        status: "CANCELLED",
        departure_date: day2
      })
      expect(deleted.cancelled_at).toBeInstanceOf(Date)
      expect(after.get(toMove.confirmationCode)).toMatchObject({
        id: before.get(toMove.confirmationCode)!.id,
        status: "CONFIRMED",
        departure_date: farDay,
        participants: 5,
        cancelled_at: null
      })

      // Nothing changed since: nothing is written, and nothing needs a booking read.
      yield* sandbox.requests.clear
      expect(yield* refreshOne(accountId, 2)).toMatchObject({
        ok: true,
        linesSeen: 2,
        inserted: 0,
        updated: 0,
        cancelled: 0
      })
      expect(yield* sandbox.requests.count({ path: /^\/booking\.json\/booking\// })).toBe(0)
      const unchanged = yield* rowsByReference(accountId)
      expect([...unchanged.values()]).toEqual([...after.values()])

      const runs = yield* runsOf(accountId)
      expect(runs.map((r) => [r.kind, r.outcome, r.lines_seen, r.inserted, r.updated, r.cancelled, r.error])).toEqual([
        ["manual", "ok", 4, 4, 0, 0, null],
        ["manual", "ok", 2, 0, 1, 2, null],
        ["manual", "ok", 2, 0, 0, 0, null]
      ])
      expect(runs.every((r) => r.finished_at !== null)).toBe(true)
    }))

  it.effect("check-ins survive refreshes that change, move and cancel their rows", () =>
    Effect.gen(function*() {
      const { accountId, sandbox, vendor, book } = yield* setUp({ operators: [{ name: "Checkin Ferries" }] })
      const day = addDays(today("Europe/Oslo"), 1)
      const moved = yield* book(day, { participants: 4 })
      const cancelled = yield* book(day, { participants: 2 })
      yield* refreshOne(accountId, 2)
      const rows = yield* rowsByReference(accountId)
      const movedRow = rows.get(moved.confirmationCode)!.id
      const cancelledRow = rows.get(cancelled.confirmationCode)!.id
      yield* setCheckIn(movedRow, "checked_in", 3)
      yield* setCheckIn(cancelledRow, "no_show")
      const sql = yield* SqlClient.SqlClient
      const checkins =
        sql`SELECT * FROM manifest_checkins WHERE row_id IN (${movedRow}, ${cancelledRow}) ORDER BY row_id`.pipe(
          Effect.orDie
        )
      const before = yield* checkins

      const afternoon = vendor.products[0]!.startTimes.find((s) => s.time === "14:30")!
      yield* moveLine(accountId, moved, day, afternoon.id)
      yield* sandbox.cancelBooking(vendor.id, cancelled.confirmationCode)
      expect(yield* refreshOne(accountId, 2)).toMatchObject({ ok: true, updated: 1, cancelled: 1 })

      const after = yield* rowsByReference(accountId)
      expect(after.get(moved.confirmationCode)).toMatchObject({ id: movedRow, start_time: "14:30" })
      expect(after.get(cancelled.confirmationCode)).toMatchObject({ id: cancelledRow, status: "CANCELLED" })
      expect(before).toHaveLength(2)
      expect(yield* checkins).toEqual(before)
    }))

  it.effect("a transient error is retried and the refresh succeeds", () =>
    Effect.gen(function*() {
      const { accountId, sandbox, vendor, book } = yield* setUp({ operators: [{ name: "Flaky Fjords" }] })
      const line = yield* book(addDays(today("Europe/Oslo"), 1))
      yield* sandbox.faults.set({ errorRate: 1, errorStatus: 503 }, { vendorId: vendor.id })
      const refresh = yield* Effect.fork(refreshOne(accountId, 2))
      // The adapter's own attempts (1 + 1 retry) fail; the fault ends before the mirror tries again.
      while ((yield* searchCalls(vendor)) < 2) yield* Effect.sleep("5 millis")
      yield* sandbox.faults.set({ errorRate: 0 }, { vendorId: vendor.id })
      const result = yield* Fiber.join(refresh)
      expect(result).toMatchObject({ ok: true, inserted: 1 })
      expect(yield* searchCalls(vendor)).toBe(3)
      expect((yield* rowsByReference(accountId)).has(line.confirmationCode)).toBe(true)
      expect((yield* runsOf(accountId)).map((r) => r.outcome)).toEqual(["ok"])
    }).pipe(Effect.ensuring(Effect.flatMap(BokunSandbox, (s) => s.faults.reset))))

  it.effect("a definite refusal (wrong secret: unauthorized) is not retried and records a failed run", () =>
    Effect.gen(function*() {
      const { accountId, vendor, book } = yield* setUp({
        operators: [{ name: "Wrong Key" }],
        secretKey: "not-the-secret"
      })
      yield* book(addDays(today("Europe/Oslo"), 1))
      const result = yield* refreshOne(accountId, 2)
      expect(result.ok).toBe(false)
      expect(result.error).toContain("BookingSystemRejected (unauthorized)")
      expect(yield* searchCalls(vendor)).toBe(1)
      expect(yield* rowsOf(accountId)).toEqual([])
      expect(yield* daysOf(accountId)).toEqual([])
      const [run] = yield* runsOf(accountId)
      expect(run).toMatchObject({ outcome: "failed", lines_seen: 0, inserted: 0 })
      expect(run!.error).toContain("unauthorized")
      expect(run!.error).not.toContain(vendor.secretKey)
      expect(run!.finished_at).toBeInstanceOf(Date)
    }))

  it.effect("end to end: after a refresh GET /api/v1/manifest shows today's passengers from the booking system, with synced_at", () =>
    Effect.gen(function*() {
      const w = yield* makeWorld
      const sandbox = yield* BokunSandbox
      const vendor = yield* sandbox.createVendor(vendorSpec("Manifest Vendor"))
      const accountId = yield* linkSandboxVendor(sandbox.baseUrl, vendor, [w.alpha])
      const key = yield* createKey({
        by: w.alice,
        operators: [w.alpha],
        scopes: ["manifest:read", "guests.contact:read"]
      })
      const day = today("Europe/Oslo")
      const product = vendor.products[0]!
      const [adult, child] = product.pricingCategories
      const book = (spec: Partial<BookingSpec>) =>
        sandbox.addBooking({ vendorId: vendor.id, productId: product.id, date: day, ...spec })
      const family = yield* book({
        pax: [{ pricingCategoryId: adult!.id, quantity: 2 }, { pricingCategoryId: child!.id, quantity: 2 }],
        guest: { firstName: "Ingrid", lastName: "Berg", email: "ingrid@example.com" },
        channel: "ota",
        pickupPlaceId: product.pickupPlaces[0]!.id,
        paymentStatus: "PAID"
      })
      yield* book({
        participants: 3,
        guest: { firstName: "Per", lastName: "Hansen" },
        channel: "direct",
        startTime: "14:30"
      })
      yield* book({ participants: 6, guest: { firstName: "Gone", lastName: "Away" }, status: "CANCELLED" })

      const manifest = Effect.map(get(`/api/v1/manifest?date=${day}`, key.token), (res) => {
        expect(res.status, res.text).toBe(200)
        return res.body
      })
      const empty = yield* manifest
      expect(empty.synced_at).toBeNull()
      expect(empty.departures).toEqual([])

      const started = Date.now()
      expect(yield* refreshOne(accountId, 0)).toMatchObject({ ok: true, inserted: 3 })
      const body = yield* manifest
      expect(body.date).toBe(day)
      expect(Date.parse(body.synced_at)).toBeGreaterThanOrEqual(started - 1000)
      expect(Date.parse(body.synced_at)).toBeLessThanOrEqual(Date.now() + 1000)
      expect(body.totals).toEqual({ departures: 2, bookings: 2, passengers: 7, checked_in: 0, no_show: 0 })
      expect(
        body.departures.map((d: any) => [
          d.start_time,
          d.product_title,
          d.passengers,
          d.bookings.map((b: any) => b.guest.name)
        ])
      )
        .toEqual([["10:00", "Harbour Cruise", 4, ["Ingrid Berg"]], ["14:30", "Harbour Cruise", 3, ["Per Hansen"]]])
      expect(body.departures[0].bookings[0]).toMatchObject({
        reference: family.confirmationCode,
        status: "CONFIRMED",
        partner: { id: w.alpha },
        channel: { class: "ota", source: "viator", title: "Viator" },
        participants: 4,
        pax_breakdown: [{ title: "Adult", quantity: 2 }, { title: "Child", quantity: 2 }],
        guest: { name: "Ingrid Berg", email: "ingrid@example.com", phone: null },
        pickup: { place: "Grand Hotel", time: "09:40" },
        payment_status: "PAID",
        check_in: { status: null, present: null }
      })
      expect(body.cancelled.map((r: any) => r.guest.name)).toEqual(["Gone Away"])
    }))
})

layer(env(), { excludeTestServices: true, timeout: 120_000 })("Mirror.refresh of every account", (it) => {
  it.effect("a shared account is read once and stored once; each account over its own window of local days, synced_at for each", () =>
    Effect.gen(function*() {
      // UTC-10 and UTC+14, neither with daylight saving: Kiritimati's day is always Honolulu's day + 1,
      // and at any instant at least one of them is not the UTC day.
      const kiritimatiVendor = vendorSpec("Pacific Vendor", "Pacific/Honolulu", {
        products: [
          { title: "Diamond Head Hike", startTimes: ["07:00"], timezone: "Pacific/Honolulu" },
          { title: "Lagoon Kayak", startTimes: ["09:00"], timezone: "Pacific/Kiritimati" }
        ]
      })
      const pacific = yield* setUp({
        operators: [{ name: "Kiribati Lagoon", timezone: "Pacific/Kiritimati" }, {
          name: "Aloha Hikes",
          timezone: "Pacific/Honolulu"
        }],
        vendor: kiritimatiVendor
      })
      const [kiribati, aloha] = pacific.operators
      const [hike, kayak] = pacific.vendor.products
      yield* insertTour(kiribati!.id, "Lagoon Kayak", kayak!.id)
      const oslo = yield* setUp({ operators: [{ name: "Oslo Boats" }] })

      const honolulu = today("Pacific/Honolulu")
      const kiritimati = today("Pacific/Kiritimati")
      expect(kiritimati).toBe(addDays(honolulu, 1))
      const osloToday = today("Europe/Oslo")
      const hikeToday = yield* pacific.book(honolulu, { productId: hike!.id })
      yield* pacific.book(addDays(honolulu, -1), { productId: hike!.id })
      const kayakLast = yield* pacific.book(addDays(kiritimati, 1), { productId: kayak!.id })
      yield* pacific.book(addDays(kiritimati, 2), { productId: kayak!.id })
      const unmapped = yield* pacific.book(kiritimati, { productId: hike!.id, participants: 7 })
      const osloLine = yield* oslo.book(addDays(osloToday, 1))

      const sandbox = yield* BokunSandbox
      yield* sandbox.requests.clear
      const started = new Date()
      const summary = yield* Effect.flatMap(Mirror, (m) => m.refresh({ kind: "near_term", daysAhead: 1 }))
      expect(summary).toMatchObject({ kind: "near_term", accounts: 2, ok: 2, failed: 0, inserted: 4 })

      // Read once: one search page for the account, though two operators are linked to it.
      expect(yield* searchCalls(pacific.vendor)).toBe(1)
      expect(yield* searchCalls(oslo.vendor)).toBe(1)
      const rows = yield* rowsByReference(pacific.accountId)
      expect([...rows.keys()].sort()).toEqual(
        [hikeToday.confirmationCode, kayakLast.confirmationCode, unmapped.confirmationCode].sort()
      )
      expect(rows.get(kayakLast.confirmationCode)).toMatchObject({
        operator_id: kiribati!.id,
        timezone: "Pacific/Kiritimati",
        departure_date: addDays(kiritimati, 1)
      })
      expect(rows.get(hikeToday.confirmationCode)).toMatchObject({
        operator_id: aloha!.id,
        timezone: "Pacific/Honolulu",
        departure_date: honolulu
      })
      expect(rows.get(unmapped.confirmationCode)).toMatchObject({ operator_id: aloha!.id, participants: 7 })
      const sql = yield* SqlClient.SqlClient
      const [{ n }] = yield* sql<{ n: number }>`
        SELECT count(*)::int AS n FROM manifest_rows WHERE line_id IN (
          SELECT line_id FROM manifest_rows WHERE account_id = ${pacific.accountId})`.pipe(Effect.orDie)
      expect(n).toBe(3)
      expect((yield* rowsByReference(oslo.accountId)).has(osloLine.confirmationCode)).toBe(true)

      // The window: from the earliest "today" of the operators' zones to the latest "today" + 1.
      const pacificDays = yield* daysOf(pacific.accountId)
      expect(pacificDays.map((d) => d.departure_date)).toEqual([honolulu, kiritimati, addDays(kiritimati, 1)])
      const osloDays = yield* daysOf(oslo.accountId)
      expect(osloDays.map((d) => d.departure_date)).toEqual([osloToday, addDays(osloToday, 1)])
      for (const d of [...pacificDays, ...osloDays]) {
        expect(d.synced_at.getTime()).toBeGreaterThanOrEqual(started.getTime() - 1000)
        expect(d.synced_at.getTime()).toBeLessThanOrEqual(Date.now() + 1000)
      }
      const [pacificRun] = yield* runsOf(pacific.accountId)
      expect(pacificRun).toMatchObject({
        kind: "near_term",
        date_from: honolulu,
        date_to: addDays(kiritimati, 1),
        outcome: "ok",
        lines_seen: 3,
        inserted: 3
      })
      expect((yield* runsOf(oslo.accountId))[0]).toMatchObject({
        date_from: osloToday,
        date_to: addDays(osloToday, 1),
        inserted: 1
      })

      // The next refresh moves synced_at on for every day.
      yield* Effect.sleep("20 millis")
      yield* Effect.flatMap(Mirror, (m) => m.refresh({ kind: "near_term", daysAhead: 1 }))
      const later = yield* daysOf(pacific.accountId)
      expect(later.map((d) => d.departure_date)).toEqual(pacificDays.map((d) => d.departure_date))
      later.forEach((d, i) => expect(d.synced_at.getTime()).toBeGreaterThan(pacificDays[i]!.synced_at.getTime()))
    }))

  it.effect("an operator with an unknown time zone fails its own account only", () =>
    Effect.gen(function*() {
      // The CLI refuses unknown zones now, but a row written before (or by hand) must not stop the run.
      const broken = yield* setUp({ operators: [{ name: "Typo Tours" }], vendor: vendorSpec("Typo Vendor") })
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE operators SET timezone = 'Europe/Olso' WHERE id = ${broken.operators[0]!.id}`
      const healthy = yield* setUp({ operators: [{ name: "Fine Fjords" }] })
      const line = yield* healthy.book(addDays(today("Europe/Oslo"), 1))
      yield* broken.book(addDays(today("Europe/Oslo"), 1))
      const summary = yield* Effect.flatMap(Mirror, (m) => m.refresh({ kind: "near_term", daysAhead: 1 }))
      const failed = summary.results.find((r) => r.accountId === broken.accountId)!
      expect(failed.ok).toBe(false)
      expect(failed.error).toContain("Europe/Olso")
      expect(summary.results.find((r) => r.accountId === healthy.accountId)).toMatchObject({ ok: true, inserted: 1 })
      expect((yield* rowsByReference(healthy.accountId)).has(line.confirmationCode)).toBe(true)
      expect(yield* rowsOf(broken.accountId)).toEqual([])
      const [run] = yield* runsOf(broken.accountId)
      expect(run).toMatchObject({ outcome: "failed" })
      expect(run!.error).toContain("Europe/Olso")
      // Unlinked, the account is no longer mirrored: the next tests count on every account working.
      yield* Effect.flatMap(BookingSystemAccounts, (a) => a.link(broken.operators[0]!.id, null)).pipe(Effect.orDie)
    }))

  it.effect("the database refusing one account's lines fails that account alone, storing none of them", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql.unsafe(`
        CREATE FUNCTION refuse_guest() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'refused guest %', NEW.guest_name; END $$;
        CREATE TRIGGER refuse_guest BEFORE INSERT OR UPDATE ON manifest_rows
          FOR EACH ROW WHEN (NEW.guest_name LIKE 'Refused%') EXECUTE FUNCTION refuse_guest();`)
      const refused = yield* setUp({ operators: [{ name: "Refused Rides" }], vendor: vendorSpec("Refused Vendor") })
      const healthy = yield* setUp({ operators: [{ name: "Calm Cruises" }] })
      const day = addDays(today("Europe/Oslo"), 1)
      yield* refused.book(day)
      yield* refused.book(day, { guest: { firstName: "Refused", lastName: "Guest" } })
      const line = yield* healthy.book(day)
      const summary = yield* Effect.flatMap(Mirror, (m) => m.refresh({ kind: "near_term", daysAhead: 1 }))
      yield* sql.unsafe(`DROP TRIGGER refuse_guest ON manifest_rows; DROP FUNCTION refuse_guest();`)

      const failed = summary.results.find((r) => r.accountId === refused.accountId)!
      expect(failed).toMatchObject({ ok: false })
      expect(failed.error).toContain("could not store the lines")
      expect(summary.results.find((r) => r.accountId === healthy.accountId)).toMatchObject({ ok: true, inserted: 1 })
      expect((yield* rowsByReference(healthy.accountId)).has(line.confirmationCode)).toBe(true)
      expect(yield* rowsOf(refused.accountId)).toEqual([])
      expect(yield* daysOf(refused.accountId)).toEqual([])
      const [run] = yield* runsOf(refused.accountId)
      expect(run).toMatchObject({ outcome: "failed" })
      expect(run!.finished_at).toBeInstanceOf(Date)
      yield* Effect.flatMap(BookingSystemAccounts, (a) => a.link(refused.operators[0]!.id, null)).pipe(Effect.orDie)
    }))

  describe("a failing account does not stop the others and keeps what it had", () => {
    const cases = [
      { fault: { down: true }, reason: "BookingSystemUnavailable (connection)" },
      { fault: { errorRate: 1, errorStatus: 500 as const }, reason: "BookingSystemUnavailable (http_5xx)" },
      { fault: { hang: true }, reason: "BookingSystemUnavailable (timeout)" }
    ]
    for (const { fault, reason } of cases) {
      it.effect(`${JSON.stringify(fault)}: ${reason}`, () =>
        Effect.gen(function*() {
          const sandbox = yield* BokunSandbox
          const healthy = yield* setUp({ operators: [{ name: "Healthy Harbour" }] })
          const failing = yield* setUp({ operators: [{ name: "Failing Fjord" }] })
          const day = addDays(today("Europe/Oslo"), 1)
          yield* healthy.book(day)
          const failingLine = yield* failing.book(day)
          yield* failing.book(day)
          const mirror = yield* Mirror
          yield* mirror.refresh({ kind: "near_term", daysAhead: 1 })
          const rowsBefore = yield* rowsOf(failing.accountId)
          const daysBefore = yield* daysOf(failing.accountId)
          const healthyDaysBefore = yield* daysOf(healthy.accountId)
          expect(rowsBefore).toHaveLength(2)

          // Meanwhile a booking disappears from the failing account: not to be taken for a cancellation.
          yield* sandbox.deleteBooking(failing.vendor.id, failingLine.confirmationCode)
          const added = yield* healthy.book(day)
          yield* sandbox.faults.set(fault, { vendorId: failing.vendor.id })
          const summary = yield* mirror.refresh({ kind: "near_term", daysAhead: 1 })
          yield* sandbox.faults.reset

          const failed = summary.results.find((r) => r.accountId === failing.accountId)!
          expect(failed.ok).toBe(false)
          expect(failed.error).toContain(reason)
          expect(summary.results.find((r) => r.accountId === healthy.accountId)).toMatchObject({
            ok: true,
            inserted: 1
          })
          expect(summary.failed).toBe(1)
          expect(summary.ok).toBe(summary.accounts - 1)
          expect((yield* rowsByReference(healthy.accountId)).has(added.confirmationCode)).toBe(true)
          const healthyDays = yield* daysOf(healthy.accountId)
          healthyDays.forEach((d, i) =>
            expect(d.synced_at.getTime()).toBeGreaterThan(healthyDaysBefore[i]!.synced_at.getTime())
          )

          expect(yield* rowsOf(failing.accountId)).toEqual(rowsBefore)
          expect(yield* daysOf(failing.accountId)).toEqual(daysBefore)
          const runs = yield* runsOf(failing.accountId)
          expect(runs.map((r) => r.outcome)).toEqual(["ok", "failed"])
          expect(runs[1]!.error).toContain(reason)
          expect(runs[1]!.finished_at).toBeInstanceOf(Date)

          // Back up: the deleted booking is now cancelled.
          const recovered = yield* mirror.refresh({ kind: "near_term", daysAhead: 1, accountId: failing.accountId })
          expect(recovered.results[0]).toMatchObject({ ok: true, cancelled: 1 })
        }).pipe(Effect.ensuring(Effect.flatMap(BokunSandbox, (s) => s.faults.reset))))
    }
  })
})
