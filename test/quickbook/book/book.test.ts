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
import { Effect, Fiber, Layer } from "effect"
import { Mirror } from "../../../src/mirror/Mirror.js"
import { BookingSystemAccounts } from "../../../src/operators/BookingSystemAccounts.js"
import { failedClerkMessage } from "../../../src/quickbook/book/rules.js"
import { CLERK_MESSAGES, invalidFieldMessage } from "../../../src/quickbook/clerkMessages.js"
import { captivePortal } from "../../support/captivePortal.js"
import { createKey } from "../../support/fixtures.js"
import { call, get, type Reply } from "../../support/http.js"
import { merchantFor, PartnerId, paymentsEnv } from "../../support/payments.js"
import {
  BASE,
  customer,
  type DeskWorld,
  deskWorld,
  everyVerifiedPaymentSettled,
  expectReturnedOnce
} from "../../support/quickbook.js"
import { withRoomInWindow } from "../../support/rateWindow.js"

/** The server with both sandboxes, and the mirror refresh reading the Bókun sandbox (as its job does). */
const env = Mirror.Default.pipe(
  Layer.provide(BookingSystemAccounts.Default),
  Layer.provideMerge(paymentsEnv(Effect.succeed({ TOUR_AVAILABILITY_TIMEOUT_MS: "1500" })))
)

const DAY = 86_400_000
const yesterday = () => new Date(Date.now() - DAY - 3_600_000)

const expectError = (res: Reply, status: number, code: string, clerkMessage = (CLERK_MESSAGES as any)[code].en) => {
  expect(res.status, res.text).toBe(status)
  expect(res.body.error).toMatchObject({ code, clerkMessage })
  expect(res.headers.get("cache-control")).toBe("no-store")
}

/** A 400 naming the body field at fault (issue 11: not "the sale could not be read" for everything). */
const expectInvalid = (res: Reply, field: string, missing = false) =>
  expectError(res, 400, "invalid_request", invalidFieldMessage(field, missing, "en"))

