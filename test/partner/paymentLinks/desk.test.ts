/**
 * POST /api/v1/bookings/{id}/payment-link for a booking this service itself was paid for at the
 * desk (Quickbook POST /book, paid at the card terminal), through the real server with the Bókun and
 * Surfboard sandboxes on one database: the mirror refreshed from the Bókun sandbox, which still says
 * the booking is NOT_PAID (the booking system has not heard of the desk payment), and the link asked
 * for the manifest row. Our own payment records decide: nothing is offered for what we collected.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { Mirror } from "../../../src/mirror/Mirror.js"
import { BookingSystemAccounts } from "../../../src/operators/BookingSystemAccounts.js"
import { createKey } from "../../support/fixtures.js"
import { call } from "../../support/http.js"
import { mailTo, paymentsEnv } from "../../support/payments.js"
import { customer, type DeskWorld, deskWorld } from "../../support/quickbook.js"

const env = paymentsEnv(Effect.succeed({ TOUR_AVAILABILITY_TIMEOUT_MS: "1500" }))

const paymentLink = (id: string, key: string) =>
  call(`/api/v1/bookings/${id}/payment-link`, {
    method: "POST",
    key,
    body: {},
    headers: { "Idempotency-Key": randomUUID() }
  })

/** The mirror refresh of the desk's booking-system account, as the job runs it. */
const refreshMirror = (accountId: string) =>
  Effect.flatMap(Mirror, (m) => m.refresh({ kind: "manual", daysAhead: 3, accountId })).pipe(
    Effect.provide(Mirror.Default.pipe(Layer.provide(BookingSystemAccounts.Default)))
  )

/** Orders the Surfboard sandbox holds for the merchant (the desk payment and any payment link). */
const sandboxOrders = (merchantId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ id: string; amount_minor: number }>`
      SELECT id, amount_minor::int AS amount_minor FROM surfboard_sandbox.orders WHERE merchant_id = ${merchantId}
      ORDER BY created_at`.pipe(Effect.orDie))

/**
 * A desk sale of `count` adults, paid at the card terminal and booked at Bókun; the Bókun sandbox
 * made to say the booking is unpaid (whatever it records of desk payments), the mirror refreshed.
 * Returns the sale, its manifest row, and a partner key over the desk's operator.
 */
const deskSaleInMirror = (s: DeskWorld, count = 2) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const q = yield* s.quote(count)
    const payment = yield* s.pay(q)
    const booked = yield* s.book(q.reference, payment, { phone: "+4791234567" })
    expect(booked.status, booked.text).toBe(200)
    expect(booked.body.status).toBe("confirmed")
    // The booking system does not know of the desk payment (this test does not depend on whether it is told).
    yield* sql`UPDATE bokun_sandbox.bookings SET paid_minor = 0, payment_status = NULL WHERE external_reference = ${q.reference}`
      .pipe(Effect.orDie)
    const refreshed = yield* refreshMirror(s.a.accountId)
    expect(refreshed.failed).toBe(0)
    const [row] = yield* sql<{ id: string; payment_status: string | null; guest_email: string | null }>`
      SELECT id, payment_status, guest_email FROM manifest_rows WHERE account_id = ${s.a.accountId} AND external_reference = ${q.reference}`
      .pipe(Effect.orDie)
    expect(row).toMatchObject({ payment_status: "NOT_PAID", guest_email: customer.email })
    const key = yield* createKey({ by: s.w.alice, operators: [s.w.alpha], scopes: ["payment_links:write"] })
    return { q, payment, row: row!, key }
  })

layer(env, { excludeTestServices: true, timeout: 240_000 })("payment link for a booking paid at the desk", (it) => {
  describe("the booking system says NOT_PAID, our records say paid at the desk", () => {
    it.effect("422 nothing owed, no link made at the payment sandbox, nobody emailed", () =>
      Effect.gen(function*() {
        const s = yield* deskWorld
        const { q, row, key } = yield* deskSaleInMirror(s)
        const before = yield* sandboxOrders(s.merchant.id)
        const mailsBefore = (yield* mailTo(customer.email)).length
        const res = yield* paymentLink(row.id, key.token)
        expect(res.status, res.text).toBe(422)
        expect(res.headers.get("content-type")).toBe("application/problem+json")
        expect(res.body.type).toBe("/api/v1/docs/errors.md#not-possible")
        expect(res.body.detail).toContain("sales desk")
        // The sandbox's own records: no payment link (the only order is the desk payment).
        expect(yield* sandboxOrders(s.merchant.id)).toEqual(before)
        expect(before.map((o) => o.amount_minor)).toEqual([q.cartLine.totalMinor])
        expect(yield* mailTo(customer.email)).toHaveLength(mailsBefore)
        const sql = yield* SqlClient.SqlClient
        const links = yield* sql`SELECT id FROM payment_links WHERE manifest_row_id = ${row.id}`.pipe(Effect.orDie)
        expect(links).toHaveLength(0)
      }))

    it.effect("the booking system asks for more than the desk took (a guest added there): a link for the rest only", () =>
      Effect.gen(function*() {
        const s = yield* deskWorld
        const sql = yield* SqlClient.SqlClient
        const { q, row, key } = yield* deskSaleInMirror(s, 1)
        yield* sql`
          UPDATE bokun_sandbox.product_bookings SET total_minor = total_minor + 15000
          WHERE booking_id = (SELECT id FROM bokun_sandbox.bookings WHERE external_reference = ${q.reference})`.pipe(
          Effect.orDie
        )
        const res = yield* paymentLink(row.id, key.token)
        expect(res.status, res.text).toBe(200)
        expect(res.body).toMatchObject({ kind: "provider_balance", amount_minor: 15000, currency: q.cartLine.currency })
        const orders = yield* sandboxOrders(s.merchant.id)
        expect(orders.map((o) => o.amount_minor)).toEqual([q.cartLine.totalMinor, 15000])
      }))

    it.effect("a desk payment that was returned (the sale failed) is not counted as collected", () =>
      Effect.gen(function*() {
        const s = yield* deskWorld
        const sql = yield* SqlClient.SqlClient
        const { row, key, payment } = yield* deskSaleInMirror(s)
        // As if the desk payment had gone back to the guest.
        yield* sql`UPDATE quickbook_payments SET state = 'refunded', refund_method = 'refund', refund_reference = 'test',
          failure_reason = 'provider_refused' WHERE payment_id = ${payment.paymentId}`.pipe(Effect.orDie)
        const res = yield* paymentLink(row.id, key.token)
        expect(res.status, res.text).toBe(200)
        expect(res.body.kind).toBe("provider_balance")
      }))
  })
})
