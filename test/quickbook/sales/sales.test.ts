/**
 * Quickbook tours, slots and quote over real HTTP with the Bókun and Surfboard sandboxes (issue 6
 * items 4-5): the tours a terminal sells on a day (own and resold), a day's slots with seats and
 * guest prices, a quote with its exact cart line and stored sale, every quote refusal, a booking
 * system that does not answer (503 provider_unavailable), test keys only through sandbox accounts
 * and live keys never, a desk without a card terminal, the writes budget and the document.
 */
import SwaggerParser from "@apidevtools/swagger-parser"
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { CLERK_MESSAGE_VARIANTS, CLERK_MESSAGES, invalidFieldMessage } from "../../../src/quickbook/clerkMessages.js"
import { QuickbookKeys } from "../../../src/quickbook/terminals/QuickbookKeys.js"
import { addDays, BokunSandbox, localDay } from "../../../src/sandbox/bokun/index.js"
import { makeWorld } from "../../support/fixtures.js"
import { call, get, type Reply } from "../../support/http.js"
import { merchantFor, paymentsEnv, vendorFor } from "../../support/payments.js"
import { withRoomInWindow } from "../../support/rateWindow.js"
import { createSite, insertLinkedTour, insertTour } from "../../support/tours.js"

const BASE = "/api/quickbook/v1"
const env = paymentsEnv(Effect.succeed({
  TOUR_AVAILABILITY_TIMEOUT_MS: "1500",
  QUICKBOOK_SERVICE_PROVIDER_ID: "svc-partner-fees",
  QUICKBOOK_SERVICE_FEE_PERCENT: "5"
}))

const expectError = (res: Reply, status: number, code: string, clerkMessage = (CLERK_MESSAGES as any)[code].en) => {
  expect(res.status, res.text).toBe(status)
  expect(res.body).toEqual({ error: { code, clerkMessage } })
  expect(res.headers.get("cache-control")).toBe("no-store")
}

/**
 * Alpha owns a site selling its own Fjord Cruise and reselling Beta's Whale Watch; Beta's Seal Tour
 * on Alpha's site is sold by Beta (not resold), Beta's Island Hop is on Beta's own site; Alpha's
 * draft is not published and Alpha's Unlinked Tour has no booking-system product. Alpha has a
 * merchant; a desk terminal of Alpha (taking card payments on the merchant's card terminal) with a
 * test key. The vendors and the merchant are sandbox accounts.
 */
const world = Effect.gen(function*() {
  const w = yield* makeWorld
  const a = yield* vendorFor(w.alpha)
  const b = yield* vendorFor(w.beta)
  const merchant = yield* merchantFor(w.alpha)
  const siteA = yield* createSite(w.alpha, "Alpha")
  const siteB = yield* createSite(w.beta, "Beta")
  const pa = a.vendor.products[0]!
  const pb = b.vendor.products[0]!
  const own = yield* insertLinkedTour({ operatorId: w.alpha, title: "Fjord Cruise", sites: [siteA], product: pa })
  const resold = yield* insertLinkedTour({
    operatorId: w.beta,
    title: "Whale Watch",
    sites: [{ site: siteA, soldBy: "site_owner" }],
    product: pb
  })
  const notResold = yield* insertLinkedTour({ operatorId: w.beta, title: "Seal Tour", sites: [siteA], product: pb })
  const elsewhere = yield* insertLinkedTour({ operatorId: w.beta, title: "Island Hop", sites: [siteB], product: pb })
  yield* insertLinkedTour({ operatorId: w.alpha, title: "Draft Cruise", status: "draft", sites: [siteA], product: pa })
  yield* insertTour({ operatorId: w.alpha, title: "Unlinked Tour", sites: [siteA] })
  const keys = yield* QuickbookKeys
  const terminal = yield* keys.registerTerminal(w.alpha, "Harbour desk", merchant.terminalId)
  const key = yield* keys.issueKey({ mode: "test", name: "Desk app", terminals: [terminal.id] })
  const day = addDays(localDay(Date.now(), "Europe/Oslo"), 1)
  /** The calls of a desk: this terminal with this key unless told otherwise. */
  const deskCalls = (token: string, terminalId: string) => {
    const headers = { "quickbook-terminal": terminalId }
    return {
      list: (query = "") => get(`${BASE}/tours${query}`, token, headers),
      slots: (id: string, query = `?date=${day}`) => get(`${BASE}/tours/${id}/slots${query}`, token, headers),
      quote: (body: unknown) => call(`${BASE}/quote`, { method: "POST", key: token, headers, body })
    }
  }
  return {
    w,
    a,
    b,
    pa,
    merchant,
    own,
    resold,
    notResold,
    elsewhere,
    terminal,
    key,
    day,
    keys,
    deskCalls,
    ...deskCalls(key.token, terminal.id)
  }
}).pipe(Effect.provide(QuickbookKeys.Default))

