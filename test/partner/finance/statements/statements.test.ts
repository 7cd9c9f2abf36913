/**
 * GET /api/v1/finance/statements through the real server on a fresh PostgreSQL (bookings written
 * directly; the ledger's triggers make their entries): sections adding up over all entries, the
 * 1000-entry cap, stable numbers, `too_many`, the UTC month bounds, the default month, the 400s,
 * tenant isolation, and every answer against the OpenAPI document. The ledger's events themselves:
 * test/commissions/ledger.test.ts.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { Operators } from "../../../../src/operators/Operators.js"
import { lastMonth } from "../../../../src/partner/finance/statements/rules.js"
import { createKey, insertBooking, makeWorld } from "../../../support/fixtures.js"
import { get, type Reply } from "../../../support/http.js"
import { conforms, dereferencedSpec } from "../../../support/openapi.js"
import { testServer } from "../../../support/server.js"
import { at, commission, expectAddsUp, financeWorld as world, statementsWith } from "../../../support/statements.js"

const seen: Array<Reply> = []
const statements = statementsWith(seen)

layer(testServer(), { excludeTestServices: true, timeout: 180_000 })("GET /api/v1/finance/statements", (it) => {
  it.effect("sections sum over all entries; more than 1000: entries_total, the 1000 oldest listed, oldest first", () =>
    Effect.gen(function*() {
      const w = yield* world
      const sql = yield* SqlClient.SqlClient
      // 1,010 NOK bookings in February 2025 (every 10th inserted cancelled: a sale and a cancellation),
      // 3 EUR ones, each with its own price.
      yield* sql`
          INSERT INTO bookings (confirmation_code, status, operator_id, tour_name, experience_date, timezone,
            amount_minor, currency, payment_strategy, commission_amount_minor, commission_rate_percent,
            commission_currency, booked_at, created_at, updated_at)
          SELECT 'BULK-' || ${w.tag} || '-' || g, CASE WHEN g % 10 = 0 THEN 'CANCELLED' ELSE 'CONFIRMED' END,
            ${w.alpha}, 'Bulk Tour', '2025-03-01', 'Europe/Oslo', 10000 + g, 'NOK', 'pay_now', (10000 + g) / 10, 10, 'NOK',
            '2025-02-01T00:00:00Z'::timestamptz + make_interval(mins => g * 30),
            '2025-02-01T00:00:00Z'::timestamptz + make_interval(mins => g * 30),
            CASE WHEN g % 10 = 0 THEN '2025-02-01T00:00:00Z'::timestamptz + make_interval(mins => g * 30 + 7) END
          FROM generate_series(1, 1010) g`
      for (const [i, amount] of [4500, 6500, 11000].entries()) {
        yield* insertBooking({
          operatorId: w.alpha,
          amountMinor: amount,
          currency: "EUR",
          commission: commission(amount, 15, "EUR"),
          bookedAt: at(`2025-02-1${i}T09:00:00Z`)
        })
      }
      const body = yield* statements("month=2025-02", w.key)
      expect(body).toMatchObject({
        month: "2025-02",
        period_start: "2025-02-01T00:00:00.000Z",
        period_end: "2025-03-01T00:00:00.000Z",
        too_many: false
      })
      expect(body.statements.length).toBe(1)
      const [eur, nok] = body.statements[0].sections
      expect(eur).toMatchObject({
        currency: "EUR",
        sales: 3,
        cancellations: 0,
        differences: 0,
        gross_minor: 22000,
        commission_minor: 675 + 975 + 1650,
        entries_total: 3
      })
      const [db] = yield* sql<{ n: number; gross: number; commission: number }>`
          SELECT count(*)::int AS n, sum(gross_minor)::int8 AS gross, sum(commission_minor)::int8 AS commission
          FROM commission_entries WHERE operator_id = ${w.alpha} AND currency = 'NOK'
            AND occurred_at >= '2025-02-01' AND occurred_at < '2025-03-01'`
      expect(db!.n).toBe(1010 + 101)
      expect(nok).toMatchObject({
        currency: "NOK",
        sales: 1010,
        cancellations: 101,
        differences: 0,
        entries_total: 1111,
        gross_minor: db!.gross,
        commission_minor: db!.commission,
        reserve_fee_minor: 0
      })
      // Live bookings' prices: the cancelled ones net to zero.
      let live = 0
      for (let g = 1; g <= 1010; g++) if (g % 10 !== 0) live += 10000 + g
      expect(nok.gross_minor).toBe(live)
      expect(nok.entries.length).toBe(1000)
      // The 1000 oldest, oldest first: the cancellation of BULK-10 (7 minutes after its sale) comes
      // before the sale of BULK-11.
      expect(nok.entries[0]).toMatchObject({ type: "sale", confirmation_code: `BULK-${w.tag}-1`, gross_minor: 10001 })
      expect(nok.entries.slice(9, 12).map((e: any) => [e.type, e.confirmation_code])).toEqual([
        ["sale", `BULK-${w.tag}-10`],
        ["cancellation", `BULK-${w.tag}-10`],
        ["sale", `BULK-${w.tag}-11`]
      ])
      const [cut] = yield* sql<{ occurred_at: Date }>`
          SELECT occurred_at FROM commission_entries WHERE operator_id = ${w.alpha} AND currency = 'NOK'
            AND occurred_at >= '2025-02-01' AND occurred_at < '2025-03-01' ORDER BY occurred_at, id OFFSET 999 LIMIT 1`
      expect(nok.entries[999].occurred_at).toBe(cut!.occurred_at.toISOString())
      expectAddsUp(body)
      conforms(yield* dereferencedSpec, "get", "/api/v1/finance/statements", seen.at(-1)!)
    }))

  it.effect("the number is the same on every call and distinct per operator and month", () =>
    Effect.gen(function*() {
      const w = yield* makeWorld
      const key = yield* createKey({ by: w.bob, operators: [w.alpha, w.beta], scopes: ["finance:read"] })
      for (const op of [w.alpha, w.beta]) {
        for (const day of ["2025-08-14T10:00:00Z", "2025-09-14T10:00:00Z"]) {
          yield* insertBooking({ operatorId: op, commission: commission(99800), bookedAt: at(day) })
        }
      }
      const numbers: Array<string> = []
      for (const month of ["2025-08", "2025-09"]) {
        const a = yield* statements(`month=${month}`, key.token)
        const b = yield* statements(`month=${month}`, key.token)
        expect(a.statements.length).toBe(2)
        expect(b.statements.map((s: any) => s.number)).toEqual(a.statements.map((s: any) => s.number))
        for (const s of a.statements) expect(s.number).toMatch(new RegExp(`^CS-${month.replace("-", "")}-\\d{4}$`))
        numbers.push(...a.statements.map((s: any) => s.number))
        // One operator asked alone: the same number.
        const alone = yield* statements(`month=${month}&partner_id=${w.beta}`, key.token)
        expect(alone.statements[0].number).toBe(a.statements.find((s: any) => s.partner.id === w.beta).number)
      }
      expect(new Set(numbers).size).toBe(4)
      // A new entry later in the month keeps the number.
      const before = (yield* statements("month=2025-08", key.token)).statements.map((s: any) => s.number)
      yield* insertBooking({
        operatorId: w.alpha,
        commission: commission(10000),
        bookedAt: at("2025-08-30T10:00:00Z")
      })
      expect((yield* statements("month=2025-08", key.token)).statements.map((s: any) => s.number)).toEqual(before)
    }))

  it.effect("month bounds are UTC midnights: 23:59:59.999 on the last day and 00:00 on the first", () =>
    Effect.gen(function*() {
      const w = yield* world
      yield* insertBooking({
        operatorId: w.alpha,
        amountMinor: 1111,
        commission: commission(1111),
        bookedAt: at("2025-03-31T23:59:59.999Z")
      })
      yield* insertBooking({
        operatorId: w.alpha,
        amountMinor: 2222,
        commission: commission(2222),
        bookedAt: at("2025-04-01T00:00:00.000Z")
      })
      const march = yield* statements("month=2025-03", w.key)
      const april = yield* statements("month=2025-04", w.key)
      expect(march.period_end).toBe("2025-04-01T00:00:00.000Z")
      expect(april.period_start).toBe("2025-04-01T00:00:00.000Z")
      expect(march.statements[0].sections[0].entries.map((e: any) => [e.gross_minor, e.occurred_at])).toEqual([
        [1111, "2025-03-31T23:59:59.999Z"]
      ])
      expect(april.statements[0].sections[0].entries.map((e: any) => [e.gross_minor, e.occurred_at])).toEqual([
        [2222, "2025-04-01T00:00:00.000Z"]
      ])
      // December's end is January's start of the next year.
      const dec = yield* statements("month=2024-12", w.key)
      expect([dec.period_start, dec.period_end]).toEqual(["2024-12-01T00:00:00.000Z", "2025-01-01T00:00:00.000Z"])
      expect(dec.statements).toEqual([])
    }))

  it.effect("default month: the month before the current UTC month", () =>
    Effect.gen(function*() {
      const w = yield* world
      const expected = lastMonth(Date.now())
      yield* insertBooking({
        operatorId: w.alpha,
        amountMinor: 3333,
        commission: commission(3333),
        bookedAt: at(`${expected}-15T12:00:00Z`)
      })
      const body = yield* statements("", w.key)
      // The request may cross a month boundary (run at midnight UTC on the first): either month.
      expect([expected, lastMonth(Date.now())]).toContain(body.month)
      if (body.month === expected) {
        expect(body.statements[0].sections[0].entries.map((e: any) => e.gross_minor)).toEqual([3333])
        expect(body.period_start).toBe(`${expected}-01T00:00:00.000Z`)
      }
    }))

  it.effect("more than 6 operators in view: too_many with no statements; 6, or one named, answer", () =>
    Effect.gen(function*() {
      const admin = yield* Operators
      const w = yield* makeWorld
      const ops: Array<string> = []
      for (let i = 0; i < 7; i++) {
        const op = yield* admin.createOperator({ name: `Small ${i} ${w.tag}` })
        yield* admin.setMembership(op, w.alice, "owner")
        yield* insertBooking({ operatorId: op, commission: commission(99800), bookedAt: at("2025-06-10T10:00:00Z") })
        ops.push(op)
      }
      const seven = yield* createKey({ by: w.alice, operators: ops, scopes: ["finance:read"] })
      const many = yield* statements("month=2025-06", seven.token)
      expect(many).toMatchObject({ month: "2025-06", too_many: true, statements: [] })
      const one = yield* statements(`month=2025-06&partner_id=${ops[3]}`, seven.token)
      expect(one.too_many).toBe(false)
      expect(one.statements.map((s: any) => s.partner.id)).toEqual([ops[3]])
      const six = yield* createKey({ by: w.alice, operators: ops.slice(0, 6), scopes: ["finance:read"] })
      const body = yield* statements("month=2025-06", six.token)
      expect(body.too_many).toBe(false)
      expect(body.statements.length).toBe(6)
      expect(body.statements.map((s: any) => s.partner.name)).toEqual(
        [0, 1, 2, 3, 4, 5].map((i) => `Small ${i} ${w.tag}`)
      )
    }))

  it.effect("tenant isolation: another operator's entries never appear; partner_id outside the key is 404", () =>
    Effect.gen(function*() {
      const w = yield* world
      yield* insertBooking({
        operatorId: w.alpha,
        amountMinor: 5000,
        commission: commission(5000),
        bookedAt: at("2025-10-10T10:00:00Z")
      })
      yield* insertBooking({
        operatorId: w.beta,
        amountMinor: 7000,
        commission: commission(7000),
        bookedAt: at("2025-10-10T10:00:00Z")
      })
      const body = yield* statements("month=2025-10", w.key)
      expect(body.statements.map((s: any) => s.partner)).toEqual([{ id: w.alpha, name: `Alpha Tours ${w.tag}` }])
      expect(body.statements[0].sections[0].gross_minor).toBe(5000)
      const notYours = yield* statements(`month=2025-10&partner_id=${w.beta}`, w.key, 404)
      expect(notYours.type).toBe("/api/v1/docs/errors.md#not-found")
      yield* statements(`month=2025-10&partner_id=${randomUUID()}`, w.key, 404)
      // An operator in view without entries that month has no statement.
      const both = yield* createKey({ by: w.bob, operators: [w.alpha, w.beta], scopes: ["finance:read"] })
      yield* insertBooking({
        operatorId: w.alpha,
        commission: commission(1000),
        bookedAt: at("2025-11-10T10:00:00Z")
      })
      const nov = yield* statements("month=2025-11", both.token)
      expect(nov.statements.map((s: any) => s.partner.id)).toEqual([w.alpha])
    }))

  it.effect("400 for a malformed month; 403 without finance:read; 401 without a key", () =>
    Effect.gen(function*() {
      const w = yield* world
      for (
        const month of [
          "2025-13",
          "2025-00",
          "2025-1",
          "25-01",
          "2025-01-01",
          "abc",
          "",
          "9999-12",
          "1969-12",
          "2025-01%00"
        ]
      ) {
        const res = yield* get(`/api/v1/finance/statements?month=${month}`, w.key)
        seen.push(res)
        expect(res.status, `${month}: ${res.text}`).toBe(400)
        expect(res.headers.get("content-type")).toBe("application/problem+json")
        expect(JSON.stringify(res.body.invalid_params ?? [])).toContain("month")
      }
      const bookingsOnly = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["bookings:read"] })
      yield* statements("month=2025-01", bookingsOnly.token, 403)
      const none = yield* get("/api/v1/finance/statements?month=2025-01")
      expect(none.status).toBe(401)
    }))

  it.effect("every answer of this file matches the OpenAPI document", () =>
    Effect.gen(function*() {
      const spec = yield* dereferencedSpec
      expect(seen.length).toBeGreaterThan(20)
      for (const res of seen) conforms(spec, "get", "/api/v1/finance/statements", res)
    }))
})
