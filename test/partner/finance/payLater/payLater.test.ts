/**
 * GET /api/v1/finance/pay-later through the real server on PostgreSQL: every field, the filters and
 * their bounds, charge-time order with signed cursors bound to the filters, `totals[]` over every
 * matching charge (not the page), tenant isolation, no guest details and no card data. The charges
 * are the rows the bookings' trigger adds (migration 0031), moved into each state as the charger
 * and the cancels leave them. Dates are fixed days, so the file passes at any hour.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { createKey, insertBooking, makeWorld } from "../../../support/fixtures.js"
import { get } from "../../../support/http.js"
import { testServer } from "../../../support/server.js"

const ITEM_KEYS = [
  "amount_minor",
  "attempts",
  "booking",
  "charge_at",
  "collected_at",
  "currency",
  "failure_message",
  "final_deadline_at",
  "id",
  "last_attempt_at",
  "next_attempt_at",
  "partner",
  "refunded",
  "retrying",
  "state",
  "tour"
]

interface Spec {
  readonly chargeAt: string
  readonly amount: number
  readonly currency?: string
  readonly state?: "upcoming" | "failed" | "collected" | "cancelled"
  readonly retrying?: boolean
  readonly refunded?: boolean
  readonly status?: string
}

/** A pay-later booking charged at `chargeAt`, moved to its state as the charger would leave it. */
const charge = (operatorId: string, tag: string, s: Spec) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const booking = yield* insertBooking({
      operatorId,
      status: s.status ?? "CONFIRMED",
      amountMinor: s.amount,
      currency: s.currency ?? "NOK",
      experienceDate: "2026-12-20",
      guestName: `Secret Guest ${tag}`,
      guestEmail: `secret-${tag}@example.com`,
      payLater: {
        status: "upcoming",
        amountMinor: s.amount,
        currency: s.currency ?? "NOK",
        chargeAt: new Date(s.chargeAt),
        paidAt: null
      }
    })
    yield* sql`UPDATE pay_later_charges SET token_id = ${`tok-secret-${tag}`} WHERE booking_id = ${booking}`
    const state = s.state ?? "upcoming"
    if (state === "collected" || s.refunded) {
      yield* sql`UPDATE bookings SET pay_later_status = 'collected', pay_later_paid_at = ${new Date(s.chargeAt)}
        WHERE id = ${booking}`
    }
    if (state === "cancelled") {
      yield* sql`UPDATE bookings SET status = 'CANCELLED', pay_later_status = 'cancelled' WHERE id = ${booking}`
    }
    if (state === "failed") {
      yield* sql`UPDATE bookings SET pay_later_status = 'failed' WHERE id = ${booking}`
      yield* sql`
        UPDATE pay_later_charges SET retrying = ${s.retrying ?? false}, attempts = 1, last_attempt_at = charge_at,
          next_attempt_at = ${s.retrying ? sql`charge_at + interval '6 hours'` : null},
          failure_message = 'the card was declined (CARD_BLOCKED)'
        WHERE booking_id = ${booking}`
    }
    return booking
  }).pipe(Effect.orDie)

const setup = Effect.gen(function*() {
  const w = yield* makeWorld
  const t = w.tag
  const a = (s: Spec, n: number) => charge(w.alpha, `${t}a${n}`, s)
  const ids = {
    upcoming: yield* a({ chargeAt: "2026-03-03T09:00:00Z", amount: 10000 }, 1),
    retrying: yield* a({ chargeAt: "2026-03-01T09:00:00Z", amount: 20000, state: "failed", retrying: true }, 2),
    failed: yield* a({ chargeAt: "2026-03-02T23:59:59Z", amount: 30000, state: "failed" }, 3),
    collected: yield* a({ chargeAt: "2026-03-02T00:00:00Z", amount: 40000, state: "collected" }, 4),
    cancelled: yield* a({ chargeAt: "2026-03-04T09:00:00Z", amount: 50000, state: "cancelled" }, 5),
    refunded: yield* a({ chargeAt: "2026-03-05T09:00:00Z", amount: 60000, state: "cancelled", refunded: true }, 6),
    eur: yield* a({ chargeAt: "2026-03-06T09:00:00Z", amount: 7000, currency: "EUR" }, 7),
    hold: yield* a({ chargeAt: "2026-03-03T10:00:00Z", amount: 99, status: "HOLD" }, 8)
  }
  const betaCharge = yield* charge(w.beta, `${t}b`, { chargeAt: "2026-03-03T09:30:00Z", amount: 11111 })
  const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["finance:read"] })
  const both = yield* createKey({ by: w.bob, operators: [w.alpha, w.beta], scopes: ["finance:read"] })
  const noScope = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["bookings:read"] })
  return { w, ids, betaCharge, key: key.token, both: both.token, noScope: noScope.token }
})

