/**
 * A guest pays a balance payment link: the `payment-link-watch` job's work (LinkStatusChecks.run,
 * as the job runs it, with the server's settings) through the real server and the Surfboard and
 * Bókun sandboxes over HTTP on one database. Paid links become the booking's payment (and collect a
 * pay-later balance, visible in GET /bookings/{id}), once; a provider that does not answer leaves
 * links for the next run; `creating` rows nobody finished are settled; and a balance paid through a
 * link is refunded with the reservation fee when the booking is cancelled.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Cause, ConfigProvider, Effect, Exit, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { LinkStatusChecks } from "../../../src/partner/paymentLinks/LinkStatusChecks.js"
import { BokunSandbox } from "../../../src/sandbox/bokun/index.js"
import { SurfboardSandbox } from "../../../src/sandbox/surfboard/index.js"
import { createKey, insertBooking, makeWorld } from "../../support/fixtures.js"
import { call } from "../../support/http.js"
import { insertRow } from "../../support/mirror.js"
import {
  linkedBooking,
  merchantFor,
  paidAtSandbox,
  paymentsEnv,
  returnedBySandbox,
  ServerSettings,
  vendorFor
} from "../../support/payments.js"

const DAY = 86_400_000

/** The job's service with the server's settings (the same provider credentials and timeouts). */
const WatchLive = Layer.unwrapEffect(
  Effect.map(ServerSettings, ({ env }) =>
    LinkStatusChecks.Default.pipe(
      Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))))
    ))
)

const env = WatchLive.pipe(Layer.provideMerge(paymentsEnv()))

const runJob = Effect.flatMap(LinkStatusChecks, (w) => w.run())

const paymentLink = (id: string, key: string, idempotencyKey = randomUUID()) =>
  call(`/api/v1/bookings/${id}/payment-link`, {
    method: "POST",
    key,
    body: {},
    headers: { "Idempotency-Key": idempotencyKey }
  })

const cancel = (id: string, key: string) =>
  call(`/api/v1/bookings/${id}/cancel`, {
    method: "POST",
    key,
    body: { reason: "Guest asked to cancel" },
    headers: { "Idempotency-Key": randomUUID() }
  })

interface LinkState {
  readonly id: string
  readonly state: string
  readonly closed_reason: string | null
  readonly provider_link_id: string | null
  readonly url: string | null
  readonly checks: number
  readonly last_error: string | null
  readonly next_check_at: Date
}

const links = (target: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<LinkState>`
      SELECT id, state, closed_reason, provider_link_id, url, checks, last_error, next_check_at FROM payment_links
      WHERE target = ${target} ORDER BY created_at`.pipe(Effect.orDie))

const paymentsOf = (bookingId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{
      purpose: string
      merchant_id: string
      provider_order_id: string
      provider_payment_id: string | null
      amount_minor: number
      currency: string
      paid_at: Date
    }>`
      SELECT purpose, merchant_id, provider_order_id, provider_payment_id, amount_minor, currency, paid_at
      FROM booking_payments WHERE booking_id = ${bookingId} ORDER BY paid_at`.pipe(Effect.orDie))

const payLaterOf = (bookingId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ pay_later_status: string; pay_later_paid_at: Date | null; updated_at: Date | null }>`
      SELECT pay_later_status, pay_later_paid_at, updated_at FROM bookings WHERE id = ${bookingId}`.pipe(
        Effect.map((rows) => rows[0]!),
        Effect.orDie
      )
  )

/** Every link of the target due now (the job's backoff skipped). */
const makeDue = (target: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql`UPDATE payment_links SET next_check_at = now() - interval '1 second' WHERE target = ${target}`.pipe(
        Effect.orDie
      )
  )

/** The sandbox's status of an order (PENDING, PAYMENT_COMPLETED, PAYMENT_CANCELLED …). */
const orderStatus = (orderId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ status: string }>`SELECT status FROM surfboard_sandbox.orders WHERE id = ${orderId}`.pipe(
        Effect.map((rows) => rows[0]?.status),
        Effect.orDie
      )
  )

const sandboxOrders = (merchantId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ id: string; status: string }>`
      SELECT id, status FROM surfboard_sandbox.orders WHERE merchant_id = ${merchantId} ORDER BY created_at`.pipe(
      Effect.orDie
    ))

