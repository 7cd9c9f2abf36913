/**
 * Concurrent POST /api/v1/bookings/{id}/payment-link for one balance, through two server instances
 * on one database, with latency injected at the Surfboard sandbox: one open link per booking and
 * amount at the provider (the sandbox's own orders), one email per link (the mailbox and the outbox),
 * every answer the same link.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Context, Deferred, Effect, Fiber, Layer, Option } from "effect"
import { randomUUID } from "node:crypto"
import { BokunSandbox } from "../../../src/sandbox/bokun/index.js"
import { SurfboardSandbox } from "../../../src/sandbox/surfboard/index.js"
import { createKey, insertBooking, makeWorld } from "../../support/fixtures.js"
import { call } from "../../support/http.js"
import { insertRow } from "../../support/mirror.js"
import { mailTo, merchantFor, paymentsEnv, ServerSettings, vendorFor } from "../../support/payments.js"
import { serverOn, TestServer } from "../../support/server.js"

const env = paymentsEnv()

const ROUNDS = 10
const PARALLEL = 10

const PAY_LATER = (amountMinor: number) => ({
  status: "upcoming",
  amountMinor,
  currency: "NOK",
  chargeAt: new Date(Date.now() + 10 * 86_400_000),
  paidAt: null
})

/** Payment-page orders (links) the sandbox holds for a merchant, by status. */
const sandboxLinks = (merchantId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ id: string; status: string; amount_minor: number }>`
      SELECT id, status, amount_minor::int AS amount_minor FROM surfboard_sandbox.orders WHERE merchant_id = ${merchantId}
      ORDER BY created_at`.pipe(Effect.orDie))

const outboxTo = (address: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ n: number }>`SELECT count(*)::int AS n FROM email_outbox WHERE ${address} = ANY(to_addresses)`.pipe(
        Effect.map((r) => r[0]!.n),
        Effect.orDie
      )
  )

const linkRows = (target: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ state: string }>`SELECT state FROM payment_links WHERE target = ${target}`.pipe(Effect.orDie)
  )

/**
 * What one round races for: the ids the requests name (they take turns), the target its links are
 * kept under, the amount owed and the guest's address.
 */
interface Subject {
  readonly ids: ReadonlyArray<string>
  readonly target: string
  readonly amountMinor: number
  readonly email: string
}

/** A pay-later booking whose balance is upcoming. */
const payLaterBooking = (w: World, round: number): Effect.Effect<Subject, never, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const email = `race-${round}-${w.tag}@example.com`
    const booking = yield* insertBooking({ operatorId: w.alpha, payLater: PAY_LATER(30000 + round), guestEmail: email })
    return { ids: [booking], target: `booking:${booking}`, amountMinor: 30000 + round, email }
  })

/** A booking only in the booking system (Bókun sandbox, nothing paid), with two lines: two manifest rows. */
const bookingSystemBooking = (w: World, round: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const bokun = yield* BokunSandbox
    const vendor = yield* vendorFor(w.alpha)
    const made = yield* bokun.addBooking({
      vendorId: vendor.vendor.id,
      productId: vendor.vendor.products[0]!.id,
      date: "2027-03-01",
      participants: 2,
      paidMinor: 0
    })
    const email = `race-row-${round}-${w.tag}@example.com`
    const row = () =>
      insertRow({
        accountId: vendor.accountId,
        operatorId: w.alpha,
        reference: made.confirmationCode,
        guestEmail: email
      })
    const first = yield* row()
    const second = yield* row()
    yield* sql`
      UPDATE manifest_rows SET booking_id = (SELECT booking_id FROM manifest_rows WHERE id = ${first}),
        first_seen_at = (SELECT first_seen_at FROM manifest_rows WHERE id = ${first}) + interval '1 second'
      WHERE id = ${second}`.pipe(Effect.orDie)
    return { ids: [first, second], target: `row:${first}`, amountMinor: 2 * 49900, email } satisfies Subject
  })

type World = Effect.Effect.Success<typeof makeWorld>

