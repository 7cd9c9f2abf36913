/**
 * Bad Quickbook inputs answer a clear 400 `invalid_request` before anything is read from the
 * booking system, recorded or charged (issue 11 items 9 and 11), over real HTTP with the sandboxes:
 * impossible calendar days and days outside the desk's window (query `date` of tours and slots,
 * `start.date` of a quote), impossible times (`start.time`), and a `holdRef` that is not the sale's
 * reference on POST /book.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { addDays } from "../../src/domain/localDay.js"
import { call, type Reply } from "../support/http.js"
import { paymentsEnv } from "../support/payments.js"
import { BASE, deskWorld } from "../support/quickbook.js"

const env = paymentsEnv(Effect.succeed({ TOUR_AVAILABILITY_TIMEOUT_MS: "1500" }))

const expectInvalid = (res: Reply, what: string) => {
  expect(res.status, `${what}: ${res.text}`).toBe(400)
  expect(res.body.error.code, what).toBe("invalid_request")
  expect(res.headers.get("cache-control")).toBe("no-store")
}

const utcToday = () => new Date().toISOString().slice(0, 10)
/** The desk's window reaches a year ahead (DESK_DAYS_AHEAD, 366 days), spelled out so that this file runs on older code too. */
const YEAR_AHEAD = 366

/** Days that are not real calendar days, or outside the desk's window (yesterday to a year ahead). */
const badDays = () => [
  "2026-02-30",
  "2027-02-29",
  "2026-04-31",
  "2026-00-10",
  "2026-13-01",
  "9999-12-31",
  "0000-01-01",
  "0001-01-01",
  "1900-01-01",
  addDays(utcToday(), -2),
  addDays(utcToday(), YEAR_AHEAD + 2),
  "2999-01-01"
]

