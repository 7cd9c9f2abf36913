/**
 * Pay-later charging end to end: the `pay-later-charger` job's work (PayLaterCharger.run, as the
 * job runs it, with the server's settings) through the Surfboard sandbox over HTTP and the real
 * server, on one PostgreSQL database. Runs are given the time they run at (`at`), relative to now,
 * so the retry schedule is walked without waiting and the file passes at any hour.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { LinkStatusChecks } from "../../src/partner/paymentLinks/LinkStatusChecks.js"
import { PayLaterCharger } from "../../src/payLater/PayLaterCharger.js"
import { SurfboardSandbox } from "../../src/sandbox/surfboard/index.js"
import { cli, json } from "../support/cli.js"
import { createKey, insertBooking, makeWorld } from "../support/fixtures.js"
import { call } from "../support/http.js"
import { linkedBooking, mailTo, merchantFor, paymentsEnv, ServerSettings, vendorFor } from "../support/payments.js"

const HOUR = 3_600_000
const DAY = 24 * HOUR

const chargerWith = (extra: Record<string, string>) =>
  Layer.unwrapEffect(
    Effect.map(ServerSettings, ({ env }) =>
      PayLaterCharger.Default.pipe(
        Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries({ ...env, ...extra })))))
      ))
  )

/** The payment-link watch with the server's settings (a paid balance link collects the charge). */
const WatchLive = Layer.unwrapEffect(
  Effect.map(ServerSettings, ({ env }) =>
    LinkStatusChecks.Default.pipe(
      Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))))
    ))
)

const env = Layer.merge(chargerWith({}), WatchLive).pipe(Layer.provideMerge(paymentsEnv()))

const run = (at: Date) => Effect.flatMap(PayLaterCharger, (c) => c.run({ at }))

interface ChargeRow {
  readonly id: string
  readonly state: string
  readonly retrying: boolean
  readonly refunded: boolean
  readonly attempts: number
  readonly last_attempt_at: Date | null
  readonly next_attempt_at: Date | null
  readonly failure_message: string | null
  readonly final_deadline_at: Date
  readonly charge_at: Date
  readonly collected_at: Date | null
  readonly link_emailed_at: Date | null
  readonly pay_later_status: string
  readonly pay_later_paid_at: Date | null
}

const chargeOf = (bookingId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<ChargeRow>`
      SELECT c.id, c.state, c.retrying, c.refunded, c.attempts, c.last_attempt_at, c.next_attempt_at, c.failure_message,
        c.final_deadline_at, c.charge_at, c.collected_at, c.link_emailed_at, b.pay_later_status, b.pay_later_paid_at
      FROM pay_later_charges c JOIN bookings b ON b.id = c.booking_id WHERE c.booking_id = ${bookingId}`.pipe(
      Effect.map((rows) => rows[0]!),
      Effect.orDie
    ))

const attemptsOf = (chargeId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ number: number; idempotency_reference: string; outcome: string | null }>`
      SELECT number, idempotency_reference, outcome FROM pay_later_attempts WHERE charge_id = ${chargeId} ORDER BY number`
        .pipe(Effect.orDie)
  )

/** Alpha with a sandbox merchant; a pay-later booking due a minute ago with a saved card. */
const setup = (o: { readonly amountMinor?: number; readonly experienceDays?: number } = {}) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const surfboard = yield* SurfboardSandbox
    const w = yield* makeWorld
    const merchant = yield* merchantFor(w.alpha)
    const amount = o.amountMinor ?? 64900
    const now = Date.now()
    const guestEmail = `guest-${w.tag}@example.com`
    const booking = yield* insertBooking({
      operatorId: w.alpha,
      amountMinor: amount,
      guestEmail,
      experienceDate: new Date(now + (o.experienceDays ?? 30) * DAY).toISOString().slice(0, 10),
      payLater: {
        status: "upcoming",
        amountMinor: amount,
        currency: "NOK",
        chargeAt: new Date(now - 60_000),
        paidAt: null
      }
    })
    const card = yield* surfboard.saveCard({
      merchantId: merchant.id,
      amountMinor: 1000,
      currency: "NOK",
      referenceId: booking
    })
    yield* sql`UPDATE pay_later_charges SET token_id = ${card.tokenId} WHERE booking_id = ${booking}`.pipe(Effect.orDie)
    return { w, merchant, booking, token: card.tokenId, guestEmail, teamEmail: `alice-${w.tag}@example.com`, now }
  })