layer(env, { excludeTestServices: true, timeout: 600_000 })("concurrent payment-link requests", (it) => {
  const race = (subjectOf: (w: World, round: number) => Effect.Effect<Subject, never, any>) =>
    Effect.gen(function*() {
      const surfboard = yield* SurfboardSandbox
      const settings = yield* ServerSettings
      const first = (yield* TestServer).baseUrl
      yield* Effect.scoped(Effect.gen(function*() {
        const other = Context.get(yield* Layer.build(serverOn(settings.databaseUrl, settings.env)), TestServer).baseUrl
        for (let round = 0; round < ROUNDS; round++) {
          // Operators and a merchant per round: the sandbox's orders of the merchant are this round's.
          const w = yield* makeWorld
          const merchant = yield* merchantFor(w.alpha)
          const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["payment_links:write"] })
          const subject = yield* subjectOf(w, round)
          yield* surfboard.faults.set({ latencyMs: 40 + 20 * (round % 4) }, { merchantId: merchant.id })
          const answers = yield* Effect.all(
            Array.from({ length: PARALLEL }, (_, i) =>
              call(`/api/v1/bookings/${subject.ids[i % subject.ids.length]}/payment-link`, {
                method: "POST",
                key: key.token,
                body: {},
                headers: { "Idempotency-Key": randomUUID() },
                baseUrl: i % 2 === 0 ? first : other
              })),
            { concurrency: "unbounded" }
          )
          yield* surfboard.faults.set({ latencyMs: 0 }, { merchantId: merchant.id })
          const at = `round ${round}`
          for (const a of answers) {
            expect(a.status, `${at}: ${a.text}`).toBe(200)
          }
          // The sandbox's own records: one link for the balance.
          const made = yield* sandboxLinks(merchant.id)
          expect(made, at).toHaveLength(1)
          expect(made[0], at).toMatchObject({ status: "PENDING", amount_minor: subject.amountMinor })
          expect(
            new Set(answers.map((a) =>
              a.body.url
            )).size,
            at
          ).toBe(1)
          expect((yield* linkRows(subject.target)).map((l) => l.state), at).toEqual(["open"])
          // One email for the link, one message in the outbox.
          expect(yield* mailTo(subject.email), at).toHaveLength(1)
          expect(yield* outboxTo(subject.email), at).toBe(1)
          // Every answer says the guest has the link by email: it went out once.
          expect(answers.map((a) => a.body.emailed), at).toEqual(answers.map(() => true))
        }
      }))
    })

  describe("one balance, ten requests at once with different Idempotency-Keys, on two instances", () => {
    it.effect(`a pay-later balance (deferred_balance), ${ROUNDS} rounds: one link at the provider, one email, one URL`, () =>
      race(payLaterBooking))

    it.effect(`a booking only in the booking system, its two rows named in turn (provider_balance), ${ROUNDS} rounds: the same`, () =>
      race(bookingSystemBooking))
  })

  describe("the link's email in another sender's hands: `emailed` is the outcome of that attempt, however long it takes", () => {
    /**
     * A link opened and its email queued by a request that died before trying it (a server with
     * CRASH_AT=payment_link.after_open): the email `pending`, no attempt yet, within the window.
     */
    const queuedNotTried = Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const settings = yield* ServerSettings
      const w = yield* makeWorld
      yield* merchantFor(w.alpha)
      const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["payment_links:write"] })
      const email = `queued-${w.tag}@example.com`
      const booking = yield* insertBooking({ operatorId: w.alpha, payLater: PAY_LATER(30000), guestEmail: email })
      const crashed = yield* Effect.scoped(Effect.gen(function*() {
        const ctx = yield* Layer.build(
          serverOn(settings.databaseUrl, { ...settings.env, CRASH_AT: "payment_link.after_open" })
        )
        return yield* call(`/api/v1/bookings/${booking}/payment-link`, {
          method: "POST",
          key: key.token,
          body: {},
          headers: { "Idempotency-Key": randomUUID() },
          baseUrl: Context.get(ctx, TestServer).baseUrl
        })
      }))
      expect(crashed.status).toBe(500)
      const [queued] = yield* sql<{ id: string; status: string; attempts: number }>`
        SELECT o.id, o.status, o.attempts FROM payment_links l JOIN email_outbox o ON o.id = l.email_outbox_id
        WHERE l.target = ${`booking:${booking}`}`.pipe(Effect.orDie)
      expect(queued).toMatchObject({ status: "pending", attempts: 0 })
      const again = call(`/api/v1/bookings/${booking}/payment-link`, {
        method: "POST",
        key: key.token,
        body: {},
        headers: { "Idempotency-Key": randomUUID() }
      })
      return { sql, email, outboxId: queued!.id, again }
    })

    const outboxRowOf = (id: string) =>
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) =>
          sql<{ status: string; attempts: number }>`SELECT status, attempts FROM email_outbox WHERE id = ${id}`.pipe(
            Effect.map((rows) => rows[0]!),
            Effect.orDie
          )
      )

    it.effect("another sender is claiming it as the request looks (its row locked): waited for, then sent once; emailed true", () =>
      Effect.gen(function*() {
        const { again, email, outboxId, sql } = yield* queuedNotTried
        // Another sender in the middle of its claim: the email's row locked in an open transaction.
        const locked = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const claimer = yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`SELECT id FROM email_outbox WHERE id = ${outboxId} FOR UPDATE`
          yield* Deferred.succeed(locked, undefined)
          yield* Deferred.await(release)
        })).pipe(Effect.orDie, Effect.fork)
        yield* Deferred.await(locked)
        const asking = yield* Effect.fork(again)
        // Until the request waits on that lock (or has answered without waiting).
        for (;;) {
          const [{ waiting }] = (yield* sql<{ waiting: number }>`
            SELECT count(*)::int AS waiting FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%FROM email_outbox%'`
            .pipe(Effect.orDie)) as [{ waiting: number }]
          if (waiting > 0 || Option.isSome(yield* Fiber.poll(asking))) break
          yield* Effect.sleep("20 millis")
        }
        // The claim did not go through (the other sender gave up): the request tries it itself.
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(claimer)
        const answer = yield* Fiber.join(asking)
        expect(answer.status, answer.text).toBe(200)
        expect(answer.body.emailed).toBe(true)
        expect(yield* mailTo(email)).toHaveLength(1)
        expect(yield* outboxRowOf(outboxId)).toEqual({ status: "sent", attempts: 1 })
      }))

    it.effect("its sender died during the attempt: waited for until the lease ends, then taken over and sent once; emailed true", () =>
      Effect.gen(function*() {
        const { again, email, outboxId, sql } = yield* queuedNotTried
        // As a sender leaves it when it dies after claiming: sending, an attempt counted, a lease of 3 s.
        yield* sql`
          UPDATE email_outbox SET status = 'sending', claim_token = gen_random_uuid(), attempts = 1,
            locked_until = now() + interval '3 seconds'
          WHERE id = ${outboxId}`.pipe(Effect.orDie)
        const answer = yield* again
        expect(answer.status, answer.text).toBe(200)
        expect(answer.body.emailed).toBe(true)
        expect(yield* mailTo(email)).toHaveLength(1)
        expect(yield* outboxRowOf(outboxId)).toEqual({ status: "sent", attempts: 2 })
      }))
  })
})