layer(env, { excludeTestServices: true, timeout: 240_000 })("quickbook: bad inputs are 400 invalid_request", (it) => {
  it.effect("GET /tours and GET /tours/{id}/slots: `date` not a real calendar day, or outside the window, is 400; the booking system is not asked", () =>
    Effect.gen(function*() {
      const s = yield* deskWorld
      const o = { key: s.key.token, headers: s.headers }
      yield* s.bokun.requests.clear
      for (const day of badDays()) {
        expectInvalid(yield* call(`${BASE}/tours?date=${day}`, o), `tours ${day}`)
        expectInvalid(yield* call(`${BASE}/tours/${s.tour}/slots?date=${day}`, o), `slots ${day}`)
      }
      for (const day of ["", "2026-2-3", "26-02-03", "2026-02-03T00:00:00Z", "tomorrow"]) {
        expectInvalid(yield* call(`${BASE}/tours?date=${encodeURIComponent(day)}`, o), `tours "${day}"`)
        expectInvalid(yield* call(`${BASE}/tours/${s.tour}/slots?date=${encodeURIComponent(day)}`, o), `slots "${day}"`)
      }
      expect(yield* s.bokun.requests.count({ accessKey: s.a.vendor.accessKey })).toBe(0)
      // Today, tomorrow and a year ahead are days a desk may ask about (the window's ends: test/quickbook/sales/rules.test.ts).
      for (const day of [utcToday(), s.day, addDays(utcToday(), YEAR_AHEAD)]) {
        const tours = yield* call(`${BASE}/tours?date=${day}`, o)
        expect(tours.status, `${day}: ${tours.text}`).toBe(200)
        expect(tours.body.tours[0].date).toBe(day)
        const slots = yield* call(`${BASE}/tours/${s.tour}/slots?date=${day}`, o)
        expect(slots.status, `${day}: ${slots.text}`).toBe(200)
      }
    }))

  it.effect("POST /quote: `start.date` not a real calendar day or outside the window, `start.time` not HH:MM from 00:00 to 23:59: 400, nothing stored", () =>
    Effect.gen(function*() {
      const s = yield* deskWorld
      const sql = yield* SqlClient.SqlClient
      const quote = (start: { date: unknown; time: unknown }) =>
        call(`${BASE}/quote`, {
          method: "POST",
          key: s.key.token,
          headers: s.headers,
          body: { activityId: s.tour, start, guests: [{ type: "adult", count: 1 }] }
        })
      yield* s.bokun.requests.clear
      for (const day of badDays()) expectInvalid(yield* quote({ date: day, time: "10:00" }), `start.date ${day}`)
      for (const time of ["24:00", "12:60", "23:60", "9:00", "10:00:00", "1000", "10.00", "", " 10:00", "-1:00"]) {
        expectInvalid(yield* quote({ date: s.day, time }), `start.time "${time}"`)
      }
      expectInvalid(yield* quote({ date: 20261127, time: "10:00" }), "start.date a number")
      expectInvalid(yield* quote({ date: s.day, time: 10 }), "start.time a number")
      expect(yield* s.bokun.requests.count({ accessKey: s.a.vendor.accessKey })).toBe(0)
      const [{ n }] = (yield* sql<{ n: number }>`
        SELECT count(*)::int AS n FROM quickbook_sales WHERE terminal_id = ${s.terminal.id}`.pipe(Effect.orDie)) as [
        { n: number }
      ]
      expect(n).toBe(0)
      // A good day and time still quote.
      const ok = yield* quote({ date: s.day, time: "10:00" })
      expect(ok.status, ok.text).toBe(200)
    }))

  it.effect("POST /book: a holdRef that is not the sale's reference is 400 invalid_request; nothing verified, recorded, booked or refunded", () =>
    Effect.gen(function*() {
      const s = yield* deskWorld
      const q = yield* s.quote(2)
      const other = yield* s.quote(1)
      yield* s.reserve(q.reference)
      yield* s.reserve(other.reference)
      const payment = yield* s.pay(q)
      yield* Effect.all([s.bokun.requests.clear, s.surfboard.requests.clear])
      // Another sale's hold (of this terminal), an unknown one: the sale's own hold is the only holdRef.
      for (const holdRef of [other.reference, "SVC-0000000000"]) {
        const res = yield* s.book(q.reference, payment, { holdRef })
        expectInvalid(res, `holdRef ${holdRef}`)
        expect(res.body.error.reference).toBe(q.reference)
      }
      expect(yield* s.bokun.requests.count({ accessKey: s.a.vendor.accessKey })).toBe(0)
      expect(yield* s.surfboard.requests.count({ merchantId: s.merchant.id })).toBe(0)
      expect(yield* s.paymentRow(payment.paymentId)).toBeUndefined()
      expect(yield* s.sale(q.reference)).toMatchObject({ status: "held", paid_by_payment_id: null })
      expect(yield* s.sale(other.reference)).toMatchObject({ status: "held", paid_by_payment_id: null })
      expect(yield* s.bokunBookings(q.reference)).toEqual([])
      expect(yield* s.bokunBookings(other.reference)).toEqual([])
      expect(yield* s.returned(payment.orderId)).toEqual({ refundOrders: 0, refunded: 0, voided: 0 })
      // The right holdRef books with the same payment: the refusals left nothing behind.
      const booked = yield* s.book(q.reference, payment, { holdRef: q.reference })
      expect(booked.status, booked.text).toBe(200)
      expect(booked.body.status).toBe("confirmed")
      expect(yield* s.bokunBookings(q.reference)).toHaveLength(1)
    }))

  it.effect("POST /reserve: an idempotencyKey that cannot travel to the booking system (control characters, non-ASCII, spaces) is 400, not 503; nothing held", () =>
    Effect.gen(function*() {
      const s = yield* deskWorld
      const q = yield* s.quote(2)
      const reserve = (idempotencyKey: unknown) =>
        call(`${BASE}/reserve`, {
          method: "POST",
          key: s.key.token,
          headers: s.headers,
          body: { reference: q.reference, idempotencyKey }
        })
      yield* s.bokun.requests.clear
      for (const key of ["a\u0000b", "a\nb", "a\rb", "🙂", "é-key", " ", "a b", "", "x".repeat(101)]) {
        expectInvalid(yield* reserve(key), `idempotencyKey ${JSON.stringify(key)}`)
      }
      expect(yield* s.bokun.requests.count({ accessKey: s.a.vendor.accessKey })).toBe(0)
      expect((yield* s.sale(q.reference)).status).toBe("quoted")
      const held = yield* reserve(crypto.randomUUID())
      expect(held.status, held.text).toBe(200)
    }))

  it.effect("POST /book: a guest name with control characters or a broken character, or an email the outbox cannot send to, is 400 (was 500 or a lost email); nothing recorded", () =>
    Effect.gen(function*() {
      const s = yield* deskWorld
      const q = yield* s.quote(1)
      const payment = yield* s.pay(q)
      yield* Effect.all([s.bokun.requests.clear, s.surfboard.requests.clear])
      const bad: Array<Record<string, string>> = [
        { firstName: "Ka\u0000ri" },
        { lastName: "Nord\u0000" },
        { firstName: "K\u0007ari" },
        { lastName: "Nord\u0085mann" },
        { firstName: "\ud800" },
        { lastName: "Nord\udc00mann" },
        { email: "kari\u0000@example.com" },
        { email: "kari@exa,mple.com" },
        { email: "<kari>@example.com" },
        { email: "kari@example.com;" },
        { email: `${"k".repeat(250)}@example.com` }
      ]
      for (const c of bad) {
        expectInvalid(
          yield* s.book(q.reference, payment, {
            customer: { firstName: "Kari", lastName: "Nordmann", email: "kari@example.com", ...c }
          }),
          JSON.stringify(c)
        )
      }
      expect(yield* s.bokun.requests.count({ accessKey: s.a.vendor.accessKey })).toBe(0)
      expect(yield* s.surfboard.requests.count({ merchantId: s.merchant.id })).toBe(0)
      expect(yield* s.paymentRow(payment.paymentId)).toBeUndefined()
      expect((yield* s.sale(q.reference)).status).toBe("quoted")
      // Letters of any script are names; the same payment then books.
      const booked = yield* s.book(q.reference, payment, {
        customer: { firstName: "Åse Øydis", lastName: "Ñúñez-O'Brien 李", email: "åse@exämple.no" }
      })
      expect(booked.status, booked.text).toBe(200)
      expect(booked.body.status).toBe("confirmed")
    }))
})
