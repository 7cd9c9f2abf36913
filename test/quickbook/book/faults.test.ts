/**
 * Quickbook POST /book when things break, through the real server with the Bókun and Surfboard
 * sandboxes: the payment provider or the booking system not answering, a refund whose answer is
 * lost, a client that times out and calls again, and crashes between each pair of side effects (a
 * second server instance with CRASH_AT on the same database) finished by the quickbook-recovery
 * job's work (`QuickbookBookRecovery.recover`) or by the client's retry. Each proves at the sandboxes that
 * no sale is booked twice, no payment returned twice, and every verified payment ends confirmed or
 * refunded.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { ConfigProvider, Context, Effect, Fiber, Layer } from "effect"
import { QuickbookBookRecovery } from "../../../src/quickbook/book/QuickbookBookRecovery.js"
import { failedClerkMessage } from "../../../src/quickbook/book/rules.js"
import { CLERK_MESSAGE_VARIANTS, CLERK_MESSAGES } from "../../../src/quickbook/clerkMessages.js"
import { QuickbookKeys } from "../../../src/quickbook/terminals/QuickbookKeys.js"
import { captivePortal } from "../../support/captivePortal.js"
import type { Reply } from "../../support/http.js"
import { paymentsEnv, ServerSettings } from "../../support/payments.js"
import {
  BASE,
  customer,
  type DeskWorld,
  deskWorld,
  everyVerifiedPaymentSettled,
  expectReturnedOnce,
  expireLeases
} from "../../support/quickbook.js"
import { serverOn, TestServer } from "../../support/server.js"

/** The service's QuickbookBookRecovery (the recovery job's work) with the server's settings. */
const BookLive = Layer.unwrapEffect(
  Effect.map(ServerSettings, ({ env }) =>
    QuickbookBookRecovery.Default.pipe(
      Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))))
    ))
)

const env = Layer.mergeAll(BookLive, QuickbookKeys.Default).pipe(
  Layer.provideMerge(
    paymentsEnv(Effect.succeed({ TOUR_AVAILABILITY_TIMEOUT_MS: "1500", QUICKBOOK_BOOK_WAIT_MS: "1500" }))
  )
)

const recover = Effect.flatMap(QuickbookBookRecovery, (r) => r.recover())

const expectFailed = (res: Reply, reason: string, moneyReturned: boolean) => {
  expect(res.status, res.text).toBe(200)
  expect(res.body).toEqual({
    status: "failed",
    reason,
    moneyReturned,
    clerkMessage: failedClerkMessage(reason as any, moneyReturned, "en")
  })
}

const expectError = (
  res: Reply,
  status: number,
  code: string,
  clerkMessage: string = (CLERK_MESSAGES as any)[code].en
) => {
  expect(res.status, res.text).toBe(status)
  expect(res.body.error).toMatchObject({ code, clerkMessage })
}

/** Calls again while the answer is 503 (an earlier call still running): what the desk app does. */
const bookUntilAnswered = (s: DeskWorld, reference: string, payment: { orderId: string; paymentId: string }) =>
  Effect.gen(function*() {
    for (let i = 0; i < 30; i++) {
      const res = yield* s.book(reference, payment)
      if (res.status !== 503) return res
    }
    throw new Error("still 503 after 30 calls")
  })

const paidSale = (s: DeskWorld) =>
  Effect.gen(function*() {
    const q = yield* s.quote(2)
    return { q, payment: yield* s.pay(q) }
  })

const salesRow = (reference: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      Effect.map(
        sql<{ status: string }>`SELECT status FROM quickbook_sales WHERE reference = ${reference}`.pipe(Effect.orDie),
        (r) => r[0]!.status
      )
  )

