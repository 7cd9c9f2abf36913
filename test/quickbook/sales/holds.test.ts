/**
 * Quickbook POST /reserve and DELETE /reserve/{holdRef} over real HTTP with the Bókun sandbox:
 * seats really held, one hold per sale on retry, hold_not_supported, hold_expired, idempotent
 * release (seats back), 503 on a booking system that does not answer, the sellability rules again at
 * reserve (a test key on live accounts, a desk without a card terminal), the writes budget shared
 * with quote, and the document.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { CLERK_MESSAGES, invalidFieldMessage } from "../../../src/quickbook/clerkMessages.js"
import { QuickbookKeys } from "../../../src/quickbook/terminals/QuickbookKeys.js"
import { BokunSandbox } from "../../../src/sandbox/bokun/index.js"
import { call, get, type Reply } from "../../support/http.js"
import { paymentsEnv } from "../../support/payments.js"
import { BASE, sellingDesk } from "../../support/quickbook.js"

const env = paymentsEnv(Effect.succeed({ TOUR_AVAILABILITY_TIMEOUT_MS: "1500" }))

const expectError = (res: Reply, status: number, code: string, clerkMessage = (CLERK_MESSAGES as any)[code].en) => {
  expect(res.status, res.text).toBe(status)
  expect(res.body.error).toMatchObject({ code, clerkMessage })
}

const world = Effect.gen(function*() {
  const { w, a, merchant, own, terminal, key, headers, day, quote, seatsLeft } = yield* sellingDesk
  const s = {
    w,
    a,
    pa: a.vendor.products[0]!,
    merchant,
    own,
    terminal,
    day,
    seatsLeft,
    quote,
    reserve: (body: unknown) => call(`${BASE}/reserve`, { method: "POST", key: key.token, headers, body }),
    release: (ref: string) => call(`${BASE}/reserve/${ref}`, { method: "DELETE", key: key.token, headers })
  }
  return s
}).pipe(Effect.provide(QuickbookKeys.Default))

const saleRow = (reference: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      Effect.map(
        sql<
          any
        >`SELECT status, hold_id, hold_expires_at, valid_until FROM quickbook_sales WHERE reference = ${reference}`,
        ([r]) => r
      )
  )

layer(env, { excludeTestServices: true, timeout: 180_000 })("quickbook reserve and release", (it) => {
  it.effect("reserve holds the seats in the booking system; a retry returns the same hold; release gives them back, idempotent", () =>
    Effect.gen(function*() {
      const s = yield* world
      const q = yield* s.quote(2)
      const key = randomUUID()
      const started = Date.now()
      const res = yield* s.reserve({ reference: q.reference, idempotencyKey: key })
      expect(res.status, res.text).toBe(200)
      expect(res.body.holdRef).toBe(q.reference)
      expect(res.body.cartLine).toEqual(q.cartLine)
      const expiresAt = Date.parse(res.body.expiresAt)
      expect(expiresAt - started).toBeGreaterThan(9 * 60_000)
      expect(expiresAt - Date.now()).toBeLessThanOrEqual(10 * 60_000)
      expect(yield* s.seatsLeft).toBe(8)
      const row = yield* saleRow(q.reference)
      expect(row.status).toBe("held")
      expect(row.hold_id).toBeTruthy()
      // Same key, and another key: the sale's one hold; no second hold in the booking system.
      const again = yield* s.reserve({ reference: q.reference, idempotencyKey: key })
      expect(again.body).toEqual(res.body)
      const other = yield* s.reserve({ reference: q.reference, idempotencyKey: randomUUID() })
      expect(other.body).toEqual(res.body)
      expect(yield* s.seatsLeft).toBe(8)
      // Release: seats back, sale quoted again; releasing again answers the same.
      const rel = yield* s.release(q.reference)
      expect(rel.status, rel.text).toBe(200)
      expect(rel.body).toEqual({ holdRef: q.reference, released: true })
      expect(yield* s.seatsLeft).toBe(10)
      expect((yield* saleRow(q.reference)).status).toBe("quoted")
      const rel2 = yield* s.release(q.reference)
      expect(rel2.status).toBe(200)
      expect(rel2.body).toEqual(rel.body)
      // Unknown reference, bad reference.
      expectError(yield* s.release("SVC-0000000000"), 404, "not_found")
      expectError(yield* s.reserve({ reference: "SVC-0000000000", idempotencyKey: key }), 404, "not_found")
      expectError(
        yield* s.reserve({ reference: "nope", idempotencyKey: key }),
        400,
        "invalid_request",
        invalidFieldMessage("reference", false, "en")
      )
    }))

  it.effect("reserve: 422 hold_not_supported, 409 sold_out, 410 hold_expired for a quote or hold run out", () =>
    Effect.gen(function*() {
      const s = yield* world
      const sql = yield* SqlClient.SqlClient
      // Sold out since the quote.
      const q0 = yield* s.quote(2)
      const sandbox = yield* BokunSandbox
      yield* sandbox.setDepartureCapacity({
        productId: s.pa.id,
        startTimeId: s.pa.startTimes[0]!.id,
        date: s.day,
        capacity: 1
      })
      expectError(yield* s.reserve({ reference: q0.reference, idempotencyKey: randomUUID() }), 409, "sold_out")
      yield* sandbox.setDepartureCapacity({
        productId: s.pa.id,
        startTimeId: s.pa.startTimes[0]!.id,
        date: s.day,
        capacity: 10
      })
      // Quote past its validity.
      const q1 = yield* s.quote(1)
      yield* sql`UPDATE quickbook_sales SET valid_until = now() - interval '1 second' WHERE reference = ${q1.reference}`
      expectError(yield* s.reserve({ reference: q1.reference, idempotencyKey: randomUUID() }), 410, "hold_expired")
      // A hold that ran out; its release answers released and the sale is expired.
      const q2 = yield* s.quote(1)
      expect((yield* s.reserve({ reference: q2.reference, idempotencyKey: randomUUID() })).status).toBe(200)
      yield* sql`UPDATE quickbook_sales SET hold_expires_at = now() - interval '1 second', valid_until = now() - interval '1 second'
        WHERE reference = ${q2.reference}`
      expectError(yield* s.reserve({ reference: q2.reference, idempotencyKey: randomUUID() }), 410, "hold_expired")
      expect((yield* s.release(q2.reference)).status).toBe(200)
      expect((yield* saleRow(q2.reference)).status).toBe("expired")
      expect(yield* s.seatsLeft).toBe(10)
      // A product that cannot hold.
      yield* sql`UPDATE bokun_sandbox.products SET supports_holds = false WHERE id = ${s.pa.id}`
      const q3 = yield* s.quote(1)
      expectError(
        yield* s.reserve({ reference: q3.reference, idempotencyKey: randomUUID() }),
        422,
        "hold_not_supported"
      )
      expect((yield* saleRow(q3.reference)).status).toBe("quoted")
    }))

  it.effect("a booking system that does not answer: 503 provider_unavailable, nothing held", () =>
    Effect.gen(function*() {
      const s = yield* world
      const sandbox = yield* BokunSandbox
      const q = yield* s.quote(1)
      yield* sandbox.faults.set({ down: true }, { vendorId: s.a.vendor.id })
      try {
        expectError(
          yield* s.reserve({ reference: q.reference, idempotencyKey: randomUUID() }),
          503,
          "provider_unavailable"
        )
        expect((yield* saleRow(q.reference)).status).toBe("quoted")
      } finally {
        yield* sandbox.faults.set({ down: false }, { vendorId: s.a.vendor.id })
      }
      expect(yield* s.seatsLeft).toBe(10)
      const ok = yield* s.reserve({ reference: q.reference, idempotencyKey: randomUUID() })
      expect(ok.status, ok.text).toBe(200)
    }))

  it.effect("reserve checks sellability again: 403 for a test key once the booking system is live or the desk lost its card terminal", () =>
    Effect.gen(function*() {
      const s = yield* world
      const sql = yield* SqlClient.SqlClient
      const sandbox = yield* BokunSandbox
      // The desk's card terminal removed after the quote: no hold.
      const q1 = yield* s.quote(1)
      yield* sql`UPDATE quickbook_terminals SET payment_terminal_id = NULL WHERE id = ${s.terminal.id}`
      expectError(
        yield* s.reserve({ reference: q1.reference, idempotencyKey: randomUUID() }),
        403,
        "tour_not_sellable_here"
      )
      expect((yield* saleRow(q1.reference)).status).toBe("quoted")
      yield* sql`UPDATE quickbook_terminals SET payment_terminal_id = ${s.merchant.terminalId} WHERE id = ${s.terminal.id}`
      // A hold made, then the booking-system account marked live: reserve is refused and release
      // answers released without calling it (the hold lapses there by itself).
      const q2 = yield* s.quote(1)
      expect((yield* s.reserve({ reference: q2.reference, idempotencyKey: randomUUID() })).status).toBe(200)
      const q3 = yield* s.quote(1)
      yield* sql`UPDATE booking_system_accounts SET sandbox = false WHERE id = ${s.a.accountId}`
      yield* sandbox.requests.clear
      expectError(
        yield* s.reserve({ reference: q3.reference, idempotencyKey: randomUUID() }),
        403,
        "tour_not_sellable_here"
      )
      const rel = yield* s.release(q2.reference)
      expect(rel.status, rel.text).toBe(200)
      expect(rel.body).toEqual({ holdRef: q2.reference, released: true })
      expect(yield* sandbox.requests.count({ accessKey: s.a.vendor.accessKey })).toBe(0)
      yield* sql`UPDATE booking_system_accounts SET sandbox = true WHERE id = ${s.a.accountId}`
      expect(yield* s.seatsLeft).toBe(9)
    }))

  it.effect("reserve and release share the writes budget with quote (60 a minute per terminal)", () =>
    Effect.gen(function*() {
      const s = yield* world
      const q = yield* s.quote(1)
      for (let i = 0; i < 29; i++) expect((yield* s.release(q.reference)).status).toBe(200)
      for (let i = 0; i < 30; i++) expect((yield* s.reserve({})).status).toBe(400)
      expectError(yield* s.reserve({ reference: q.reference, idempotencyKey: randomUUID() }), 429, "rate_limited")
      expectError(yield* s.release(q.reference), 429, "rate_limited")
    }))

  it.effect("the OpenAPI document has reserve and release with their errors", () =>
    Effect.gen(function*() {
      const doc = (yield* get(`${BASE}/openapi.json`)).body
      expect(Object.keys(doc.paths[`${BASE}/reserve`].post.responses).sort())
        .toEqual(["200", "400", "401", "403", "404", "409", "410", "413", "415", "422", "429", "500", "503"])
      expect(Object.keys(doc.paths[`${BASE}/reserve/{holdRef}`].delete.responses).sort())
        .toEqual(["200", "400", "401", "403", "404", "429", "500", "503"])
    }))
})
