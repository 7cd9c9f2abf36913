/**
 * POST /api/v1/bookings/{id}/payment-link through the real server, with the Surfboard and Bókun
 * sandboxes over HTTP on the same database (their own schemas), and the local mailbox as the email
 * transport.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Cause, Context, Effect, Exit, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { Outbox } from "../../../src/email/Outbox.js"
import { DailyLimits } from "../../../src/partner/writes/DailyLimits.js"
import { BokunSandbox } from "../../../src/sandbox/bokun/index.js"
import { SurfboardSandbox } from "../../../src/sandbox/surfboard/index.js"
import { createKey, insertBooking, makeWorld } from "../../support/fixtures.js"
import { freePort } from "../../support/globalSetup.js"
import { call, type Reply } from "../../support/http.js"
import { auditOf, usedToday } from "../../support/manifest.js"
import { insertRow } from "../../support/mirror.js"
import { conforms, dereferencedSpec } from "../../support/openapi.js"
import { mailTo, merchantFor, paymentsEnv, ServerSettings, vendorFor } from "../../support/payments.js"
import { serverOn, TestServer } from "../../support/server.js"

const env = paymentsEnv()

const paymentLink = (id: string, o: { key?: string; idempotencyKey?: string | null; body?: unknown } = {}) => {
  const idempotencyKey = o.idempotencyKey === undefined ? randomUUID() : o.idempotencyKey
  return call(`/api/v1/bookings/${id}/payment-link`, {
    method: "POST",
    key: o.key,
    body: o.body === undefined ? {} : o.body,
    headers: idempotencyKey === null ? {} : { "Idempotency-Key": idempotencyKey }
  }).pipe(Effect.tap((res) => Effect.sync(() => seen.push(res))))
}

/** Every answer of this file, checked against the OpenAPI document at the end. */
const seen: Array<Reply> = []

const expectProblem = (res: Reply, status: number, slug: string) => {
  expect(res.status, res.text).toBe(status)
  expect(res.headers.get("content-type")).toBe("application/problem+json")
  expect(res.body.type).toBe(`/api/v1/docs/errors.md#${slug}`)
}

const links = (target: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ state: string; url: string | null; amount_minor: number; kind: string; idempotency_reference: string }>`
      SELECT state, url, amount_minor, kind, idempotency_reference FROM payment_links
      WHERE target = ${target} ORDER BY created_at`.pipe(Effect.orDie)
  )

/** Payment-page orders the sandbox holds for a merchant. */
const sandboxOrders = (merchantId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ n: number }>`SELECT count(*)::int AS n FROM surfboard_sandbox.orders WHERE merchant_id = ${merchantId}`
        .pipe(
          Effect.map((r) => r[0]!.n),
          Effect.orDie
        )
  )

const PAY_LATER = (status: string, amountMinor = 30000) => ({
  status,
  amountMinor,
  currency: "NOK",
  chargeAt: new Date(Date.now() + 10 * 86_400_000),
  paidAt: null
})

/** Alpha with a merchant and a Bókun vendor; Beta with its own; a key over Alpha. */
const setup = Effect.gen(function*() {
  const w = yield* makeWorld
  const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["payment_links:write"] })
  const merchant = yield* merchantFor(w.alpha)
  const bokun = yield* vendorFor(w.alpha)
  return { w, key, merchant, bokun }
})

