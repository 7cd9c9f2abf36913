/**
 * Cancel with a full refund holds for balance payment links (issue 11, item 7), through the real
 * server with the Bókun and Surfboard sandboxes over HTTP on one database, the payment-link watch and
 * the booking-change recovery as their jobs run them:
 * - the cancel closes the booking's open links at the provider (the guest can no longer pay them),
 *   also when a crash interrupts it (the recovery job finishes it);
 * - a link the guest paid before the cancel closed it is refunded with the cancel;
 * - a link the cancel could not close (the provider did not answer) and that is paid afterwards is
 *   refunded automatically by the watch, recorded, once;
 * - a link of a booking cancelled elsewhere (no cancel of this service) paid afterwards: refunded too;
 * - paying while the cancel runs (slowed at the booking system), many times: every payment that went
 *   through is returned exactly once, and no link stays payable; payment-link requests racing the
 *   cancel leave no payable link;
 * - no link is sent for a booking whose cancel has begun.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Cause, ConfigProvider, Context, Effect, Exit, Fiber, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { Cancels } from "../../../src/partner/cancels/Cancels.js"
import { LinkStatusChecks } from "../../../src/partner/paymentLinks/LinkStatusChecks.js"
import { BokunSandbox } from "../../../src/sandbox/bokun/index.js"
import { SurfboardSandbox } from "../../../src/sandbox/surfboard/index.js"
import { createKey, makeWorld } from "../../support/fixtures.js"
import { call } from "../../support/http.js"
import {
  linkedBooking,
  mailTo,
  merchantFor,
  paidAtSandbox,
  paymentsEnv,
  returnedBySandbox,
  ServerSettings,
  vendorFor
} from "../../support/payments.js"
import { serverOn, TestServer } from "../../support/server.js"

const DAY = 86_400_000

const withServerSettings = <A, E, R>(layer: Layer.Layer<A, E, R>) =>
  Layer.unwrapEffect(
    Effect.map(ServerSettings, ({ env }) =>
      layer.pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))))))
  )

const env = Layer.mergeAll(withServerSettings(LinkStatusChecks.Default), withServerSettings(Cancels.Default)).pipe(
  Layer.provideMerge(paymentsEnv())
)

const runWatch = Effect.flatMap(LinkStatusChecks, (w) => w.run())
const recover = Effect.flatMap(Cancels, (c) => c.recover())

const paymentLink = (id: string, key: string) =>
  call(`/api/v1/bookings/${id}/payment-link`, {
    method: "POST",
    key,
    body: {},
    headers: { "Idempotency-Key": randomUUID() }
  })

const cancel = (id: string, key: string, baseUrl?: string) =>
  call(`/api/v1/bookings/${id}/cancel`, {
    method: "POST",
    key,
    body: { reason: "Guest asked to cancel" },
    headers: { "Idempotency-Key": randomUUID() },
    ...(baseUrl ? { baseUrl } : {})
  })

const PAY_LATER = (amountMinor: number) => ({
  status: "upcoming",
  amountMinor,
  currency: "NOK",
  chargeAt: new Date(Date.now() + 3 * DAY),
  paidAt: null
})

const yesterday = () => new Date(Date.now() - DAY - 3_600_000)

/**
 * Alpha with a merchant and a Bókun vendor; a pay-later booking of 998 NOK in the Bókun sandbox
 * whose balance is `balance` (the rest, the reservation fee, paid at checkout yesterday); a key
 * that may send links, cancel and read. Links of earlier tests are pushed out of the watch's way.
 */
const setup = (balance = 79840) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`UPDATE payment_links SET next_check_at = now() + interval '1 day' WHERE state IN ('open', 'closing')`
      .pipe(Effect.orDie)
    const w = yield* makeWorld
    const merchant = yield* merchantFor(w.alpha)
    const { vendor } = yield* vendorFor(w.alpha)
    const email = `guest-${w.tag}@example.com`
    const linked = yield* linkedBooking(w.alpha, vendor, { guestEmail: email, payLater: PAY_LATER(balance) })
    const fee = balance < 99800
      ? yield* paidAtSandbox(linked, merchant.id, 99800 - balance, { at: yesterday(), purpose: "reservation_fee" })
      : null
    const key = yield* createKey({
      by: w.alice,
      operators: [w.alpha],
      scopes: ["payment_links:write", "bookings.cancel:write", "bookings:read"]
    })
    const sent = yield* paymentLink(linked.bookingId, key.token)
    expect(sent.status, sent.text).toBe(200)
    expect(sent.body).toMatchObject({ kind: "deferred_balance", amount_minor: balance })
    const [link] = yield* links(linked.bookingId)
    return {
      w,
      sql,
      merchant,
      vendor,
      email,
      linked,
      booking: linked.bookingId,
      fee,
      key,
      url: sent.body.url as string,
      orderId: link!.provider_link_id!
    }
  })

