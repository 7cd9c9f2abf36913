import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { createKey, insertBooking, makeWorld } from "../../support/fixtures.js"
import { decoded, get, onWire } from "../../support/http.js"
import { insertAccount, insertRow } from "../../support/mirror.js"
import { conforms, dereferencedSpec } from "../../support/openapi.js"
import {
  deskSales,
  insertLedgerLine,
  insertRate,
  runRollups,
  setLedgerLineStatus,
  setLedgerState
} from "../../support/sales.js"
import { testServer } from "../../support/server.js"
import { insertTour } from "../../support/tours.js"

const sales = (query: string, key: string, status = 200) =>
  Effect.map(get(`/api/v1/sales?${query}`, key), (res) => {
    expect(res.status, res.text).toBe(status)
    return res.body
  })

const at = (iso: string) => new Date(iso)
const sum = (xs: ReadonlyArray<any>, f: (x: any) => number) => xs.reduce((n, x) => n + f(x), 0)

/** Every figure of an answer adds up: own days to totals, other-channel days and channels to totals. */
const expectAddsUp = (body: any) => {
  for (const t of body.panion.totals) {
    const days = body.panion.days.filter((d: any) => d.currency === t.currency && d.partner.id === t.partner.id)
    expect(sum(days, (d) => d.revenue_minor)).toBe(t.revenue_minor)
    expect(sum(days, (d) => d.bookings)).toBe(t.bookings)
  }
  expect(sum(body.panion.totals, (t) => t.bookings)).toBe(sum(body.panion.days, (d) => d.bookings))
  const o = body.other_channels
  expect(sum(o.days, (d) => d.revenue_minor)).toBe(o.totals.revenue_minor)
  expect(sum(o.days, (d) => d.bookings)).toBe(o.totals.bookings)
  expect(sum(o.channels, (c) => c.revenue_minor)).toBe(o.totals.revenue_minor)
  expect(sum(o.channels, (c) => c.bookings)).toBe(o.totals.bookings)
  expect(sum(o.channels, (c) => c.participants)).toBe(o.totals.participants)
}

/** A world whose Alpha and Beta share one booking-system account, read completely since 2025-06-01. */
const salesWorld = Effect.gen(function*() {
  const w = yield* makeWorld
  const shared = yield* insertAccount([w.alpha, w.beta], "Shared Bokun")
  const lisbon = yield* insertAccount([w.cetus], "Lisbon Bokun")
  yield* setLedgerState(shared, { coveredFrom: "2025-06-01" })
  yield* setLedgerState(lisbon, { coveredFrom: "2025-06-01" })
  const key = (operators: ReadonlyArray<string>, scopes = ["finance:read"]) =>
    createKey({ by: operators.includes(w.cetus) ? w.carol : w.bob, operators, scopes })
  return { ...w, shared, lisbon, key }
})