const PATH = "/api/v1/finance/pay-later"

layer(testServer(), { excludeTestServices: true, timeout: 120_000 })("GET /api/v1/finance/pay-later", (it) => {
  it.effect("every field of a charge, in charge-time order; holds never appear; no guest details or card data", () =>
    Effect.gen(function*() {
      const { ids, key, w } = yield* setup
      const res = yield* get(`${PATH}?from=2026-03-01&to=2026-03-31`, key)
      expect(res.status, res.text).toBe(200)
      expect(res.body.next_cursor).toBeNull()
      const data = res.body.data as Array<any>
      expect(data.map((c) => c.booking.id)).toEqual([
        ids.retrying,
        ids.collected,
        ids.failed,
        ids.upcoming,
        ids.cancelled,
        ids.refunded,
        ids.eur
      ])
      for (const item of data) expect(Object.keys(item).sort()).toEqual(ITEM_KEYS)
      expect(data[0]).toMatchObject({
        partner: { id: w.alpha, name: `Alpha Tours ${w.tag}` },
        booking: { id: ids.retrying, experience_date: "2026-12-20", status: "CONFIRMED" },
        tour: "Harbour Tour",
        amount_minor: 20000,
        currency: "NOK",
        charge_at: "2026-03-01T09:00:00.000Z",
        state: "failed",
        retrying: true,
        refunded: false,
        attempts: 1,
        last_attempt_at: "2026-03-01T09:00:00.000Z",
        next_attempt_at: "2026-03-01T15:00:00.000Z",
        failure_message: "the card was declined (CARD_BLOCKED)",
        // charge_at + 72 h (the tour is far later).
        final_deadline_at: "2026-03-04T09:00:00.000Z",
        collected_at: null
      })
      expect(typeof data[0].booking.confirmation_code).toBe("string")
      expect(data[1]).toMatchObject({ state: "collected", collected_at: "2026-03-02T00:00:00.000Z", refunded: false })
      expect(data[4]).toMatchObject({ state: "cancelled", refunded: false, booking: { status: "CANCELLED" } })
      expect(data[5]).toMatchObject({ state: "cancelled", refunded: true })
      expect(res.text).not.toContain("secret")
      expect(res.text).not.toContain("Secret Guest")
      expect(res.text).not.toContain("tok-")
    }))

  it.effect("from/to are inclusive UTC charge days; state filters", () =>
    Effect.gen(function*() {
      const { ids, key } = yield* setup
      const day2 = yield* get(`${PATH}?from=2026-03-02&to=2026-03-02`, key)
      expect(day2.status, day2.text).toBe(200)
      expect(day2.body.data.map((c: any) => c.booking.id)).toEqual([ids.collected, ids.failed])
      const fromOnly = yield* get(`${PATH}?from=2026-03-05`, key)
      expect(fromOnly.body.data.map((c: any) => c.booking.id).slice(0, 2)).toEqual([ids.refunded, ids.eur])
      const toOnly = yield* get(`${PATH}?to=2026-03-01`, key)
      expect(toOnly.body.data.map((c: any) => c.booking.id)).toContain(ids.retrying)
      expect(toOnly.body.data.map((c: any) => c.booking.id)).not.toContain(ids.collected)
      const failed = yield* get(`${PATH}?state=failed&from=2026-03-01&to=2026-03-31`, key)
      expect(failed.body.data.map((c: any) => c.booking.id)).toEqual([ids.retrying, ids.failed])
    }))

  it.effect("totals per state and currency over every matching charge, not only the page; pages by cursor", () =>
    Effect.gen(function*() {
      const { ids, key } = yield* setup
      const q = "from=2026-03-01&to=2026-03-31"
      const first = yield* get(`${PATH}?${q}&limit=2`, key)
      expect(first.status, first.text).toBe(200)
      expect(first.body.data).toHaveLength(2)
      expect(first.body.totals).toEqual([
        { state: "cancelled", currency: "NOK", charges: 2, amount_minor: 110000 },
        { state: "collected", currency: "NOK", charges: 1, amount_minor: 40000 },
        { state: "failed", currency: "NOK", charges: 2, amount_minor: 50000 },
        { state: "upcoming", currency: "EUR", charges: 1, amount_minor: 7000 },
        { state: "upcoming", currency: "NOK", charges: 1, amount_minor: 10000 }
      ])
      const seen: Array<string> = first.body.data.map((c: any) => c.booking.id)
      let cursor: string | null = first.body.next_cursor
      while (cursor !== null) {
        const next = yield* get(`${PATH}?${q}&limit=2&cursor=${encodeURIComponent(cursor)}`, key)
        expect(next.status, next.text).toBe(200)
        expect(next.body.totals).toEqual(first.body.totals)
        seen.push(...next.body.data.map((c: any) => c.booking.id))
        cursor = next.body.next_cursor
      }
      expect(seen).toEqual([
        ids.retrying,
        ids.collected,
        ids.failed,
        ids.upcoming,
        ids.cancelled,
        ids.refunded,
        ids.eur
      ])
      const filtered = yield* get(`${PATH}?${q}&state=cancelled&limit=1`, key)
      expect(filtered.body.totals).toEqual([{ state: "cancelled", currency: "NOK", charges: 2, amount_minor: 110000 }])

      // A cursor belongs to its filters, and is signed.
      const other = yield* get(`${PATH}?from=2026-03-01&to=2026-03-30&limit=2&cursor=${first.body.next_cursor}`, key)
      expect(other.status, other.text).toBe(400)
      expect(other.body.detail).toContain("cursor")
      const forged = yield* get(`${PATH}?${q}&limit=2&cursor=${first.body.next_cursor.slice(0, -2)}xx`, key)
      expect(forged.status).toBe(400)
    }))

  describe("bounds", () => {
    for (
      const [query, field] of [
        ["from=2026-03-10&to=2026-03-09", "to"],
        ["from=2025-01-01&to=2026-01-02", "366"],
        ["from=2026-02-30", "from"],
        ["limit=0", "limit"],
        ["limit=101", "limit"],
        ["limit=abc", "limit"],
        ["state=paid", "state"]
      ] as const
    ) {
      it.effect(`${query} → 400 naming the problem`, () =>
        Effect.gen(function*() {
          const { key } = yield* setup
          const res = yield* get(`${PATH}?${query}`, key)
          expect(res.status, res.text).toBe(400)
          expect(res.headers.get("content-type")).toContain("application/problem+json")
          expect(res.text).toContain(field)
        }))
    }
    it.effect("366 days counting both ends, and limit 100, are allowed; default limit 50", () =>
      Effect.gen(function*() {
        const { key } = yield* setup
        expect((yield* get(`${PATH}?from=2025-03-02&to=2026-03-02&limit=100`, key)).status).toBe(200)
      }))
  })

  it.effect("tenant isolation: another operator's charges never appear; partner_id outside the key 404; scope 403", () =>
    Effect.gen(function*() {
      const { betaCharge, both, key, noScope, w } = yield* setup
      const mine = yield* get(`${PATH}?from=2026-03-01&to=2026-03-31&limit=100`, key)
      expect(mine.body.data.every((c: any) => c.partner.id === w.alpha)).toBe(true)
      expect(mine.text).not.toContain(betaCharge)
      expect((yield* get(`${PATH}?partner_id=${w.beta}`, key)).status).toBe(404)
      expect((yield* get(`${PATH}?partner_id=00000000-0000-4000-8000-000000000000`, key)).status).toBe(404)
      const beta = yield* get(`${PATH}?partner_id=${w.beta}&from=2026-03-01&to=2026-03-31`, both)
      expect(beta.status, beta.text).toBe(200)
      expect(beta.body.data.map((c: any) => c.booking.id)).toEqual([betaCharge])
      expect(beta.body.totals).toEqual([{ state: "upcoming", currency: "NOK", charges: 1, amount_minor: 11111 }])
      expect((yield* get(PATH, noScope)).status).toBe(403)
      expect((yield* get(PATH)).status).toBe(401)
    }))
})