layer(env, { excludeTestServices: true, timeout: 180_000 })("POST /api/v1/bookings/{id}/payment-link", (it) => {
  describe("kinds", () => {
    it.effect("deferred_balance: a pay-later booking's balance, a real link in the sandbox, the guest emailed", () =>
      Effect.gen(function*() {
        const { key, merchant, w } = yield* setup
        const surfboard = yield* SurfboardSandbox
        const email = `guest-${w.tag}@example.com`
        const booking = yield* insertBooking({
          operatorId: w.alpha,
          payLater: PAY_LATER("upcoming", 45000),
          guestEmail: email
        })
        const res = yield* paymentLink(booking, { key: key.token })
        expect(res.status, res.text).toBe(200)
        expect(res.body).toEqual({
          id: booking,
          kind: "deferred_balance",
          url: expect.stringContaining(surfboard.baseUrl),
          amount_minor: 45000,
          currency: "NOK",
          emailed: true
        })
        expect(yield* links(`booking:${booking}`)).toMatchObject([{
          state: "open",
          url: res.body.url,
          amount_minor: 45000
        }])
        const mails = yield* mailTo(email)
        expect(mails).toHaveLength(1)
        expect(mails[0]!.text_body).toContain(res.body.url)
        expect(yield* sandboxOrders(merchant.id)).toBe(1)
        // The link is real: the guest can pay it.
        yield* surfboard.payLink(res.body.url)
        // Paid through the link: nothing owed any more, and no second link.
        const again = yield* paymentLink(booking, { key: key.token })
        expectProblem(again, 422, "not-possible")
        expect(yield* sandboxOrders(merchant.id)).toBe(1)
        expect(yield* usedToday(key.id, "payment_links")).toBe(1)
        // Seeing it paid, the request recorded the payment: the balance is collected.
        expect(yield* links(`booking:${booking}`)).toMatchObject([{ state: "closed" }])
        const sql = yield* SqlClient.SqlClient
        const [recorded] = yield* sql<{ purpose: string; amount_minor: number; pay_later_status: string }>`
          SELECT p.purpose, p.amount_minor, b.pay_later_status FROM booking_payments p JOIN bookings b ON b.id = p.booking_id
          WHERE p.booking_id = ${booking}`.pipe(Effect.orDie)
        expect(recorded).toEqual({ purpose: "balance", amount_minor: 45000, pay_later_status: "collected" })
      }))

    it.effect("failed pay-later charge is a deferred_balance too", () =>
      Effect.gen(function*() {
        const { key, w } = yield* setup
        const booking = yield* insertBooking({ operatorId: w.alpha, payLater: PAY_LATER("failed", 1200) })
        const res = yield* paymentLink(booking, { key: key.token })
        expect(res.status, res.text).toBe(200)
        expect(res.body).toMatchObject({ kind: "deferred_balance", amount_minor: 1200, currency: "NOK" })
      }))

    it.effect("provider_balance: a booking only in the booking system, by manifest row id; again: same URL, emailed once per window", () =>
      Effect.gen(function*() {
        const { key, merchant, bokun, w } = yield* setup
        const sandbox = yield* BokunSandbox
        const product = bokun.vendor.products[0]!
        const made = yield* sandbox.addBooking({
          vendorId: bokun.vendor.id,
          productId: product.id,
          date: "2027-01-15",
          participants: 2,
          paidMinor: 40000
        })
        const email = `row-${w.tag}@example.com`
        const row = yield* insertRow({
          accountId: bokun.accountId,
          operatorId: w.alpha,
          reference: made.confirmationCode,
          guestEmail: email
        })
        const first = yield* paymentLink(row, { key: key.token })
        expect(first.status, first.text).toBe(200)
        expect(first.body).toMatchObject({
          id: row,
          kind: "provider_balance",
          amount_minor: 2 * 49900 - 40000,
          currency: "NOK",
          emailed: true
        })

        // Within the window: the same link, not emailed again (the guest has it: `emailed` true).
        const second = yield* paymentLink(row.toUpperCase(), { key: key.token })
        expect(second.status, second.text).toBe(200)
        expect(second.body.url).toBe(first.body.url)
        expect(second.body.emailed).toBe(true)
        expect(yield* mailTo(email)).toHaveLength(1)
        // Past the window: the same link in a new email.
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE payment_links SET emailed_at = emailed_at - interval '11 minutes' WHERE target = ${`row:${row}`}`
          .pipe(Effect.orDie)
        const third = yield* paymentLink(row, { key: key.token })
        expect(third.status, third.text).toBe(200)
        expect(third.body).toMatchObject({ url: first.body.url, emailed: true })
        expect(yield* mailTo(email)).toHaveLength(2)
        expect(yield* sandboxOrders(merchant.id)).toBe(1)
        expect(yield* links(`row:${row}`)).toHaveLength(1)
        expect(yield* usedToday(key.id, "payment_links")).toBe(3)
      }))

    it.effect("a pay-now service booking the booking system says still owes: provider_balance", () =>
      Effect.gen(function*() {
        const { key, bokun, w } = yield* setup
        const sandbox = yield* BokunSandbox
        const made = yield* sandbox.addBooking({
          vendorId: bokun.vendor.id,
          productId: bokun.vendor.products[0]!.id,
          date: "2027-01-16",
          participants: 1,
          paidMinor: 0
        })
        const booking = yield* insertBooking({ operatorId: w.alpha, providerReference: made.confirmationCode })
        const res = yield* paymentLink(booking, { key: key.token })
        expect(res.status, res.text).toBe(200)
        expect(res.body).toMatchObject({ kind: "provider_balance", amount_minor: 49900, currency: "NOK" })
      }))
  })

  describe("a link that no longer fits", () => {
    it.effect("expired at the provider: closed here, a new link sent", () =>
      Effect.gen(function*() {
        const { key, merchant, w } = yield* setup
        const surfboard = yield* SurfboardSandbox
        const booking = yield* insertBooking({ operatorId: w.alpha, payLater: PAY_LATER("upcoming") })
        const first = yield* paymentLink(booking, { key: key.token })
        expect(first.status, first.text).toBe(200)
        yield* surfboard.clock.advance("8 days")
        const second = yield* paymentLink(booking, { key: key.token }).pipe(Effect.ensuring(surfboard.clock.reset))
        expect(second.status, second.text).toBe(200)
        expect(second.body.url).not.toBe(first.body.url)
        expect((yield* links(`booking:${booking}`)).map((l) => l.state)).toEqual(["closed", "open"])
        expect(yield* sandboxOrders(merchant.id)).toBe(2)
      }))

    it.effect("the balance changed: the old link is cancelled at the provider and a link for the new amount sent", () =>
      Effect.gen(function*() {
        const { key, bokun, merchant, w } = yield* setup
        const sandbox = yield* BokunSandbox
        const surfboard = yield* SurfboardSandbox
        const sql = yield* SqlClient.SqlClient
        const made = yield* sandbox.addBooking({
          vendorId: bokun.vendor.id,
          productId: bokun.vendor.products[0]!.id,
          date: "2027-01-19",
          participants: 2,
          paidMinor: 0
        })
        const row = yield* insertRow({
          accountId: bokun.accountId,
          operatorId: w.alpha,
          reference: made.confirmationCode
        })
        const first = yield* paymentLink(row, { key: key.token })
        expect(first.body.amount_minor).toBe(99800)
        // The guest paid part of it some other way.
        yield* sql`UPDATE bokun_sandbox.bookings SET paid_minor = 49900 WHERE id = ${made.bookingId}`.pipe(Effect.orDie)
        const second = yield* paymentLink(row, { key: key.token })
        expect(second.status, second.text).toBe(200)
        expect(second.body).toMatchObject({ kind: "provider_balance", amount_minor: 49900 })
        expect(second.body.url).not.toBe(first.body.url)
        expect((yield* links(`row:${row}`)).map((l) => [l.state, l.amount_minor])).toEqual([["closed", 99800], [
          "open",
          49900
        ]])
        expect(yield* sandboxOrders(merchant.id)).toBe(2)
        // The old page no longer takes payments.
        const paid = yield* surfboard.payLink(first.body.url).pipe(Effect.exit)
        expect(Exit.isFailure(paid) && Cause.pretty(paid.cause)).toContain("Order is cancelled")
      }))

    it.effect("the old link was paid before the balance changed: recorded as paid, 422, nothing new sent", () =>
      Effect.gen(function*() {
        const { key, bokun, merchant, w } = yield* setup
        const sandbox = yield* BokunSandbox
        const surfboard = yield* SurfboardSandbox
        const sql = yield* SqlClient.SqlClient
        const made = yield* sandbox.addBooking({
          vendorId: bokun.vendor.id,
          productId: bokun.vendor.products[0]!.id,
          date: "2027-01-20",
          participants: 2,
          paidMinor: 0
        })
        const row = yield* insertRow({
          accountId: bokun.accountId,
          operatorId: w.alpha,
          reference: made.confirmationCode
        })
        const first = yield* paymentLink(row, { key: key.token })
        expect(first.body.amount_minor).toBe(99800)
        yield* surfboard.payLink(first.body.url)
        // The booking system has heard of part of it only.
        yield* sql`UPDATE bokun_sandbox.bookings SET paid_minor = 49900 WHERE id = ${made.bookingId}`.pipe(Effect.orDie)
        const second = yield* paymentLink(row, { key: key.token })
        expectProblem(second, 422, "not-possible")
        expect(second.body.detail).toContain("just paid an earlier payment link")
        expect((yield* links(`row:${row}`)).map((l) => l.state)).toEqual(["closed"])
        const [closed] = yield* sql<{ closed_reason: string }>`
          SELECT closed_reason FROM payment_links WHERE target = ${`row:${row}`}`.pipe(Effect.orDie)
        expect(closed!.closed_reason).toBe("paid")
        expect(yield* sandboxOrders(merchant.id)).toBe(1)
        // Asked again: the booking system still says 49900 is due, but the guest paid us 99800 through
        // the link (which the booking system does not know): nothing is offered.
        const third = yield* paymentLink(row, { key: key.token })
        expectProblem(third, 422, "not-possible")
        expect(third.body.detail).toContain("already paid to this service")
        expect(yield* sandboxOrders(merchant.id)).toBe(1)
      }))

    it.effect("a booking-system booking with two lines (two manifest rows): one balance, one link, whichever row is named", () =>
      Effect.gen(function*() {
        const { key, merchant, bokun, w } = yield* setup
        const sandbox = yield* BokunSandbox
        const sql = yield* SqlClient.SqlClient
        const made = yield* sandbox.addBooking({
          vendorId: bokun.vendor.id,
          productId: bokun.vendor.products[0]!.id,
          date: "2027-01-21",
          participants: 2,
          paidMinor: 0
        })
        const email = `lines-${w.tag}@example.com`
        const first = yield* insertRow({
          accountId: bokun.accountId,
          operatorId: w.alpha,
          reference: made.confirmationCode,
          guestEmail: email
        })
        const second = yield* insertRow({
          accountId: bokun.accountId,
          operatorId: w.alpha,
          reference: made.confirmationCode,
          guestEmail: email
        })
        yield* sql`
          UPDATE manifest_rows SET booking_id = (SELECT booking_id FROM manifest_rows WHERE id = ${first}),
            first_seen_at = (SELECT first_seen_at FROM manifest_rows WHERE id = ${first}) + interval '1 second'
          WHERE id = ${second}`.pipe(Effect.orDie)
        const viaSecond = yield* paymentLink(second, { key: key.token })
        expect(viaSecond.status, viaSecond.text).toBe(200)
        expect(viaSecond.body).toMatchObject({ id: second, kind: "provider_balance", amount_minor: 99800 })
        const viaFirst = yield* paymentLink(first, { key: key.token })
        expect(viaFirst.status, viaFirst.text).toBe(200)
        expect(viaFirst.body).toMatchObject({ id: first, url: viaSecond.body.url, amount_minor: 99800 })
        expect(yield* sandboxOrders(merchant.id)).toBe(1)
        expect(yield* mailTo(email)).toHaveLength(1)
      }))
  })

  describe("refusals", () => {
    it.effect("422: cancelled, refunded, collected, nothing owed (pay-now unknown, fully paid row), cancelled row", () =>
      Effect.gen(function*() {
        const { key, bokun, merchant, w } = yield* setup
        const sandbox = yield* BokunSandbox
        const cancelled = yield* insertBooking({
          operatorId: w.alpha,
          status: "CANCELLED",
          payLater: PAY_LATER("cancelled")
        })
        const refunded = yield* insertBooking({ operatorId: w.alpha, status: "REFUNDED" })
        const collected = yield* insertBooking({ operatorId: w.alpha, payLater: PAY_LATER("collected") })
        const payNow = yield* insertBooking({ operatorId: w.alpha })
        const paid = yield* sandbox.addBooking({
          vendorId: bokun.vendor.id,
          productId: bokun.vendor.products[0]!.id,
          date: "2027-01-17",
          participants: 1,
          paidMinor: 49900
        })
        const paidRow = yield* insertRow({
          accountId: bokun.accountId,
          operatorId: w.alpha,
          reference: paid.confirmationCode
        })
        const cancelledRow = yield* insertRow({ accountId: bokun.accountId, operatorId: w.alpha, status: "CANCELLED" })
        const cases: Array<[string, string]> = [
          [cancelled, "cancelled"],
          [refunded, "cancelled"],
          [collected, "collected"],
          [payNow, "nothing is owed"],
          [paidRow, "nothing is owed"],
          [cancelledRow, "cancelled"]
        ]
        for (const [id, detail] of cases) {
          const res = yield* paymentLink(id, { key: key.token })
          expectProblem(res, 422, "not-possible")
          expect(res.body.detail).toContain(detail)
        }
        expect(yield* sandboxOrders(merchant.id)).toBe(0)
        expect(yield* usedToday(key.id, "payment_links")).toBe(0)
      }))

    it.effect("404: another operator's booking or row, an unknown id; 403 without the scope", () =>
      Effect.gen(function*() {
        const { key, w } = yield* setup
        yield* merchantFor(w.beta)
        const theirs = yield* insertBooking({ operatorId: w.beta, payLater: PAY_LATER("upcoming") })
        const beta = yield* vendorFor(w.beta)
        const theirRow = yield* insertRow({ accountId: beta.accountId, operatorId: w.beta })
        for (const id of [theirs, theirRow, randomUUID()]) {
          expectProblem(yield* paymentLink(id, { key: key.token }), 404, "not-found")
        }
        const reader = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["bookings:read"] })
        const mine = yield* insertBooking({ operatorId: w.alpha, payLater: PAY_LATER("upcoming") })
        expectProblem(yield* paymentLink(mine, { key: reader.token }), 403, "missing-scope")
        expect(yield* links(`booking:${theirs}`)).toHaveLength(0)
      }))

    it.effect("a payment account with its own address and credentials (sandbox merchants, the demo) is used as is", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const surfboard = yield* SurfboardSandbox
        const sql = yield* SqlClient.SqlClient
        const key = yield* createKey({ by: w.carol, operators: [w.cetus], scopes: ["payment_links:write"] })
        // A merchant of its own sandbox partner: the service's configured credentials would get 403.
        const merchant = yield* surfboard.createMerchant({ name: "Own partner" })
        yield* sql`
          INSERT INTO operator_payment_accounts (operator_id, merchant_id, payment_page_terminal_id, base_url, api_key, api_secret)
          VALUES (${w.cetus}, ${merchant.id}, ${merchant.paymentPageTerminalId}, ${surfboard.baseUrl}, ${merchant.apiKey}, ${merchant.apiSecret})`
          .pipe(Effect.orDie)
        const booking = yield* insertBooking({ operatorId: w.cetus, payLater: PAY_LATER("upcoming", 700) })
        const res = yield* paymentLink(booking, { key: key.token })
        expect(res.status, res.text).toBe(200)
        expect(res.body).toMatchObject({ kind: "deferred_balance", amount_minor: 700 })
        expect(yield* sandboxOrders(merchant.id)).toBe(1)
      }))

    it.effect("an operator without a payment account: 422, nothing created", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const key = yield* createKey({ by: w.carol, operators: [w.cetus], scopes: ["payment_links:write"] })
        const booking = yield* insertBooking({ operatorId: w.cetus, payLater: PAY_LATER("upcoming") })
        const res = yield* paymentLink(booking, { key: key.token })
        expectProblem(res, 422, "not-possible")
        expect(res.body.detail).toContain("payment account")
      }))
  })

  describe("idempotency and limits", () => {
    it.effect("same key: replayed, one email; same key on another booking: 422; missing key: 400", () =>
      Effect.gen(function*() {
        const { key, w } = yield* setup
        const email = `idem-${w.tag}@example.com`
        const booking = yield* insertBooking({
          operatorId: w.alpha,
          payLater: PAY_LATER("upcoming"),
          guestEmail: email
        })
        const other = yield* insertBooking({ operatorId: w.alpha, payLater: PAY_LATER("upcoming") })
        const id = randomUUID()
        const first = yield* paymentLink(booking, { key: key.token, idempotencyKey: id })
        const replay = yield* paymentLink(booking, { key: key.token, idempotencyKey: id })
        expect(replay.status).toBe(200)
        expect(replay.headers.get("idempotent-replayed")).toBe("true")
        expect(replay.body).toEqual(first.body)
        expect(yield* mailTo(email)).toHaveLength(1)
        expectProblem(yield* paymentLink(other, { key: key.token, idempotencyKey: id }), 422, "idempotency-key-reused")
        expectProblem(yield* paymentLink(booking, { key: key.token, idempotencyKey: null }), 400, "invalid-request")
        // The body is `{}` (the document: no properties): a member is refused naming it, not ignored; so is an array.
        const withAmount = yield* paymentLink(other, { key: key.token, body: { amount: 5 } })
        expectProblem(withAmount, 400, "invalid-request")
        expect(withAmount.body.invalid_params[0].name).toBe("amount")
        expectProblem(yield* paymentLink(other, { key: key.token, body: [] }), 400, "invalid-request")
        expect(yield* usedToday(key.id, "payment_links")).toBe(1)
        const audit = yield* auditOf(key.id)
        expect(audit.map((a) => a.outcome)).toEqual(["done", "replayed", "refused", "refused"])
        expect(audit[0]).toMatchObject({ action: "payment_links", operator_id: w.alpha, target_id: booking })
      }))

    it.effect("daily limit (override 1): the second link answers 429", () =>
      Effect.gen(function*() {
        const { key, w } = yield* setup
        yield* Effect.flatMap(DailyLimits, (l) => l.setOverrides(key.id, { payment_links: 1 })).pipe(
          Effect.provide(DailyLimits.Default),
          Effect.orDie
        )
        const a = yield* insertBooking({ operatorId: w.alpha, payLater: PAY_LATER("upcoming") })
        const b = yield* insertBooking({ operatorId: w.alpha, payLater: PAY_LATER("upcoming") })
        expect((yield* paymentLink(a, { key: key.token })).status).toBe(200)
        const over = yield* paymentLink(b, { key: key.token })
        expectProblem(over, 429, "daily-limit-reached")
        expect(over.body.limit).toBe("payment_links")
        expect(yield* links(`booking:${b}`)).toHaveLength(0)
      }))
  })

  describe("faults", () => {
    it.effect("provider down: 503, nothing emailed, the slot given back; the same key then succeeds with one link", () =>
      Effect.gen(function*() {
        const { key, merchant, w } = yield* setup
        const surfboard = yield* SurfboardSandbox
        const email = `down-${w.tag}@example.com`
        const booking = yield* insertBooking({
          operatorId: w.alpha,
          payLater: PAY_LATER("upcoming"),
          guestEmail: email
        })
        const id = randomUUID()
        yield* surfboard.faults.set({ down: true }, { merchantId: merchant.id })
        const down = yield* paymentLink(booking, { key: key.token, idempotencyKey: id })
        yield* surfboard.faults.set({ down: false }, { merchantId: merchant.id })
        expectProblem(down, 503, "unavailable")
        expect(yield* mailTo(email)).toHaveLength(0)
        expect(yield* usedToday(key.id, "payment_links")).toBe(0)
        // Only the intent is recorded: no open link.
        expect((yield* links(`booking:${booking}`)).map((l) => l.state)).toEqual(["creating"])

        const retry = yield* paymentLink(booking, { key: key.token, idempotencyKey: id })
        expect(retry.status, retry.text).toBe(200)
        expect(retry.headers.get("idempotent-replayed")).toBeNull()
        expect(retry.body.emailed).toBe(true)
        expect((yield* links(`booking:${booking}`)).map((l) => l.state)).toEqual(["open"])
        expect(yield* sandboxOrders(merchant.id)).toBe(1)
        expect(yield* mailTo(email)).toHaveLength(1)
      }))

    it.effect("lost answer: the provider made the link but we never heard; the retry gets that link, never a second", () =>
      Effect.gen(function*() {
        const { key, merchant, w } = yield* setup
        const surfboard = yield* SurfboardSandbox
        const email = `lost-${w.tag}@example.com`
        const booking = yield* insertBooking({
          operatorId: w.alpha,
          payLater: PAY_LATER("upcoming"),
          guestEmail: email
        })
        const id = randomUUID()
        yield* surfboard.faults.set({ loseAnswer: "drop" }, { merchantId: merchant.id })
        const lost = yield* paymentLink(booking, { key: key.token, idempotencyKey: id })
        yield* surfboard.faults.set({ loseAnswer: "no" }, { merchantId: merchant.id })
        expectProblem(lost, 503, "unavailable")
        expect(yield* sandboxOrders(merchant.id)).toBe(1) // the provider did make it
        expect(yield* mailTo(email)).toHaveLength(0)

        const retry = yield* paymentLink(booking, { key: key.token, idempotencyKey: id })
        expect(retry.status, retry.text).toBe(200)
        expect(yield* sandboxOrders(merchant.id)).toBe(1)
        const [link] = yield* links(`booking:${booking}`)
        expect(link).toMatchObject({ state: "open", url: retry.body.url })
        // A new request for the booking answers that same link (emailed a moment ago: not again).
        const again = yield* paymentLink(booking, { key: key.token })
        expect(again.body).toMatchObject({ url: retry.body.url, emailed: true })
        expect(yield* sandboxOrders(merchant.id)).toBe(1)
        expect(yield* mailTo(email)).toHaveLength(1)
      }))

    it.effect("crash after the provider made the link, then a new request (another key): that link, never a second", () =>
      Effect.gen(function*() {
        const { key, merchant, w } = yield* setup
        const surfboard = yield* SurfboardSandbox
        const email = `crash1-${w.tag}@example.com`
        const booking = yield* insertBooking({
          operatorId: w.alpha,
          payLater: PAY_LATER("upcoming"),
          guestEmail: email
        })
        yield* surfboard.faults.set({ loseAnswer: "drop" }, { merchantId: merchant.id })
        expectProblem(yield* paymentLink(booking, { key: key.token }), 503, "unavailable")
        yield* surfboard.faults.set({ loseAnswer: "no" }, { merchantId: merchant.id })
        const next = yield* paymentLink(booking, { key: key.token })
        expect(next.status, next.text).toBe(200)
        expect(yield* sandboxOrders(merchant.id)).toBe(1)
        expect(yield* links(`booking:${booking}`)).toHaveLength(1)
        expect(yield* mailTo(email)).toHaveLength(1)
      }))

    it.effect("crash after the link was recorded and the email queued, before the answer: the retry emails once", () =>
      Effect.gen(function*() {
        const { key, merchant, w } = yield* setup
        const sql = yield* SqlClient.SqlClient
        const email = `crash2-${w.tag}@example.com`
        const booking = yield* insertBooking({
          operatorId: w.alpha,
          payLater: PAY_LATER("upcoming"),
          guestEmail: email
        })
        const id = randomUUID()
        const first = yield* paymentLink(booking, { key: key.token, idempotencyKey: id })
        expect(first.status, first.text).toBe(200)
        // The state a process dying right after step 4's commit leaves: the link open, the email
        // queued and not sent, the Idempotency-Key still claimed by a dead attempt (lease lapsed).
        yield* sql`
          UPDATE email_outbox SET status = 'pending', attempts = 0, sent_at = NULL, transport_response = NULL
          WHERE booking_id = ${booking}`.pipe(Effect.orDie)
        yield* sql`DELETE FROM mail_mailbox WHERE ${email} = ANY(to_addresses)`.pipe(Effect.orDie)
        yield* sql`
          UPDATE idempotency_records SET state = 'running', lease_until = now() - interval '1 second',
            response_status = NULL, response_content_type = NULL, response_headers = NULL, response_body = NULL
          WHERE key_id = ${key.id} AND idempotency_key = ${id}`.pipe(Effect.orDie)

        const retry = yield* paymentLink(booking, { key: key.token, idempotencyKey: id })
        expect(retry.status, retry.text).toBe(200)
        expect(retry.headers.get("idempotent-replayed")).toBeNull()
        expect(retry.body).toEqual(first.body)
        expect(yield* mailTo(email)).toHaveLength(1)
        // The same retry once more (the answer lost again): still one email, one link.
        yield* sql`
          UPDATE idempotency_records SET state = 'running', lease_until = now() - interval '1 second',
            response_status = NULL, response_content_type = NULL, response_headers = NULL, response_body = NULL
          WHERE key_id = ${key.id} AND idempotency_key = ${id}`.pipe(Effect.orDie)
        expect((yield* paymentLink(booking, { key: key.token, idempotencyKey: id })).body.emailed).toBe(true)
        expect(yield* mailTo(email)).toHaveLength(1)
        expect(yield* sandboxOrders(merchant.id)).toBe(1)
        expect(yield* usedToday(key.id, "payment_links")).toBe(1)
      }))

    for (const step of ["payment_link.after_create", "payment_link.after_open"]) {
      it.effect(`a server that crashes at ${step}: the client's retry (same key) gets the one link, the guest one email`, () =>
        Effect.gen(function*() {
          const { key, merchant, w } = yield* setup
          const sql = yield* SqlClient.SqlClient
          const settings = yield* ServerSettings
          const email = `crash-${step}-${w.tag}@example.com`
          const booking = yield* insertBooking({
            operatorId: w.alpha,
            payLater: PAY_LATER("upcoming"),
            guestEmail: email
          })
          const id = randomUUID()
          const crashed = yield* Effect.scoped(Effect.gen(function*() {
            const ctx = yield* Layer.build(serverOn(settings.databaseUrl, { ...settings.env, CRASH_AT: step }))
            return yield* call(`/api/v1/bookings/${booking}/payment-link`, {
              method: "POST",
              key: key.token,
              body: {},
              headers: { "Idempotency-Key": id },
              baseUrl: Context.get(ctx, TestServer).baseUrl
            })
          }))
          expect(crashed.status).toBe(500)
          expect(yield* sandboxOrders(merchant.id)).toBe(1)
          const retry = yield* paymentLink(booking, { key: key.token, idempotencyKey: id })
          expect(retry.status, retry.text).toBe(200)
          expect(retry.body).toMatchObject({ kind: "deferred_balance", emailed: true })
          expect(yield* sandboxOrders(merchant.id)).toBe(1)
          expect((yield* links(`booking:${booking}`)).map((l) => l.state)).toEqual(["open"])
          // The sender job runs too: still one email.
          yield* Effect.flatMap(Outbox, (o) => o.flush())
          expect(yield* mailTo(email)).toHaveLength(1)
          const [{ n }] =
            (yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM email_outbox WHERE booking_id = ${booking}`
              .pipe(Effect.orDie)) as [{ n: number }]
          expect(n).toBe(1)
        }))
    }

    it.effect("the guest has no email address: the link exists, emailed false", () =>
      Effect.gen(function*() {
        const { key, w } = yield* setup
        const booking = yield* insertBooking({ operatorId: w.alpha, payLater: PAY_LATER("upcoming"), guestEmail: null })
        const res = yield* paymentLink(booking, { key: key.token })
        expect(res.status, res.text).toBe(200)
        expect(res.body.emailed).toBe(false)
        expect(res.body.url).toMatch(/^http/)
      }))

    it.effect("booking system down for a provider balance: 503, nothing created", () =>
      Effect.gen(function*() {
        const { key, bokun, merchant, w } = yield* setup
        const sandbox = yield* BokunSandbox
        const made = yield* sandbox.addBooking({
          vendorId: bokun.vendor.id,
          productId: bokun.vendor.products[0]!.id,
          date: "2027-01-18",
          participants: 1
        })
        const row = yield* insertRow({
          accountId: bokun.accountId,
          operatorId: w.alpha,
          reference: made.confirmationCode
        })
        yield* sandbox.faults.set({ down: true }, { vendorId: bokun.vendor.id })
        const res = yield* paymentLink(row, { key: key.token })
        yield* sandbox.faults.set({ down: false }, { vendorId: bokun.vendor.id })
        expectProblem(res, 503, "unavailable")
        expect(yield* links(`row:${row}`)).toHaveLength(0)
        expect(yield* sandboxOrders(merchant.id)).toBe(0)
      }))
  })

  it.effect("every answer above matches the OpenAPI document", () =>
    Effect.gen(function*() {
      const spec = yield* dereferencedSpec
      for (const res of seen) conforms(spec, "post", "/api/v1/bookings/{id}/payment-link", res)
      expect([...new Set(seen.map((r) => r.status))].sort()).toEqual([200, 400, 403, 404, 422, 429, 503])
    }))
})

/** A mail server that is not there: every attempt fails (transient), the message stays queued. */
const noSmtp = Effect.map(Effect.promise(freePort), (port): Record<string, string> => ({
  SMTP_URL: `smtp://127.0.0.1:${port}`,
  SMTP_TIMEOUT_MS: "1000"
}))

layer(paymentsEnv(noSmtp), { excludeTestServices: true, timeout: 180_000 })(
  "payment link with the mail server down",
  (it) => {
    it.effect("the link is made and kept, emailed false, the email left queued for the sender to retry", () =>
      Effect.gen(function*() {
        const { key, w } = yield* setup
        const sql = yield* SqlClient.SqlClient
        const booking = yield* insertBooking({ operatorId: w.alpha, payLater: PAY_LATER("upcoming") })
        const res = yield* paymentLink(booking, { key: key.token })
        expect(res.status, res.text).toBe(200)
        expect(res.body).toMatchObject({ kind: "deferred_balance", emailed: false })
        expect((yield* links(`booking:${booking}`)).map((l) => l.state)).toEqual(["open"])
        const [queued] = yield* sql<{ status: string; attempts: number }>`
        SELECT status, attempts FROM email_outbox WHERE booking_id = ${booking}`.pipe(Effect.orDie)
        expect(queued).toMatchObject({ status: "pending", attempts: 1 })
      }))
  }
)
