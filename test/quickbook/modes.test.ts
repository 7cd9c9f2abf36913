/**
 * Quickbook test and live keys never cross (issue 11 item 8), over real HTTP with the Bókun and
 * Surfboard sandboxes: one desk terminal bound to a test key and a live key. A sale quoted with one
 * mode is refused to the other at every step (reserve, release, book, status, ticket) with 403
 * `tour_not_sellable_here` and a clerk message naming the kind of sale, in both directions, and the
 * sandboxes show that nothing was verified, held, released, booked or refunded for the refused call.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { CLERK_MESSAGE_VARIANTS } from "../../src/quickbook/clerkMessages.js"
import { QuickbookKeys } from "../../src/quickbook/terminals/QuickbookKeys.js"
import { call, type Reply } from "../support/http.js"
import { paymentsEnv } from "../support/payments.js"
import { BASE, customer, type DeskWorld, deskWorld } from "../support/quickbook.js"

const env = paymentsEnv(Effect.succeed({ TOUR_AVAILABILITY_TIMEOUT_MS: "1500" }))

const expectOtherMode = (res: Reply, variant: "test_sale" | "live_sale", reference: string) => {
  expect(res.status, res.text).toBe(403)
  expect(res.body).toEqual({
    error: { code: "tour_not_sellable_here", clerkMessage: CLERK_MESSAGE_VARIANTS[variant].en, reference }
  })
  expect(res.headers.get("cache-control")).toBe("no-store")
}

/** The desk's calls with one key (test or live), on the same terminal. */
const deskCalls = (s: DeskWorld, token: string) => {
  const o = { key: token, headers: s.headers }
  return {
    quote: (count = 2) =>
      call(`${BASE}/quote`, {
        method: "POST",
        ...o,
        body: { activityId: s.tour, start: { date: s.day, time: "10:00" }, guests: [{ type: "adult", count }] }
      }),
    reserve: (reference: string) =>
      call(`${BASE}/reserve`, { method: "POST", ...o, body: { reference, idempotencyKey: randomUUID() } }),
    release: (reference: string) => call(`${BASE}/reserve/${reference}`, { method: "DELETE", ...o }),
    book: (reference: string, payment: { orderId: string; paymentId: string }, holdRef?: string) =>
      call(`${BASE}/book`, {
        method: "POST",
        ...o,
        body: { reference, ...(holdRef ? { holdRef } : {}), payment: { provider: "payprovider", ...payment }, customer }
      }),
    seatsLeft: Effect.map(
      call(`${BASE}/tours/${s.tour}/slots?date=${s.day}`, o),
      (r) => r.body.slots[0].seatsLeft as number
    ),
    status: (reference: string) => call(`${BASE}/sales/${reference}`, o),
    ticket: (reference: string) => call(`${BASE}/sales/${reference}/ticket`, o)
  }
}

/** The desk world (a test key) plus a live key bound to the same terminal. */
const world = Effect.gen(function*() {
  const s = yield* deskWorld
  const keys = yield* QuickbookKeys
  const live = yield* keys.issueKey({ mode: "live", name: "Desk app (live)", terminals: [s.terminal.id] })
  return { s, test: deskCalls(s, s.key.token), live: deskCalls(s, live.token), liveToken: live.token }
}).pipe(Effect.provide(QuickbookKeys.Default))

const saleRow = (reference: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ status: string; hold_id: string | null; paid_by_payment_id: string | null }>`
      SELECT status, hold_id, paid_by_payment_id FROM quickbook_sales WHERE reference = ${reference}`.pipe(
        Effect.orDie,
        Effect.map(([r]) => r!)
      )
  )

/** The sale's accounts (the vendor and the merchant) marked live or sandbox. */
const markAccounts = (s: DeskWorld, as: "live" | "sandbox") =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.all([
      sql`UPDATE booking_system_accounts SET sandbox = ${as === "sandbox"} WHERE id = ${s.a.accountId}`,
      sql`UPDATE operator_payment_accounts SET sandbox = ${as === "sandbox"} WHERE operator_id = ${s.w.alpha}`
    ]).pipe(Effect.orDie))

/** Neither sandbox saw a call for the operator's vendor or merchant since `clear`. */
const sandboxesUntouched = (s: DeskWorld) =>
  Effect.gen(function*() {
    expect(yield* s.bokun.requests.count({ accessKey: s.a.vendor.accessKey })).toBe(0)
    expect(yield* s.surfboard.requests.count({ merchantId: s.merchant.id })).toBe(0)
  })

const clearLogs = (s: DeskWorld) => Effect.all([s.bokun.requests.clear, s.surfboard.requests.clear])

/**
 * Every step of `other` on the sale of `own`'s mode is refused (403, the sale's kind named), and
 * nothing happened: the sale unchanged, no payment recorded, nothing at either sandbox. Then `own`
 * books it, and `other` still cannot read its status or ticket.
 */
