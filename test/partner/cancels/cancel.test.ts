/**
 * POST /api/v1/bookings/{id}/cancel through the real server, with the Bókun and Surfboard sandboxes
 * over HTTP on the same database: every row of the spec's §3 cancel table, the refund follow-up
 * job, provider and booking-system faults, and crashes between each pair of side effects (a second
 * server instance with CRASH_AT), each proving that money moves once and every email goes once.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { ConfigProvider, Context, Effect, Fiber, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { Cancels } from "../../../src/partner/cancels/Cancels.js"
import { DailyLimits } from "../../../src/partner/writes/DailyLimits.js"
import { canVoid, PaymentProvider } from "../../../src/ports/PaymentProvider.js"
import { BokunSandbox } from "../../../src/sandbox/bokun/index.js"
import { SurfboardSandbox } from "../../../src/sandbox/surfboard/index.js"
import { cliWith, json } from "../../support/cli.js"
import { createKey, makeWorld } from "../../support/fixtures.js"
import { call, type Reply } from "../../support/http.js"
import { auditOf, usedToday } from "../../support/manifest.js"
import { conforms, dereferencedSpec } from "../../support/openapi.js"
import {
  linkedBooking,
  merchantFor,
  paidAtSandbox,
  paymentsEnv,
  returnedBySandbox,
  returnedOnce,
  ServerSettings,
  vendorFor
} from "../../support/payments.js"
import { serverOn, TestServer } from "../../support/server.js"

const DAY = 86_400_000

/** The service's Cancels (the recovery job's work) with the server's settings. */
const CancelsLive = Layer.unwrapEffect(
  Effect.map(
    ServerSettings,
    ({ env }) =>
      Cancels.Default.pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))))
  )
)

const env = Layer.mergeAll(CancelsLive, DailyLimits.Default).pipe(Layer.provideMerge(paymentsEnv()))

/** Every answer of this file, checked against the OpenAPI document at the end. */
const seen: Array<Reply> = []

const cancel = (
  id: string,
  o: { key: string; reason?: unknown; idempotencyKey?: string; baseUrl?: string; body?: unknown }
) =>
  call(`/api/v1/bookings/${id}/cancel`, {
    method: "POST",
    key: o.key,
    body: o.body !== undefined
      ? o.body
      : { reason: o.reason === undefined ? "Guest asked to cancel by phone" : o.reason },
    headers: { "Idempotency-Key": o.idempotencyKey ?? randomUUID() },
    ...(o.baseUrl ? { baseUrl: o.baseUrl } : {})
  }).pipe(Effect.tap((res) => Effect.sync(() => seen.push(res))))

const expectProblem = (res: Reply, status: number, slug: string) => {
  expect(res.status, res.text).toBe(status)
  expect(res.headers.get("content-type")).toBe("application/problem+json")
  expect(res.body.type).toBe(`/api/v1/docs/errors.md#${slug}`)
}

const recover = Effect.flatMap(Cancels, (c) => c.recover())

/**
 * Alpha with a Surfboard merchant and a Bókun vendor; a tour mapped to the vendor's product; our
 * booking of 2 adults (998 NOK) on day+5 10:00, also in the Bókun sandbox; a key that may cancel.
 */
const setup = (
  o: { payLater?: { status: string; amountMinor: number }; amountMinor?: number; commission?: boolean } = {}
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const w = yield* makeWorld
    const merchant = yield* merchantFor(w.alpha)
    const { vendor } = yield* vendorFor(w.alpha)
    const email = `guest-${w.tag}@example.com`
    const amountMinor = o.amountMinor ?? 99800
    const { bookingId, code, seeded } = yield* linkedBooking(w.alpha, vendor, {
      amountMinor,
      guestName: "Kari Nordmann",
      guestEmail: email,
      commission: o.commission === false
        ? undefined
        : { amountMinor: 7984, ratePercent: 8, currency: "NOK", status: "pending" },
      ...(o.payLater
        ? {
          payLater: {
            ...o.payLater,
            currency: "NOK",
            chargeAt: new Date(Date.now() + 3 * DAY),
            paidAt: o.payLater.status === "collected" ? new Date() : null
          }
        }
        : {})
    })
    const key = yield* createKey({
      by: w.alice,
      operators: [w.alpha],
      scopes: ["bookings.cancel:write", "bookings:read"],
      name: "Cancel bot"
    })
    return { w, sql, merchant, vendor, bookingId, code, seeded, key, email, amountMinor }
  })

type Setup = Effect.Effect.Success<ReturnType<typeof setup>>

const pay = (
  s: Setup,
  amountMinor: number,
  o: { at?: Date; purpose?: "full" | "reservation_fee" | "balance"; recordedAt?: Date } = {}
) => paidAtSandbox(s, s.merchant.id, amountMinor, o)

const yesterday = () => new Date(Date.now() - DAY - 3_600_000)

const ourBooking = (s: Setup) =>
  s.sql<
    {
      status: string
      cancel_reason: string | null
      commission_status: string | null
      pay_later_status: string | null
      updated_at: Date | null
    }
  >`
    SELECT status, cancel_reason, commission_status, pay_later_status, updated_at FROM bookings WHERE id = ${s.bookingId}`
    .pipe(
      Effect.map((rows) => rows[0]!),
      Effect.orDie
    )

const bokunStatus = (s: Setup) =>
  s.sql<
    { status: string }
  >`SELECT status FROM bokun_sandbox.bookings WHERE confirmation_code = ${s.seeded.confirmationCode}`.pipe(
    Effect.map((rows) => rows[0]!.status),
    Effect.orDie
  )

