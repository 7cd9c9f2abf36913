/**
 * Concurrent POST /api/v1/bookings/{id}/payment-link for one booking, through two server instances
 * on one database, with latency injected at the Surfboard sandbox: one open link per booking and
 * amount at the provider (the sandbox's own orders), one email per link (the mailbox and the outbox),
 * every answer the same link.
 */
import { describe, expect, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { SurfboardSandbox } from "../../src/sandbox/surfboard/index.js"
import { createKey, insertBooking, makeWorld } from "../support/fixtures.js"
import { call } from "../support/http.js"
import { mailTo, merchantFor, paymentsEnv, ServerSettings } from "../support/payments.js"
import { serverOn, TestServer } from "../support/server.js"

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

const outboxOf = (bookingId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ n: number }>`SELECT count(*)::int AS n FROM email_outbox WHERE booking_id = ${bookingId}`.pipe(
      Effect.map((r) => r[0]!.n),
      Effect.orDie
    ))

const linkRows = (target: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ state: string }>`SELECT state FROM payment_links WHERE target = ${target}`.pipe(Effect.orDie))

layer(env, { excludeTestServices: true, timeout: 600_000 })("concurrent payment-link requests", (it) => {
  describe("one booking, ten requests at once with different Idempotency-Keys, two instances", () => {
    it.effect(`${ROUNDS} rounds: one link at the provider, one email, the same URL in every answer`, () =>
      Effect.gen(function*() {
        const surfboard = yield* SurfboardSandbox
        const settings = yield* ServerSettings
        const first = (yield* TestServer).baseUrl
        yield* Effect.scoped(Effect.gen(function*() {
          const other = Context.get(yield* Layer.build(serverOn(settings.databaseUrl, settings.env)), TestServer).baseUrl
          for (let round = 0; round < ROUNDS; round++) {
            // Operators and a merchant per round: the sandbox's orders of the merchant are this booking's.
            const w = yield* makeWorld
            const merchant = yield* merchantFor(w.alpha)
            const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["payment_links:write"] })
            yield* surfboard.faults.set({ latencyMs: 40 + 20 * (round % 4) }, { merchantId: merchant.id })
            const email = `race-${round}-${w.tag}@example.com`
            const booking = yield* insertBooking({ operatorId: w.alpha, payLater: PAY_LATER(30000 + round), guestEmail: email })
            const answers = yield* Effect.all(
              Array.from({ length: PARALLEL }, (_, i) =>
                call(`/api/v1/bookings/${booking}/payment-link`, {
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
            for (const a of answers) expect(a.status, `${at}: ${a.text}`).toBe(200)
            // The sandbox's own records: one link for the booking's balance.
            const made = yield* sandboxLinks(merchant.id)
            expect(made, at).toHaveLength(1)
            expect(made[0], at).toMatchObject({ status: "PENDING", amount_minor: 30000 + round })
            expect(new Set(answers.map((a) => a.body.url)).size, at).toBe(1)
            expect((yield* linkRows(`booking:${booking}`)).map((l) => l.state), at).toEqual(["open"])
            // One email for the link, one message in the outbox.
            expect(yield* mailTo(email), at).toHaveLength(1)
            expect(yield* outboxOf(booking), at).toBe(1)
            // Every answer says the guest has the link by email: it went out once.
            expect(answers.map((a) => a.body.emailed), at).toEqual(answers.map(() => true))
          }
        }))
      }))
  })
})