layer(env, { excludeTestServices: true, timeout: 240_000 })("quickbook POST /book faults", (it) => {
  it.effect("the payment provider does not answer while verifying: 503, nothing stored; the same call books once it answers", () =>
    Effect.gen(function*() {
      const s = yield* deskWorld
      const { payment, q } = yield* paidSale(s)
      yield* s.surfboard.faults.set({ down: true }, { merchantId: s.merchant.id })
      const [res, nb] = yield* Effect.all([
        s.book(q.reference, payment),
        s.book(q.reference, payment, { headers: { "accept-language": "nb" } })
      ]).pipe(Effect.ensuring(s.surfboard.faults.reset))
      // The code stays provider_unavailable (spec §7); the clerk is told it is the payment provider, not the booking system.
      expectError(res, 503, "provider_unavailable", CLERK_MESSAGE_VARIANTS.payment_provider.en)
      expectError(nb, 503, "provider_unavailable", CLERK_MESSAGE_VARIANTS.payment_provider.nb)
      expect(res.body.error.clerkMessage).toContain("payment provider")
      expect(res.body.error.clerkMessage).not.toContain("booking system")
      expect(res.headers.get("retry-after")).toBe("5")
      expect(yield* s.paymentRow(payment.paymentId)).toBeUndefined()
      expect(yield* s.sale(q.reference)).toMatchObject({ status: "quoted", paid_by_payment_id: null })
      expect(yield* s.bokunBookings(q.reference)).toEqual([])
      const ok = yield* s.book(q.reference, payment)
      expect(ok.body.status, ok.text).toBe("confirmed")
      expect((yield* s.bokunBookings(q.reference)).length).toBe(1)
    }))

  it.effect("the booking system does not answer: three attempts, then failed provider_unavailable, returned once, nothing booked", () =>
    Effect.gen(function*() {
      const s = yield* deskWorld
      const { payment, q } = yield* paidSale(s)
      yield* s.bokun.requests.clear
      yield* s.bokun.faults.set({ down: true }, { vendorId: s.a.vendor.id })
      // (Switched off, not reset: a reset empties the request log.)
      const res = yield* s.book(q.reference, payment).pipe(
        Effect.ensuring(s.bokun.faults.set({ down: false }, { vendorId: s.a.vendor.id }))
      )
      expectFailed(res, "provider_unavailable", true)
      expect(
        yield* s.bokun.requests.count({
          method: "POST",
          path: "/checkout.json/submit",
          accessKey: s.a.vendor.accessKey
        })
      ).toBe(3)
      yield* expectReturnedOnce(s, payment.orderId, q.cartLine.totalMinor)
      expect(yield* s.bokunBookings(q.reference)).toEqual([])
      expect(yield* s.sale(q.reference)).toMatchObject({ status: "failed", failure_reason: "provider_unavailable" })
    }))

  it.effect("the refund's answer is lost: moneyReturned false; the job asks again with the same reference and the money goes back once", () =>
    Effect.gen(function*() {
      const s = yield* deskWorld
      const { payment, q } = yield* paidSale(s)
      yield* s.bokun.faults.set({ refuseBookings: true }, { vendorId: s.a.vendor.id })
      yield* s.surfboard.faults.set({ loseAnswer: "drop" }, { merchantId: s.merchant.id })
      const res = yield* s.book(q.reference, payment).pipe(
        Effect.ensuring(Effect.zip(s.surfboard.faults.reset, s.bokun.faults.reset))
      )
      expectFailed(res, "provider_refused", false)
      expect(res.body.clerkMessage).toContain("on its way back")
      expect(yield* s.paymentRow(payment.paymentId)).toMatchObject({ state: "refunding", refund_attempts: 1 })
      // The provider did return it (the answer was lost); asking again with the same reference moves nothing more.
      expect((yield* recover).found).toBe(0)
      yield* expireLeases
      expect(yield* recover).toMatchObject({ found: 1, refunded: 1 })
      yield* expectReturnedOnce(s, payment.orderId, q.cartLine.totalMinor)
      expect(yield* s.paymentRow(payment.paymentId)).toMatchObject({ state: "refunded", refund_attempts: 2 })
      expectFailed(yield* s.book(q.reference, payment), "provider_refused", true)
      yield* expireLeases
      expect((yield* recover).found).toBe(0)
      yield* expectReturnedOnce(s, payment.orderId, q.cartLine.totalMinor)
    }))

  it.effect("the client times out while the booking system hangs, reads the sale, calls again: one booking, the same answer", () =>
    Effect.gen(function*() {
      const s = yield* deskWorld
      const { baseUrl } = yield* TestServer
      const { payment, q } = yield* paidSale(s)
      yield* s.bokun.requests.clear
      yield* s.bokun.faults.set({ hang: true }, { vendorId: s.a.vendor.id })
      // The desk app gives up on its call (the service goes on with it).
      const gaveUp = yield* Effect.promise(() =>
        fetch(`${baseUrl}${BASE}/book`, {
          method: "POST",
          headers: { authorization: `Bearer ${s.key.token}`, "content-type": "application/json", ...s.headers },
          body: JSON.stringify({ reference: q.reference, payment: { provider: "payprovider", ...payment }, customer }),
          signal: AbortSignal.timeout(300)
        }).then(() => false, () => true)
      )
      expect(gaveUp).toBe(true)
      // It reads the sale's status. GET /sales/{reference} is not in this worktree yet (built
      // separately), so the status is read from the database: the sale is being booked.
      while (
        (yield* s.bokun.requests.count({
          method: "POST",
          path: "/checkout.json/submit",
          accessKey: s.a.vendor.accessKey
        })) === 0
      ) {
        yield* Effect.sleep("50 millis")
      }
      expect(yield* salesRow(q.reference)).toBe("booking")
      // The booking system answers again; the service's next attempt books; the retry gets that answer.
      yield* s.bokun.faults.reset
      const res = yield* bookUntilAnswered(s, q.reference, payment)
      expect(res.status, res.text).toBe(200)
      expect(res.body.status).toBe("confirmed")
      const bookings = yield* s.bokunBookings(q.reference)
      expect(bookings.map((b) => b.status)).toEqual(["CONFIRMED"])
      expect(res.body.ticket.bookingCode).toBe(bookings[0]!.confirmation_code)
      expect((yield* s.book(q.reference, payment)).body).toEqual(res.body)
      expect(yield* s.returned(payment.orderId)).toEqual({ refundOrders: 0, refunded: 0, voided: 0 })
    }))

  it.effect("a second payment while the first hangs at the booking system past the wait: the duplicate says the sale is still being booked (check its status), returned once; a repeat once it booked says it stands", () =>
    Effect.gen(function*() {
      const s = yield* deskWorld
      const { payment, q } = yield* paidSale(s)
      const second = yield* s.pay(q)
      yield* s.bokun.requests.clear
      yield* s.bokun.faults.set({ hang: true }, { vendorId: s.a.vendor.id })
      const running = yield* Effect.fork(s.book(q.reference, payment))
      while (
        (yield* s.bokun.requests.count({
          method: "POST",
          path: "/checkout.json/submit",
          accessKey: s.a.vendor.accessKey
        })) === 0
      ) {
        yield* Effect.sleep("20 millis")
      }
      // The duplicate waits QUICKBOOK_BOOK_WAIT_MS (1.5 s here) for the first payment, which still hangs.
      const dup = yield* s.book(q.reference, second).pipe(Effect.ensuring(s.bokun.faults.reset))
      expect(dup.status, dup.text).toBe(200)
      expect(dup.body).toEqual({
        status: "failed",
        reason: "duplicate_payment",
        moneyReturned: true,
        clerkMessage: failedClerkMessage("duplicate_payment", true, "en", "sale_booking")
      })
      expect(dup.body.clerkMessage).not.toContain("stands")
      expect(dup.body.clerkMessage).toContain("still being booked")
      yield* expectReturnedOnce(s, second.orderId, q.cartLine.totalMinor)
      // The booking system answers again; the first payment books.
      const first = yield* Fiber.join(running)
      const booked = first.status === 503 ? yield* bookUntilAnswered(s, q.reference, payment) : first
      expect(booked.body.status, booked.text).toBe("confirmed")
      // Now that the sale is booked, the duplicate's repeat says it stands (the money back, as before).
      expectFailed(yield* s.book(q.reference, second), "duplicate_payment", true)
      const nb = yield* s.book(q.reference, second, { headers: { "accept-language": "nb" } })
      expect(nb.body.clerkMessage).toBe(failedClerkMessage("duplicate_payment", true, "nb"))
      yield* expectReturnedOnce(s, second.orderId, q.cartLine.totalMinor)
      expect(yield* s.returned(payment.orderId)).toEqual({ refundOrders: 0, refunded: 0, voided: 0 })
      expect((yield* s.bokunBookings(q.reference)).map((b) => b.status)).toEqual(["CONFIRMED"])
    }))

  describe("a crash between side effects (a server with CRASH_AT), then the recovery job", () => {
    const crashingBook = (
      s: DeskWorld,
      step: string,
      reference: string,
      payment: { orderId: string; paymentId: string }
    ) =>
      Effect.scoped(Effect.gen(function*() {
        const settings = yield* ServerSettings
        const ctx = yield* Layer.build(serverOn(settings.databaseUrl, { ...settings.env, CRASH_AT: step }))
        return yield* s.book(reference, payment, { baseUrl: Context.get(ctx, TestServer).baseUrl })
      }))

    it.effect("quickbook.book.after_claim (verified, nothing booked): the job books once; the client's repeat gets the ticket", () =>
      Effect.gen(function*() {
        const s = yield* deskWorld
        const { payment, q } = yield* paidSale(s)
        expect((yield* crashingBook(s, "quickbook.book.after_claim", q.reference, payment)).status).toBe(500)
        expect(yield* s.paymentRow(payment.paymentId)).toMatchObject({ state: "verified", role: "sale" })
        expect(yield* s.bokunBookings(q.reference)).toEqual([])
        // Within the lease the job leaves it alone (the request might still be running).
        expect((yield* recover).found).toBe(0)
        yield* expireLeases
        expect(yield* recover).toMatchObject({ found: 1, confirmed: 1 })
        const bookings = yield* s.bokunBookings(q.reference)
        expect(bookings.map((b) => b.status)).toEqual(["CONFIRMED"])
        expect(yield* s.sale(q.reference)).toMatchObject({
          status: "confirmed",
          booking_code: bookings[0]!.confirmation_code
        })
        const res = yield* s.book(q.reference, payment)
        expect(res.body.status).toBe("confirmed")
        expect(res.body.ticket.bookingCode).toBe(bookings[0]!.confirmation_code)
        expect(yield* s.returned(payment.orderId)).toEqual({ refundOrders: 0, refunded: 0, voided: 0 })
      }))

    it.effect("quickbook.book.after_booked (booked, not recorded): the job records the same booking; never booked twice", () =>
      Effect.gen(function*() {
        const s = yield* deskWorld
        const { payment, q } = yield* paidSale(s)
        expect((yield* crashingBook(s, "quickbook.book.after_booked", q.reference, payment)).status).toBe(500)
        const before = yield* s.bokunBookings(q.reference)
        expect(before.map((b) => b.status)).toEqual(["CONFIRMED"])
        expect(yield* s.paymentRow(payment.paymentId)).toMatchObject({ state: "booking" })
        yield* expireLeases
        expect(yield* recover).toMatchObject({ found: 1, confirmed: 1 })
        expect(yield* s.bokunBookings(q.reference)).toEqual(before)
        expect(yield* s.seatsLeft).toBe(8)
        expect(yield* s.sale(q.reference)).toMatchObject({
          status: "confirmed",
          booking_code: before[0]!.confirmation_code
        })
        expect((yield* s.book(q.reference, payment)).body.ticket.bookingCode).toBe(before[0]!.confirmation_code)
        expect(yield* s.returned(payment.orderId)).toEqual({ refundOrders: 0, refunded: 0, voided: 0 })
      }))

    it.effect("quickbook.book.after_failed (failure recorded, refund not sent): the repeat says the money is on its way; the job returns it once", () =>
      Effect.gen(function*() {
        const s = yield* deskWorld
        const { payment, q } = yield* paidSale(s)
        yield* s.bokun.faults.set({ refuseBookings: true }, { vendorId: s.a.vendor.id })
        const crashed = yield* crashingBook(s, "quickbook.book.after_failed", q.reference, payment).pipe(
          Effect.ensuring(s.bokun.faults.reset)
        )
        expect(crashed.status).toBe(500)
        expect(yield* s.paymentRow(payment.paymentId)).toMatchObject({
          state: "refunding",
          refund_state: "requested",
          refund_attempts: 0
        })
        expect(yield* s.returned(payment.orderId)).toEqual({ refundOrders: 0, refunded: 0, voided: 0 })
        expectFailed(yield* s.book(q.reference, payment), "provider_refused", false)
        yield* expireLeases
        expect(yield* recover).toMatchObject({ found: 1, refunded: 1 })
        yield* expectReturnedOnce(s, payment.orderId, q.cartLine.totalMinor)
        expectFailed(yield* s.book(q.reference, payment), "provider_refused", true)
        expect(yield* s.bokunBookings(q.reference)).toEqual([])
      }))

    it.effect("a terminal deactivated after the payment was verified: failed terminal_not_registered, returned once", () =>
      Effect.gen(function*() {
        const s = yield* deskWorld
        const keys = yield* QuickbookKeys
        const { payment, q } = yield* paidSale(s)
        expect((yield* crashingBook(s, "quickbook.book.after_claim", q.reference, payment)).status).toBe(500)
        yield* keys.deactivateTerminal(s.terminal.id)
        yield* expireLeases
        expect(yield* recover).toMatchObject({ found: 1, refunded: 1 })
        yield* expectReturnedOnce(s, payment.orderId, q.cartLine.totalMinor)
        expect(yield* s.sale(q.reference)).toMatchObject({
          status: "failed",
          failure_reason: "terminal_not_registered"
        })
        expect(yield* s.paymentRow(payment.paymentId)).toMatchObject({
          state: "refunded",
          failure_reason: "terminal_not_registered"
        })
        expect(yield* s.bokunBookings(q.reference)).toEqual([])
        // The desk itself is refused now, before anything.
        expectError(yield* s.book(q.reference, payment), 403, "terminal_not_registered")
      }))

    it.effect("the client's repeat after the lease ran out finishes it (not the job); within the lease it answers 503", () =>
      Effect.gen(function*() {
        const s = yield* deskWorld
        const { payment, q } = yield* paidSale(s)
        expect((yield* crashingBook(s, "quickbook.book.after_claim", q.reference, payment)).status).toBe(500)
        // Still being processed (by the crashed call's lease): not "the booking system is not answering".
        expectError(
          yield* s.book(q.reference, payment),
          503,
          "provider_unavailable",
          CLERK_MESSAGE_VARIANTS.still_processing.en
        )
        yield* expireLeases
        const res = yield* s.book(q.reference, payment)
        expect(res.body.status, res.text).toBe("confirmed")
        expect((yield* s.bokunBookings(q.reference)).length).toBe(1)
        expect((yield* recover).found).toBe(0)
      }))
  })

  describe("answers that cannot be read are defects, never an outage that returns or keeps money unseen", () => {
    it.effect("the booking system's answer to the booking cannot be read: 500, nothing returned (it may have booked); the job books it with the same reference once it reads", () =>
      Effect.scoped(Effect.gen(function*() {
        const s = yield* deskWorld
        const sql = yield* SqlClient.SqlClient
        const { payment, q } = yield* paidSale(s)
        const [{ base_url }] = (yield* sql<
          { base_url: string }
        >`SELECT base_url FROM booking_system_accounts WHERE id = ${s.a.accountId}`) as [{ base_url: string }]
        const portal = yield* captivePortal
        yield* sql`UPDATE booking_system_accounts SET base_url = ${portal.baseUrl} WHERE id = ${s.a.accountId}`
        const res = yield* s.book(q.reference, payment).pipe(
          Effect.ensuring(
            sql`UPDATE booking_system_accounts SET base_url = ${base_url} WHERE id = ${s.a.accountId}`.pipe(
              Effect.orDie
            )
          )
        )
        expect(res.status, res.text).toBe(500)
        expect(portal.hits()).toBeGreaterThan(0)
        expect(yield* s.paymentRow(payment.paymentId)).toMatchObject({ state: "booking", refund_method: null })
        expect(yield* salesRow(q.reference)).toBe("booking")
        expect(yield* s.returned(payment.orderId)).toEqual({ refundOrders: 0, refunded: 0, voided: 0 })
        yield* expireLeases
        expect(yield* recover).toMatchObject({ found: 1, confirmed: 1 })
        const bookings = yield* s.bokunBookings(q.reference)
        expect(bookings.map((b) => b.status)).toEqual(["CONFIRMED"])
        expect((yield* s.book(q.reference, payment)).body.ticket.bookingCode).toBe(bookings[0]!.confirmation_code)
        expect(yield* s.returned(payment.orderId)).toEqual({ refundOrders: 0, refunded: 0, voided: 0 })
      })))

    it.effect("the provider's answer to a return cannot be read: alerted and asked again with the same reference; the money goes back once", () =>
      Effect.scoped(Effect.gen(function*() {
        const s = yield* deskWorld
        const sql = yield* SqlClient.SqlClient
        const { payment, q } = yield* paidSale(s)
        yield* s.bokun.faults.set({ refuseBookings: true }, { vendorId: s.a.vendor.id })
        const settings = yield* ServerSettings
        const crashed = yield* Effect.scoped(Effect.gen(function*() {
          const ctx = yield* Layer.build(
            serverOn(settings.databaseUrl, { ...settings.env, CRASH_AT: "quickbook.book.after_failed" })
          )
          return yield* s.book(q.reference, payment, { baseUrl: Context.get(ctx, TestServer).baseUrl })
        })).pipe(Effect.ensuring(s.bokun.faults.reset))
        expect(crashed.status).toBe(500)
        expect(yield* s.paymentRow(payment.paymentId)).toMatchObject({
          state: "refunding",
          refund_state: "requested",
          alerted_at: null
        })
        const portal = yield* captivePortal
        yield* sql`UPDATE operator_payment_accounts SET base_url = ${portal.baseUrl}, api_key = 'k', api_secret = 's' WHERE operator_id = ${s.w.alpha}`
        yield* expireLeases
        yield* recover.pipe(
          Effect.ensuring(
            sql`UPDATE operator_payment_accounts SET base_url = NULL, api_key = NULL, api_secret = NULL WHERE operator_id = ${s.w.alpha}`
              .pipe(Effect.orDie)
          )
        )
        expect(portal.hits()).toBeGreaterThan(0)
        expect(yield* s.paymentRow(payment.paymentId)).toMatchObject({
          state: "refunding",
          alerted_at: expect.any(Date)
        })
        expect(yield* s.returned(payment.orderId)).toEqual({ refundOrders: 0, refunded: 0, voided: 0 })
        yield* expireLeases
        expect(yield* recover).toMatchObject({ refunded: 1 })
        yield* expectReturnedOnce(s, payment.orderId, q.cartLine.totalMinor)
        expectFailed(yield* s.book(q.reference, payment), "provider_refused", true)
      })))
  })

  describe("a payment that does not match its sale is never left in limbo", () => {
    /** The mismatch as if recorded long ago (past QUICKBOOK_MISMATCH_RETURN_AFTER_SECONDS, an hour by default). */
    const ageMismatch = (paymentId: string) =>
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) =>
          sql`UPDATE quickbook_payments SET updated_at = now() - interval '2 hours' WHERE payment_id = ${paymentId}`
            .pipe(Effect.orDie)
      )

    it.effect("sent for the wrong sale and never sent again: kept for an hour, then the job returns it once (alerted); the sale it named stays unbooked", () =>
      Effect.gen(function*() {
        const s = yield* deskWorld
        const right = yield* s.quote(2)
        const wrong = yield* s.quote(1)
        const payment = yield* s.pay(right)
        expectError(yield* s.book(wrong.reference, payment), 409, "payment_mismatch")
        // Within the hour nothing is returned: the clerk may still send it for the right sale.
        const early = yield* recover
        expect(yield* s.returned(payment.orderId)).toEqual({ refundOrders: 0, refunded: 0, voided: 0 })
        // Never sent again; the sale it was paid for expires.
        yield* Effect.flatMap(
          SqlClient.SqlClient,
          (sql) =>
            sql`UPDATE quickbook_sales SET status = 'expired', valid_until = now() - interval '1 hour' WHERE reference = ${right.reference}`
              .pipe(Effect.orDie)
        )
        yield* ageMismatch(payment.paymentId)
        const late = yield* recover
        yield* expectReturnedOnce(s, payment.orderId, right.cartLine.totalMinor)
        expect(yield* s.paymentRow(payment.paymentId)).toMatchObject({
          state: "refunded",
          role: "stray",
          failure_reason: "payment_mismatch"
        })
        expect([early.strays, late.strays]).toEqual([0, 1])
        // The clerk's repeat now hears that the payment was returned; nothing moves again.
        const again = yield* s.book(wrong.reference, payment)
        expect(again.status, again.text).toBe(200)
        expect(again.body).toEqual({
          status: "failed",
          reason: "payment_mismatch",
          moneyReturned: true,
          clerkMessage: failedClerkMessage("payment_mismatch", true, "en", "stray")
        })
        yield* expireLeases
        yield* recover
        yield* expectReturnedOnce(s, payment.orderId, right.cartLine.totalMinor)
        expect(yield* s.bokunBookings(right.reference)).toEqual([])
        expect(yield* s.bokunBookings(wrong.reference)).toEqual([])
        expect(yield* s.sale(right.reference)).toMatchObject({ status: "expired", paid_by_payment_id: null })
      }))

    it.effect("the wrong amount, then the right payment books the sale: the job returns the first at once (its sale is booked), once", () =>
      Effect.gen(function*() {
        const s = yield* deskWorld
        const q = yield* s.quote(2)
        const short = yield* s.pay(q, { amountMinor: q.cartLine.totalMinor - 100 })
        expectError(yield* s.book(q.reference, short), 409, "payment_mismatch")
        const full = yield* s.pay(q)
        expect((yield* s.book(q.reference, full)).body.status).toBe("confirmed")
        const run = yield* recover
        yield* expectReturnedOnce(s, short.orderId, q.cartLine.totalMinor - 100)
        expect(run.strays).toBe(1)
        expect(yield* s.returned(full.orderId)).toEqual({ refundOrders: 0, refunded: 0, voided: 0 })
        expect(yield* s.paymentRow(short.paymentId)).toMatchObject({ state: "refunded", role: "stray" })
        expect(yield* s.sale(q.reference)).toMatchObject({ status: "confirmed", paid_by_payment_id: full.paymentId })
        expect((yield* s.bokunBookings(q.reference)).map((b) => b.status)).toEqual(["CONFIRMED"])
        yield* recover
        yield* expectReturnedOnce(s, short.orderId, q.cartLine.totalMinor - 100)
      }))

    it.effect("the job and the clerk at once: the payment is either booked for its sale or returned, never both", () =>
      Effect.gen(function*() {
        for (let i = 0; i < 6; i++) {
          const s = yield* deskWorld
          const right = yield* s.quote(1)
          const wrong = yield* s.quote(1)
          const payment = yield* s.pay(right)
          expectError(yield* s.book(wrong.reference, payment), 409, "payment_mismatch")
          yield* ageMismatch(payment.paymentId)
          yield* s.surfboard.faults.set({ latencyMs: 150 }, { merchantId: s.merchant.id })
          // The job starts at a different moment of the clerk's call each round (before, during, after its verification).
          const [booked] = yield* Effect.all([
            s.book(right.reference, payment),
            Effect.delay(recover, `${i * 100} millis`)
          ], { concurrency: 2 }).pipe(
            Effect.ensuring(s.surfboard.faults.reset)
          )
          yield* expireLeases
          yield* recover
          const row = yield* s.paymentRow(payment.paymentId)
          const back = yield* s.returned(payment.orderId)
          if (row!.state === "confirmed") {
            expect(booked.body.status).toBe("confirmed")
            expect(back).toEqual({ refundOrders: 0, refunded: 0, voided: 0 })
            expect((yield* s.bokunBookings(right.reference)).map((b) => b.status)).toEqual(["CONFIRMED"])
          } else {
            expect(row).toMatchObject({ state: "refunded", role: "stray" })
            yield* expectReturnedOnce(s, payment.orderId, right.cartLine.totalMinor)
            expect(yield* s.bokunBookings(right.reference)).toEqual([])
          }
        }
      }))

    it.effect("a payment whose order names no sale of ours is not returned by the job (it may be another sale of the desk's); it stays recorded and alerted", () =>
      Effect.gen(function*() {
        const s = yield* deskWorld
        const q = yield* s.quote(1)
        const foreign = yield* s.pay(q, { referenceId: "SVC-NOTOURSALE0" })
        expectError(yield* s.book(q.reference, foreign), 409, "payment_mismatch")
        yield* ageMismatch(foreign.paymentId)
        yield* recover
        expect(yield* s.paymentRow(foreign.paymentId)).toMatchObject({
          state: "mismatch",
          alerted_at: expect.any(Date)
        })
        expect(yield* s.returned(foreign.orderId)).toEqual({ refundOrders: 0, refunded: 0, voided: 0 })
      }))
  })

  it.effect("every verified payment of this file ended confirmed or refunded; no sale booked twice, no payment returned twice", () =>
    everyVerifiedPaymentSettled)
})