type Setup = Effect.Effect.Success<ReturnType<typeof setup>>

const links = (bookingId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ id: string; state: string; closed_reason: string | null; provider_link_id: string | null }>`
      SELECT id, state, closed_reason, provider_link_id FROM payment_links WHERE booking_id = ${bookingId} ORDER BY created_at`
        .pipe(Effect.orDie)
  )

const orderStatus = (orderId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ status: string }>`SELECT status FROM surfboard_sandbox.orders WHERE id = ${orderId}`.pipe(
        Effect.map((rows) => rows[0]?.status),
        Effect.orDie
      )
  )

/** What the sandbox gave back for an order: the refunds plus a void of the whole payment. */
const returned = (orderId: string) => Effect.map(returnedBySandbox(orderId), (r) => r.refunded + r.voided)

/** The money went back exactly once, in full: one void, or one completed refund order. */
const expectReturnedOnce = (orderId: string, amountMinor: number) =>
  Effect.map(returnedBySandbox(orderId), (r) => {
    const once = (r.voided === amountMinor && r.refundOrders === 0 && r.refunded === 0) ||
      (r.voided === 0 && r.refundOrders === 1 && r.refunded === amountMinor)
    expect(once, `order ${orderId}: ${JSON.stringify(r)}`).toBe(true)
  })

const bookingRow = (s: Setup) =>
  s.sql<{ status: string; pay_later_status: string | null }>`
    SELECT status, pay_later_status FROM bookings WHERE id = ${s.booking}`.pipe(Effect.map((r) => r[0]!), Effect.orDie)

const refundRows = (s: Setup) =>
  s.sql<{ state: string; amount_minor: number; idempotency_reference: string }>`
    SELECT state, amount_minor::int AS amount_minor, idempotency_reference FROM booking_refunds WHERE booking_id = ${s.booking}
    ORDER BY created_at, amount_minor`.pipe(Effect.orDie)

const payLink = (url: string) => Effect.flatMap(SurfboardSandbox, (surfboard) => surfboard.payLink(url))

/** Every link due now, every refund due now, every change lease expired: as if the jobs' time had come. */
const makeDue = (s: Setup) =>
  Effect.all([
    s.sql`UPDATE payment_links SET next_check_at = now() - interval '1 second' WHERE booking_id = ${s.booking}`,
    s.sql`UPDATE booking_refunds SET next_attempt_at = now() - interval '1 second' WHERE booking_id = ${s.booking}`,
    s.sql`UPDATE booking_changes SET lease_until = now() - interval '1 second' WHERE booking_id = ${s.booking}`
  ]).pipe(Effect.orDie)