const emailsOf = (s: Setup) =>
  s.sql<{ dedupe_key: string; template: string; text_body: string }>`
    SELECT dedupe_key, template, text_body FROM email_outbox WHERE booking_id = ${s.bookingId} ORDER BY template`.pipe(
    Effect.orDie
  )

const refundRows = (s: Setup) =>
  s.sql<
    {
      method: string
      state: string
      amount_minor: number
      refunded_minor: number
      seq: number
      alerted_at: Date | null
    }
  >`
    SELECT method, state, amount_minor::int AS amount_minor, refunded_minor::int AS refunded_minor, seq, alerted_at
    FROM booking_refunds WHERE booking_id = ${s.bookingId} ORDER BY payment_id, seq`.pipe(Effect.orDie)

/** Due refund rows made due now (the job's backoff skipped), and change leases expired (a crash). */
const makeDue = (s: Setup) =>
  Effect.all([
    s.sql`UPDATE booking_refunds SET next_attempt_at = now() - interval '1 second' WHERE booking_id = ${s.bookingId}`,
    s.sql`UPDATE booking_changes SET lease_until = now() - interval '1 second' WHERE booking_id = ${s.bookingId}`
  ]).pipe(Effect.orDie)

const withFaults = <A, E, R>(
  settings: Parameters<SurfboardSandbox["Type"]["faults"]["set"]>[0],
  body: Effect.Effect<A, E, R>
) =>
  Effect.flatMap(
    SurfboardSandbox,
    (surfboard) => Effect.acquireUseRelease(surfboard.faults.set(settings), () => body, () => surfboard.faults.reset)
  )

