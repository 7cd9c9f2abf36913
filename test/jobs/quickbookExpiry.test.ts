/**
 * The Quickbook expiry sweep (the `quickbook-expiry` job's body) against the database and the Bókun
 * sandbox: quotes past their validity expire, lapsed holds are released (seats back) and settled as
 * DELETE /reserve settles them, a release the booking system does not answer is left to its own
 * expiry, and sales being booked, confirmed or failed are never touched.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { QuickbookExpiry } from "../../src/quickbook/sales/QuickbookExpiry.js"
import { QuickbookKeys } from "../../src/quickbook/terminals/QuickbookKeys.js"
import { BokunSandbox } from "../../src/sandbox/bokun/index.js"
import { call } from "../support/http.js"
import { paymentsEnv } from "../support/payments.js"
import { BASE, sellingDesk } from "../support/quickbook.js"

const env = paymentsEnv(Effect.succeed({ TOUR_AVAILABILITY_TIMEOUT_MS: "1500" }))

/** A desk selling Alpha's tour (10 seats at 10:00 tomorrow) with a test key, over HTTP. */
const world = Effect.gen(function*() {
  const { a, headers, key, quote, seatsLeft } = yield* sellingDesk
  const quoted = (count: number) => Effect.map(quote(count), (q) => q.reference)
  const held = (count: number) =>
    Effect.gen(function*() {
      const reference = yield* quoted(count)
      const res = yield* call(`${BASE}/reserve`, {
        method: "POST",
        key: key.token,
        headers,
        body: { reference, idempotencyKey: randomUUID() }
      })
      expect(res.status, res.text).toBe(200)
      return reference
    })
  return { a, quote: quoted, held, seatsLeft }
}).pipe(Effect.provide(QuickbookKeys.Default))

const sweep = Effect.flatMap(QuickbookExpiry, (e) => e.sweep()).pipe(Effect.provide(QuickbookExpiry.Default))

const statusOf = (reference: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      Effect.map(
        sql<{ status: string; hold_id: string | null; hold_released_at: Date | null }>`
      SELECT status, hold_id, hold_released_at FROM quickbook_sales WHERE reference = ${reference}`,
        ([r]) => r!
      )
  )

/** Moves a sale's quote validity and hold expiry into the past (by `seconds`) or leaves them. */
const lapse = (reference: string, what: { quote?: boolean; hold?: boolean }) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`
    UPDATE quickbook_sales SET
      valid_until = CASE WHEN ${what.quote ?? false} THEN now() - interval '1 second' ELSE valid_until END,
      hold_expires_at = CASE WHEN ${what.hold ?? false} THEN now() - interval '1 second' ELSE hold_expires_at END
    WHERE reference = ${reference}`)

layer(env, { excludeTestServices: true, timeout: 180_000 })("quickbook expiry sweep", (it) => {
  it.effect("expires quotes past validity, releases lapsed holds (seats come back), never touches booking, confirmed or failed", () =>
    Effect.gen(function*() {
      const s = yield* world
      const sql = yield* SqlClient.SqlClient
      const staleQuote = yield* s.quote(1)
      const freshQuote = yield* s.quote(1)
      const lapsedHold = yield* s.held(2)
      const lapsedHoldValidQuote = yield* s.held(1)
      const liveHold = yield* s.held(3)
      expect(yield* s.seatsLeft).toBe(4)
      yield* lapse(staleQuote, { quote: true })
      yield* lapse(lapsedHold, { quote: true, hold: true })
      yield* lapse(lapsedHoldValidQuote, { hold: true })
      // Later states, their quote long past: never touched.
      const later: Record<string, string> = {}
      for (const status of ["booking", "confirmed", "failed"]) {
        const ref = yield* s.quote(1)
        yield* sql`
          UPDATE quickbook_sales SET status = ${status}, valid_until = now() - interval '1 hour',
            booking_code = 'BK-1', confirmed_at = now(), customer = '{}'::jsonb, language = 'en'
          WHERE reference = ${ref}`
        later[status] = ref
      }

      const summary = yield* sweep
      expect(summary).toEqual({ holds_lapsed: 2, holds_released: 2, holds_left: 0, quotes_expired: 1 })
      expect(yield* statusOf(staleQuote)).toMatchObject({ status: "expired" })
      expect(yield* statusOf(freshQuote)).toMatchObject({ status: "quoted" })
      expect(yield* statusOf(lapsedHold)).toMatchObject({
        status: "expired",
        hold_id: null,
        hold_released_at: expect.any(Date)
      })
      // Its quote still stands: quoted again, as a release leaves it.
      expect(yield* statusOf(lapsedHoldValidQuote)).toMatchObject({ status: "quoted", hold_id: null })
      expect(yield* statusOf(liveHold)).toMatchObject({ status: "held", hold_id: expect.any(String) })
      for (const [status, ref] of Object.entries(later)) expect((yield* statusOf(ref)).status).toBe(status)
      // The lapsed holds' seats are back at the booking system; the live hold keeps its 3.
      expect(yield* s.seatsLeft).toBe(7)
      // Nothing more to do.
      expect(yield* sweep).toEqual({ holds_lapsed: 0, holds_released: 0, holds_left: 0, quotes_expired: 0 })
    }))

  it.effect("a release the booking system does not answer is left to its own expiry; the sale is settled all the same", () =>
    Effect.gen(function*() {
      const s = yield* world
      const sandbox = yield* BokunSandbox
      const ref = yield* s.held(2)
      yield* lapse(ref, { quote: true, hold: true })
      yield* sandbox.faults.set({ down: true }, { vendorId: s.a.vendor.id })
      const summary = yield* sweep.pipe(
        Effect.ensuring(sandbox.faults.set({ down: false }, { vendorId: s.a.vendor.id }))
      )
      expect(summary).toMatchObject({ holds_lapsed: 1, holds_released: 0, holds_left: 1 })
      expect(yield* statusOf(ref)).toMatchObject({ status: "expired", hold_id: null, hold_released_at: null })
      // Still held at the booking system until its own expiry.
      expect(yield* s.seatsLeft).toBe(8)
    }))
})