layer(env, { excludeTestServices: true, timeout: 600_000 })("cancel and balance payment links", (it) => {
  describe("the cancel closes the booking's open links", () => {
    it.effect("closed at the provider as part of the cancel: paying it afterwards is refused, nothing to refund", () =>
      Effect.gen(function*() {
        const s = yield* setup()
        const res = yield* cancel(s.booking, s.key.token)
        expect(res.status, res.text).toBe(200)
        expect(res.body).toMatchObject({ status: "REFUNDED", refund: { outcome: "refunded", amount_minor: 19960 } })
        expect(yield* links(s.booking)).toMatchObject([{ state: "closed", closed_reason: "booking_cancelled" }])
        // The sandbox's own record: the link's order is cancelled and takes no payment.
        expect(yield* orderStatus(s.orderId)).toBe("PAYMENT_CANCELLED")
        const paid = yield* payLink(s.url).pipe(Effect.exit)
        expect(Exit.isFailure(paid) && Cause.pretty(paid.cause)).toContain("Order is cancelled")
        expect(yield* returned(s.orderId)).toBe(0)
        yield* expectReturnedOnce(s.fee!.orderId, 19960)
        // A payment-link request now: 422, no new link.
        const again = yield* paymentLink(s.booking, s.key.token)
        expect(again.status, again.text).toBe(422)
        expect(yield* links(s.booking)).toHaveLength(1)
      }))

    it.effect("the guest paid the link just before the cancel (not yet seen by the watch): refunded with the fee", () =>
      Effect.gen(function*() {
        const s = yield* setup()
        yield* payLink(s.url)
        const res = yield* cancel(s.booking, s.key.token)
        expect(res.status, res.text).toBe(200)
        expect(res.body).toMatchObject({ status: "REFUNDED", refund: { outcome: "refunded", amount_minor: 99800 } })
        expect(yield* links(s.booking)).toMatchObject([{ state: "closed", closed_reason: "paid" }])
        yield* expectReturnedOnce(s.orderId, 79840)
        yield* expectReturnedOnce(s.fee!.orderId, 19960)
        expect(yield* bookingRow(s)).toEqual({ status: "REFUNDED", pay_later_status: "cancelled" })
        // The jobs find nothing more to do: still once.
        yield* makeDue(s)
        yield* runWatch
        yield* recover
        yield* expectReturnedOnce(s.orderId, 79840)
        expect((yield* refundRows(s)).map((r) => r.state)).toEqual(["completed", "completed"])
      }))

    it.effect("a crash after the seats were released: the recovery job closes the link, then finishes the cancel", () =>
      Effect.gen(function*() {
        const s = yield* setup()
        const settings = yield* ServerSettings
        const crashed = yield* Effect.scoped(Effect.gen(function*() {
          const ctx = yield* Layer.build(
            serverOn(settings.databaseUrl, { ...settings.env, CRASH_AT: "cancel.after_release" })
          )
          return yield* cancel(s.booking, s.key.token, Context.get(ctx, TestServer).baseUrl)
        }))
        expect(crashed.status).toBe(500)
        expect(yield* orderStatus(s.orderId)).toBe("PENDING")
        yield* makeDue(s)
        expect((yield* recover).changes).toMatchObject({ found: 1, completed: 1 })
        expect(yield* links(s.booking)).toMatchObject([{ state: "closed", closed_reason: "booking_cancelled" }])
        expect(yield* orderStatus(s.orderId)).toBe("PAYMENT_CANCELLED")
        expect((yield* bookingRow(s)).status).toBe("REFUNDED")
      }))
  })

  describe("a payment that still arrives after the cancel", () => {
    it.effect("the provider was down during the cancel, the link is paid afterwards: the watch refunds it automatically, once", () =>
      Effect.gen(function*() {
        // No reservation fee: the cancel itself has nothing to refund, and completes with the provider down.
        const s = yield* setup(99800)
        const surfboard = yield* SurfboardSandbox
        const res = yield* Effect.acquireUseRelease(
          surfboard.faults.set({ down: true }, { merchantId: s.merchant.id }),
          () => cancel(s.booking, s.key.token),
          () => surfboard.faults.set({ down: false }, { merchantId: s.merchant.id })
        )
        expect(res.status, res.text).toBe(200)
        expect(res.body).toMatchObject({ status: "CANCELLED", refund: { outcome: "none", amount_minor: 0 } })
        // Not closed at the provider: still payable, and paid.
        expect(yield* links(s.booking)).toMatchObject([{ state: "closing" }])
        yield* payLink(s.url)

        const seen = yield* runWatch
        expect(seen).toMatchObject({ paid: 1, refunded: 1 })
        yield* expectReturnedOnce(s.orderId, 99800)
        // Recorded and visible: the booking's payment and its refund, the booking REFUNDED, the cancel's answer.
        expect(yield* refundRows(s)).toMatchObject([{ state: "completed", amount_minor: 99800 }])
        expect((yield* refundRows(s))[0]!.idempotency_reference).toMatch(/^cancel:/)
        expect(yield* bookingRow(s)).toMatchObject({ status: "REFUNDED" })
        const again = yield* cancel(s.booking, s.key.token)
        expect(again.body).toMatchObject({
          status: "REFUNDED",
          already_cancelled: true,
          refund: { outcome: "refunded", amount_minor: 99800 }
        })
        const read = yield* call(`/api/v1/bookings/${s.booking}`, { key: s.key.token })
        expect(read.body.status).toBe("REFUNDED")

        // Never twice: the watch and the recovery job again.
        yield* makeDue(s)
        expect((yield* runWatch).paid).toBe(0)
        yield* recover
        yield* expectReturnedOnce(s.orderId, 99800)
        expect(yield* refundRows(s)).toHaveLength(1)
      }))

    it.effect("the refund's answer is lost: the recovery job asks again with the reference recorded first; returned once", () =>
      Effect.gen(function*() {
        const s = yield* setup(99800)
        const surfboard = yield* SurfboardSandbox
        yield* Effect.acquireUseRelease(
          surfboard.faults.set({ down: true }, { merchantId: s.merchant.id }),
          () => cancel(s.booking, s.key.token),
          () => surfboard.faults.set({ down: false }, { merchantId: s.merchant.id })
        )
        yield* payLink(s.url)
        // The watch reads the link paid (a read is never lost) and sends the refund, whose answer is lost.
        const seen = yield* Effect.acquireUseRelease(
          surfboard.faults.set({ loseAnswer: "drop" }, { merchantId: s.merchant.id }),
          () => runWatch,
          () => surfboard.faults.set({ loseAnswer: "no" }, { merchantId: s.merchant.id })
        )
        expect(seen).toMatchObject({ paid: 1, refunded: 1 })
        expect((yield* refundRows(s)).map((r) => r.state)).toEqual(["requested"])
        expect((yield* bookingRow(s)).status).toBe("CANCELLED")
        yield* makeDue(s)
        expect((yield* recover).refunds).toMatchObject({ found: 1, completed: 1 })
        yield* expectReturnedOnce(s.orderId, 99800)
        expect((yield* refundRows(s)).map((r) => r.state)).toEqual(["completed"])
        expect((yield* bookingRow(s)).status).toBe("REFUNDED")
      }))
  })

  describe("a booking cancelled elsewhere (no cancel of this service)", () => {
    it.effect("its link paid afterwards: refunded automatically under a cancel recorded for it, once", () =>
      Effect.gen(function*() {
        const s = yield* setup(99800)
        // Cancelled in the dashboard: the status changed, no cancel change of this service.
        yield* s.sql`UPDATE bookings SET status = 'CANCELLED', pay_later_status = 'cancelled' WHERE id = ${s.booking}`
          .pipe(Effect.orDie)
        yield* payLink(s.url)
        yield* makeDue(s)
        expect(yield* runWatch).toMatchObject({ paid: 1, refunded: 1 })
        yield* expectReturnedOnce(s.orderId, 99800)
        const changes = yield* s.sql<{ state: string; reason: string; refund_outcome: string }>`
          SELECT state, reason, refund_outcome FROM booking_changes WHERE booking_id = ${s.booking}`.pipe(Effect.orDie)
        expect(changes).toEqual([{
          state: "done",
          reason: expect.stringContaining("payment after cancellation"),
          refund_outcome: "refunded"
        }])
        expect((yield* bookingRow(s)).status).toBe("REFUNDED")
        yield* makeDue(s)
        yield* runWatch
        yield* recover
        yield* expectReturnedOnce(s.orderId, 99800)
      }))
  })

  describe("paying while the cancel runs, slowed at the booking system", () => {
    it.effect("10 rounds: every payment that went through is returned exactly once; no link stays payable", () =>
      Effect.gen(function*() {
        const bokun = yield* BokunSandbox
        for (let round = 0; round < 10; round++) {
          const s = yield* setup()
          yield* bokun.faults.set({ latencyMs: 150 + 40 * (round % 5) }, { vendorId: s.vendor.id })
          const running = yield* cancel(s.booking, s.key.token).pipe(Effect.fork)
          yield* Effect.sleep(`${60 * (round % 6)} millis`)
          const paid = yield* payLink(s.url).pipe(Effect.exit)
          const res = yield* Fiber.join(running)
          yield* bokun.faults.set({ latencyMs: 0 }, { vendorId: s.vendor.id })
          expect(res.status, res.text).toBe(200)
          yield* makeDue(s)
          yield* runWatch
          yield* recover
          const at = `round ${round}`
          if (Exit.isSuccess(paid)) {
            yield* expectReturnedOnce(s.orderId, 79840)
          } else {
            expect(Cause.pretty(paid.cause), at).toContain("Order is cancelled")
            expect(yield* returned(s.orderId), at).toBe(0)
          }
          yield* expectReturnedOnce(s.fee!.orderId, 19960)
          expect(yield* orderStatus(s.orderId), at).not.toBe("PENDING")
          expect((yield* bookingRow(s)).status, at).toBe("REFUNDED")
          expect((yield* links(s.booking)).map((l) => l.state), at).toEqual(["closed"])
        }
      }))
  })

  describe("payment-link requests racing the cancel", () => {
    it.effect("5 rounds of 10 requests while the cancel runs (both sandboxes slowed): afterwards no link is payable", () =>
      Effect.gen(function*() {
        const bokun = yield* BokunSandbox
        const surfboard = yield* SurfboardSandbox
        for (let round = 0; round < 5; round++) {
          const s = yield* setup()
          yield* bokun.faults.set({ latencyMs: 120 + 30 * round }, { vendorId: s.vendor.id })
          yield* surfboard.faults.set({ latencyMs: 30 + 10 * round }, { merchantId: s.merchant.id })
          // The first link expired at the provider: every request wants a new one, racing the cancel.
          yield* s.sql`UPDATE payment_links SET expires_at = now() WHERE booking_id = ${s.booking}`.pipe(Effect.orDie)
          const [res, ...answers] = yield* Effect.all(
            [
              cancel(s.booking, s.key.token),
              ...Array.from(
                { length: 10 },
                (_, i) => Effect.zipRight(Effect.sleep(`${15 * i} millis`), paymentLink(s.booking, s.key.token))
              )
            ],
            { concurrency: "unbounded" }
          )
          yield* bokun.faults.set({ latencyMs: 0 }, { vendorId: s.vendor.id })
          yield* surfboard.faults.set({ latencyMs: 0 }, { merchantId: s.merchant.id })
          const at = `round ${round}`
          expect(res!.status, `${at}: ${res!.text}`).toBe(200)
          for (const a of answers) expect([200, 422, 503], `${at}: ${a.text}`).toContain(a.status)
          // The sandbox's own records, as soon as everything answered (before any job ran): no
          // payment-page order of the booking is payable.
          const payable = s.sql<{ id: string }>`
            SELECT id FROM surfboard_sandbox.orders WHERE merchant_id = ${s.merchant.id} AND status = 'PENDING'`.pipe(
            Effect.orDie
          )
          expect(yield* payable, at).toEqual([])
          expect((yield* links(s.booking)).every((l) => l.state === "closed"), at).toBe(true)
          expect((yield* bookingRow(s)).status, at).toBe("REFUNDED")
          yield* makeDue(s)
          yield* runWatch
          yield* recover
          expect(yield* payable, at).toEqual([])
        }
      }))
  })

  describe("no link for a booking whose cancel has begun", () => {
    it.effect("a cancel interrupted after the seats were released (the booking still CONFIRMED, balance upcoming): 422, nothing sent", () =>
      Effect.gen(function*() {
        const s = yield* setup()
        const settings = yield* ServerSettings
        const crashed = yield* Effect.scoped(Effect.gen(function*() {
          const ctx = yield* Layer.build(
            serverOn(settings.databaseUrl, { ...settings.env, CRASH_AT: "cancel.after_released" })
          )
          return yield* cancel(s.booking, s.key.token, Context.get(ctx, TestServer).baseUrl)
        }))
        expect(crashed.status).toBe(500)
        expect(yield* bookingRow(s)).toEqual({ status: "CONFIRMED", pay_later_status: "upcoming" })
        const mails = (yield* mailTo(s.email)).length
        const orders = yield* s.sql`SELECT id FROM surfboard_sandbox.orders WHERE merchant_id = ${s.merchant.id}`.pipe(
          Effect.orDie
        )
        const res = yield* paymentLink(s.booking, s.key.token)
        expect(res.status, res.text).toBe(422)
        expect(res.body.detail).toContain("cancelled")
        expect(yield* mailTo(s.email)).toHaveLength(mails)
        expect(
          yield* s.sql`SELECT id FROM surfboard_sandbox.orders WHERE merchant_id = ${s.merchant.id}`.pipe(Effect.orDie)
        )
          .toHaveLength(orders.length)
        // The recovery job finishes the cancel.
        yield* makeDue(s)
        expect((yield* recover).changes).toMatchObject({ completed: 1 })
        expect((yield* bookingRow(s)).status).toBe("REFUNDED")
      }))
  })
})