layer(testServer(), { excludeTestServices: true, timeout: 120_000 })("GET /api/v1/sales", (it) => {
  it.effect("own sales per UTC creation day, currency and operator; live bookings only; days add up", () =>
    Effect.gen(function*() {
      const w = yield* salesWorld
      const book = (createdAt: string, amountMinor: number, extra: { status?: string; currency?: string } = {}) =>
        insertBooking({ operatorId: w.alpha, createdAt: at(createdAt), amountMinor, ...extra })
      // UTC midnight: the last millisecond of 10 March and the first of 11 March fall on different days.
      yield* book("2026-03-10T23:59:59.999Z", 10000)
      yield* book("2026-03-11T00:00:00.000Z", 20000)
      yield* book("2026-03-11T12:00:00.000Z", 5000, { currency: "EUR" })
      yield* book("2026-03-11T13:00:00.000Z", 7000, { status: "RESERVED" })
      // None of these count: a hold, an abandoned checkout, a cancelled and a refunded booking.
      yield* book("2026-03-11T14:00:00.000Z", 900, { status: "HOLD" })
      yield* book("2026-03-11T14:00:00.000Z", 900, { status: "ABANDONED" })
      yield* book("2026-03-11T14:00:00.000Z", 900, { status: "CANCELLED" })
      yield* book("2026-03-11T14:00:00.000Z", 900, { status: "REFUNDED" })
      // Outside the range.
      yield* book("2026-03-09T23:59:59.999Z", 99999)
      yield* book("2026-03-12T00:00:00.000Z", 99999)
      yield* runRollups

      const key = yield* w.key([w.alpha])
      const body = yield* sales("from=2026-03-10&to=2026-03-11", key.token)
      const partner = { id: w.alpha, name: `Alpha Tours ${w.tag}` }
      expect(body.from).toBe("2026-03-10")
      expect(body.to).toBe("2026-03-11")
      expect(body.panion.days).toEqual([
        { date: "2026-03-10", revenue_minor: 10000, bookings: 1, currency: "NOK", partner },
        { date: "2026-03-11", revenue_minor: 5000, bookings: 1, currency: "EUR", partner },
        { date: "2026-03-11", revenue_minor: 27000, bookings: 2, currency: "NOK", partner }
      ])
      expect(body.panion.totals).toEqual([
        { currency: "EUR", partner, revenue_minor: 5000, bookings: 1 },
        { currency: "NOK", partner, revenue_minor: 37000, bookings: 3 }
      ])
      expectAddsUp(body)
      // The answer is what the OpenAPI document says it is.
      conforms(
        yield* dereferencedSpec,
        "get",
        "/api/v1/sales",
        yield* get("/api/v1/sales?from=2026-03-10&to=2026-03-11", key.token)
      )
    }))

  it.effect("desk sales of live desk keys count as own sales, for the operator of the tour, on the day confirmed", () =>
    Effect.gen(function*() {
      const w = yield* salesWorld
      // Alpha's desk sells Beta's tour: the sale is Beta's.
      const tour = yield* insertTour({ operatorId: w.beta, title: "Beta Fjord" })
      const sell = yield* deskSales(w.alpha, tour)
      yield* sell("live", "confirmed", at("2026-02-10T23:59:00Z"), 60000, 3)
      yield* sell("live", "confirmed", at("2026-02-11T00:01:00Z"), 40000)
      yield* sell("test", "confirmed", at("2026-02-11T09:00:00Z"), 99999) // a test key's sale never counts
      yield* sell("live", "failed", at("2026-02-11T09:00:00Z"), 88888) // nor a sale that failed
      yield* runRollups
      const beta = { id: w.beta, name: `Beta Boats ${w.tag}` }
      const body = yield* sales("from=2026-02-10&to=2026-02-11", (yield* w.key([w.alpha, w.beta])).token)
      expect(body.panion.days).toEqual([
        { date: "2026-02-10", revenue_minor: 60000, bookings: 1, currency: "NOK", partner: beta },
        { date: "2026-02-11", revenue_minor: 40000, bookings: 1, currency: "NOK", partner: beta }
      ])
      const alphaOnly = yield* sales("from=2026-02-10&to=2026-02-11", (yield* w.key([w.alpha])).token)
      expect(alphaOnly.panion.days).toEqual([])
    }))

  it.effect("a DST day: the UTC day of creation counts, not the operator's local day", () =>
    Effect.gen(function*() {
      const w = yield* salesWorld
      // Oslo moves to summer time on 29 March 2026 at 01:00 UTC. 00:30 local on the 29th is still the
      // 28th in UTC; 02:30 local (00:30 UTC) is the 29th.
      yield* insertBooking({ operatorId: w.alpha, createdAt: at("2026-03-29T00:30:00+01:00"), amountMinor: 100 })
      yield* insertBooking({ operatorId: w.alpha, createdAt: at("2026-03-29T02:30:00+02:00"), amountMinor: 200 })
      yield* insertBooking({ operatorId: w.alpha, createdAt: at("2026-10-25T02:30:00+01:00"), amountMinor: 400 })
      yield* runRollups
      const key = yield* w.key([w.alpha])
      const body = yield* sales("from=2026-03-28&to=2026-10-25", key.token)
      expect(body.panion.days.map((d: any) => [d.date, d.revenue_minor])).toEqual([
        ["2026-03-28", 100],
        ["2026-03-29", 200],
        ["2026-10-25", 400]
      ])
    }))

  it.effect("other channels: a shared account counted once, each operator alone sees its own lines", () =>
    Effect.gen(function*() {
      const w = yield* salesWorld
      const line = (operatorId: string, createdAt: string, totalMinor: number, title: string, participants = 2) =>
        insertLedgerLine({
          accountId: w.shared,
          operatorId,
          createdAt: at(createdAt),
          totalMinor,
          participants,
          channel: { class: "ota", title }
        })
      yield* line(w.alpha, "2026-04-01T08:00:00Z", 100000, "Viator", 3)
      yield* line(w.alpha, "2026-04-01T09:00:00Z", 50000, "GetYourGuide")
      yield* line(w.beta, "2026-04-02T10:00:00Z", 70000, "Viator", 4)
      // A line of the service's own channel and a line of one of our own bookings never count here.
      yield* insertLedgerLine({
        accountId: w.shared,
        operatorId: w.alpha,
        createdAt: at("2026-04-01T11:00:00Z"),
        totalMinor: 888,
        channel: { class: "service", title: "Our checkout" }
      })
      const own = yield* insertBooking({ operatorId: w.alpha, createdAt: at("2026-04-01T12:00:00Z"), amountMinor: 777 })
      const sql = yield* SqlClient.SqlClient
      const [{ code }] = yield* sql<{ code: string }>`SELECT confirmation_code AS code FROM bookings WHERE id = ${own}`
      yield* insertLedgerLine({
        accountId: w.shared,
        operatorId: w.alpha,
        createdAt: at("2026-04-01T12:00:00Z"),
        totalMinor: 777,
        channel: { class: "reseller", title: "Looks like a reseller" },
        externalReference: code
      })
      // A cancelled line never counts.
      yield* insertLedgerLine({
        accountId: w.shared,
        operatorId: w.beta,
        createdAt: at("2026-04-02T10:00:00Z"),
        totalMinor: 5555,
        status: "CANCELLED"
      })
      yield* runRollups

      const range = "from=2026-04-01&to=2026-04-02&currency=NOK"
      const both = (yield* sales(range, (yield* w.key([w.alpha, w.beta])).token)).other_channels
      const alpha = (yield* sales(range, (yield* w.key([w.alpha])).token)).other_channels
      const beta = (yield* sales(range, (yield* w.key([w.beta])).token)).other_channels
      expect(both.available).toBe(true)
      expect(both.partners.map((p: any) => p.id).sort()).toEqual([w.alpha, w.beta].sort())
      expect(both.totals).toEqual({ revenue_minor: 220000, bookings: 3, participants: 9 })
      expect(both.channels).toEqual([
        { label: "Viator", revenue_minor: 170000, bookings: 2, participants: 7 },
        { label: "GetYourGuide", revenue_minor: 50000, bookings: 1, participants: 2 }
      ])
      expect(both.days).toEqual([
        { date: "2026-04-01", revenue_minor: 150000, bookings: 2 },
        { date: "2026-04-02", revenue_minor: 70000, bookings: 1 }
      ])
      expect(alpha.totals.revenue_minor + beta.totals.revenue_minor).toBe(both.totals.revenue_minor)
      expect(alpha.totals.bookings + beta.totals.bookings).toBe(both.totals.bookings)
      expect(alpha.partners).toEqual([{ id: w.alpha, name: `Alpha Tours ${w.tag}` }])
      expect(beta.totals).toEqual({ revenue_minor: 70000, bookings: 1, participants: 4 })
      for (const body of [both, alpha, beta]) expectAddsUp({ panion: { days: [], totals: [] }, other_channels: body })
      // partner_id narrows a two-operator key to one operator.
      const narrowed = yield* sales(`${range}&partner_id=${w.beta}`, (yield* w.key([w.alpha, w.beta])).token)
      expect(narrowed.other_channels.totals).toEqual(beta.totals)
    }))

  it.effect("EUR and NOK differ only by each booking day's rate; a weekend uses Friday's", () =>
    Effect.gen(function*() {
      const w = yield* salesWorld
      yield* insertRate("EUR", "2026-05-08", 11.5) // a Friday
      yield* insertRate("EUR", "2026-05-11", 12) // the Monday
      yield* insertRate("USD", "2026-05-08", 10)
      const line = (createdAt: string, totalMinor: number, currency: string) =>
        insertLedgerLine({ accountId: w.lisbon, operatorId: w.cetus, createdAt: at(createdAt), totalMinor, currency })
      yield* line("2026-05-08T10:00:00Z", 1150000, "NOK") // Friday: 100000 EUR cents
      yield* line("2026-05-09T10:00:00Z", 10000, "EUR") // Saturday: Friday's rate
      yield* line("2026-05-11T10:00:00Z", 333, "NOK") // Monday: 333 / 12 = 27.75 → 28 cents
      yield* line("2026-05-08T11:00:00Z", 1000, "USD") // USD → NOK 10000 → EUR 869.57 → 870
      yield* runRollups
      const key = (yield* w.key([w.cetus])).token
      const nok = (yield* sales("from=2026-05-08&to=2026-05-11", key)).other_channels
      const eur = (yield* sales("from=2026-05-08&to=2026-05-11&currency=EUR", key)).other_channels
      expect(nok.currency).toBe("NOK")
      expect(eur.currency).toBe("EUR")
      expect(nok.days).toEqual([
        { date: "2026-05-08", revenue_minor: 1150000 + 10000, bookings: 2 },
        { date: "2026-05-09", revenue_minor: 115000, bookings: 1 },
        { date: "2026-05-11", revenue_minor: 333, bookings: 1 }
      ])
      expect(eur.days).toEqual([
        { date: "2026-05-08", revenue_minor: 100000 + 870, bookings: 2 },
        { date: "2026-05-09", revenue_minor: 10000, bookings: 1 },
        { date: "2026-05-11", revenue_minor: 28, bookings: 1 }
      ])
      expect(nok.totals.bookings).toBe(eur.totals.bookings)
      expect(nok.totals.participants).toBe(eur.totals.participants)
      expectAddsUp({ panion: { days: [], totals: [] }, other_channels: eur })
    }))

  it.effect("a late rate: unavailable until it is stored, then right without any rebuild", () =>
    Effect.gen(function*() {
      const w = yield* salesWorld
      yield* insertLedgerLine({
        accountId: w.lisbon,
        operatorId: w.cetus,
        createdAt: at("2026-06-03T10:00:00Z"),
        totalMinor: 5000,
        currency: "EUR"
      })
      yield* runRollups
      const key = (yield* w.key([w.cetus])).token
      const before = yield* sales("from=2026-06-03&to=2026-06-03", key)
      expect(before.other_channels.available).toBe(false)
      expect(before.other_channels.unavailable.map((u: any) => u.reason)).toEqual(["rate_missing"])
      expect(before.other_channels.totals).toEqual({ revenue_minor: 0, bookings: 0, participants: 0 })
      expect(before.other_channels.channels).toEqual([])
      yield* insertRate("EUR", "2026-06-03", 11.25)
      const after = yield* sales("from=2026-06-03&to=2026-06-03", key)
      expect(after.other_channels.available).toBe(true)
      expect(after.other_channels.totals.revenue_minor).toBe(56250)
      // In EUR, no rate is needed at all.
      const eur = yield* sales("from=2026-06-03&to=2026-06-03&currency=EUR", key)
      expect(eur.other_channels.totals.revenue_minor).toBe(5000)
    }))

  it.effect("a large answer (written as JSON text) is compressed when the client takes it, the same JSON once decoded", () =>
    Effect.gen(function*() {
      const w = yield* salesWorld
      for (let day = 1; day <= 30; day++) {
        yield* insertBooking({
          operatorId: w.alpha,
          createdAt: at(`2026-04-${String(day).padStart(2, "0")}T12:00:00Z`),
          amountMinor: 1000 * day
        })
      }
      yield* runRollups
      const key = yield* w.key([w.alpha])
      const path = "/api/v1/sales?from=2026-04-01&to=2026-04-30"
      const auth = { authorization: `Bearer ${key.token}` }
      const plain = yield* onWire(path, auth)
      expect(plain.status).toBe(200)
      expect(plain.headers["content-encoding"]).toBeUndefined()
      expect(plain.headers["vary"]).toContain("Accept-Encoding")
      expect(JSON.parse(plain.bytes.toString("utf8")).panion.days).toHaveLength(30)
      for (const encoding of ["br", "gzip"]) {
        const wire = yield* onWire(path, { ...auth, "accept-encoding": encoding })
        expect(wire.status).toBe(200)
        expect(wire.headers["content-encoding"]).toBe(encoding)
        expect(wire.headers["content-type"]).toContain("application/json")
        expect(Number(wire.headers["content-length"])).toBe(wire.bytes.length)
        expect(wire.bytes.length).toBeLessThan(plain.bytes.length / 3)
        expect(decoded(wire).toString("utf8")).toBe(plain.bytes.toString("utf8"))
      }
    }))

  it.effect("a cancelled booking or line leaves the figures at the next rollup, not before", () =>
    Effect.gen(function*() {
      const w = yield* salesWorld
      const booking = yield* insertBooking({ operatorId: w.alpha, createdAt: at("2026-07-01T10:00:00Z") })
      const kept = yield* insertBooking({ operatorId: w.alpha, createdAt: at("2026-07-01T11:00:00Z") })
      const line = yield* insertLedgerLine({
        accountId: w.shared,
        operatorId: w.alpha,
        createdAt: at("2026-07-01T10:00:00Z"),
        totalMinor: 40000
      })
      yield* runRollups
      const key = (yield* w.key([w.alpha])).token
      const before = yield* sales("from=2026-07-01&to=2026-07-01", key)
      expect(before.panion.totals[0].bookings).toBe(2)
      expect(before.other_channels.totals.bookings).toBe(1)

      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE bookings SET status = 'CANCELLED', updated_at = now() WHERE id = ${booking}`
      yield* setLedgerLineStatus(line, "CANCELLED")
      const stale = yield* sales("from=2026-07-01&to=2026-07-01", key)
      expect(stale.panion.totals[0].bookings).toBe(2)
      const run = yield* runRollups
      expect(run.own.full).toBe(false)
      const after = yield* sales("from=2026-07-01&to=2026-07-01", key)
      expect(after.panion.totals).toEqual([{
        currency: "NOK",
        partner: { id: w.alpha, name: `Alpha Tours ${w.tag}` },
        revenue_minor: 99800,
        bookings: 1
      }])
      expect(after.other_channels.totals.bookings).toBe(0)
      expect(after.other_channels.available).toBe(true)
      expect(kept).toBeTruthy()
    }))

  it.effect("a cancellation the mirror reads first (a coming departure) leaves the figures at the next rollup", () =>
    Effect.gen(function*() {
      const w = yield* salesWorld
      const createdAt = at("2026-07-15T10:00:00Z")
      const line = yield* insertLedgerLine({ accountId: w.shared, operatorId: w.alpha, createdAt, totalMinor: 31000 })
      yield* insertLedgerLine({ accountId: w.shared, operatorId: w.alpha, createdAt, totalMinor: 1000 })
      yield* runRollups
      const key = (yield* w.key([w.alpha])).token
      expect((yield* sales("from=2026-07-15&to=2026-07-15", key)).other_channels.totals.revenue_minor).toBe(32000)
      // The mirror's refresh of the departure day finds the line cancelled; the ledger has not read it again.
      const row = yield* insertRow({ accountId: w.shared, operatorId: w.alpha, date: "2027-01-10" })
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE manifest_rows SET line_id = ${line}, status = 'CANCELLED', cancelled_at = now() WHERE id = ${row}`
      yield* runRollups
      const after = yield* sales("from=2026-07-15&to=2026-07-15", key)
      expect(after.other_channels.totals).toEqual({ revenue_minor: 1000, bookings: 1, participants: 2 })
    }))

  it.effect("a rollup run rebuilds only the groups that changed since the last one", () =>
    Effect.gen(function*() {
      const w = yield* salesWorld
      yield* runRollups
      const idle = yield* runRollups
      // Only changes of the overlap window are taken again; none are of this world, so insert one.
      yield* insertBooking({ operatorId: w.beta, createdAt: at("2026-08-01T10:00:00Z") })
      yield* insertBooking({ operatorId: w.beta, createdAt: at("2026-08-01T11:00:00Z") })
      const next = yield* runRollups
      expect(next.own.full).toBe(false)
      // The overlap takes in the other tests' recent changes again too: what grew is this world's one group.
      expect(next.own.groups - idle.own.groups).toBe(1)
    }))

  it.effect("a booking system whose last read failed: other channels unavailable, own sales still answered", () =>
    Effect.gen(function*() {
      const w = yield* salesWorld
      yield* insertBooking({ operatorId: w.cetus, createdAt: at("2026-09-01T10:00:00Z"), currency: "EUR" })
      yield* insertLedgerLine({
        accountId: w.lisbon,
        operatorId: w.cetus,
        createdAt: at("2026-09-01T10:00:00Z"),
        totalMinor: 1000,
        currency: "EUR"
      })
      yield* setLedgerState(w.lisbon, { coveredFrom: "2025-06-01", outcome: "failed" })
      yield* runRollups
      const key = (yield* w.key([w.cetus])).token
      const body = yield* sales("from=2026-09-01&to=2026-09-01&currency=EUR", key)
      expect(body.panion.totals[0].bookings).toBe(1)
      expect(body.other_channels.available).toBe(false)
      expect(body.other_channels.unavailable).toEqual([{
        partners: [{ id: w.cetus, name: `Cetus Cruises ${w.tag}` }],
        reason: "refresh_failed",
        detail: expect.stringContaining("failed")
      }])
      expect(body.other_channels.days).toEqual([])
      expect(body.other_channels.totals).toEqual({ revenue_minor: 0, bookings: 0, participants: 0 })

      // Not read back far enough, never read, read too long ago (for a range reaching today).
      yield* setLedgerState(w.lisbon, { coveredFrom: "2026-09-02" })
      expect((yield* sales("from=2026-09-01&to=2026-09-01", key)).other_channels.unavailable[0].reason).toBe(
        "not_covered"
      )
      yield* setLedgerState(w.lisbon, { coveredFrom: null, coveredUntil: null })
      expect((yield* sales("from=2026-09-01&to=2026-09-01", key)).other_channels.unavailable[0].reason).toBe(
        "not_read_yet"
      )
      const day = (msAgo: number) => new Date(Date.now() - msAgo).toISOString().slice(0, 10)
      const lastRead = new Date(Date.now() - 3 * 3600_000)
      yield* setLedgerState(w.lisbon, { coveredFrom: "2025-06-01", coveredUntil: lastRead })
      const recent = `from=${day(30 * 86_400_000)}&to=${day(0)}`
      expect((yield* sales(recent, key)).other_channels.unavailable[0].reason).toBe("stale")
      // The same stale ledger answers a range that ends before the day it stopped.
      const before = yield* sales("from=2026-09-01&to=2026-09-01&currency=EUR", key)
      expect(before.other_channels.available).toBe(true)
      expect(before.other_channels.totals.revenue_minor).toBe(1000)
    }))

  it.effect("an operator with no booking system covers no other channel and is not unavailable", () =>
    Effect.gen(function*() {
      const w = yield* makeWorld
      const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["finance:read"] })
      const body = yield* sales("from=2026-01-01&to=2026-01-31", key.token)
      expect(body.other_channels).toEqual({
        currency: "NOK",
        partners: [],
        available: true,
        as_of: null,
        days: [],
        channels: [],
        totals: { revenue_minor: 0, bookings: 0, participants: 0 },
        unavailable: []
      })
    }))

  describe("parameters", () => {
    it.effect("from and to are required, inclusive, at most 366 days; currency EUR or NOK", () =>
      Effect.gen(function*() {
        const w = yield* salesWorld
        const key = (yield* w.key([w.alpha])).token
        yield* sales("from=2025-01-01&to=2026-01-01", key) // 366 days with both ends
        yield* sales("from=2024-01-01&to=2024-12-31", key) // a leap year: 366 days
        const bad = (query: string, field: string) =>
          Effect.map(sales(query, key, 400), (body) => {
            expect(body.type).toContain("invalid-request")
            expect(JSON.stringify(body)).toContain(field)
          })
        yield* bad("from=2025-01-01&to=2026-01-02", "367 days")
        yield* bad("from=2026-01-02&to=2026-01-01", "to must not be before from")
        yield* bad("to=2026-01-01", "from")
        yield* bad("from=2026-01-01", "to")
        yield* bad("from=2026-02-30&to=2026-03-01", "from")
        yield* bad("from=2026-01-01&to=2026-01-02&currency=USD", "currency")
        yield* bad("from=2026-01-01&to=2026-01-02&currency=nok", "currency")
      }))

    it.effect("403 without finance:read; 404 for a partner_id outside the key; another operator's sales never show", () =>
      Effect.gen(function*() {
        const w = yield* salesWorld
        yield* insertBooking({ operatorId: w.cetus, createdAt: at("2026-10-01T10:00:00Z"), amountMinor: 4242 })
        yield* insertLedgerLine({
          accountId: w.lisbon,
          operatorId: w.cetus,
          createdAt: at("2026-10-01T10:00:00Z"),
          totalMinor: 4242
        })
        yield* runRollups
        const noScope = yield* w.key([w.alpha], ["bookings:read"])
        yield* sales("from=2026-10-01&to=2026-10-01", noScope.token, 403)
        const alpha = (yield* w.key([w.alpha])).token
        const missing = yield* sales(`from=2026-10-01&to=2026-10-01&partner_id=${w.cetus}`, alpha, 404)
        expect(missing.detail).toContain("not found, or not yours")
        const body = yield* sales("from=2026-10-01&to=2026-10-01", alpha)
        expect(body.panion.days).toEqual([])
        expect(body.other_channels.totals.bookings).toBe(0)
        expect(JSON.stringify(body)).not.toContain(w.cetus)
      }))
  })
})