const PAY_LATER = (amountMinor: number) => ({
  status: "upcoming",
  amountMinor,
  currency: "NOK",
  chargeAt: new Date(Date.now() + 10 * DAY),
  paidAt: null
})

/**
 * Alpha with a merchant; a key that may send links and read bookings. Links of earlier tests (one
 * database for the file) are pushed out of the job's way, so that each test counts only its own.
 */
const setup = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`UPDATE payment_links SET next_check_at = now() + interval '1 day' WHERE state IN ('open', 'closing')`.pipe(
    Effect.orDie
  )
  const w = yield* makeWorld
  const merchant = yield* merchantFor(w.alpha)
  const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["payment_links:write", "bookings:read"] })
  return { w, merchant, key }
})

const withFaults = <A, E, R>(
  merchantId: string,
  settings: { down?: boolean; loseAnswer?: "no" | "drop" },
  body: Effect.Effect<A, E, R>
) =>
  Effect.flatMap(SurfboardSandbox, (surfboard) =>
    Effect.acquireUseRelease(
      surfboard.faults.set(settings, { merchantId }),
      () => body,
      () => surfboard.faults.set({ down: false, loseAnswer: "no" }, { merchantId })
    ))

layer(env, { excludeTestServices: true, timeout: 180_000 })("payment-link-watch job", (it) => {
  describe("a paid link", () => {
    it.effect("deferred balance: a booking_payments row, pay-later collected (GET /bookings/{id}), the link closed; twice records once", () =>
      Effect.gen(function*() {
        const { key, merchant, w } = yield* setup
        const surfboard = yield* SurfboardSandbox
        const booking = yield* insertBooking({ operatorId: w.alpha, payLater: PAY_LATER(45000) })
        const sent = yield* paymentLink(booking, key.token)
        expect(sent.status, sent.text).toBe(200)
        const [link] = yield* links(`booking:${booking}`)
        expect(link).toMatchObject({ state: "open", checks: 0 })
        // Not due yet: its first check is 5 minutes after it was sent.
        expect(link!.next_check_at.getTime()).toBeGreaterThan(Date.now() + 4 * 60_000)

        const paid = yield* surfboard.payLink(sent.body.url)
        expect(paid.status).toBe("PAYMENT_COMPLETED")
        // Two runs at once, then another: the payment is recorded once.
        yield* makeDue(`booking:${booking}`)
        const runs = yield* Effect.all([runJob, runJob, runJob], { concurrency: "unbounded" })
        expect(runs.reduce((n, r) => n + r.paid, 0)).toBe(1)
        expect(runs.reduce((n, r) => n + r.checked, 0)).toBe(1)
        expect((yield* runJob).checked).toBe(0)

        const payments = yield* paymentsOf(booking)
        expect(payments).toHaveLength(1)
        expect(payments[0]).toMatchObject({
          purpose: "balance",
          merchant_id: merchant.id,
          provider_order_id: link!.provider_link_id,
          provider_payment_id: paid.paymentId,
          amount_minor: 45000,
          currency: "NOK"
        })
        const after = yield* payLaterOf(booking)
        expect(after.pay_later_status).toBe("collected")
        expect(after.pay_later_paid_at?.getTime()).toBe(payments[0]!.paid_at.getTime())
        expect(Math.abs(after.pay_later_paid_at!.getTime() - Date.now())).toBeLessThan(60_000)
        expect(after.updated_at).not.toBeNull()
        expect(yield* links(`booking:${booking}`)).toMatchObject([{ state: "closed", closed_reason: "paid" }])

        // The booking read shows it.
        const read = yield* call(`/api/v1/bookings/${booking}`, { key: key.token })
        expect(read.status, read.text).toBe(200)
        expect(read.body.payment.pay_later).toMatchObject({
          status: "collected",
          amount_minor: 45000,
          paid_at: after.pay_later_paid_at!.toISOString()
        })
        // Nothing owed any more.
        const again = yield* paymentLink(booking, key.token)
        expect(again.status, again.text).toBe(422)
        expect(again.body.detail).toContain("collected")

        // A link seen paid once more (say, the run died after recording it and before it knew): still one payment.
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE payment_links SET state = 'open', closed_reason = NULL WHERE id = ${link!.id}`.pipe(
          Effect.orDie
        )
        yield* makeDue(`booking:${booking}`)
        expect((yield* runJob).paid).toBe(1)
        expect(yield* paymentsOf(booking)).toHaveLength(1)
        expect((yield* payLaterOf(booking)).pay_later_paid_at?.getTime()).toBe(after.pay_later_paid_at!.getTime())
      }))

    it.effect("a booking only in the booking system (manifest row): the link is closed as paid, no booking payment", () =>
      Effect.gen(function*() {
        const { key, w } = yield* setup
        const bokun = yield* vendorFor(w.alpha)
        const sandbox = yield* BokunSandbox
        const surfboard = yield* SurfboardSandbox
        const made = yield* sandbox.addBooking({
          vendorId: bokun.vendor.id,
          productId: bokun.vendor.products[0]!.id,
          date: "2027-02-01",
          participants: 1,
          paidMinor: 0
        })
        const row = yield* insertRow({
          accountId: bokun.accountId,
          operatorId: w.alpha,
          reference: made.confirmationCode
        })
        const sent = yield* paymentLink(row, key.token)
        expect(sent.status, sent.text).toBe(200)
        yield* surfboard.payLink(sent.body.url)
        yield* makeDue(`row:${row}`)
        expect(yield* runJob).toMatchObject({ checked: 1, paid: 1 })
        expect(yield* links(`row:${row}`)).toMatchObject([{ state: "closed", closed_reason: "paid" }])
        const sql = yield* SqlClient.SqlClient
        const [n] = yield* sql<{ n: number }>`
          SELECT count(*)::int AS n FROM booking_payments p JOIN payment_links l ON l.provider_link_id = p.provider_order_id
          WHERE l.target = ${`row:${row}`}`.pipe(Effect.orDie)
        expect(n!.n).toBe(0)
      }))

    it.effect("a booking only in the booking system with two lines: open while one line is live, closed once both are cancelled", () =>
      Effect.gen(function*() {
        const { key, w } = yield* setup
        const bokun = yield* vendorFor(w.alpha)
        const sandbox = yield* BokunSandbox
        const sql = yield* SqlClient.SqlClient
        const made = yield* sandbox.addBooking({
          vendorId: bokun.vendor.id,
          productId: bokun.vendor.products[0]!.id,
          date: "2027-02-02",
          participants: 1,
          paidMinor: 0
        })
        const first = yield* insertRow({
          accountId: bokun.accountId,
          operatorId: w.alpha,
          reference: made.confirmationCode
        })
        const second = yield* insertRow({
          accountId: bokun.accountId,
          operatorId: w.alpha,
          reference: made.confirmationCode
        })
        yield* sql`
          UPDATE manifest_rows SET booking_id = (SELECT booking_id FROM manifest_rows WHERE id = ${first}),
            first_seen_at = (SELECT first_seen_at FROM manifest_rows WHERE id = ${first}) + interval '1 second'
          WHERE id = ${second}`.pipe(Effect.orDie)
        expect((yield* paymentLink(second, key.token)).status).toBe(200)
        // The first line (where the link is kept) is cancelled; the second still owes.
        yield* sql`UPDATE manifest_rows SET status = 'CANCELLED' WHERE id = ${first}`.pipe(Effect.orDie)
        yield* makeDue(`row:${first}`)
        expect(yield* runJob).toMatchObject({ checked: 1, still_open: 1 })
        yield* sql`UPDATE manifest_rows SET status = 'CANCELLED' WHERE id = ${second}`.pipe(Effect.orDie)
        yield* makeDue(`row:${first}`)
        expect(yield* runJob).toMatchObject({ checked: 1, closed: 1 })
        expect(yield* links(`row:${first}`)).toMatchObject([{ state: "closed", closed_reason: "not_owed" }])
      }))

    it.effect("the payment-link request itself finds the link paid: recorded the same way, 422 nothing owed", () =>
      Effect.gen(function*() {
        const { key, w } = yield* setup
        const surfboard = yield* SurfboardSandbox
        const booking = yield* insertBooking({ operatorId: w.alpha, payLater: PAY_LATER(3000) })
        const sent = yield* paymentLink(booking, key.token)
        yield* surfboard.payLink(sent.body.url)
        const again = yield* paymentLink(booking, key.token)
        expect(again.status, again.text).toBe(422)
        expect(again.body.detail).toContain("paid this balance through the payment link")
        expect(yield* paymentsOf(booking)).toMatchObject([{ purpose: "balance", amount_minor: 3000 }])
        expect((yield* payLaterOf(booking)).pay_later_status).toBe("collected")
        // The job has nothing left to do for it.
        yield* makeDue(`booking:${booking}`)
        expect((yield* runJob).checked).toBe(0)
      }))
  })

  describe("open links", () => {
    it.effect("still open: asked again later, backing off; expired at the provider: closed", () =>
      Effect.gen(function*() {
        const { key, w } = yield* setup
        const surfboard = yield* SurfboardSandbox
        const booking = yield* insertBooking({ operatorId: w.alpha, payLater: PAY_LATER(1000) })
        const sent = yield* paymentLink(booking, key.token)
        expect(sent.status, sent.text).toBe(200)
        const target = `booking:${booking}`
        yield* makeDue(target)
        expect(yield* runJob).toMatchObject({ checked: 1, still_open: 1 })
        const [first] = yield* links(target)
        expect(first).toMatchObject({ state: "open", checks: 1, last_error: null })
        const delay1 = first!.next_check_at.getTime() - Date.now()
        expect(delay1).toBeGreaterThan(2 * 60_000)
        expect(delay1).toBeLessThanOrEqual(5 * 60_000)
        yield* makeDue(target)
        yield* runJob
        yield* makeDue(target)
        yield* runJob
        const [third] = yield* links(target)
        expect(third!.checks).toBe(3)
        expect(third!.next_check_at.getTime() - Date.now()).toBeGreaterThan(9 * 60_000)

        yield* surfboard.clock.advance("8 days")
        yield* makeDue(target)
        const expired = yield* runJob.pipe(Effect.ensuring(surfboard.clock.reset))
        expect(expired).toMatchObject({ checked: 1, closed: 1 })
        const [closed] = yield* links(target)
        expect(closed!.state).toBe("closed")
        // The sandbox cancels a page past its validity (as the provider is assumed to).
        expect(["expired", "cancelled"]).toContain(closed!.closed_reason)
        expect((yield* payLaterOf(booking)).pay_later_status).toBe("upcoming")
      }))

    it.effect("provider down: the link stays open with the error noted, and is recorded by the next run once it answers", () =>
      Effect.gen(function*() {
        const { key, merchant, w } = yield* setup
        const surfboard = yield* SurfboardSandbox
        const booking = yield* insertBooking({ operatorId: w.alpha, payLater: PAY_LATER(2500) })
        const sent = yield* paymentLink(booking, key.token)
        yield* surfboard.payLink(sent.body.url)
        const target = `booking:${booking}`
        yield* makeDue(target)
        const down = yield* withFaults(merchant.id, { down: true }, runJob)
        expect(down).toMatchObject({ checked: 1, unanswered: 1, paid: 0 })
        const [link] = yield* links(target)
        expect(link).toMatchObject({ state: "open", checks: 1 })
        expect(link!.last_error).toContain("connection")
        expect(link!.next_check_at.getTime()).toBeGreaterThan(Date.now())
        expect(yield* paymentsOf(booking)).toHaveLength(0)
        expect((yield* payLaterOf(booking)).pay_later_status).toBe("upcoming")
        // Not due: the next run leaves it alone.
        expect((yield* runJob).checked).toBe(0)

        yield* makeDue(target)
        expect(yield* runJob).toMatchObject({ checked: 1, paid: 1 })
        expect(yield* paymentsOf(booking)).toHaveLength(1)
        expect((yield* payLaterOf(booking)).pay_later_status).toBe("collected")
      }))

    it.effect("the booking no longer owes it (cancelled): the link is cancelled at the provider and closed", () =>
      Effect.gen(function*() {
        const { key, w } = yield* setup
        const surfboard = yield* SurfboardSandbox
        const sql = yield* SqlClient.SqlClient
        const booking = yield* insertBooking({ operatorId: w.alpha, payLater: PAY_LATER(1500) })
        const sent = yield* paymentLink(booking, key.token)
        yield* sql`UPDATE bookings SET status = 'CANCELLED', pay_later_status = 'cancelled' WHERE id = ${booking}`.pipe(
          Effect.orDie
        )
        yield* makeDue(`booking:${booking}`)
        expect(yield* runJob).toMatchObject({ checked: 1, closed: 1 })
        const [link] = yield* links(`booking:${booking}`)
        expect(link).toMatchObject({ state: "closed", closed_reason: "not_owed" })
        expect(yield* orderStatus(link!.provider_link_id!)).toBe("PAYMENT_CANCELLED")
        const paid = yield* surfboard.payLink(sent.body.url).pipe(Effect.exit)
        expect(Exit.isFailure(paid) && Cause.pretty(paid.cause)).toContain("Order is cancelled")
      }))
  })

  describe("links left in state creating", () => {
    /** The state a lost answer leaves: the provider made the link, we never learnt it. Aged past the grace period. */
    const stuckLink = (
      s: Effect.Effect.Success<typeof setup>,
      booking: string,
      fault: { down?: boolean; loseAnswer?: "drop" }
    ) =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const res = yield* withFaults(s.merchant.id, fault, paymentLink(booking, s.key.token))
        expect(res.status, res.text).toBe(503)
        const target = `booking:${booking}`
        expect(yield* links(target)).toMatchObject([{ state: "creating", provider_link_id: null }])
        // Within the grace period: left to the request's retries.
        expect((yield* runJob).taken_over).toBe(0)
        yield* sql`UPDATE payment_links SET updated_at = now() - interval '20 minutes' WHERE target = ${target}`.pipe(
          Effect.orDie
        )
        return target
      })

    it.effect("the provider made it: the job gets it with the same reference and request, cancels it there and closes it", () =>
      Effect.gen(function*() {
        const s = yield* setup
        const booking = yield* insertBooking({ operatorId: s.w.alpha, payLater: PAY_LATER(4000) })
        const target = yield* stuckLink(s, booking, { loseAnswer: "drop" })
        const [made] = yield* sandboxOrders(s.merchant.id)
        expect(made!.status).toBe("PENDING")

        expect(yield* runJob).toMatchObject({ taken_over: 1, checked: 1, closed: 1 })
        const [link] = yield* links(target)
        expect(link).toMatchObject({ state: "closed", closed_reason: "abandoned", provider_link_id: made!.id })
        // The same link, not a second one, and it no longer takes payments.
        expect(yield* sandboxOrders(s.merchant.id)).toEqual([{ id: made!.id, status: "PAYMENT_CANCELLED" }])
        expect((yield* runJob).checked).toBe(0)

        // The next request makes a fresh link.
        const next = yield* paymentLink(booking, s.key.token)
        expect(next.status, next.text).toBe(200)
        expect((yield* links(target)).map((l) => l.state)).toEqual(["closed", "open"])
        expect(yield* sandboxOrders(s.merchant.id)).toHaveLength(2)
      }))

    it.effect("the provider never got it and is down: left closing for the next run, never reused; then settled", () =>
      Effect.gen(function*() {
        const s = yield* setup
        const booking = yield* insertBooking({ operatorId: s.w.alpha, payLater: PAY_LATER(4100) })
        const target = yield* stuckLink(s, booking, { down: true })
        expect(yield* sandboxOrders(s.merchant.id)).toHaveLength(0)

        const down = yield* withFaults(s.merchant.id, { down: true }, runJob)
        expect(down).toMatchObject({ taken_over: 1, checked: 1, unanswered: 1 })
        const [closing] = yield* links(target)
        expect(closing).toMatchObject({ state: "closing", checks: 1 })
        expect(closing!.last_error).toContain("createPaymentLink")

        // A request meanwhile does not reuse it: it makes its own link.
        const next = yield* paymentLink(booking, s.key.token)
        expect(next.status, next.text).toBe(200)
        expect((yield* links(target)).map((l) => l.state)).toEqual(["closing", "open"])

        yield* makeDue(target)
        const settled = yield* runJob
        expect(settled).toMatchObject({ checked: 2, closed: 1, still_open: 1 })
        const [abandoned, open] = yield* links(target)
        expect(abandoned).toMatchObject({ state: "closed", closed_reason: "abandoned" })
        expect(open).toMatchObject({ state: "open", url: next.body.url })
        // The one the job had to make in order to learn it is closed at once; the request's stays payable.
        expect(yield* orderStatus(abandoned!.provider_link_id!)).toBe("PAYMENT_CANCELLED")
        expect(yield* orderStatus(open!.provider_link_id!)).toBe("PENDING")
      }))
  })

  describe("a cancel with a link open", () => {
    it.effect("cancelled while its refund is still settling: the cancel itself closes the open link at the provider", () =>
      Effect.gen(function*() {
        const { merchant, w } = yield* setup
        const surfboard = yield* SurfboardSandbox
        const { vendor } = yield* vendorFor(w.alpha)
        const linked = yield* linkedBooking(w.alpha, vendor, { payLater: PAY_LATER(79840) })
        yield* paidAtSandbox(linked, merchant.id, 19960, {
          at: new Date(Date.now() - DAY - 3_600_000),
          purpose: "reservation_fee"
        })
        const key = yield* createKey({
          by: w.alice,
          operators: [w.alpha],
          scopes: ["payment_links:write", "bookings.cancel:write"]
        })
        expect((yield* paymentLink(linked.bookingId, key.token)).status).toBe(200)
        const target = `booking:${linked.bookingId}`
        expect((yield* links(target))[0]!.next_check_at.getTime()).toBeGreaterThan(Date.now())
        const res = yield* Effect.acquireUseRelease(
          surfboard.faults.set({ settlement: "manual" }, { merchantId: merchant.id }),
          () => cancel(linked.bookingId, key.token),
          () => surfboard.faults.set({ settlement: "instant" }, { merchantId: merchant.id })
        )
        expect(res.body).toMatchObject({ status: "CONFIRMED", refund: { outcome: "pending" } })
        const [link] = yield* links(target)
        expect(link).toMatchObject({ state: "closed", closed_reason: "booking_cancelled" })
        expect(yield* orderStatus(link!.provider_link_id!)).toBe("PAYMENT_CANCELLED")
        // Nothing left for the watch.
        expect(yield* runJob).toMatchObject({ checked: 0 })
      }))
  })

  describe("cancel after the balance was paid through a link", () => {
    it.effect("the reservation fee and the balance are both refunded", () =>
      Effect.gen(function*() {
        const { merchant, w } = yield* setup
        const surfboard = yield* SurfboardSandbox
        const { vendor } = yield* vendorFor(w.alpha)
        const linked = yield* linkedBooking(w.alpha, vendor, {
          guestEmail: `cancel-${w.tag}@example.com`,
          payLater: PAY_LATER(79840)
        })
        const booking = linked.bookingId
        // The reservation fee, paid at checkout yesterday.
        const fee = yield* paidAtSandbox(linked, merchant.id, 19960, {
          at: new Date(Date.now() - DAY - 3_600_000),
          purpose: "reservation_fee"
        })

        const key = yield* createKey({
          by: w.alice,
          operators: [w.alpha],
          scopes: ["payment_links:write", "bookings.cancel:write"]
        })
        const sent = yield* paymentLink(booking, key.token)
        expect(sent.status, sent.text).toBe(200)
        expect(sent.body.amount_minor).toBe(79840)
        yield* surfboard.payLink(sent.body.url)
        yield* makeDue(`booking:${booking}`)
        expect((yield* runJob).paid).toBe(1)

        const res = yield* cancel(booking, key.token)
        expect(res.status, res.text).toBe(200)
        expect(res.body).toMatchObject({
          status: "REFUNDED",
          refund: { outcome: "refunded", amount_minor: 99800, currency: "NOK" }
        })
        const [link] = yield* links(`booking:${booking}`)
        // Both orders got their money back: the fee by refund (paid yesterday), the balance by void or refund.
        const returned = (orderId: string) => Effect.map(returnedBySandbox(orderId), (r) => r.refunded + r.voided)
        expect(yield* returned(fee.orderId)).toBe(19960)
        expect(yield* returned(link!.provider_link_id!)).toBe(79840)
      }))
  })
})