const expectFailed = (res: Reply, reason: string, moneyReturned = true) => {
  expect(res.status, res.text).toBe(200)
  expect(res.body).toEqual({
    status: "failed",
    reason,
    moneyReturned,
    clerkMessage: failedClerkMessage(reason as any, moneyReturned, "en")
  })
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
      expect(ticket.qrPayload).toMatch(new RegExp(`/b/${ticket.bookingCode}$`))
      for (const line of ticket.lines32) expect(line.length).toBeLessThanOrEqual(32)
      for (const line of ticket.lines48) expect(line.length).toBeLessThanOrEqual(48)
      expect(ticket.lines48.join("\n")).toContain("Fjord Cruise")
      expect(ticket.lines48.join("\n")).toContain(ticket.bookingCode)
      expect(ticket.lines48.join("\n")).toContain("Kari Nordmann")
      // The same ticket as the reprint in the sale's language, and the status read; the PDF link opens.
      expect((yield* get(`${BASE}/sales/${q.reference}/ticket?lang=nb`, s.key.token, s.headers)).body).toEqual(ticket)
      const status = yield* get(`${BASE}/sales/${q.reference}`, s.key.token, s.headers)
      expect(status.body).toMatchObject({ reference: q.reference, status: "confirmed", ticket })
      const pdf = yield* Effect.promise(() => fetch(ticket.pdfUrl))
      expect(pdf.status).toBe(200)
      expect(pdf.headers.get("content-type")).toBe("application/pdf")
      expect(Buffer.from(yield* Effect.promise(() => pdf.arrayBuffer())).subarray(0, 5).toString()).toBe("%PDF-")
      // The guest's confirmation email, in Norwegian, through the outbox.
      const outbox = yield* Effect.flatMap(
        SqlClient.SqlClient,
        (sql) =>
          sql<{ dedupe_key: string; locale: string; subject: string; text_body: string }>`
          SELECT dedupe_key, locale, subject, text_body FROM email_outbox WHERE ${customer.email} = ANY(to_addresses)
            AND dedupe_key LIKE ${`quickbook:${q.reference}:%`}`.pipe(Effect.orDie)
      )
      expect(outbox.map((m) => [m.dedupe_key, m.locale])).toEqual([[`quickbook:${q.reference}:confirmed:guest`, "nb"]])
      expect(outbox[0]!.text_body).toContain(ticket.bookingCode)
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

  // Each way a desk sale is booked at Bókun: reserve + confirm, a hold confirmed, one checkout (no reservations).
  for (const way of ["seats", "hold", "one checkout"] as const) {
    it.effect(`paid at the desk is paid in the booking system (${way}): the Bókun booking carries the payment; after a mirror refresh the manifest row reads PAID`, () =>
      Effect.gen(function*() {
        const s = yield* deskWorld
        const sql = yield* SqlClient.SqlClient
        if (way === "one checkout") {
          yield* sql`UPDATE bokun_sandbox.products SET supports_holds = false WHERE id = ${s.pa.id}`
        }
        const q = yield* s.quote(2)
        if (way === "hold") yield* s.reserve(q.reference)
        const payment = yield* s.pay(q)
        const res = yield* s.book(q.reference, payment, way === "hold" ? { holdRef: q.reference } : {})
        expect(res.body.status, res.text).toBe("confirmed")
        // The sandbox's record: what was paid, with our provider's payment as the transaction.
        const [booked] = yield* sql<{ paid_minor: number; payment_reference: string | null; status: string }>`
          SELECT paid_minor::int AS paid_minor, payment_reference, status FROM bokun_sandbox.bookings WHERE external_reference = ${q.reference}`
        expect(booked).toEqual({
          paid_minor: q.cartLine.totalMinor,
          payment_reference: payment.paymentId,
          status: "CONFIRMED"
        })
        // The mirror refreshes; the manifest shows the desk sale as paid.
        yield* Effect.flatMap(Mirror, (m) => m.refresh({ kind: "manual", daysAhead: 2, accountId: s.a.accountId }))
        const key = yield* createKey({ by: s.w.alice, operators: [s.w.alpha], scopes: ["manifest:read"] })
        const manifest = yield* get(`/api/v1/manifest?date=${s.day}`, key.token)
        expect(manifest.status, manifest.text).toBe(200)
        const rows = manifest.body.departures.flatMap((d: any) => d.bookings).filter((r: any) =>
          r.reference === res.body.ticket.bookingCode
        )
        expect(rows.map((r: any) => r.payment_status)).toEqual(["PAID"])
        expect(yield* s.returned(payment.orderId)).toEqual({ refundOrders: 0, refunded: 0, voided: 0 })
      }))
  }

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

  it.effect("a tour that needs the guest's phone: the quote says requiresPhone; with the phone the sale books", () =>
    Effect.gen(function*() {
      const s = yield* deskWorld
      yield* Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql`UPDATE tours SET requires_phone = true WHERE id = ${s.tour}`.pipe(Effect.orDie)
      )
      const q = yield* s.quote(1)
      expect((q.cartLine as unknown as { requiresPhone: boolean }).requiresPhone).toBe(true)
      const res = yield* s.book(q.reference, yield* s.pay(q), { phone: "+4791234567" })
      expect(res.status, res.text).toBe(200)
      expect(res.body.status).toBe("confirmed")
    }))

  it.effect("five concurrent calls with the same payment: one booking, the same answer for all", () =>
    Effect.gen(function*() {
      const s = yield* deskWorld
      const { payment, q } = yield* paidSale(s)
      const answers = yield* Effect.all(Array.from({ length: 5 }, () => s.book(q.reference, payment)), {
        concurrency: 5
      })
      for (const res of answers) {
        expect(res.status, res.text).toBe(200)
        expect(res.body).toEqual(answers[0]!.body)
      }
      expect(answers[0]!.body.status).toBe("confirmed")
      expect((yield* s.bokunBookings(q.reference)).map((b) => b.status)).toEqual(["CONFIRMED"])
      expect(yield* s.seatsLeft).toBe(8)
      expect(yield* s.returned(payment.orderId)).toEqual({ refundOrders: 0, refunded: 0, voided: 0 })
    }))

  it.effect("a second, different payment for a booked sale: duplicate_payment, returned exactly once, the sale stands", () =>
    Effect.gen(function*() {
      const s = yield* deskWorld
      const { payment, q } = yield* paidSale(s)
      const first = yield* s.book(q.reference, payment)
      expect(first.body.status).toBe("confirmed")
      const second = yield* s.pay(q)
      const dup = yield* s.book(q.reference, second)
      expectFailed(dup, "duplicate_payment")
      yield* expectReturnedOnce(s, second.orderId, q.cartLine.totalMinor)
      expect(yield* s.paymentRow(second.paymentId)).toMatchObject({
        state: "refunded",
        role: "duplicate",
        failure_reason: "duplicate_payment"
      })
      expect(yield* s.sale(q.reference)).toMatchObject({ status: "confirmed", paid_by_payment_id: payment.paymentId })
      // Repeats of either payment: their stored answers; nothing moves again.
      expect((yield* s.book(q.reference, second)).body).toEqual(dup.body)
      expect((yield* s.book(q.reference, payment)).body).toEqual(first.body)
      yield* expectReturnedOnce(s, second.orderId, q.cartLine.totalMinor)
      expect(yield* s.returned(payment.orderId)).toEqual({ refundOrders: 0, refunded: 0, voided: 0 })
      expect((yield* s.bokunBookings(q.reference)).length).toBe(1)
    }))

  it.effect("a duplicate paid yesterday cannot be voided: refunded (a refund order), once", () =>
    Effect.gen(function*() {
      const s = yield* deskWorld
      const { payment, q } = yield* paidSale(s)
      expect((yield* s.book(q.reference, payment)).body.status).toBe("confirmed")
      const second = yield* s.pay(q, { at: yesterday() })
      expectFailed(yield* s.book(q.reference, second), "duplicate_payment")
      expect(yield* s.returned(second.orderId)).toEqual({ refundOrders: 1, refunded: q.cartLine.totalMinor, voided: 0 })
      expect(yield* s.paymentRow(second.paymentId)).toMatchObject({
        refund_method: "refund",
        refund_state: "completed"
      })
    }))

  it.effect("payment_mismatch for amount, currency, reference, terminal and merchant: 409, nothing booked, nothing refunded, alerted once", () =>
    Effect.gen(function*() {
      const s = yield* deskWorld
      const sql = yield* SqlClient.SqlClient
      const cases: Array<
        [
          string,
          (
            q: { reference: string; cartLine: { totalMinor: number; currency: string } }
          ) => Effect.Effect<{ orderId: string; paymentId: string }>
        ]
      > = [
        ["amount", (q) => s.pay(q, { amountMinor: q.cartLine.totalMinor - 100 })],
        ["currency", (q) => s.pay(q, { currency: "EUR" })],
        ["reference", (q) => s.pay(q, { referenceId: "SVC-OTHERSALE00" })],
        ["terminal", (q) => s.pay(q, { terminalId: s.otherCard })]
      ]
      for (const [field, pay] of cases) {
        const q = yield* s.quote(1)
        const payment = yield* pay(q)
        const res = yield* s.book(q.reference, payment)
        expectError(res, 409, "payment_mismatch")
        expect(res.body.error.reference, field).toBe(q.reference)
        const row = yield* s.paymentRow(payment.paymentId)
        expect(row, field).toMatchObject({ state: "mismatch", refund_method: null, alerted_at: expect.any(Date) })
        // A repeat answers the same 409 and does not alert again.
        expectError(yield* s.book(q.reference, payment), 409, "payment_mismatch")
        expect((yield* s.paymentRow(payment.paymentId))!.alerted_at).toEqual(row!.alerted_at)
        expect(yield* s.bokunBookings(q.reference), field).toEqual([])
        expect(yield* s.returned(payment.orderId), field).toEqual({ refundOrders: 0, refunded: 0, voided: 0 })
        expect(yield* s.sale(q.reference), field).toMatchObject({ status: "quoted", paid_by_payment_id: null })
      }
      // Merchant: the operator's merchant changed after the quote; the payment is on the new one.
      const q = yield* s.quote(1)
      const other = yield* s.surfboard.createMerchant({ name: "Alpha's new merchant", partnerId: yield* PartnerId })
      yield* sql`UPDATE operator_payment_accounts SET merchant_id = ${other.id} WHERE operator_id = ${s.w.alpha}`
      const payment = yield* s.pay(q, { merchantId: other.id })
      expectError(yield* s.book(q.reference, payment), 409, "payment_mismatch")
      expect((yield* s.paymentRow(payment.paymentId))!.detail).toContain(`merchant ${other.id}`)
      expect(yield* s.bokunBookings(q.reference)).toEqual([])
      expect(yield* s.returned(payment.orderId)).toEqual({ refundOrders: 0, refunded: 0, voided: 0 })
    }))

  it.effect("payment_not_found: 422, nothing stored; once the card is presented the same call books", () =>
    Effect.gen(function*() {
      const s = yield* deskWorld
      const q = yield* s.quote(2)
      const unpaid = yield* s.surfboard.createPaidOrder({
        merchantId: s.merchant.id,
        terminalId: s.deskCard,
        amountMinor: q.cartLine.totalMinor,
        currency: "NOK",
        referenceId: q.reference,
        pay: false
      })
      const paid = yield* s.surfboard.payOrder(unpaid.orderId)
      // Unknown order; a payment id the order does not have; the card not presented yet.
      expectError(
        yield* s.book(q.reference, { orderId: "no-such-order", paymentId: paid.paymentId }),
        422,
        "payment_not_found"
      )
      expectError(
        yield* s.book(q.reference, { orderId: unpaid.orderId, paymentId: "no-such-payment" }),
        422,
        "payment_not_found"
      )
      const notYet = yield* s.surfboard.createPaidOrder({
        merchantId: s.merchant.id,
        terminalId: s.deskCard,
        amountMinor: q.cartLine.totalMinor,
        currency: "NOK",
        referenceId: q.reference,
        pay: false
      })
      const declinedPay = yield* s.surfboard.payOrder(notYet.orderId, { declined: true })
      expectError(
        yield* s.book(q.reference, { orderId: notYet.orderId, paymentId: declinedPay.paymentId }),
        422,
        "payment_not_found"
      )
      expect(yield* s.paymentRow(declinedPay.paymentId)).toBeUndefined()
      expect(yield* s.sale(q.reference)).toMatchObject({ status: "quoted", paid_by_payment_id: null })
      expect(yield* s.bokunBookings(q.reference)).toEqual([])
      // The paid one books.
      const ok = yield* s.book(q.reference, { orderId: unpaid.orderId, paymentId: paid.paymentId })
      expect(ok.status, ok.text).toBe(200)
      expect(ok.body.status).toBe("confirmed")
    }))

  it.effect("a payment already presented for one sale, sent for another (this desk's or another operator's): 409 payment_mismatch, nothing of the first sale shown, nothing moves", () =>
    Effect.gen(function*() {
      const s = yield* deskWorld
      const { payment, q } = yield* paidSale(s)
      const first = yield* s.book(q.reference, payment)
      expect(first.body.status, first.text).toBe("confirmed")
      // The same desk, another of its sales.
      const mine = yield* s.quote(1)
      const again = yield* s.book(mine.reference, payment)
      expectError(again, 409, "payment_mismatch")
      expect(again.body.error.reference).toBe(mine.reference)
      expect(again.text).not.toContain(first.body.ticket.bookingCode)
      // Another operator's desk.
      const other = yield* deskWorld
      const theirs = yield* other.quote(1)
      const foreign = yield* other.book(theirs.reference, payment)
      expectError(foreign, 409, "payment_mismatch")
      expect(foreign.text).not.toContain(first.body.ticket.bookingCode)
      expect(foreign.text).not.toContain(q.reference)
      // Nothing moved: the first sale stands, the others are still quoted, no refund, one booking.
      expect(yield* s.sale(q.reference)).toMatchObject({ status: "confirmed", paid_by_payment_id: payment.paymentId })
      expect((yield* s.sale(mine.reference)).status).toBe("quoted")
      expect((yield* other.sale(theirs.reference)).status).toBe("quoted")
      expect(yield* s.returned(payment.orderId)).toEqual({ refundOrders: 0, refunded: 0, voided: 0 })
      expect((yield* s.bokunBookings(q.reference)).length).toBe(1)
      expect(yield* s.paymentRow(payment.paymentId)).toMatchObject({ state: "confirmed", alerted_at: null })
    }))

  it.effect("400 invalid_request for a body that does not validate or a holdRef not the sale's; 404 for another sale", () =>
    Effect.gen(function*() {
      const s = yield* deskWorld
      const q = yield* s.quote(1)
      const payment = { orderId: "o-1", paymentId: "p-1" }
      expectInvalid(yield* s.book(q.reference, payment, { phone: "004791234567" }), "customer.phone")
      expectInvalid(yield* s.book(q.reference, payment, { phone: "+47 912 34 567" }), "customer.phone")
      expectInvalid(
        yield* s.book(q.reference, payment, { customer: { firstName: "Kari", lastName: "Nordmann" } }),
        "customer.email",
        true
      )
      expectInvalid(
        yield* s.book(q.reference, payment, { customer: { ...customer, email: "not-an-email" } }),
        "customer.email"
      )
      expectInvalid(
        yield* s.book(q.reference, payment, { customer: { ...customer, firstName: "" } }),
        "customer.firstName"
      )
      expectInvalid(yield* s.book("SVC-bad", payment), "reference")
      expectInvalid(yield* s.book(q.reference, { orderId: "", paymentId: "p-1" }), "payment.orderId")
      expectInvalid(yield* s.book(q.reference, payment, { language: "de" as any }), "language")
      const wrongProvider = yield* call(`${BASE}/book`, {
        method: "POST",
        key: s.key.token,
        headers: s.headers,
        body: { reference: q.reference, payment: { provider: "stripe", ...payment }, customer }
      })
      expectInvalid(wrongProvider, "payment.provider")
      expectError(yield* s.book("SVC-0000000000", payment), 404, "not_found")
      expectError(yield* s.book(q.reference, payment, { holdRef: "SVC-0000000000" }), 400, "invalid_request")
      // Another terminal's sale is not found here.
      const other = yield* deskWorld
      const theirs = yield* other.quote(1)
      expectError(yield* s.book(theirs.reference, payment), 404, "not_found")
      expect(yield* s.paymentRow("p-1")).toBeUndefined()
    }))

  // Every failure reason after verification: 200 failed, the money returned once, the sale failed, nothing booked.
  const failsWith = (
    reason: string,
    arrange: (s: DeskWorld, q: { reference: string }) => Effect.Effect<unknown, never, SqlClient.SqlClient>,
    o: { count?: number } = {}
  ) =>
    it.effect(`failed ${reason}: 200 failed, the payment returned exactly once, the sale failed, nothing booked`, () =>
      Effect.gen(function*() {
        const s = yield* deskWorld
        const q = yield* s.quote(o.count ?? 2)
        const arranged = yield* arrange(s, q)
        const options =
          (arranged !== null && typeof arranged === "object" && !Array.isArray(arranged) ? arranged : {}) as {
            holdRef?: string
            phone?: string
          }
        const payment = yield* s.pay(q)
        const res = yield* s.book(q.reference, payment, options)
        expectFailed(res, reason)
        yield* expectReturnedOnce(s, payment.orderId, q.cartLine.totalMinor)
        expect(yield* s.sale(q.reference)).toMatchObject({
          status: "failed",
          failure_reason: reason,
          paid_by_payment_id: payment.paymentId
        })
        expect((yield* s.bokunBookings(q.reference)).filter((b) => b.status === "CONFIRMED")).toEqual([])
        expect(yield* s.paymentRow(payment.paymentId)).toMatchObject({
          state: "refunded",
          role: "sale",
          failure_reason: reason
        })
        // The status read says why; the guest is emailed once that the money goes back.
        expect((yield* get(`${BASE}/sales/${q.reference}`, s.key.token, s.headers)).body).toMatchObject({
          status: "failed",
          reason,
          moneyReturned: true
        })
        const mail = yield* Effect.flatMap(
          SqlClient.SqlClient,
          (sql) =>
            sql<
              { dedupe_key: string }
            >`SELECT dedupe_key FROM email_outbox WHERE dedupe_key LIKE ${`quickbook:${q.reference}:%`}`.pipe(
              Effect.orDie
            )
        )
        expect(mail.map((m) => m.dedupe_key)).toEqual([`quickbook:${q.reference}:failed:guest`])
        // The repeat: the same answer; nothing moves again.
        expect((yield* s.book(q.reference, payment, options)).body).toEqual(res.body)
        yield* expectReturnedOnce(s, payment.orderId, q.cartLine.totalMinor)
        // In Norwegian.
        const nb = yield* s.book(q.reference, payment, { ...options, headers: { "accept-language": "nb" } })
        expect(nb.body.clerkMessage).toBe(failedClerkMessage(reason as any, true, "nb"))
        yield* s.bokun.faults.reset
      }))

  failsWith(
    "sold_out",
    (s) => s.bokun.setDepartureCapacity({ productId: s.pa.id, startTimeId: s.startTimeId, date: s.day, capacity: 1 })
  )
  failsWith("price_changed", (s, q) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE quickbook_sales SET valid_until = now() - interval '1 second' WHERE reference = ${q.reference}`
        .pipe(Effect.orDie)
      const adult = s.pa.pricingCategories.find((c) => c.isDefault)!
      yield* s.bokun.setDayPrices({ rateId: s.pa.rates[0]!.id, dates: [s.day], prices: { [String(adult.id)]: 59900 } })
    }))
  failsWith("hold_expired", (s, q) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* s.reserve(q.reference).pipe(Effect.orDie)
      yield* sql`UPDATE quickbook_sales SET hold_expires_at = now() - interval '1 second' WHERE reference = ${q.reference}`
        .pipe(Effect.orDie)
      return { holdRef: q.reference }
    }))
  // A hold made, then the product stops allowing reservations: the booking system will not confirm it.
  failsWith("hold_not_supported", (s, q) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* s.reserve(q.reference).pipe(Effect.orDie)
      yield* sql`UPDATE bokun_sandbox.products SET supports_holds = false WHERE id = ${s.pa.id}`.pipe(Effect.orDie)
      return { holdRef: q.reference }
    }))

  it.effect("a product that does not allow reservations is booked in one checkout, confirmed at once", () =>
    Effect.gen(function*() {
      const s = yield* deskWorld
      yield* Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql`UPDATE bokun_sandbox.products SET supports_holds = false WHERE id = ${s.pa.id}`.pipe(Effect.orDie)
      )
      const q = yield* s.quote(2)
      const payment = yield* s.pay(q)
      const res = yield* s.book(q.reference, payment)
      expect(res.status, res.text).toBe(200)
      expect(res.body.status, res.text).toBe("confirmed")
      expect(yield* s.bokunBookings(q.reference)).toEqual([{
        confirmation_code: res.body.ticket.bookingCode,
        status: "CONFIRMED",
        phone: null
      }])
      expect(yield* s.seatsLeft).toBe(8)
      // A repeat books nothing more.
      expect((yield* s.book(q.reference, payment)).body).toEqual(res.body)
      expect((yield* s.bokunBookings(q.reference)).length).toBe(1)
    }))
  failsWith(
    "tour_not_sellable_here",
    (s) =>
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql`UPDATE tours SET status = 'draft' WHERE id = ${s.tour}`.pipe(Effect.orDie)
      )
  )
  it.effect("phone_required is answered before the payment is touched: 422, nothing recorded or returned; the same payment books with the phone", () =>
    Effect.gen(function*() {
      const s = yield* deskWorld
      const sql = yield* SqlClient.SqlClient
      // The quote says so (requiresPhone), or the tour needs it since the quote: either way, before any money moves.
      for (const when of ["quoted", "since the quote"] as const) {
        if (when === "quoted") yield* sql`UPDATE tours SET requires_phone = true WHERE id = ${s.tour}`
        const q = yield* s.quote(1)
        expect((q.cartLine as unknown as { requiresPhone: boolean }).requiresPhone, when).toBe(when === "quoted")
        if (when === "since the quote") yield* sql`UPDATE tours SET requires_phone = true WHERE id = ${s.tour}`
        const payment = yield* s.pay(q)
        const refused = yield* s.book(q.reference, payment)
        expectError(refused, 422, "phone_required")
        expect(refused.body.error.reference).toBe(q.reference)
        expect(yield* s.paymentRow(payment.paymentId), when).toBeUndefined()
        expect(yield* s.sale(q.reference), when).toMatchObject({ status: "quoted", paid_by_payment_id: null })
        expect(yield* s.returned(payment.orderId), when).toEqual({ refundOrders: 0, refunded: 0, voided: 0 })
        expect(yield* s.bokunBookings(q.reference), when).toEqual([])
        // The clerk asks for the phone and sends the same payment again: booked, once, with the phone.
        const booked = yield* s.book(q.reference, payment, { phone: "+4791234567" })
        expect(booked.body.status, booked.text).toBe("confirmed")
        expect(yield* s.bokunBookings(q.reference), when).toEqual([{
          confirmation_code: booked.body.ticket.bookingCode,
          status: "CONFIRMED",
          phone: "+4791234567"
        }])
        expect(yield* s.returned(payment.orderId), when).toEqual({ refundOrders: 0, refunded: 0, voided: 0 })
        // A repeat without the phone answers what the payment did (the stored answer), not 422.
        expect((yield* s.book(q.reference, payment)).body, when).toEqual(booked.body)
        yield* sql`UPDATE tours SET requires_phone = false WHERE id = ${s.tour}`
      }
    }))

  it.effect("a payment for a sale that already failed: 200 failed duplicate_payment saying to make a new quote (not that the sale stands), returned once; a new quote books", () =>
    Effect.gen(function*() {
      const s = yield* deskWorld
      const q = yield* s.quote(2)
      yield* s.bokun.setDepartureCapacity({ productId: s.pa.id, startTimeId: s.startTimeId, date: s.day, capacity: 1 })
      const first = yield* s.pay(q)
      expectFailed(yield* s.book(q.reference, first), "sold_out")
      yield* s.bokun.setDepartureCapacity({ productId: s.pa.id, startTimeId: s.startTimeId, date: s.day, capacity: 10 })
      // The clerk takes the card again for the same (failed) sale.
      const second = yield* s.pay(q)
      const res = yield* s.book(q.reference, second)
      expect(res.status, res.text).toBe(200)
      expect(res.body).toEqual({
        status: "failed",
        reason: "duplicate_payment",
        moneyReturned: true,
        clerkMessage: failedClerkMessage("duplicate_payment", true, "en", "sale_failed")
      })
      expect(res.body.clerkMessage).toContain("Make a new quote")
      expect(res.body.clerkMessage).not.toContain("stands")
      const nb = yield* s.book(q.reference, second, { headers: { "accept-language": "nb" } })
      expect(nb.body.clerkMessage).toBe(failedClerkMessage("duplicate_payment", true, "nb", "sale_failed"))
      // Both payments returned exactly once; the sale stays failed with its own reason; nothing booked.
      yield* expectReturnedOnce(s, first.orderId, q.cartLine.totalMinor)
      yield* expectReturnedOnce(s, second.orderId, q.cartLine.totalMinor)
      expect(yield* s.sale(q.reference)).toMatchObject({
        status: "failed",
        failure_reason: "sold_out",
        paid_by_payment_id: first.paymentId
      })
      expect(yield* s.paymentRow(second.paymentId)).toMatchObject({
        state: "refunded",
        role: "duplicate",
        failure_reason: "duplicate_payment"
      })
      expect((yield* s.bokunBookings(q.reference)).filter((b) => b.status === "CONFIRMED")).toEqual([])
      // A new quote sells.
      const again = yield* s.quote(2)
      const paid = yield* s.pay(again)
      expect((yield* s.book(again.reference, paid)).body.status).toBe("confirmed")
    }))

  /**
   * A first payment whose booking at Bókun is slowed (latency), and a second payment for the same
   * sale sent while the first is at Bókun (the sandbox has its booking request): the duplicate's
   * answer must not say the sale stands before it does. Several rounds and latencies.
   */
  const duplicateWhileBooking = (s: DeskWorld, latencyMs: number, refuse: boolean) =>
    Effect.gen(function*() {
      const q = yield* s.quote(2)
      const first = yield* s.pay(q)
      const second = yield* s.pay(q)
      yield* s.bokun.requests.clear
      yield* s.bokun.faults.set({ latencyMs, refuseBookings: refuse }, { vendorId: s.a.vendor.id })
      const running = yield* Effect.fork(s.book(q.reference, first))
      // The first payment is at the booking system now (its booking request arrived).
      while (
        (yield* s.bokun.requests.count({
          method: "POST",
          path: /^\/checkout\.json\//,
          accessKey: s.a.vendor.accessKey
        })) === 0
      ) {
        yield* Effect.sleep("20 millis")
      }
      const saleWhenSent = (yield* s.sale(q.reference)).status
      const dup = yield* s.book(q.reference, second)
      const saleWhenAnswered = (yield* s.sale(q.reference)).status
      const res = yield* Fiber.join(running)
      yield* s.bokun.faults.set({ latencyMs: 0, refuseBookings: false }, { vendorId: s.a.vendor.id })
      return { q, first, second, dup, res, saleWhenSent, saleWhenAnswered }
    }).pipe(Effect.ensuring(s.bokun.faults.reset))

  it.effect("a second payment while the first is still being booked, which then fails: the duplicate says the sale failed (make a new quote), never that it stands; both returned once", () =>
    Effect.gen(function*() {
      for (const latencyMs of [400, 800, 1200]) {
        const s = yield* deskWorld
        const r = yield* duplicateWhileBooking(s, latencyMs, true)
        const at = `latency ${latencyMs}`
        expect(r.saleWhenSent, at).toBe("booking")
        expect(r.res.body, at).toMatchObject({ status: "failed", reason: "provider_refused" })
        expect(r.dup.status, r.dup.text).toBe(200)
        expect(r.dup.body, at).toMatchObject({ status: "failed", reason: "duplicate_payment" })
        expect(r.dup.body.clerkMessage, at).toBe(
          failedClerkMessage("duplicate_payment", r.dup.body.moneyReturned, "en", "sale_failed")
        )
        expect(r.dup.body.clerkMessage, at).not.toContain("stands")
        // Both payments went back exactly once (the sandbox's record); nothing booked.
        yield* expectReturnedOnce(s, r.first.orderId, r.q.cartLine.totalMinor)
        yield* expectReturnedOnce(s, r.second.orderId, r.q.cartLine.totalMinor)
        expect((yield* s.bokunBookings(r.q.reference)).filter((b) => b.status === "CONFIRMED"), at).toEqual([])
        // A repeat of the duplicate says the same.
        expect((yield* s.book(r.q.reference, r.second)).body.clerkMessage, at).toBe(
          failedClerkMessage("duplicate_payment", true, "en", "sale_failed")
        )
      }
    }))

  it.effect("a second payment while the first is still being booked, which then books: the duplicate says the sale stands only once it does; returned once, the sale booked once", () =>
    Effect.gen(function*() {
      for (const latencyMs of [400, 800, 1200]) {
        const s = yield* deskWorld
        const r = yield* duplicateWhileBooking(s, latencyMs, false)
        const at = `latency ${latencyMs}`
        expect(r.saleWhenSent, at).toBe("booking")
        expect(r.res.body.status, at).toBe("confirmed")
        expectFailed(r.dup, "duplicate_payment", r.dup.body.moneyReturned)
        // The duplicate was answered "that sale stands" only after the sale was confirmed.
        expect(r.saleWhenAnswered, at).toBe("confirmed")
        yield* expectReturnedOnce(s, r.second.orderId, r.q.cartLine.totalMinor)
        expect(yield* s.returned(r.first.orderId), at).toEqual({ refundOrders: 0, refunded: 0, voided: 0 })
        expect((yield* s.bokunBookings(r.q.reference)).map((b) => b.status), at).toEqual(["CONFIRMED"])
      }
    }))

  it.effect("a payment first sent for the wrong sale (a clerk's slip) still books the sale it pays: 409 for the wrong one, then confirmed for its own; nothing returned", () =>
    Effect.gen(function*() {
      const s = yield* deskWorld
      const right = yield* s.quote(2)
      const wrong = yield* s.quote(1)
      const payment = yield* s.pay(right)
      const slip = yield* s.book(wrong.reference, payment)
      expectError(slip, 409, "payment_mismatch")
      expect(yield* s.paymentRow(payment.paymentId)).toMatchObject({ state: "mismatch", alerted_at: expect.any(Date) })
      // The same wrong call again: the same answer, no second alert.
      const alerted = (yield* s.paymentRow(payment.paymentId))!.alerted_at
      expectError(yield* s.book(wrong.reference, payment), 409, "payment_mismatch")
      expect((yield* s.paymentRow(payment.paymentId))!.alerted_at).toEqual(alerted)
      // The right sale: booked with that payment.
      const res = yield* s.book(right.reference, payment)
      expect(res.status, res.text).toBe(200)
      expect(res.body.status).toBe("confirmed")
      expect((yield* s.book(right.reference, payment)).body).toEqual(res.body)
      expect(yield* s.paymentRow(payment.paymentId)).toMatchObject({ state: "confirmed", role: "sale" })
      expect(yield* s.sale(right.reference)).toMatchObject({
        status: "confirmed",
        paid_by_payment_id: payment.paymentId
      })
      expect(yield* s.sale(wrong.reference)).toMatchObject({ status: "quoted", paid_by_payment_id: null })
      expect((yield* s.bokunBookings(right.reference)).map((b) => b.status)).toEqual(["CONFIRMED"])
      expect(yield* s.bokunBookings(wrong.reference)).toEqual([])
      expect(yield* s.returned(payment.orderId)).toEqual({ refundOrders: 0, refunded: 0, voided: 0 })
      // Now that it pays a sale, the wrong sale cannot take it (and sees nothing of the right one).
      const late = yield* s.book(wrong.reference, payment)
      expectError(late, 409, "payment_mismatch")
      expect(late.text).not.toContain(res.body.ticket.bookingCode)
    }))

  it.effect("a mismatch stays a mismatch when presented for another sale it does not pay either: 409, recorded for that sale, nothing moves", () =>
    Effect.gen(function*() {
      const s = yield* deskWorld
      const one = yield* s.quote(1)
      const two = yield* s.quote(2)
      const short = yield* s.pay(one, { amountMinor: one.cartLine.totalMinor - 100 })
      expectError(yield* s.book(one.reference, short), 409, "payment_mismatch")
      expectError(yield* s.book(two.reference, short), 409, "payment_mismatch")
      expect(yield* s.paymentRow(short.paymentId)).toMatchObject({ state: "mismatch", refund_method: null })
      expect(yield* s.bokunBookings(one.reference)).toEqual([])
      expect(yield* s.bokunBookings(two.reference)).toEqual([])
      expect(yield* s.returned(short.orderId)).toEqual({ refundOrders: 0, refunded: 0, voided: 0 })
    }))

  it.effect("a card payment made without a reference (the order's line has no name): 409 payment_mismatch, not 503; recorded and alerted, nothing moves", () =>
    Effect.gen(function*() {
      const s = yield* deskWorld
      const q = yield* s.quote(2)
      const made = yield* s.surfboard.createPaidOrder({
        merchantId: s.merchant.id,
        terminalId: s.deskCard,
        amountMinor: q.cartLine.totalMinor,
        currency: "NOK"
      })
      const payment = { orderId: made.orderId, paymentId: made.paymentId! }
      for (let i = 0; i < 2; i++) {
        const res = yield* s.book(q.reference, payment)
        expectError(res, 409, "payment_mismatch")
        expect(res.body.error.reference).toBe(q.reference)
      }
      expect(yield* s.paymentRow(payment.paymentId)).toMatchObject({ state: "mismatch", alerted_at: expect.any(Date) })
      expect((yield* s.paymentRow(payment.paymentId))!.detail).toContain("for null")
      expect(yield* s.bokunBookings(q.reference)).toEqual([])
      expect(yield* s.returned(payment.orderId)).toEqual({ refundOrders: 0, refunded: 0, voided: 0 })
      expect(yield* s.sale(q.reference)).toMatchObject({ status: "quoted", paid_by_payment_id: null })
    }))

  it.effect("a payment on another merchant of ours (another operator's): 409 payment_mismatch (merchant), not 422 payment_not_found; nothing moves", () =>
    Effect.gen(function*() {
      const s = yield* deskWorld
      const q = yield* s.quote(1)
      const theirs = yield* merchantFor(s.w.beta)
      const payment = yield* s.pay(q, { merchantId: theirs.id, terminalId: theirs.terminalId! })
      const res = yield* s.book(q.reference, payment)
      expectError(res, 409, "payment_mismatch")
      const row = yield* s.paymentRow(payment.paymentId)
      expect(row).toMatchObject({ state: "mismatch", alerted_at: expect.any(Date) })
      expect(row!.detail).toContain(`merchant ${theirs.id}`)
      expectError(yield* s.book(q.reference, payment), 409, "payment_mismatch")
      expect(yield* s.bokunBookings(q.reference)).toEqual([])
      expect(yield* s.returned(payment.orderId)).toEqual({ refundOrders: 0, refunded: 0, voided: 0 })
      // An order no merchant of ours has is still not found.
      expectError(
        yield* s.book(q.reference, { orderId: "no-such-order", paymentId: "no-such-payment" }),
        422,
        "payment_not_found"
      )
    }))

  it.effect("the provider's answer cannot be read: 500 (a defect, alerted), not 503 provider_unavailable; nothing recorded; the same payment books once it reads", () =>
    Effect.scoped(Effect.gen(function*() {
      const s = yield* deskWorld
      const sql = yield* SqlClient.SqlClient
      const { payment, q } = yield* paidSale(s)
      const portal = yield* captivePortal
      yield* sql`UPDATE operator_payment_accounts SET base_url = ${portal.baseUrl}, api_key = 'k', api_secret = 's' WHERE operator_id = ${s.w.alpha}`
      const res = yield* s.book(q.reference, payment).pipe(
        Effect.ensuring(
          sql`UPDATE operator_payment_accounts SET base_url = NULL, api_key = NULL, api_secret = NULL WHERE operator_id = ${s.w.alpha}`
            .pipe(Effect.orDie)
        )
      )
      expect(res.status, res.text).toBe(500)
      expect(res.body.error.code).toBe("internal")
      expect(portal.hits()).toBeGreaterThan(0)
      expect(yield* s.paymentRow(payment.paymentId)).toBeUndefined()
      expect(yield* s.sale(q.reference)).toMatchObject({ status: "quoted", paid_by_payment_id: null })
      const ok = yield* s.book(q.reference, payment)
      expect(ok.body.status, ok.text).toBe("confirmed")
    })))
  failsWith(
    "phone_rejected",
    (s) => Effect.as(s.bokun.faults.set({ rejectPhone: true }, { vendorId: s.a.vendor.id }), { phone: "+4791234567" })
  )
  failsWith("provider_refused", (s) => s.bokun.faults.set({ refuseBookings: true }, { vendorId: s.a.vendor.id }))

  it.effect("phone required and given: booked with the phone", () =>
    Effect.gen(function*() {
      const s = yield* deskWorld
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE tours SET requires_phone = true WHERE id = ${s.tour}`
      const { payment, q } = yield* paidSale(s)
      const res = yield* s.book(q.reference, payment, { phone: "+4791234567" })
      expect(res.body.status, res.text).toBe("confirmed")
      expect((yield* s.bokunBookings(q.reference))[0]!.phone).toBe("+4791234567")
    }))

  it.effect("a quote past validUntil at the same live price books", () =>
    Effect.gen(function*() {
      const s = yield* deskWorld
      const sql = yield* SqlClient.SqlClient
      const { payment, q } = yield* paidSale(s)
      yield* sql`UPDATE quickbook_sales SET valid_until = now() - interval '1 second' WHERE reference = ${q.reference}`
      expect((yield* s.book(q.reference, payment)).body.status).toBe("confirmed")
    }))

  it.effect("POST /book spends the books budget (60 a minute per terminal), not the writes budget", () =>
    Effect.gen(function*() {
      const s = yield* deskWorld
      const q = yield* s.quote(1)
      yield* withRoomInWindow(20)
      for (let i = 0; i < 60; i++) {
        expect((yield* call(`${BASE}/book`, { method: "POST", key: s.key.token, headers: s.headers, body: {} })).status)
          .toBe(400)
      }
      expectError(yield* s.book(q.reference, { orderId: "o", paymentId: "p" }), 429, "rate_limited")
      // Writes are untouched.
      yield* s.quote(1)
    }))

  it.effect("the OpenAPI document has POST /book with every status, the failed object and the rules; it stays valid", () =>
    Effect.gen(function*() {
      const doc = (yield* get(`${BASE}/openapi.json`)).body
      yield* Effect.promise(() => SwaggerParser.validate(structuredClone(doc)))
      const op = doc.paths[`${BASE}/book`].post
      expect(Object.keys(op.responses).sort()).toEqual([
        "200",
        "400",
        "401",
        "403",
        "404",
        "409",
        "413",
        "415",
        "422",
        "429",
        "500",
        "503"
      ])
      expect(op.responses["409"].description).toContain("payment_mismatch")
      expect(op.responses["415"].description).toContain("application/json")
      expect(op.responses["422"].description).toContain("payment_not_found")
      expect(op.description).toContain("duplicate_payment")
      const schemas = doc.components.schemas
      expect(schemas.BookFailed.properties.reason.enum).toContain("phone_rejected")
      expect(schemas.BookFailed.required.sort()).toEqual(["clerkMessage", "moneyReturned", "reason", "status"])
      expect(Object.keys(schemas.Ticket.properties).sort()).toEqual([
        "bookingCode",
        "lines32",
        "lines48",
        "pdfUrl",
        "qrPayload"
      ])
    }))

  it.effect("every verified payment of this file ended confirmed or refunded (each refunded one returned exactly once)", () =>
    everyVerifiedPaymentSettled)
})