const withSwitches = <A, E, R>(
  merchantId: string,
  settings: Parameters<Effect.Effect.Success<typeof SurfboardSandbox>["faults"]["set"]>[0],
  body: Effect.Effect<A, E, R>
) =>
  Effect.flatMap(SurfboardSandbox, (surfboard) =>
    Effect.acquireUseRelease(
      surfboard.faults.set(settings, { merchantId }),
      () => body,
      () => surfboard.faults.set({ mitOutcome: "paid", loseAnswer: "no", latencyMs: 0 }, { merchantId })
    ))

layer(env, { excludeTestServices: true, timeout: 180_000 })("pay-later-charger", (it) => {
  it.effect("soft decline, soft decline, paid: retried at +6 h and +24 h, then collected once", () =>
    Effect.gen(function*() {
      const { booking, merchant, now, token, guestEmail } = yield* setup()
      const surfboard = yield* SurfboardSandbox
      const t0 = new Date(now)

      yield* withSwitches(merchant.id, { mitOutcome: "soft_decline" }, run(t0))
      const first = yield* chargeOf(booking)
      expect(first).toMatchObject({ state: "failed", retrying: true, attempts: 1, pay_later_status: "failed" })
      expect(first.next_attempt_at!.getTime()).toBe(t0.getTime() + 6 * HOUR)
      expect(first.failure_message).toContain("INSUFFICIENT_FUNDS")
      // Not due before its time.
      yield* run(new Date(t0.getTime() + 5 * HOUR))
      expect((yield* chargeOf(booking)).attempts).toBe(1)

      const t1 = new Date(t0.getTime() + 6 * HOUR + 1000)
      yield* withSwitches(merchant.id, { mitOutcome: "soft_decline" }, run(t1))
      const second = yield* chargeOf(booking)
      expect(second).toMatchObject({ state: "failed", retrying: true, attempts: 2 })
      expect(second.next_attempt_at!.getTime()).toBe(t1.getTime() + 24 * HOUR)

      const t2 = new Date(t1.getTime() + 24 * HOUR + 1000)
      yield* run(t2)
      const third = yield* chargeOf(booking)
      expect(third).toMatchObject({
        state: "collected",
        retrying: false,
        attempts: 3,
        next_attempt_at: null,
        failure_message: null,
        pay_later_status: "collected"
      })
      expect(third.collected_at).not.toBeNull()
      expect(third.pay_later_paid_at!.getTime()).toBe(third.collected_at!.getTime())
      const charges = yield* surfboard.chargesOf(token)
      expect(charges.map((c) => c.paid)).toEqual([false, false, true])
      expect(charges.map((c) => c.referenceId)).toEqual(
        (yield* attemptsOf(third.id)).map((a) => a.idempotency_reference)
      )
      // The balance is the booking's payment on record; nothing more is charged; the guest got no link.
      yield* run(new Date(t2.getTime() + 72 * HOUR))
      expect(yield* surfboard.chargesOf(token)).toHaveLength(3)
      expect(yield* mailTo(guestEmail)).toHaveLength(0)
    }))

  it.effect("soft declines never retry past the final deadline: the last retry moves to the deadline, then it stops", () =>
    Effect.gen(function*() {
      // The tour is 3 days away: the deadline is 24 h before its day starts, under charge_at + 72 h.
      const { booking, merchant, now } = yield* setup({ experienceDays: 3 })
      const charge = yield* chargeOf(booking)
      expect(charge.final_deadline_at.getTime()).toBeLessThan(charge.charge_at.getTime() + 72 * HOUR)
      yield* withSwitches(
        merchant.id,
        { mitOutcome: "soft_decline" },
        Effect.gen(function*() {
          let at = new Date(now)
          for (let i = 0; i < 4; i++) {
            yield* run(at)
            const c = yield* chargeOf(booking)
            if (!c.retrying) break
            expect(c.next_attempt_at!.getTime()).toBeLessThanOrEqual(c.final_deadline_at.getTime())
            at = new Date(c.next_attempt_at!.getTime() + 1)
          }
        })
      )
      const last = yield* chargeOf(booking)
      expect(last).toMatchObject({ state: "failed", retrying: false })
      expect(last.last_attempt_at!.getTime()).toBeLessThanOrEqual(last.final_deadline_at.getTime() + 1)
    }))

  for (const [outcome, words] of [["hard_decline", "CARD_BLOCKED"], ["sca_required", "authentication"]] as const) {
    it.effect(`${outcome}: failed for good, the guest emailed the balance payment link once, the operator told`, () =>
      Effect.gen(function*() {
        const { booking, guestEmail, merchant, now, teamEmail, token } = yield* setup()
        const surfboard = yield* SurfboardSandbox
        const sql = yield* SqlClient.SqlClient
        yield* withSwitches(merchant.id, { mitOutcome: outcome }, run(new Date(now)))
        const c = yield* chargeOf(booking)
        expect(c).toMatchObject({ state: "failed", retrying: false, attempts: 1, next_attempt_at: null })
        expect(c.failure_message).toContain(words)
        expect(c.link_emailed_at).not.toBeNull()

        const [link] = yield* sql<{ state: string; amount_minor: number; url: string }>`
          SELECT state, amount_minor::int AS amount_minor, url FROM payment_links WHERE target = ${`booking:${booking}`}`
          .pipe(Effect.orDie)
        expect(link).toMatchObject({ state: "open", amount_minor: 64900 })
        const guest = yield* mailTo(guestEmail)
        expect(guest).toHaveLength(1)
        expect(guest[0]!.text_body).toContain(link!.url)
        const team = yield* mailTo(teamEmail)
        expect(team).toHaveLength(1)
        // Oslo's team reads Norwegian (teamLocale).
        expect(team[0]!.subject).toContain("Saldo ikke belastet")
        expect(team[0]!.text_body).toContain(words)

        // Later runs charge nothing and email nobody again.
        yield* run(new Date(now + 7 * DAY))
        expect(yield* surfboard.chargesOf(token)).toHaveLength(1)
        expect(yield* mailTo(guestEmail)).toHaveLength(1)
        expect(yield* mailTo(teamEmail)).toHaveLength(1)
        // The guest pays the link; the payment-link watch records it: collected, in the booking too.
        yield* surfboard.payLink(link!.url)
        yield* sql`UPDATE payment_links SET next_check_at = now() - interval '1 second' WHERE target = ${`booking:${booking}`}`
          .pipe(Effect.orDie)
        expect((yield* Effect.flatMap(LinkStatusChecks, (w) => w.run())).paid).toBeGreaterThanOrEqual(1)
        const paid = yield* chargeOf(booking)
        expect(paid).toMatchObject({ state: "collected", retrying: false, pay_later_status: "collected" })
        expect(paid.collected_at!.getTime()).toBe(paid.pay_later_paid_at!.getTime())
        // No attempt is made again.
        yield* run(new Date(now + 8 * DAY))
        expect(yield* surfboard.chargesOf(token)).toHaveLength(1)
      }))
  }

  it.effect("lost answer: the outcome is read back by the attempt's reference; exactly one charge at the provider", () =>
    Effect.gen(function*() {
      const { booking, merchant, now, token } = yield* setup()
      const surfboard = yield* SurfboardSandbox
      yield* withSwitches(merchant.id, { loseAnswer: "drop" }, run(new Date(now)))
      const unknown = yield* chargeOf(booking)
      expect(unknown).toMatchObject({ state: "upcoming", attempts: 1 })
      expect((yield* attemptsOf(unknown.id)).map((a) => a.outcome)).toEqual([null])
      expect(yield* surfboard.chargesOf(token)).toHaveLength(1)

      yield* run(new Date(now + 60_000))
      expect(yield* chargeOf(booking)).toMatchObject({ state: "collected", attempts: 1 })
      expect((yield* attemptsOf(unknown.id)).map((a) => a.outcome)).toEqual(["paid"])
      const charges = yield* surfboard.chargesOf(token)
      expect(charges).toHaveLength(1)
      expect(charges[0]!.paid).toBe(true)
    }))

  it.effect("a crash between recording the attempt and sending it: the next run sends it once, same reference", () =>
    Effect.gen(function*() {
      const { booking, now, token } = yield* setup()
      const surfboard = yield* SurfboardSandbox
      const crashed = yield* Effect.provide(
        run(new Date(now)),
        chargerWith({ CRASH_AT: "pay_later.after_attempt_recorded" })
      )
      expect(crashed.errors).toBeGreaterThanOrEqual(1)
      const c = yield* chargeOf(booking)
      expect(c).toMatchObject({ state: "upcoming", attempts: 1 })
      expect(yield* surfboard.chargesOf(token)).toHaveLength(0)

      yield* run(new Date(now + 60_000))
      expect(yield* chargeOf(booking)).toMatchObject({ state: "collected", attempts: 1 })
      const [attempt] = yield* attemptsOf(c.id)
      const charges = yield* surfboard.chargesOf(token)
      expect(charges).toHaveLength(1)
      expect(charges[0]!.referenceId).toBe(attempt!.idempotency_reference)
    }))

  it.effect("two instances at once: one charge", () =>
    Effect.gen(function*() {
      const { booking, merchant, now, token } = yield* setup()
      const surfboard = yield* SurfboardSandbox
      const other = yield* Layer.build(chargerWith({})).pipe(Effect.map((ctx) => ctx))
      const at = new Date(now)
      yield* withSwitches(
        merchant.id,
        { latencyMs: 200 },
        Effect.all([run(at), Effect.provide(run(at), other), run(at), Effect.provide(run(at), other)], {
          concurrency: "unbounded"
        })
      )
      expect(yield* chargeOf(booking)).toMatchObject({ state: "collected", attempts: 1 })
      expect(yield* surfboard.chargesOf(token)).toHaveLength(1)
    }).pipe(Effect.scoped))

  it.effect("cancel after collection: cancelled and refunded, the booking and the charge agree", () =>
    Effect.gen(function*() {
      const surfboard = yield* SurfboardSandbox
      const sql = yield* SqlClient.SqlClient
      const w = yield* makeWorld
      const merchant = yield* merchantFor(w.alpha)
      const { vendor } = yield* vendorFor(w.alpha)
      const now = Date.now()
      const linked = yield* linkedBooking(w.alpha, vendor, {
        amountMinor: 52000,
        guestEmail: `cancel-${w.tag}@example.com`,
        payLater: {
          status: "upcoming",
          amountMinor: 52000,
          currency: "NOK",
          chargeAt: new Date(now - 60_000),
          paidAt: null
        }
      })
      const booking = linked.bookingId
      const card = yield* surfboard.saveCard({
        merchantId: merchant.id,
        amountMinor: 1000,
        currency: "NOK",
        referenceId: booking
      })
      yield* sql`UPDATE pay_later_charges SET token_id = ${card.tokenId} WHERE booking_id = ${booking}`.pipe(
        Effect.orDie
      )
      yield* run(new Date(now))
      expect(yield* chargeOf(booking)).toMatchObject({ state: "collected", refunded: false })

      const key = yield* createKey({
        by: w.alice,
        operators: [w.alpha],
        scopes: ["bookings.cancel:write", "finance:read"]
      })
      const res = yield* call(`/api/v1/bookings/${booking}/cancel`, {
        method: "POST",
        key: key.token,
        body: { reason: "Guest asked to cancel" },
        headers: { "Idempotency-Key": randomUUID() }
      })
      expect(res.status, res.text).toBe(200)
      expect(res.body.refund).toMatchObject({ outcome: "refunded", amount_minor: 52000 })
      expect(yield* chargeOf(booking)).toMatchObject({
        state: "cancelled",
        refunded: true,
        pay_later_status: "cancelled"
      })
      const read = yield* call(`/api/v1/finance/pay-later?state=cancelled`, { key: key.token })
      expect(read.status, read.text).toBe(200)
      expect(read.body.data).toMatchObject([{ booking: { id: booking }, state: "cancelled", refunded: true }])
    }))

  it.effect("a cancel before the charge: cancelled, never charged", () =>
    Effect.gen(function*() {
      const { booking, now, token } = yield* setup()
      const sql = yield* SqlClient.SqlClient
      const surfboard = yield* SurfboardSandbox
      yield* sql`UPDATE bookings SET status = 'CANCELLED', pay_later_status = 'cancelled' WHERE id = ${booking}`.pipe(
        Effect.orDie
      )
      yield* run(new Date(now))
      expect(yield* chargeOf(booking)).toMatchObject({ state: "cancelled", refunded: false, attempts: 0 })
      expect(yield* surfboard.chargesOf(token)).toHaveLength(0)
    }))

  it.effect("admin CLI: `pay-later trouble` lists failed charges and upcoming ones near their deadline", () =>
    Effect.gen(function*() {
      const { booking: failed, merchant, now } = yield* setup()
      yield* withSwitches(merchant.id, { mitOutcome: "hard_decline" }, run(new Date(now)))
      // Due in a minute (never charged yet), its tour tomorrow: its deadline is its charge time.
      const near = yield* setup({ experienceDays: 1 })
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE pay_later_charges SET charge_at = now() + interval '1 hour',
        final_deadline_at = now() + interval '2 hours' WHERE booking_id = ${near.booking}`.pipe(Effect.orDie)
      const { databaseUrl } = yield* ServerSettings
      const rows = json(yield* Effect.promise(() => cli(databaseUrl, "pay-later", "trouble", "--limit", "1000")))
      const byBooking = new Map<string, any>(rows.map((r: any) => [r.booking_id, r]))
      expect(byBooking.get(failed)).toMatchObject({ state: "failed", retrying: false, saved_card: true })
      expect(byBooking.get(failed).failure_message).toContain("CARD_BLOCKED")
      expect(byBooking.get(near.booking)).toMatchObject({ state: "upcoming", attempts: 0, unknown_outcome: false })
      // Collected ones are not in trouble.
      const fine = yield* setup()
      yield* run(new Date(fine.now))
      const again = json(yield* Effect.promise(() => cli(databaseUrl, "pay-later", "trouble", "--limit", "1000")))
      expect(again.map((r: any) => r.booking_id)).not.toContain(fine.booking)
    }))

  describe("no saved card", () => {
    it.effect("failed for good without a call; the guest gets the link", () =>
      Effect.gen(function*() {
        const { booking, guestEmail, now, token } = yield* setup()
        const sql = yield* SqlClient.SqlClient
        const surfboard = yield* SurfboardSandbox
        yield* sql`UPDATE pay_later_charges SET token_id = NULL WHERE booking_id = ${booking}`.pipe(Effect.orDie)
        yield* run(new Date(now))
        const c = yield* chargeOf(booking)
        expect(c).toMatchObject({ state: "failed", retrying: false, attempts: 0 })
        expect(c.failure_message).toContain("no card")
        expect(yield* surfboard.chargesOf(token)).toHaveLength(0)
        expect(yield* mailTo(guestEmail)).toHaveLength(1)
      }))
  })
})
