/**
 * The catalogue's live side over real HTTP against the Bókun sandbox (a real HTTP server on the same
 * database) through the real adapter: `from_price` and `season` computed by TourSeason into the cache
 * and shown by GET /tours, and GET /tours/{id}/availability (bounds, the 14-day departures rule,
 * `fits_party`, prices, a booking system that hangs or is down, tenant isolation, the document).
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import { TourSeason } from "../../../src/catalogue/TourSeason.js"
import { BookingSystemAccounts } from "../../../src/operators/BookingSystemAccounts.js"
import {
  addDays,
  BokunSandbox,
  BokunSandboxLive,
  localDay,
  type ProductSpec,
  type SandboxVendor
} from "../../../src/sandbox/bokun/index.js"
import { smallVendor } from "../../sandbox/env.js"
import { createKey, makeWorld } from "../../support/fixtures.js"
import { get, type Reply } from "../../support/http.js"
import { conforms, dereferencedSpec } from "../../support/openapi.js"
import { testServer } from "../../support/server.js"
import { createSite, insertLinkedTour, insertTour, linkSandboxAccount, seasonRow } from "../../support/tours.js"

const TZ = "Europe/Oslo"
/** The deadlines (1.5 s) are far shorter than the adapter's attempts (2 of 4 s): a hang is cut by the deadline. */
const ENV = { BOKUN_TIMEOUT_MS: "4000", BOKUN_RETRIES: "1", TOUR_AVAILABILITY_TIMEOUT_MS: "1500" }
const SEASON_ENV = { TOUR_SEASON_TIMEOUT_MS: "1500", TOUR_SEASON_CONCURRENCY: "2", LOG_LEVEL: "Error" }

const season = TourSeason.Default.pipe(
  Layer.provide(BookingSystemAccounts.Default),
  Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(SEASON_ENV)))))
)

const env = Layer.mergeAll(BokunSandboxLive(), season).pipe(Layer.provideMerge(testServer({ env: ENV })))

const today = () => localDay(Date.now(), TZ)

const availability = (key: string, id: string, query: string) => get(`/api/v1/tours/${id}/availability${query}`, key)

const expectBadParam = (res: Reply, name: string) => {
  expect(res.status, res.text).toBe(400)
  expect(res.headers.get("content-type")).toBe("application/problem+json")
  expect(res.body.invalid_params[0].name, res.text).toBe(name)
}

/**
 * Alpha on its own site, linked to a fresh sandbox vendor: Harbour Cruise (10:00 and 14:30, 10
 * seats, Standard 499 NOK / With lunch 649 NOK per adult, child half), and a tour for it.
 */
const linked = (product: Partial<ProductSpec> = {}) =>
  Effect.gen(function*() {
    const sandbox = yield* BokunSandbox
    const w = yield* makeWorld
    const spec = smallVendor(`Avail ${w.tag}`)
    const vendor: SandboxVendor = yield* sandbox.createVendor({
      ...spec,
      products: [{ ...spec.products[0]!, ...product }]
    })
    yield* linkSandboxAccount(w.alpha, sandbox.baseUrl, vendor)
    const site = yield* createSite(w.alpha, "Alpha")
    const p = vendor.products[0]!
    const tourId = yield* insertLinkedTour({ operatorId: w.alpha, title: "Harbour Cruise", sites: [site], product: p })
    const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["tours:read"] })
    const adult = p.pricingCategories.find((c) => c.isDefault)!.id
    const child = p.pricingCategories.find((c) => !c.isDefault)!.id
    const [standard, lunch] = p.rates
    const start = (time: string) => p.startTimes.find((s) => s.time === time)!.id
    /** Closes every departure of these days (capacity 0). */
    const closeDays = (days: ReadonlyArray<string>) =>
      Effect.forEach(days, (date) =>
        Effect.forEach(p.startTimes, (s) =>
          sandbox.setDepartureCapacity({ productId: p.id, startTimeId: s.id, date, capacity: 0 })), {
        discard: true
      })
    return {
      w,
      sandbox,
      vendor,
      product: p,
      site,
      tourId,
      key: key.token,
      adult,
      child,
      standard: standard!,
      lunch: lunch!,
      start,
      closeDays
    }
  })