layer(env, { excludeTestServices: true, timeout: 180_000 })("POST /api/v1/bookings/{id}/cancel", (it) => {
  describe("§3 outcomes", () => {
    it.effect("paid yesterday: seats released, refunded in full, REFUNDED, commission voided, guest and team emailed once", () =>
      Effect.gen(function*() {
        const s = yield* setup()
        const sale = yield* pay(s, s.amountMinor, { at: yesterday() })
        const before = yield* ourBooking(s)
        const idem = randomUUID()
        const res = yield* cancel(s.bookingId, {
          key: s.key.token,
          idempotencyKey: idem,
          reason: "  Storm warning: all departures off  "
        })
        expect(res.status, res.text).toBe(200)
        expect(res.body).toEqual({
          id: s.bookingId,
          status: "REFUNDED",
          already_cancelled: false,
          refund: { outcome: "refunded", amount_minor: 99800, currency: "NOK" }
        })
        expect(yield* bokunStatus(s)).toBe("CANCELLED")
        expect(yield* returnedBySandbox(sale.orderId)).toEqual({ refundOrders: 1, refunded: 99800, voided: 0 })
        const after = yield* ourBooking(s)
        expect(after).toMatchObject({
          status: "REFUNDED",
          cancel_reason: "Storm warning: all departures off",
          commission_status: "voided"
        })
        expect(after.updated_at!.getTime()).toBeGreaterThan(before.updated_at?.getTime() ?? 0)
        const emails = yield* emailsOf(s)
        expect(emails.map((e) => e.template)).toEqual(["booking_cancelled_guest", "booking_cancelled_team"])
        expect(emails[0]!.text_body).toContain("998")
        expect(emails[1]!.text_body).toContain("Storm warning")
        expect(emails[1]!.text_body).toContain("Cancel bot")
        expect(yield* usedToday(s.key.id, "cancels")).toBe(1)

        // The same request again: the stored answer.
        const replay = yield* cancel(s.bookingId, {
          key: s.key.token,
          idempotencyKey: idem,
          reason: "  Storm warning: all departures off  "
        })
        expect(replay.status).toBe(200)
        expect(replay.headers.get("idempotent-replayed")).toBe("true")
        expect(replay.body).toEqual(res.body)
        // A new request: already cancelled, nothing moves, not counted.
        const again = yield* cancel(s.bookingId, { key: s.key.token })
        expect(again.status, again.text).toBe(200)
        expect(again.body).toEqual({ ...res.body, already_cancelled: true })
        expect(yield* usedToday(s.key.id, "cancels")).toBe(1)
        expect(yield* returnedBySandbox(sale.orderId)).toEqual({ refundOrders: 1, refunded: 99800, voided: 0 })
        expect((yield* emailsOf(s)).length).toBe(2)
        const audit = (yield* auditOf(s.key.id)).filter((a) => a.action === "cancels").map((a) => a.outcome)
        expect(audit).toEqual(["done", "replayed", "noop"])
        // The booking read shows it.
        const read = yield* call(`/api/v1/bookings/${s.bookingId}`, { key: s.key.token })
        expect(read.body).toMatchObject({ status: "REFUNDED", commission: { status: "voided" } })
      }))

    it.effect("paid today: voided (or refunded after 23:00 UTC); the money comes back once", () =>
      Effect.gen(function*() {
        const s = yield* setup()
        const paidAt = new Date()
        const sale = yield* pay(s, s.amountMinor, { at: paidAt })
        const res = yield* cancel(s.bookingId, { key: s.key.token })
        expect(res.status, res.text).toBe(200)
        expect(res.body).toMatchObject({ status: "REFUNDED", refund: { outcome: "refunded", amount_minor: 99800 } })
        const voidable = canVoid(paidAt, new Date())
        expect(yield* returnedBySandbox(sale.orderId)).toEqual(
          voidable ? { refundOrders: 0, refunded: 0, voided: 99800 } : { refundOrders: 1, refunded: 99800, voided: 0 }
        )
        expect((yield* refundRows(s)).map((r) => r.method)).toEqual([voidable ? "void" : "refund"])
      }))

    it.effect("a void the provider refuses (the payment settled already) becomes a refund in the same request", () =>
      Effect.gen(function*() {
        const s = yield* setup()
        // Our record says today, the provider's payment was yesterday: the void is refused.
        const sale = yield* pay(s, s.amountMinor, { at: yesterday(), recordedAt: new Date() })
        const res = yield* cancel(s.bookingId, { key: s.key.token })
        expect(res.status, res.text).toBe(200)
        expect(res.body).toMatchObject({ status: "REFUNDED", refund: { outcome: "refunded", amount_minor: 99800 } })
        expect(yield* returnedBySandbox(sale.orderId)).toEqual({ refundOrders: 1, refunded: 99800, voided: 0 })
        const rows = yield* refundRows(s)
        if (canVoid(new Date(), new Date())) {
          expect(rows.map((r) => [r.method, r.state])).toEqual([["void", "superseded"], ["refund", "completed"]])
        } else {
          expect(rows.map((r) => [r.method, r.state])).toEqual([["refund", "completed"]])
        }
      }))

    it.effect("nothing paid: CANCELLED with outcome none; the emails say nothing was charged", () =>
      Effect.gen(function*() {
        const s = yield* setup({ amountMinor: 0, commission: false })
        const res = yield* cancel(s.bookingId, { key: s.key.token })
        expect(res.status, res.text).toBe(200)
        expect(res.body).toEqual({
          id: s.bookingId,
          status: "CANCELLED",
          already_cancelled: false,
          refund: { outcome: "none", amount_minor: 0, currency: "NOK" }
        })
        expect(yield* bokunStatus(s)).toBe("CANCELLED")
        expect((yield* ourBooking(s)).commission_status).toBeNull()
        expect((yield* emailsOf(s)).length).toBe(2)
      }))

    it.effect("unpaid pay-later: only the reservation fee goes back; the balance charge is cancelled", () =>
      Effect.gen(function*() {
        const s = yield* setup({ payLater: { status: "upcoming", amountMinor: 79840 } })
        const sale = yield* pay(s, 19960, { at: yesterday(), purpose: "reservation_fee" })
        const res = yield* cancel(s.bookingId, { key: s.key.token })
        expect(res.status, res.text).toBe(200)
        expect(res.body).toMatchObject({ status: "REFUNDED", refund: { outcome: "refunded", amount_minor: 19960 } })
        expect(yield* returnedBySandbox(sale.orderId)).toEqual({ refundOrders: 1, refunded: 19960, voided: 0 })
        expect((yield* ourBooking(s)).pay_later_status).toBe("cancelled")
      }))

    it.effect("collected pay-later: the fee and the balance both go back", () =>
      Effect.gen(function*() {
        const s = yield* setup({ payLater: { status: "collected", amountMinor: 79840 } })
        const fee = yield* pay(s, 19960, { at: yesterday(), purpose: "reservation_fee" })
        const balance = yield* pay(s, 79840, { at: yesterday(), purpose: "balance" })
        const res = yield* cancel(s.bookingId, { key: s.key.token })
        expect(res.body).toMatchObject({ status: "REFUNDED", refund: { outcome: "refunded", amount_minor: 99800 } })
        expect((yield* returnedBySandbox(fee.orderId)).refunded).toBe(19960)
        expect((yield* returnedBySandbox(balance.orderId)).refunded).toBe(79840)
        expect((yield* ourBooking(s)).pay_later_status).toBe("cancelled")
      }))

    it.effect("a void still settling: CANCELLED with outcome pending; the job makes it REFUNDED once it settles", () =>
      Effect.gen(function*() {
        const s = yield* setup()
        const paidAt = new Date()
        if (!canVoid(paidAt, new Date())) return // after 23:00 UTC no void exists; the refund tests cover that path
        const sale = yield* pay(s, s.amountMinor, { at: paidAt })
        const surfboard = yield* SurfboardSandbox
        const res = yield* withFaults({ settlement: "manual" }, cancel(s.bookingId, { key: s.key.token }))
        expect(res.body).toMatchObject({ status: "CANCELLED", refund: { outcome: "pending", amount_minor: 99800 } })
        expect((yield* refundRows(s))[0]).toMatchObject({ method: "void", state: "settling", alerted_at: null })
        const emails = yield* emailsOf(s)
        expect(emails.length).toBe(2)
        yield* surfboard.settle({ orderId: sale.orderId })
        yield* makeDue(s)
        expect((yield* recover).refunds).toMatchObject({ found: 1, completed: 1 })
        expect((yield* ourBooking(s)).status).toBe("REFUNDED")
        expect(yield* returnedBySandbox(sale.orderId)).toEqual({ refundOrders: 0, refunded: 0, voided: 99800 })
        expect((yield* emailsOf(s)).length).toBe(2)
      }))

    it.effect("a refund still settling: CONFIRMED with outcome pending and an alert; the job finishes it", () =>
      Effect.gen(function*() {
        const s = yield* setup()
        const sale = yield* pay(s, s.amountMinor, { at: yesterday() })
        const surfboard = yield* SurfboardSandbox
        const res = yield* withFaults({ settlement: "manual" }, cancel(s.bookingId, { key: s.key.token }))
        expect(res.status, res.text).toBe(200)
        expect(res.body).toMatchObject({
          status: "CONFIRMED",
          already_cancelled: false,
          refund: { outcome: "pending", amount_minor: 99800 }
        })
        expect(yield* bokunStatus(s)).toBe("CANCELLED")
        const [row] = yield* refundRows(s)
        expect(row).toMatchObject({ method: "refund", state: "settling" })
        expect(row!.alerted_at).not.toBeNull()
        expect(yield* ourBooking(s)).toMatchObject({ status: "CONFIRMED", commission_status: "voided" })
        // Asked again meanwhile: the cancel stands, nothing moves again.
        const again = yield* cancel(s.bookingId, { key: s.key.token })
        expect(again.body).toMatchObject({
          status: "CONFIRMED",
          already_cancelled: true,
          refund: { outcome: "pending" }
        })
        // Not settled yet: the job reads it and leaves it open.
        yield* makeDue(s)
        expect((yield* recover).refunds).toMatchObject({ found: 1, open: 1 })
        yield* surfboard.settle({ orderId: undefined })
        yield* makeDue(s)
        expect((yield* recover).refunds).toMatchObject({ found: 1, completed: 1 })
        expect((yield* ourBooking(s)).status).toBe("REFUNDED")
        expect(yield* returnedBySandbox(sale.orderId)).toEqual({ refundOrders: 1, refunded: 99800, voided: 0 })
        const done = yield* cancel(s.bookingId, { key: s.key.token })
        expect(done.body).toMatchObject({
          status: "REFUNDED",
          already_cancelled: true,
          refund: { outcome: "refunded" }
        })
      }))

    it.effect("a partial refund: pending; the job asks for the rest with a new reference until all of it is back", () =>
      Effect.gen(function*() {
        const s = yield* setup()
        const sale = yield* pay(s, s.amountMinor, { at: yesterday() })
        const res = yield* withFaults({ partialRefundRatio: 0.5 }, cancel(s.bookingId, { key: s.key.token }))
        expect(res.body).toMatchObject({ status: "CONFIRMED", refund: { outcome: "pending" } })
        const returned = yield* returnedBySandbox(sale.orderId)
        expect(returned.refunded).toBeLessThan(99800)
        expect(returned.refunded).toBeGreaterThan(0)
        yield* makeDue(s)
        yield* recover
        expect((yield* ourBooking(s)).status).toBe("REFUNDED")
        expect((yield* returnedBySandbox(sale.orderId)).refunded).toBe(99800)
        const rows = yield* refundRows(s)
        expect(rows.reduce((sum, r) => sum + r.refunded_minor, 0)).toBe(99800)
      }))
  })

  describe("payment provider faults", () => {
    it.effect("provider down: seats released, CONFIRMED pending, alerted; once it is back the job refunds exactly once", () =>
      Effect.gen(function*() {
        const s = yield* setup()
        const sale = yield* pay(s, s.amountMinor, { at: yesterday() })
        const res = yield* withFaults({ down: true }, cancel(s.bookingId, { key: s.key.token }))
        expect(res.status, res.text).toBe(200)
        expect(res.body).toMatchObject({ status: "CONFIRMED", refund: { outcome: "pending", amount_minor: 99800 } })
        expect(yield* bokunStatus(s)).toBe("CANCELLED")
        expect((yield* refundRows(s))[0]).toMatchObject({ state: "requested" })
        expect((yield* refundRows(s))[0]!.alerted_at).not.toBeNull()
        const emails = yield* emailsOf(s)
        expect(emails.length).toBe(2)
        // Still down: the job tries, nothing moves.
        yield* makeDue(s)
        yield* withFaults({ down: true }, recover)
        expect((yield* returnedBySandbox(sale.orderId)).refundOrders).toBe(0)
        // The person alerted sees it with the CLI, and can run the recovery now (a real CLI process).
        const settings = yield* ServerSettings
        const open = json(yield* Effect.promise(() => cliWith(settings.databaseUrl, settings.env, "refunds", "list")))
        expect(open.filter((r: any) => r.booking_id === s.bookingId)).toMatchObject([
          {
            method: "refund",
            state: "requested",
            amount_minor: 99800,
            currency: "NOK",
            provider_order_id: sale.orderId
          }
        ])
        yield* makeDue(s)
        const recovered = json(
          yield* Effect.promise(() => cliWith(settings.databaseUrl, settings.env, "refunds", "recover"))
        )
        expect(recovered.refunds).toMatchObject({ completed: 1 })
        const after = json(
          yield* Effect.promise(() => cliWith(settings.databaseUrl, settings.env, "refunds", "list", "--state", "all"))
        )
        expect(after.filter((r: any) => r.booking_id === s.bookingId).map((r: any) => r.state)).toEqual(["completed"])
        expect((yield* ourBooking(s)).status).toBe("REFUNDED")
        expect(yield* returnedBySandbox(sale.orderId)).toEqual({ refundOrders: 1, refunded: 99800, voided: 0 })
        expect((yield* emailsOf(s)).length).toBe(2)
      }))

    it.effect("the provider refunds but the answer is lost: the job asks again with the same reference and no second refund is made", () =>
      Effect.gen(function*() {
        const s = yield* setup()
        const sale = yield* pay(s, s.amountMinor, { at: yesterday() })
        const res = yield* withFaults({ loseAnswer: "drop" }, cancel(s.bookingId, { key: s.key.token }))
        expect(res.body).toMatchObject({ status: "CONFIRMED", refund: { outcome: "pending" } })
        expect((yield* returnedBySandbox(sale.orderId)).refundOrders).toBe(1)
        yield* makeDue(s)
        yield* recover
        expect((yield* ourBooking(s)).status).toBe("REFUNDED")
        expect(yield* returnedBySandbox(sale.orderId)).toEqual({ refundOrders: 1, refunded: 99800, voided: 0 })
      }))

    it.effect("the provider refuses the refund (refunded by hand already): failed, alerted, never retried by the job", () =>
      Effect.gen(function*() {
        const s = yield* setup()
        const sale = yield* pay(s, s.amountMinor, { at: yesterday() })
        const surfboard = yield* SurfboardSandbox
        // Someone refunded it in the provider's dashboard.
        yield* Effect.flatMap(PaymentProvider, (p) =>
          p.refund(surfboard.account(s.merchant), {
            purchaseOrderId: sale.orderId,
            amountMinor: s.amountMinor,
            currency: "NOK",
            idempotencyReference: `by-hand-${randomUUID()}`
          })).pipe(Effect.orDie)
        const res = yield* cancel(s.bookingId, { key: s.key.token })
        expect(res.body).toMatchObject({ status: "CONFIRMED", refund: { outcome: "pending" } })
        const [row] = yield* refundRows(s)
        expect(row).toMatchObject({ state: "failed" })
        expect(row!.alerted_at).not.toBeNull()
        yield* makeDue(s)
        expect((yield* recover).refunds.found).toBe(0)
        expect((yield* returnedBySandbox(sale.orderId)).refundOrders).toBe(1)
      }))
  })

  describe("booking system", () => {
    it.effect("down: 503, nothing changed (booking live, no refund, no email, not counted); a retry once it is back cancels", () =>
      Effect.gen(function*() {
        const s = yield* setup()
        const sale = yield* pay(s, s.amountMinor, { at: yesterday() })
        const bokun = yield* BokunSandbox
        const idem = randomUUID()
        yield* bokun.faults.set({ down: true })
        const res = yield* cancel(s.bookingId, { key: s.key.token, idempotencyKey: idem }).pipe(
          Effect.ensuring(bokun.faults.reset)
        )
        expectProblem(res, 503, "unavailable")
        expect((yield* ourBooking(s)).status).toBe("CONFIRMED")
        expect(yield* bokunStatus(s)).toBe("CONFIRMED")
        expect((yield* returnedBySandbox(sale.orderId)).refundOrders).toBe(0)
        expect((yield* emailsOf(s)).length).toBe(0)
        expect(yield* usedToday(s.key.id, "cancels")).toBe(0)
        // The change may stay open until its lease ends (the outcome was unknown); a retry then finishes.
        yield* makeDue(s)
        const retry = yield* cancel(s.bookingId, { key: s.key.token, idempotencyKey: idem })
        expect(retry.status, retry.text).toBe(200)
        expect(retry.body).toMatchObject({ status: "REFUNDED", already_cancelled: false })
        expect(yield* returnedBySandbox(sale.orderId)).toEqual({ refundOrders: 1, refunded: 99800, voided: 0 })
      }))

    it.effect("the booking system refuses (the account's credentials are wrong): 422 naming why, nothing changed, not counted", () =>
      Effect.gen(function*() {
        const s = yield* setup()
        const sale = yield* pay(s, s.amountMinor, { at: yesterday() })
        yield* s
          .sql`UPDATE booking_system_accounts SET secret_key = 'not-the-secret' WHERE access_key = ${s.vendor.accessKey}`
          .pipe(Effect.orDie)
        const res = yield* cancel(s.bookingId, { key: s.key.token })
        expectProblem(res, 422, "not-possible")
        expect(res.body.detail).toContain("the booking system refused to cancel the booking")
        expect(yield* bokunStatus(s)).toBe("CONFIRMED")
        expect((yield* ourBooking(s)).status).toBe("CONFIRMED")
        expect((yield* returnedBySandbox(sale.orderId)).refundOrders).toBe(0)
        expect(yield* usedToday(s.key.id, "cancels")).toBe(0)
        const [change] = yield* s.sql<
          { state: string }
        >`SELECT state FROM booking_changes WHERE booking_id = ${s.bookingId}`.pipe(Effect.orDie)
        expect(change!.state).toBe("abandoned")
      }))

    it.effect("hangs: 503 within the adapter's deadlines, not a request that never ends; nothing refunded", () =>
      Effect.gen(function*() {
        const s = yield* setup()
        const sale = yield* pay(s, s.amountMinor, { at: yesterday() })
        const bokun = yield* BokunSandbox
        yield* bokun.faults.set({ hang: true })
        const started = Date.now()
        const res = yield* cancel(s.bookingId, { key: s.key.token }).pipe(Effect.ensuring(bokun.faults.reset))
        expectProblem(res, 503, "unavailable")
        // One cancel attempt and one read with a retry, 2 s each (BOKUN_TIMEOUT_MS), plus backoff.
        expect(Date.now() - started).toBeLessThan(15_000)
        expect((yield* ourBooking(s)).status).toBe("CONFIRMED")
        expect((yield* returnedBySandbox(sale.orderId)).refundOrders).toBe(0)
      }))

    it.effect("a booking the booking system does not know holds no seats: the cancel goes on", () =>
      Effect.gen(function*() {
        const s = yield* setup()
        const bokun = yield* BokunSandbox
        yield* bokun.deleteBooking(s.vendor.id, s.seeded.confirmationCode)
        yield* pay(s, s.amountMinor, { at: yesterday() })
        const res = yield* cancel(s.bookingId, { key: s.key.token })
        expect(res.body).toMatchObject({ status: "REFUNDED" })
      }))
  })

  describe("refusals", () => {
    it.effect("paid but no payment on record: 422, nothing changed, not counted", () =>
      Effect.gen(function*() {
        const s = yield* setup()
        const res = yield* cancel(s.bookingId, { key: s.key.token })
        expectProblem(res, 422, "not-possible")
        expect(res.body.detail).toContain("no record of the payment")
        expect(yield* bokunStatus(s)).toBe("CONFIRMED")
        expect((yield* ourBooking(s)).status).toBe("CONFIRMED")
        expect(yield* usedToday(s.key.id, "cancels")).toBe(0)
      }))

    it.effect("reason: missing, too short, only spaces, too long, wrong type: 400 naming `reason`; no change", () =>
      Effect.gen(function*() {
        const s = yield* setup()
        for (
          const body of [
            {},
            { reason: "ab" },
            { reason: "      " },
            { reason: "x".repeat(501) },
            // 499 characters once trimmed but 502 as sent: the document's maxLength (500) is on what is sent.
            { reason: ` ${"x".repeat(499)}  ` },
            { reason: 42 },
            "nope"
          ]
        ) {
          const res = yield* cancel(s.bookingId, { key: s.key.token, body })
          expectProblem(res, 400, "invalid-request")
          if (typeof body === "object") expect(res.text).toContain("reason")
        }
        expect(yield* bokunStatus(s)).toBe("CONFIRMED")
        const longest = yield* cancel(s.bookingId, { key: s.key.token, body: { reason: "x".repeat(500) } })
        expectProblem(longest, 422, "not-possible") // valid reason; refused only for the missing payment record
      }))

    it.effect("another operator's booking, an unknown id: 404; a key without the scope: 403", () =>
      Effect.gen(function*() {
        const s = yield* setup()
        const otherKey = yield* createKey({ by: s.w.bob, operators: [s.w.beta], scopes: ["bookings.cancel:write"] })
        expectProblem(yield* cancel(s.bookingId, { key: otherKey.token }), 404, "not-found")
        expectProblem(yield* cancel(randomUUID(), { key: s.key.token }), 404, "not-found")
        const reader = yield* createKey({ by: s.w.alice, operators: [s.w.alpha], scopes: ["bookings:read"] })
        expectProblem(yield* cancel(s.bookingId, { key: reader.token }), 403, "missing-scope")
        expect(yield* bokunStatus(s)).toBe("CONFIRMED")
      }))

    it.effect("the same Idempotency-Key with another reason: 422; the daily limit: 429, already_cancelled never counts", () =>
      Effect.gen(function*() {
        const s = yield* setup({ amountMinor: 0, commission: false })
        const idem = randomUUID()
        expect((yield* cancel(s.bookingId, { key: s.key.token, idempotencyKey: idem })).status).toBe(200)
        expectProblem(
          yield* cancel(s.bookingId, { key: s.key.token, idempotencyKey: idem, reason: "Another reason" }),
          422,
          "idempotency-key-reused"
        )
        yield* Effect.flatMap(DailyLimits, (l) => l.setOverrides(s.key.id, { cancels: 1 })).pipe(Effect.orDie)
        // Already cancelled: answered, not counted, even with the limit used up.
        expect((yield* cancel(s.bookingId, { key: s.key.token })).body.already_cancelled).toBe(true)
        const second = yield* setup({ amountMinor: 0, commission: false })
        yield* s.sql`UPDATE bookings SET operator_id = ${s.w.alpha} WHERE id = ${second.bookingId}`.pipe(Effect.orDie)
        const limited = yield* cancel(second.bookingId, { key: s.key.token })
        expectProblem(limited, 429, "daily-limit-reached")
        expect(limited.headers.get("retry-after")).not.toBeNull()
      }))
  })

  describe("one change of a booking at a time: a cancel and a reschedule racing (the sandboxes' own records)", () => {
    const reschedule = (s: Setup, key: string, date: string) =>
      call(`/api/v1/bookings/${s.bookingId}/reschedule`, {
        method: "POST",
        key,
        body: { date },
        headers: { "Idempotency-Key": randomUUID() }
      })

    /** The vendor's calls in the order the Bókun sandbox received them: `e` an edit (move), `c` a cancel. */
    const bokunChanges = (s: Setup) =>
      Effect.flatMap(BokunSandbox, (bokun) => bokun.requests.list).pipe(
        Effect.map((log) =>
          log.filter((r) => r.accessKey === s.vendor.accessKey && r.method === "POST")
            .flatMap((r) =>
              r.path === "/booking.json/edit" ? ["e"] : r.path.startsWith("/booking.json/cancel-booking/") ? ["c"] : []
            )
            .join("")
        )
      )

    const orderOfEmails = (s: Setup) =>
      s.sql<{ template: string }>`
        SELECT template FROM email_outbox WHERE booking_id = ${s.bookingId} AND template LIKE '%_guest' ORDER BY created_at, template`
        .pipe(
          Effect.map((rows) => rows.map((r) => r.template)),
          Effect.orDie
        )

    // Who starts first, and how long after it the other is sent; 300 ms of booking-system latency.
    const rounds: ReadonlyArray<readonly ["reschedule" | "cancel", number]> = [
      ["reschedule", 0],
      ["reschedule", 100],
      ["reschedule", 450],
      ["cancel", 0],
      ["cancel", 450],
      ["reschedule", 100],
      ["cancel", 100],
      ["reschedule", 0]
    ]

    it.effect("either order, at once or up to 0.45 s apart: never a move of a cancelled booking; each side effect once", () =>
      Effect.gen(function*() {
        const bokun = yield* BokunSandbox
        for (const [first, gap] of rounds) {
          const s = yield* setup()
          const sale = yield* pay(s, s.amountMinor)
          const key = yield* createKey({
            by: s.w.alice,
            operators: [s.w.alpha],
            scopes: ["bookings.cancel:write", "bookings.reschedule:write"]
          })
          const [{ day, was }] = (yield* s.sql<{ day: string; was: string }>`
            SELECT (experience_date + 2)::text AS day, experience_date::text AS was FROM bookings WHERE id = ${s.bookingId}`
            .pipe(Effect.orDie)) as [{ day: string; was: string }]
          yield* bokun.faults.set({ latencyMs: 300 }, { vendorId: s.vendor.id })
          const calls = {
            reschedule: reschedule(s, key.token, day),
            cancel: cancel(s.bookingId, { key: key.token })
          }
          const later = first === "reschedule" ? "cancel" : "reschedule"
          const [a, b] = yield* Effect.all([calls[first], Effect.zipRight(Effect.sleep(gap), calls[later])], {
            concurrency: 2
          }).pipe(
            Effect.ensuring(bokun.faults.set({ latencyMs: 0 }, { vendorId: s.vendor.id }))
          )
          const replies = { [first]: a, [later]: b } as Record<"reschedule" | "cancel", Reply>
          const round =
            `${first} first, ${gap} ms: reschedule ${replies.reschedule.status} ${replies.reschedule.text}; cancel ${replies.cancel.status}`
          const moved = replies.reschedule.status === 200
          const cancelled = replies.cancel.status === 200
          expect([200, 409, 422], round).toContain(replies.reschedule.status)
          expect([200, 409], round).toContain(replies.cancel.status)
          expect(moved || cancelled, round).toBe(true)
          for (const r of [replies.reschedule, replies.cancel].filter((r) => r.status === 409)) {
            expect(r.body.detail, round).toContain("another change of this booking")
          }
          // A refused reschedule was refused on what the booking is, never by the booking system.
          if (replies.reschedule.status === 422) {
            expect(replies.reschedule.body.detail, round).toBe("the booking is cancelled")
          }
          // The booking system: one move per move, one cancel per cancel, and never a move after the cancel.
          expect(yield* bokunChanges(s), round).toBe(`${moved ? "e" : ""}${cancelled ? "c" : ""}`)
          expect(yield* bokunStatus(s), round).toBe(cancelled ? "CANCELLED" : "CONFIRMED")
          // The money: returned once when cancelled, untouched otherwise.
          if (cancelled) expect(yield* returnedOnce(sale.orderId, 99800), round).toBe(true)
          else {expect(yield* returnedBySandbox(sale.orderId), round).toEqual({
              refundOrders: 0,
              refunded: 0,
              voided: 0
            })}
          // The guest: one email per change, in the order they happened; the service ends where they did.
          expect(yield* orderOfEmails(s), round).toEqual([
            ...(moved ? ["booking_rescheduled_guest"] : []),
            ...(cancelled ? ["booking_cancelled_guest"] : [])
          ])
          const ours = yield* s.sql<{ status: string; experience_date: string }>`
            SELECT status, experience_date::text AS experience_date FROM bookings WHERE id = ${s.bookingId}`.pipe(
            Effect.orDie
          )
          expect(ours[0], round).toEqual({
            status: cancelled ? "REFUNDED" : "CONFIRMED",
            experience_date: moved ? day : was
          })
          expect(yield* usedToday(key.id, "reschedules"), round).toBe(moved ? 1 : 0)
          expect(yield* usedToday(key.id, "cancels"), round).toBe(cancelled ? 1 : 0)
        }
      }))

    it.effect("a reschedule that read the booking before a cancel, and the booking system after it: 422 the booking is cancelled", () =>
      Effect.gen(function*() {
        const bokun = yield* BokunSandbox
        const settings = yield* ServerSettings
        const s = yield* setup()
        const sale = yield* pay(s, s.amountMinor)
        const key = yield* createKey({
          by: s.w.alice,
          operators: [s.w.alpha],
          scopes: ["bookings.cancel:write", "bookings.reschedule:write"]
        })
        const [{ day }] = (yield* s.sql<{ day: string }>`
          SELECT (experience_date + 2)::text AS day FROM bookings WHERE id = ${s.bookingId}`.pipe(Effect.orDie)) as [
          { day: string }
        ]
        const readsOfBooking = bokun.requests.count({
          method: "GET",
          path: `/booking.json/booking/${s.seeded.confirmationCode}`
        })
        // The order this test makes (no timing asserted): the reschedule has read the booking and its
        // changes and asks the booking system for the line, which answers only after the cancel has
        // released the booking there (the read held 5 s; a second instance waits 10 s for Bókun).
        const answer = yield* Effect.scoped(Effect.gen(function*() {
          const ctx = yield* Layer.build(serverOn(settings.databaseUrl, { ...settings.env, BOKUN_TIMEOUT_MS: "10000" }))
          const readsBefore = yield* readsOfBooking
          yield* bokun.faults.set({ latencyMs: 5000 }, { vendorId: s.vendor.id })
          const moving = yield* Effect.fork(call(`/api/v1/bookings/${s.bookingId}/reschedule`, {
            method: "POST",
            key: key.token,
            body: { date: day },
            headers: { "Idempotency-Key": randomUUID() },
            baseUrl: Context.get(ctx, TestServer).baseUrl
          }))
          while ((yield* readsOfBooking) === readsBefore) yield* Effect.sleep("20 millis")
          yield* bokun.faults.set({ latencyMs: 0 }, { vendorId: s.vendor.id })
          const cancelled = yield* cancel(s.bookingId, { key: key.token })
          expect(cancelled.status, cancelled.text).toBe(200)
          return yield* Fiber.join(moving)
        }))
        expectProblem(answer, 422, "not-possible")
        expect(answer.body.detail).toBe("the booking is cancelled")
        // One cancel at the booking system, no move; the money returned once; the guest told once.
        expect(yield* bokunChanges(s)).toBe("c")
        expect(yield* returnedOnce(sale.orderId, 99800)).toBe(true)
        expect(yield* orderOfEmails(s)).toEqual(["booking_cancelled_guest"])
        expect(yield* usedToday(key.id, "reschedules")).toBe(0)
      }))
  })

  describe("crash between each pair of side effects (a server with CRASH_AT), then the recovery job", () => {
    const crashingCancel = (s: Setup, step: string) =>
      Effect.scoped(Effect.gen(function*() {
        const settings = yield* ServerSettings
        const ctx = yield* Layer.build(serverOn(settings.databaseUrl, { ...settings.env, CRASH_AT: step }))
        return yield* cancel(s.bookingId, { key: s.key.token, baseUrl: Context.get(ctx, TestServer).baseUrl })
      }))

    for (
      const step of ["cancel.after_release", "cancel.after_released", "cancel.after_refund", "cancel.before_complete"]
    ) {
      it.effect(`${step}: finished by the job; seats released once, one refund, each email once`, () =>
        Effect.gen(function*() {
          const s = yield* setup()
          const sale = yield* pay(s, s.amountMinor, { at: yesterday() })
          const crashed = yield* crashingCancel(s, step)
          expect(crashed.status).toBe(500)
          expect((yield* ourBooking(s)).status).toBe("CONFIRMED")
          // Before the lease ends the job leaves it alone (the request might still be running).
          expect((yield* recover).changes.found).toBe(0)
          yield* makeDue(s)
          expect((yield* recover).changes).toMatchObject({ found: 1, completed: 1 })
          expect((yield* ourBooking(s)).status).toBe("REFUNDED")
          expect(yield* bokunStatus(s)).toBe("CANCELLED")
          expect(yield* returnedBySandbox(sale.orderId)).toEqual({ refundOrders: 1, refunded: 99800, voided: 0 })
          expect((yield* emailsOf(s)).map((e) => e.template)).toEqual([
            "booking_cancelled_guest",
            "booking_cancelled_team"
          ])
          // The client's retry now sees the finished cancel; nothing moves again.
          const retry = yield* cancel(s.bookingId, { key: s.key.token })
          expect(retry.body).toMatchObject({ status: "REFUNDED", already_cancelled: true })
          yield* makeDue(s)
          yield* recover
          expect(yield* returnedBySandbox(sale.orderId)).toEqual({ refundOrders: 1, refunded: 99800, voided: 0 })
          expect((yield* emailsOf(s)).length).toBe(2)
        }))
    }

    it.effect("a crash after the release, retried by the client after the lease: the retry finishes it (not the job)", () =>
      Effect.gen(function*() {
        const s = yield* setup()
        const sale = yield* pay(s, s.amountMinor, { at: yesterday() })
        const idem = randomUUID()
        const settings = yield* ServerSettings
        const crashed = yield* Effect.scoped(Effect.gen(function*() {
          const ctx = yield* Layer.build(
            serverOn(settings.databaseUrl, { ...settings.env, CRASH_AT: "cancel.after_released" })
          )
          return yield* cancel(s.bookingId, {
            key: s.key.token,
            idempotencyKey: idem,
            baseUrl: Context.get(ctx, TestServer).baseUrl
          })
        }))
        expect(crashed.status).toBe(500)
        // Within the lease: 409, retry shortly.
        expectProblem(
          yield* cancel(s.bookingId, { key: s.key.token, idempotencyKey: idem }),
          409,
          "idempotency-in-progress"
        )
        yield* makeDue(s)
        const retry = yield* cancel(s.bookingId, { key: s.key.token, idempotencyKey: idem })
        expect(retry.status, retry.text).toBe(200)
        expect(retry.body).toMatchObject({
          status: "REFUNDED",
          already_cancelled: false,
          refund: { outcome: "refunded", amount_minor: 99800 }
        })
        expect(yield* returnedBySandbox(sale.orderId)).toEqual({ refundOrders: 1, refunded: 99800, voided: 0 })
        expect((yield* emailsOf(s)).length).toBe(2)
      }))
  })

  it.effect("every answer of this file matches the OpenAPI document", () =>
    Effect.gen(function*() {
      const spec = yield* dereferencedSpec
      expect(seen.length).toBeGreaterThan(20)
      // The 500s are the injected crashes, not answers of the service.
      for (const res of seen.filter((r) => r.status !== 500)) {
        conforms(spec, "post", "/api/v1/bookings/{id}/cancel", res)
      }
    }))
})