const quoteOf = (activityId: string, date: string, time: string, guests: Array<{ type: string; count: number }>) => ({
  activityId,
  start: { date, time },
  guests
})

layer(env, { excludeTestServices: true, timeout: 180_000 })("quickbook tours, slots and quote", (it) => {
  it.effect("GET /tours lists the operator's own and resold published, linked tours on its sites, with guest types", () =>
    Effect.gen(function*() {
      const s = yield* world
      const res = yield* s.list(`?date=${s.day}`)
      expect(res.status, res.text).toBe(200)
      expect(res.body.tours.map((t: any) => t.tourName)).toEqual(["Fjord Cruise", "Whale Watch"])
      const [own, resold] = res.body.tours
      expect(own).toEqual({
        activityId: s.own,
        operatorName: expect.stringMatching(/^Alpha Tours /),
        tourName: "Fjord Cruise",
        timeZone: "Europe/Oslo",
        currency: "NOK",
        durationMinutes: null,
        departureTimes: [],
        guestTypes: [
          { type: "adult", label: "Adult", isDefault: true, minAge: null, maxAge: null },
          { type: "child", label: "Child", isDefault: false, minAge: null, maxAge: null }
        ],
        date: s.day,
        available: true
      })
      // Resold: Beta runs it, Alpha's desk sells it.
      expect(resold).toMatchObject({
        activityId: s.resold,
        operatorName: expect.stringMatching(/^Beta Boats /),
        available: true
      })
      // Default day: today in the tour's zone.
      const today = yield* s.list()
      expect(today.body.tours[0].date).toBe(localDay(Date.now(), "Europe/Oslo"))
      expectError(yield* s.list("?date=2026-13-01"), 400, "invalid_request", invalidFieldMessage("date", false, "en"))
    }))

  it.effect("GET /tours/{activityId}/slots: start times with seats left and guest prices; 403 for a tour not sold here", () =>
    Effect.gen(function*() {
      const s = yield* world
      const sandbox = yield* BokunSandbox
      yield* sandbox.setDepartureCapacity({
        productId: s.pa.id,
        startTimeId: s.pa.startTimes[1]!.id,
        date: s.day,
        capacity: 0
      })
      const res = yield* s.slots(s.own)
      expect(res.status, res.text).toBe(200)
      const prices = [
        { type: "adult", label: "Adult", unitMinor: 49900 },
        { type: "child", label: "Child", unitMinor: 24950 }
      ]
      expect(res.body).toEqual({
        activityId: s.own,
        date: s.day,
        timeZone: "Europe/Oslo",
        currency: "NOK",
        slots: [
          { time: "10:00", seatsLeft: 10, soldOut: false, guests: prices, bookingPriceMinor: null },
          { time: "14:30", seatsLeft: 0, soldOut: true, guests: prices, bookingPriceMinor: null }
        ]
      })
      expect((yield* s.slots(s.resold)).status).toBe(200)
      for (const id of [s.notResold, s.elsewhere, randomUUID()]) {
        expectError(yield* s.slots(id), 403, "tour_not_sellable_here")
      }
      expectError(yield* s.slots("not-a-uuid"), 400, "invalid_request", invalidFieldMessage("activityId", false, "en"))
    }))

  it.effect("POST /quote: reference, validUntil and the exact cart line; the sale is stored as quoted, nothing held", () =>
    Effect.gen(function*() {
      const s = yield* world
      const started = Date.now()
      const res = yield* s.quote(
        quoteOf(s.own, s.day, "10:00", [{ type: "adult", count: 2 }, { type: "child", count: 1 }])
      )
      expect(res.status, res.text).toBe(200)
      expect(res.body.reference).toMatch(/^SVC-[A-Z0-9]{10}$/)
      const validUntil = Date.parse(res.body.validUntil)
      expect(validUntil - started).toBeGreaterThanOrEqual(15 * 60_000 - 1000)
      expect(validUntil - Date.now()).toBeLessThanOrEqual(15 * 60_000)
      expect(res.body.cartLine).toEqual({
        operatorName: expect.stringMatching(/^Alpha Tours /),
        tourName: "Fjord Cruise",
        start: { date: s.day, time: "10:00", timeZone: "Europe/Oslo" },
        guests: [
          { type: "adult", label: "Adult", count: 2, unitMinor: 49900, lineMinor: 99800 },
          { type: "child", label: "Child", count: 1, unitMinor: 24950, lineMinor: 24950 }
        ],
        totalMinor: 124750,
        currency: "NOK",
        requiresPhone: false,
        orderLineText: `Fjord Cruise ${s.day} 10:00`,
        payment: {
          provider: "payprovider",
          merchantId: s.merchant.id,
          // 12% VAT included: 124750 * 12 / 112 = 13366.07
          taxLines: [{ amount: 13366, percentage: 12, type: "VAT" }],
          serviceProviders: [{ serviceProviderId: "svc-partner-fees", amount: { percentage: 5 } }]
        }
      })
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<
        any
      >`SELECT status, terminal_id, tour_id, total_minor, cart_line FROM quickbook_sales WHERE reference = ${res.body.reference}`
      expect(row).toMatchObject({
        status: "quoted",
        terminal_id: s.terminal.id,
        tour_id: s.own,
        cart_line: res.body.cartLine
      })
      expect(Number(row.total_minor)).toBe(124750)
      // Nothing held: the seats are all still there.
      expect((yield* s.slots(s.own)).body.slots[0].seatsLeft).toBe(10)
      // A resold tour is charged on the selling operator's merchant.
      const resold = yield* s.quote(quoteOf(s.resold, s.day, "14:30", [{ type: "adult", count: 1 }]))
      expect(resold.status, resold.text).toBe(200)
      expect(resold.body.cartLine.payment.merchantId).toBe(s.merchant.id)
      expect(resold.body.cartLine.operatorName).toMatch(/^Beta Boats /)
      // A long name is shortened to keep the order line within 40 characters.
      const sqlName = "A Very Long Tour Name Around The Whole Fjord"
      yield* sql`UPDATE tours SET title = ${sqlName} WHERE id = ${s.own}`
      const long = yield* s.quote(quoteOf(s.own, s.day, "10:00", [{ type: "adult", count: 1 }]))
      expect(long.body.cartLine.orderLineText.length).toBeLessThanOrEqual(40)
      expect(long.body.cartLine.orderLineText).toBe(`A Very Long Tour Name A ${s.day} 10:00`)
    }))

  it.effect("POST /quote refusals: 400 too many entries or guests, 409 price_changed, 409 sold_out, 403 not sellable", () =>
    Effect.gen(function*() {
      const s = yield* world
      const sandbox = yield* BokunSandbox
      const eleven = Array.from({ length: 11 }, () => ({ type: "adult", count: 1 }))
      expectError(
        yield* s.quote(quoteOf(s.own, s.day, "10:00", eleven)),
        400,
        "invalid_request",
        CLERK_MESSAGE_VARIANTS.too_many_guest_entries.en
      )
      expectError(
        yield* s.quote(quoteOf(s.own, s.day, "10:00", [{ type: "adult", count: 30 }, { type: "child", count: 21 }])),
        400,
        "invalid_request",
        CLERK_MESSAGE_VARIANTS.too_many_guests.en
      )
      expectError(
        yield* s.quote({ activityId: s.own, start: { date: s.day }, guests: [] }),
        400,
        "invalid_request",
        invalidFieldMessage("start.time", true, "en")
      )
      expectError(yield* s.quote(quoteOf(s.own, s.day, "10:00", [{ type: "senior", count: 1 }])), 409, "price_changed")
      // 11 guests for 10 seats; a closed departure; a start time the day does not have.
      expectError(yield* s.quote(quoteOf(s.own, s.day, "10:00", [{ type: "adult", count: 11 }])), 409, "sold_out")
      yield* sandbox.setDepartureCapacity({
        productId: s.pa.id,
        startTimeId: s.pa.startTimes[1]!.id,
        date: s.day,
        capacity: 0
      })
      expectError(yield* s.quote(quoteOf(s.own, s.day, "14:30", [{ type: "adult", count: 1 }])), 409, "sold_out")
      expectError(yield* s.quote(quoteOf(s.own, s.day, "12:00", [{ type: "adult", count: 1 }])), 409, "sold_out")
      for (const id of [s.notResold, s.elsewhere, randomUUID()]) {
        expectError(
          yield* s.quote(quoteOf(id, s.day, "10:00", [{ type: "adult", count: 1 }])),
          403,
          "tour_not_sellable_here"
        )
      }
      const sql = yield* SqlClient.SqlClient
      const [n] = yield* sql<
        { n: number }
      >`SELECT count(*)::int AS n FROM quickbook_sales WHERE terminal_id = ${s.terminal.id}`
      expect(n!.n).toBe(0)
    }))

  it.effect("a booking system that does not answer: slots and quote 503 provider_unavailable, the list marks the day unknown", () =>
    Effect.gen(function*() {
      const s = yield* world
      const sandbox = yield* BokunSandbox
      yield* sandbox.faults.set({ hang: true }, { vendorId: s.a.vendor.id })
      try {
        const t0 = Date.now()
        const slots = yield* s.slots(s.own)
        expectError(slots, 503, "provider_unavailable")
        expect(slots.headers.get("retry-after")).toBe("5")
        expect(Date.now() - t0).toBeLessThan(5000)
        expectError(
          yield* s.quote(quoteOf(s.own, s.day, "10:00", [{ type: "adult", count: 1 }])),
          503,
          "provider_unavailable"
        )
        const list = yield* s.list(`?date=${s.day}`)
        expect(list.status).toBe(200)
        expect(list.body.tours.map((t: any) => [t.tourName, t.available])).toEqual([["Fjord Cruise", null], [
          "Whale Watch",
          true
        ]])
      } finally {
        yield* sandbox.faults.set({ hang: false }, { vendorId: s.a.vendor.id })
      }
      yield* sandbox.faults.set({ down: true }, { vendorId: s.a.vendor.id })
      expectError(yield* s.slots(s.own), 503, "provider_unavailable")
      yield* sandbox.faults.set({ down: false }, { vendorId: s.a.vendor.id })
      expect((yield* s.slots(s.own)).status).toBe(200)
    }))

  it.effect("a test key sells only through sandbox accounts: a live booking system or merchant is not listed, 403, never called", () =>
    Effect.gen(function*() {
      const s = yield* world
      const sql = yield* SqlClient.SqlClient
      const sandbox = yield* BokunSandbox
      const one = quoteOf(s.own, s.day, "10:00", [{ type: "adult", count: 1 }])
      // Alpha's booking system is live: its tour is neither listed nor readable nor quotable, and
      // nothing reaches Alpha's vendor; Beta's (sandbox) tour resold by Alpha still sells.
      yield* sql`UPDATE booking_system_accounts SET sandbox = false WHERE id = ${s.a.accountId}`
      yield* sandbox.requests.clear
      const list = yield* s.list(`?date=${s.day}`)
      expect(list.status, list.text).toBe(200)
      expect(list.body.tours.map((t: any) => t.tourName)).toEqual(["Whale Watch"])
      expectError(yield* s.slots(s.own), 403, "tour_not_sellable_here")
      expectError(yield* s.quote(one), 403, "tour_not_sellable_here")
      expect(yield* sandbox.requests.count({ accessKey: s.a.vendor.accessKey })).toBe(0)
      expect((yield* s.quote(quoteOf(s.resold, s.day, "10:00", [{ type: "adult", count: 1 }]))).status).toBe(200)
      // Alpha's merchant is live: nothing is sellable with the test key, and no booking system is called.
      yield* sql`UPDATE booking_system_accounts SET sandbox = true WHERE id = ${s.a.accountId}`
      yield* sql`UPDATE operator_payment_accounts SET sandbox = false WHERE operator_id = ${s.w.alpha}`
      yield* sandbox.requests.clear
      expect((yield* s.list(`?date=${s.day}`)).body.tours).toEqual([])
      for (const id of [s.own, s.resold]) {
        expectError(yield* s.slots(id), 403, "tour_not_sellable_here")
        expectError(
          yield* s.quote(quoteOf(id, s.day, "10:00", [{ type: "adult", count: 1 }])),
          403,
          "tour_not_sellable_here"
        )
      }
      expect(yield* sandbox.requests.count()).toBe(0)
      const [n] = yield* sql<{ n: number }>`
        SELECT count(*)::int AS n FROM quickbook_sales WHERE terminal_id = ${s.terminal.id} AND tour_id = ${s.own}`
      expect(n!.n).toBe(0)
    }))

  it.effect("a live key never sells through sandbox accounts; on live accounts it lists and quotes", () =>
    Effect.gen(function*() {
      const s = yield* world
      const sql = yield* SqlClient.SqlClient
      const sandbox = yield* BokunSandbox
      const live = yield* s.keys.issueKey({ mode: "live", name: "Live desk app", terminals: [s.terminal.id] })
      const desk = s.deskCalls(live.token, s.terminal.id)
      const one = quoteOf(s.own, s.day, "10:00", [{ type: "adult", count: 1 }])
      yield* sandbox.requests.clear
      expect((yield* desk.list(`?date=${s.day}`)).body.tours).toEqual([])
      expectError(yield* desk.slots(s.own), 403, "tour_not_sellable_here")
      expectError(yield* desk.quote(one), 403, "tour_not_sellable_here")
      expect(yield* sandbox.requests.count()).toBe(0)
      // A live booking system with a sandbox merchant is still refused.
      yield* sql`UPDATE booking_system_accounts SET sandbox = false WHERE id = ${s.a.accountId}`
      expectError(yield* desk.quote(one), 403, "tour_not_sellable_here")
      // Both live (here the "live" systems are the sandboxes marked live): the live key sells, the test key no longer.
      yield* sql`UPDATE operator_payment_accounts SET sandbox = false WHERE operator_id = ${s.w.alpha}`
      expect((yield* desk.list(`?date=${s.day}`)).body.tours.map((t: any) => t.tourName)).toEqual(["Fjord Cruise"])
      const quoted = yield* desk.quote(one)
      expect(quoted.status, quoted.text).toBe(200)
      expect(quoted.body.cartLine.payment.merchantId).toBe(s.merchant.id)
      expectError(yield* s.quote(one), 403, "tour_not_sellable_here")
    }))

  it.effect("a desk terminal without a card terminal cannot charge: quote 403 tour_not_sellable_here; tours and slots still read", () =>
    Effect.gen(function*() {
      const s = yield* world
      const sql = yield* SqlClient.SqlClient
      const bare = yield* s.keys.registerTerminal(s.w.alpha, "Desk without a card terminal")
      expect(bare.paymentTerminalId).toBeNull()
      yield* s.keys.bindKey(s.key.id, [bare.id])
      const desk = s.deskCalls(s.key.token, bare.id)
      expect((yield* desk.list(`?date=${s.day}`)).body.tours.map((t: any) => t.tourName)).toEqual([
        "Fjord Cruise",
        "Whale Watch"
      ])
      expect((yield* desk.slots(s.own)).status).toBe(200)
      expectError(
        yield* desk.quote(quoteOf(s.own, s.day, "10:00", [{ type: "adult", count: 1 }])),
        403,
        "tour_not_sellable_here"
      )
      const [n] = yield* sql<
        { n: number }
      >`SELECT count(*)::int AS n FROM quickbook_sales WHERE terminal_id = ${bare.id}`
      expect(n!.n).toBe(0)
      // Given the merchant's card terminal, it charges.
      yield* s.keys.setPaymentTerminal(bare.id, s.merchant.terminalId)
      expect((yield* desk.quote(quoteOf(s.own, s.day, "10:00", [{ type: "adult", count: 1 }]))).status).toBe(200)
    }))

  it.effect("quotes spend the writes budget: 60 a minute per terminal, then 429 rate_limited; reads unaffected", () =>
    Effect.gen(function*() {
      const s = yield* world
      yield* withRoomInWindow(30)
      for (let i = 0; i < 60; i++) {
        const res = yield* s.quote({})
        expect(res.status).toBe(400)
        expect(res.headers.get("ratelimit-limit")).toBe("60")
      }
      const over = yield* s.quote(quoteOf(s.own, s.day, "10:00", [{ type: "adult", count: 1 }]))
      expectError(over, 429, "rate_limited")
      expect(Number(over.headers.get("retry-after"))).toBeGreaterThan(0)
      expect((yield* s.slots(s.own)).status).toBe(200)
    }))

  it.effect("the OpenAPI document is valid and documents slots and quote with their errors", () =>
    Effect.gen(function*() {
      const doc = (yield* get(`${BASE}/openapi.json`)).body
      yield* Effect.promise(() => SwaggerParser.validate(structuredClone(doc)))
      const slots = doc.paths[`${BASE}/tours/{activityId}/slots`].get
      expect(Object.keys(slots.responses).sort()).toEqual(["200", "400", "401", "403", "429", "500", "503"])
      const quote = doc.paths[`${BASE}/quote`].post
      expect(Object.keys(quote.responses).sort()).toEqual([
        "200",
        "400",
        "401",
        "403",
        "409",
        "413",
        "415",
        "429",
        "500",
        "503"
      ])
      expect(doc.paths[`${BASE}/tours`].get.parameters.map((p: any) => p.name)).toContain("date")
      expect(doc.components.schemas.CartLine).toBeDefined()
      expect(doc.components.schemas.DeskTour.properties.guestTypes).toBeDefined()
    }))
})