const listed = (key: string, tourId: string) =>
  Effect.map(get("/api/v1/tours", key), (res) => {
    expect(res.status, res.text).toBe(200)
    return res.body.data.find((t: any) => t.id === tourId)
  })

layer(env, { excludeTestServices: true, timeout: 180_000 })("tour availability and season", (it) => {
  describe("from_price and season (TourSeason, shown by GET /tours)", () => {
    it.effect("lowest regular adult price from day 7 on, bookable departures only; first bookable day from today", () =>
      Effect.gen(function*() {
        const s = yield* linked()
        const t = today()
        // Cheaper adult prices inside the first 7 days (today .. today+6) do not count; from day 7 on they do.
        yield* s.sandbox.setDayPrices({ rateId: s.standard.id, dates: [addDays(t, 3)], prices: { [s.adult]: 19900 } })
        yield* s.sandbox.setDayPrices({ rateId: s.standard.id, dates: [addDays(t, 6)], prices: { [s.adult]: 29900 } })
        yield* s.sandbox.setDayPrices({ rateId: s.standard.id, dates: [addDays(t, 7)], prices: { [s.adult]: 44900 } })
        // A cheaper child price is not the adult price; a cheaper day that is sold out is not bookable.
        yield* s.sandbox.setDayPrices({ rateId: s.standard.id, dates: [addDays(t, 10)], prices: { [s.child]: 9900 } })
        yield* s.sandbox.setDayPrices({ rateId: s.lunch.id, dates: [addDays(t, 20)], prices: { [s.adult]: 39900 } })
        yield* s.closeDays([t, addDays(t, 1), addDays(t, 20)])

        const before = yield* listed(s.key, s.tourId)
        expect(before.from_price).toBeNull()
        expect(before.season).toEqual({ known: false, next_available_date: null })

        const summary = yield* (yield* TourSeason).refresh({ tourId: s.tourId })
        expect(summary).toMatchObject({ tours: 1, known: 1, unknown: 0, skipped: 0, accounts: 1, accounts_failed: 0 })
        const after = yield* listed(s.key, s.tourId)
        expect(after.from_price).toEqual({ amount_minor: 44900, currency: "NOK" })
        // Today and tomorrow are sold out: the first bookable day is the day after.
        expect(after.season).toEqual({ known: true, next_available_date: addDays(t, 2) })
        const detail = yield* get(`/api/v1/tours/${s.tourId}`, s.key)
        expect(detail.body.from_price).toEqual(after.from_price)
        expect(detail.body.season).toEqual(after.season)

        // Without the day-7 price the regular price is the lowest.
        yield* s.sandbox.setDayPrices({ rateId: s.standard.id, dates: [addDays(t, 7)], prices: { [s.adult]: 49900 } })
        yield* (yield* TourSeason).refresh({ tourId: s.tourId })
        expect((yield* listed(s.key, s.tourId)).from_price).toEqual({ amount_minor: 49900, currency: "NOK" })
      }))

    it.effect("a departure that has started today is not bookable", () =>
      Effect.gen(function*() {
        // 00:00 has always started by now, local time.
        const s = yield* linked({ startTimes: ["00:00"] })
        yield* (yield* TourSeason).refresh({ tourId: s.tourId })
        expect((yield* listed(s.key, s.tourId)).season).toEqual({
          known: true,
          next_available_date: addDays(today(), 1)
        })
      }))

    it.effect("a product with no departures: no price, no date, and known (nothing is on sale)", () =>
      Effect.gen(function*() {
        const s = yield* linked({ season: { from: "2020-01-01", to: "2020-01-31" } })
        yield* (yield* TourSeason).refresh({ tourId: s.tourId })
        const shown = yield* listed(s.key, s.tourId)
        expect(shown.from_price).toBeNull()
        expect(shown.season).toEqual({ known: true, next_available_date: null })
        expect(yield* seasonRow(s.tourId)).toMatchObject({
          known: true,
          from_price_minor: null,
          from_price_currency: null
        })
      }))

    it.effect("departures only in the first 7 days: a next date but no from_price", () =>
      Effect.gen(function*() {
        const t = today()
        const s = yield* linked({ season: { from: addDays(t, 2), to: addDays(t, 5) } })
        yield* (yield* TourSeason).refresh({ tourId: s.tourId })
        const shown = yield* listed(s.key, s.tourId)
        expect(shown.from_price).toBeNull()
        expect(shown.season).toEqual({ known: true, next_available_date: addDays(t, 2) })
      }))

    it.effect("a hanging or down booking system: not known, no date, the recent price kept; the list answers at once from the cache", () =>
      Effect.gen(function*() {
        const s = yield* linked()
        const refresh = (yield* TourSeason).refresh({ tourId: s.tourId })
        yield* refresh
        const known = yield* listed(s.key, s.tourId)
        expect(known.season.known).toBe(true)
        expect(known.from_price).toEqual({ amount_minor: 49900, currency: "NOK" })

        yield* s.sandbox.faults.set({ hang: true }, { vendorId: s.vendor.id })
        const started = Date.now()
        const summary = yield* refresh
        // Within the per-tour deadline (1.5 s), not the adapter's timeouts and retries.
        expect(Date.now() - started).toBeLessThan(4_000)
        expect(summary).toMatchObject({ tours: 1, known: 0, unknown: 1, accounts_failed: 1 })
        expect(summary.results[0]!.reason).toContain("timeout")

        // The list reads the cache only: fast, and the booking system is not asked.
        yield* s.sandbox.requests.clear
        const asked = Date.now()
        const shown = yield* listed(s.key, s.tourId)
        expect(Date.now() - asked).toBeLessThan(1_000)
        expect(yield* s.sandbox.requests.count()).toBe(0)
        expect(shown.season).toEqual({ known: false, next_available_date: null })
        // The price computed minutes ago stays (for TOUR_SEASON_PRICE_KEEP_HOURS, 24 by default).
        expect(shown.from_price).toEqual({ amount_minor: 49900, currency: "NOK" })

        // Past that, a booking system that is down takes the price away too.
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE tour_season_cache SET computed_at = now() - interval '25 hours' WHERE tour_id = ${s.tourId}`
        yield* s.sandbox.faults.set({ hang: false, down: true }, { vendorId: s.vendor.id })
        yield* refresh
        const stale = yield* listed(s.key, s.tourId)
        expect(stale.from_price).toBeNull()
        expect(stale.season).toEqual({ known: false, next_available_date: null })

        // Answering again: known again.
        yield* s.sandbox.faults.set({ down: false }, { vendorId: s.vendor.id })
        yield* refresh
        expect((yield* listed(s.key, s.tourId)).season.known).toBe(true)
      }))

    it.effect("one account not answering never stops another; its later tours are not asked in that run", () =>
      Effect.gen(function*() {
        const sandbox = yield* BokunSandbox
        yield* sandbox.faults.reset
        const good = yield* linked()
        const bad = yield* linked()
        const second = yield* insertLinkedTour({
          operatorId: bad.w.alpha,
          title: "Harbour Cruise II",
          sites: [bad.site],
          product: bad.product
        })
        // A third account answers, but refuses (wrong credentials): only that tour is not known.
        const refused = yield* linked()
        const sql = yield* SqlClient.SqlClient
        yield* sql`
          UPDATE booking_system_accounts SET secret_key = 'wrong' WHERE access_key = ${refused.vendor.accessKey}`
        yield* sandbox.faults.set({ down: true }, { vendorId: bad.vendor.id })

        const summary = yield* (yield* TourSeason).refresh()
        const resultOf = (id: string) => summary.results.find((r) => r.tour_id === id)!
        expect(resultOf(good.tourId)).toMatchObject({ known: true, from_price_minor: 49900, reason: null })
        expect(resultOf(bad.tourId)).toMatchObject({ known: false })
        expect(resultOf(bad.tourId).reason).toContain("BookingSystemUnavailable")
        expect(resultOf(second).reason).toContain("not asked")
        expect(resultOf(refused.tourId)).toMatchObject({ known: false })
        expect(resultOf(refused.tourId).reason).toContain("BookingSystemRejected")
        expect(summary.skipped).toBeGreaterThanOrEqual(1)
        // The down account was asked for its catalogue (the tours' facts, once per run) and for its
        // first tour's departures only.
        const askedBad = (yield* sandbox.requests.list).filter((r) => r.accessKey === bad.vendor.accessKey)
        expect(new Set(askedBad.map((r) => r.path))).toEqual(
          new Set(["/activity.json/search", `/activity.json/${bad.product.id}/availabilities`])
        )

        expect((yield* listed(good.key, good.tourId)).season.known).toBe(true)
        expect((yield* listed(bad.key, bad.tourId)).season.known).toBe(false)
        yield* sandbox.faults.reset
      }))
  })

  describe("GET /tours/{id}/availability", () => {
    it.effect("every day of the range; departures up to 14 days with seats, fits_party and prices; 15 days: none", () =>
      Effect.gen(function*() {
        const s = yield* linked()
        const t = today()
        const from = addDays(t, 1)
        const busy = addDays(t, 2)
        const closed = addDays(t, 3)
        yield* s.sandbox.setDepartureCapacity({
          productId: s.product.id,
          startTimeId: s.start("10:00"),
          date: busy,
          capacity: 3
        })
        yield* s.closeDays([closed])
        yield* s.sandbox.setDayPrices({ rateId: s.standard.id, dates: [busy], prices: { [s.adult]: 45900 } })

        yield* s.sandbox.requests.clear
        const res = yield* availability(s.key, s.tourId, `?from=${from}&to=${addDays(from, 13)}&pax=4`)
        expect(res.status, res.text).toBe(200)
        const body = res.body
        expect(body).toMatchObject({
          tour_id: s.tourId,
          timezone: TZ,
          currency: "NOK",
          from,
          to: addDays(from, 13),
          pax: 4,
          known: true
        })
        expect(body.days.map((d: any) => d.date)).toEqual(Array.from({ length: 14 }, (_, i) => addDays(from, i)))
        const day = (date: string) => body.days.find((d: any) => d.date === date)
        expect(day(from)).toEqual({ date: from, available: true, from_price_minor: 49900 })
        expect(day(busy)).toEqual({ date: busy, available: true, from_price_minor: 45900 })
        // Sold out is false, never null.
        expect(day(closed)).toEqual({ date: closed, available: false, from_price_minor: null })

        expect(body.departures).toHaveLength(28)
        const dep = (date: string, time: string) =>
          body.departures.find((d: any) => d.date === date && d.start_time === time)
        expect(dep(busy, "10:00")).toEqual({
          date: busy,
          start_time: "10:00",
          start_time_id: String(s.start("10:00")),
          remaining: 3,
          fits_party: false,
          rates: [
            {
              rate_id: String(s.standard.id),
              prices: [
                { pricing_category_id: String(s.adult), amount_minor: 45900 },
                { pricing_category_id: String(s.child), amount_minor: 24950 }
              ]
            },
            {
              rate_id: String(s.lunch.id),
              prices: [
                { pricing_category_id: String(s.adult), amount_minor: 64900 },
                { pricing_category_id: String(s.child), amount_minor: 32450 }
              ]
            }
          ]
        })
        expect(dep(busy, "14:30")).toMatchObject({ remaining: 10, fits_party: true })
        expect(dep(closed, "10:00")).toMatchObject({ remaining: 0, fits_party: false })
        // In date and start-time order.
        const order = body.departures.map((d: any) => `${d.date} ${d.start_time}`)
        expect(order).toEqual([...order].sort())
        // One availability read for the 14 days; nothing held, booked or searched.
        const asked = (yield* s.sandbox.requests.list).filter((r) => r.accessKey === s.vendor.accessKey)
        expect(asked.map((r) => `${r.method} ${r.path}`)).toEqual([`GET /activity.json/${s.product.id}/availabilities`])

        // pax 3 fits the busy departure.
        const three = yield* availability(s.key, s.tourId, `?from=${busy}&to=${busy}&pax=3`)
        expect(three.body.departures.map((d: any) => d.fits_party)).toEqual([true, true])
        // pax defaults to 1.
        const one = yield* availability(s.key, s.tourId, `?from=${busy}&to=${busy}`)
        expect(one.body.pax).toBe(1)

        // 15 days: every day, no departures.
        const long = yield* availability(s.key, s.tourId, `?from=${from}&to=${addDays(from, 14)}`)
        expect(long.status).toBe(200)
        expect(long.body.days).toHaveLength(15)
        expect(long.body.departures).toBeNull()
        expect(long.body.known).toBe(true)
      }))

    it.effect("departures that have started are not listed and do not make a day available", () =>
      Effect.gen(function*() {
        const s = yield* linked({ startTimes: ["00:00"] })
        const t = today()
        const res = yield* availability(s.key, s.tourId, `?from=${addDays(t, -1)}&to=${addDays(t, 1)}`)
        expect(res.body.days.map((d: any) => d.available)).toEqual([false, false, true])
        expect(res.body.departures.map((d: any) => d.date)).toEqual([addDays(t, 1)])
      }))

    it.effect("366 days are read in chunks of 31 days; 367 days, to before from, bad dates and bad pax answer 400", () =>
      Effect.gen(function*() {
        const s = yield* linked()
        const from = addDays(today(), 1)
        yield* s.sandbox.requests.clear
        const year = yield* availability(s.key, s.tourId, `?from=${from}&to=${addDays(from, 365)}`)
        expect(year.status, year.text).toBe(200)
        expect(year.body.days).toHaveLength(366)
        expect(year.body.days.every((d: any) => d.available === true)).toBe(true)
        expect(year.body.departures).toBeNull()
        const asked = (yield* s.sandbox.requests.list).filter((r) => r.accessKey === s.vendor.accessKey)
        expect(asked).toHaveLength(12)
        expect(asked.every((r) => r.method === "GET" && r.path === `/activity.json/${s.product.id}/availabilities`))
          .toBe(true)

        const q = (query: string) => availability(s.key, s.tourId, query)
        expectBadParam(yield* q(`?from=${from}&to=${addDays(from, 366)}`), "to")
        expect((yield* q(`?from=${from}&to=${addDays(from, 366)}`)).body.detail).toContain("367 days")
        expectBadParam(yield* q(`?from=${from}&to=${addDays(from, -1)}`), "to")
        expectBadParam(yield* q(`?to=${from}`), "from")
        expectBadParam(yield* q(`?from=${from}`), "to")
        expectBadParam(yield* q(`?from=2027-02-30&to=2027-03-01`), "from")
        expectBadParam(yield* q(`?from=tomorrow&to=2027-03-01`), "from")
        expectBadParam(yield* q(`?from=2027-03-01&to=2027-3-2`), "to")
        // The last days a calendar of four-digit years can count past (day arithmetic would leave it).
        expectBadParam(yield* q(`?from=9999-12-01&to=9999-12-31`), "from")
        expectBadParam(yield* q(`?from=9998-12-20&to=9999-01-02`), "to")
        for (const pax of ["0", "101", "-1", "1.5", "two", ""]) {
          const res = yield* q(`?from=${from}&to=${from}&pax=${pax}`)
          expectBadParam(res, "pax")
          expect(res.body.invalid_params[0].reason).toBe("must be a whole number from 1 to 100")
        }
        expect((yield* q(`?from=${from}&to=${from}&pax=100`)).status).toBe(200)
      }))

    it.effect("a booking system that hangs or is down: 200 within the deadline, known false, every day unknown", () =>
      Effect.gen(function*() {
        const s = yield* linked()
        const from = addDays(today(), 1)
        const query = `?from=${from}&to=${addDays(from, 6)}&pax=2`
        const unknown = {
          tour_id: s.tourId,
          timezone: TZ,
          currency: "NOK",
          from,
          to: addDays(from, 6),
          pax: 2,
          known: false,
          days: Array.from(
            { length: 7 },
            (_, i) => ({ date: addDays(from, i), available: true, from_price_minor: null })
          ),
          departures: null
        }
        yield* s.sandbox.faults.set({ hang: true }, { vendorId: s.vendor.id })
        const started = Date.now()
        const hanging = yield* availability(s.key, s.tourId, query)
        const took = Date.now() - started
        expect(hanging.status, hanging.text).toBe(200)
        expect(hanging.body).toEqual(unknown)
        // The deadline is 1.5 s; the adapter alone would wait 2 attempts of 4 s.
        expect(took).toBeGreaterThanOrEqual(1_400)
        expect(took).toBeLessThan(3_000)

        yield* s.sandbox.faults.set({ hang: false, down: true }, { vendorId: s.vendor.id })
        const down = yield* availability(s.key, s.tourId, query)
        expect(down.status).toBe(200)
        expect(down.body).toEqual(unknown)

        yield* s.sandbox.faults.set({ down: false, errorRate: 1, errorStatus: 503 }, { vendorId: s.vendor.id })
        expect((yield* availability(s.key, s.tourId, query)).body).toEqual(unknown)
        yield* s.sandbox.faults.set({ errorRate: 0 }, { vendorId: s.vendor.id })
        expect((yield* availability(s.key, s.tourId, query)).body.known).toBe(true)
      }))

    it.effect("a tour without a booking-system link answers known false", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const site = yield* createSite(w.alpha, "Alpha")
        const tourId = yield* insertTour({ operatorId: w.alpha, sites: [site] })
        const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["tours:read"] })
        const from = addDays(today(), 1)
        const res = yield* availability(key.token, tourId, `?from=${from}&to=${from}`)
        expect(res.status).toBe(200)
        expect(res.body).toEqual(
          expect.objectContaining({
            known: false,
            days: [{ date: from, available: true, from_price_minor: null }],
            departures: null
          })
        )
      }))

    it.effect("404 for a tour the key's sites do not sell (same rule as GET /tours/{id}); 403 without tours:read", () =>
      Effect.gen(function*() {
        const s = yield* linked()
        const from = addDays(today(), 1)
        const query = `?from=${from}&to=${from}`
        // Beta's key: Beta has no site selling Alpha's tour.
        const beta = yield* createKey({ by: s.w.bob, operators: [s.w.beta], scopes: ["tours:read"] })
        const other = yield* availability(beta.token, s.tourId, query)
        expect(other.status).toBe(404)
        expect(other.body.detail).toBe("tour not found, or not yours")
        expect((yield* get(`/api/v1/tours/${s.tourId}`, beta.token)).status).toBe(404)
        // partner_id outside the key, an unknown id, a draft.
        expect((yield* availability(s.key, s.tourId, `${query}&partner_id=${s.w.beta}`)).status).toBe(404)
        expect((yield* availability(s.key, "00000000-0000-4000-8000-000000000000", query)).status).toBe(404)
        const draft = yield* insertLinkedTour({
          operatorId: s.w.alpha,
          status: "draft",
          sites: [s.site],
          product: s.product
        })
        expect((yield* availability(s.key, draft, query)).status).toBe(404)
        expectBadParam(yield* availability(s.key, "not-a-uuid", query), "id")
        // The operator's own partner_id is fine; a key without the scope is refused.
        expect((yield* availability(s.key, s.tourId, `${query}&partner_id=${s.w.alpha}`)).status).toBe(200)
        const noScope = yield* createKey({ by: s.w.alice, operators: [s.w.alpha], scopes: ["bookings:read"] })
        expect((yield* availability(noScope.token, s.tourId, query)).status).toBe(403)
      }))

    it.effect("answers match the OpenAPI document", () =>
      Effect.gen(function*() {
        const spec = yield* dereferencedSpec
        const s = yield* linked()
        const from = addDays(today(), 1)
        const path = "/api/v1/tours/{id}/availability"
        const check = (res: Reply, status: number) => {
          expect(res.status, res.text).toBe(status)
          conforms(spec, "get", path, res)
        }
        check(yield* availability(s.key, s.tourId, `?from=${from}&to=${addDays(from, 3)}&pax=2`), 200)
        check(yield* availability(s.key, s.tourId, `?from=${from}&to=${addDays(from, 30)}`), 200)
        check(yield* availability(s.key, s.tourId, `?from=${from}&to=${addDays(from, 400)}`), 400)
        check(yield* availability(s.key, s.tourId, `?from=${from}&to=${from}&pax=0`), 400)
        check(yield* availability(s.key, "00000000-0000-4000-8000-000000000000", `?from=${from}&to=${from}`), 404)
        yield* s.sandbox.faults.set({ down: true }, { vendorId: s.vendor.id })
        const unknown = yield* availability(s.key, s.tourId, `?from=${from}&to=${addDays(from, 3)}`)
        yield* s.sandbox.faults.set({ down: false }, { vendorId: s.vendor.id })
        check(unknown, 200)
        expect(unknown.body.known).toBe(false)
        // The spec's `available` is a boolean, known or not: the document says so and the answer holds to it.
        const day =
          (spec as any).paths[path].get.responses["200"].content["application/json"].schema.properties.days.items
        expect(day.properties.available).toEqual(expect.objectContaining({ type: "boolean" }))
        expect(day.properties.available.anyOf).toBeUndefined()
        expect(unknown.body.days.every((d: any) => d.available === true)).toBe(true)
      }))
  })
})