const neverCrosses = (
  s: DeskWorld,
  own: ReturnType<typeof deskCalls>,
  other: ReturnType<typeof deskCalls>,
  variant: "test_sale" | "live_sale"
) =>
  Effect.gen(function*() {
    // A quoted sale.
    const quoted = yield* own.quote(2)
    expect(quoted.status, quoted.text).toBe(200)
    const q = quoted.body as { reference: string; cartLine: { totalMinor: number; currency: string } }
    const payment = yield* s.pay(q)
    yield* clearLogs(s)
    expectOtherMode(yield* other.status(q.reference), variant, q.reference)
    expectOtherMode(yield* other.ticket(q.reference), variant, q.reference)
    expectOtherMode(yield* other.reserve(q.reference), variant, q.reference)
    expectOtherMode(yield* other.release(q.reference), variant, q.reference)
    expectOtherMode(yield* other.book(q.reference, payment), variant, q.reference)
    yield* sandboxesUntouched(s)
    expect(yield* saleRow(q.reference)).toEqual({ status: "quoted", hold_id: null, paid_by_payment_id: null })
    expect(yield* s.paymentRow(payment.paymentId)).toBeUndefined()
    expect(yield* s.bokunBookings(q.reference)).toEqual([])
    expect(yield* s.returned(payment.orderId)).toEqual({ refundOrders: 0, refunded: 0, voided: 0 })

    // Held by its own mode: the other mode neither gets the hold, nor releases it, nor books it.
    const held = yield* own.reserve(q.reference)
    expect(held.status, held.text).toBe(200)
    const seats = yield* own.seatsLeft
    yield* clearLogs(s)
    expectOtherMode(yield* other.reserve(q.reference), variant, q.reference)
    expectOtherMode(yield* other.release(q.reference), variant, q.reference)
    expectOtherMode(yield* other.book(q.reference, payment, q.reference), variant, q.reference)
    expectOtherMode(yield* other.status(q.reference), variant, q.reference)
    yield* sandboxesUntouched(s)
    const stillHeld = yield* saleRow(q.reference)
    expect(stillHeld.status).toBe("held")
    expect(stillHeld.hold_id).toBeTruthy()
    expect(yield* own.seatsLeft).toBe(seats)
    expect(yield* s.paymentRow(payment.paymentId)).toBeUndefined()

    // Its own mode books it with the same payment (the refused calls left it untouched).
    const booked = yield* own.book(q.reference, payment, q.reference)
    expect(booked.status, booked.text).toBe(200)
    expect(booked.body.status).toBe("confirmed")
    expect(yield* s.bokunBookings(q.reference)).toHaveLength(1)
    expect((yield* own.ticket(q.reference)).status).toBe(200)
    // Confirmed: still not the other mode's to read, nor to book again.
    yield* clearLogs(s)
    expectOtherMode(yield* other.status(q.reference), variant, q.reference)
    expectOtherMode(yield* other.ticket(q.reference), variant, q.reference)
    expectOtherMode(yield* other.book(q.reference, payment), variant, q.reference)
    yield* sandboxesUntouched(s)
    expect(yield* s.bokunBookings(q.reference)).toHaveLength(1)
    expect(yield* s.returned(payment.orderId)).toEqual({ refundOrders: 0, refunded: 0, voided: 0 })
    expect((yield* s.paymentRow(payment.paymentId))!.state).toBe("confirmed")
  })

layer(env, { excludeTestServices: true, timeout: 240_000 })("quickbook: test and live keys never cross", (it) => {
  it.effect("POST /book with a live key on a sale quoted and paid with a test key: 403, nothing verified, booked or refunded", () =>
    Effect.gen(function*() {
      const { live, s } = yield* world
      const q = yield* s.quote(2)
      const payment = yield* s.pay(q)
      yield* clearLogs(s)
      expectOtherMode(yield* live.book(q.reference, payment), "test_sale", q.reference)
      yield* sandboxesUntouched(s)
      expect(yield* saleRow(q.reference)).toEqual({ status: "quoted", hold_id: null, paid_by_payment_id: null })
      expect(yield* s.paymentRow(payment.paymentId)).toBeUndefined()
      expect(yield* s.bokunBookings(q.reference)).toEqual([])
      expect(yield* s.returned(payment.orderId)).toEqual({ refundOrders: 0, refunded: 0, voided: 0 })
    }))

  it.effect("a live key cannot reserve, release, book, read or print a sale quoted with a test key", () =>
    Effect.gen(function*() {
      const { live, s, test } = yield* world
      yield* neverCrosses(s, test, live, "test_sale")
    }))

  it.effect("a test key cannot reserve, release, book, read or print a sale quoted with a live key", () =>
    Effect.gen(function*() {
      const { live, s, test } = yield* world
      // The operator's accounts are live now: the live key sells, the test key does not.
      yield* markAccounts(s, "live")
      yield* neverCrosses(s, live, test, "live_sale")
    }))

  it.effect("the sale's mode is the key's at quote time: accounts marked the other way later do not open it to the other mode", () =>
    Effect.gen(function*() {
      const { live, liveToken, s, test } = yield* world
      const quoted = yield* test.quote(1)
      expect(quoted.status, quoted.text).toBe(200)
      const q = quoted.body as { reference: string; cartLine: { totalMinor: number; currency: string } }
      const payment = yield* s.pay(q)
      // Re-marked live: the live key may now sell the tour, but this sale stays a test sale.
      yield* markAccounts(s, "live")
      yield* clearLogs(s)
      expectOtherMode(yield* live.reserve(q.reference), "test_sale", q.reference)
      expectOtherMode(yield* live.book(q.reference, payment), "test_sale", q.reference)
      expectOtherMode(yield* live.status(q.reference), "test_sale", q.reference)
      yield* sandboxesUntouched(s)
      expect(yield* s.paymentRow(payment.paymentId)).toBeUndefined()
      expect(yield* s.bokunBookings(q.reference)).toEqual([])
      // Norwegian clerk message.
      const nb = yield* call(`${BASE}/sales/${q.reference}`, {
        key: liveToken,
        headers: { ...s.headers, "accept-language": "nb" }
      })
      expect(nb.status).toBe(403)
      expect(nb.body.error.clerkMessage).toBe(CLERK_MESSAGE_VARIANTS.test_sale.nb)
    }))
})
