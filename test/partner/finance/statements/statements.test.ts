/**
 * GET /api/v1/finance/statements through the real server on a fresh PostgreSQL, with the Bókun and
 * Surfboard sandboxes for the writes that move bookings (cancel, reschedule): the commission ledger
 * written by the booking triggers (migration 0032), the sections adding up to their entries, the
 * 1000-entry cap, stable numbers, drafts, `too_many`, the UTC month bounds, the default month, the
 * 400s and tenant isolation.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { sourceKey, statementMonth } from "../../../../src/commissions/ledger.js"
import { Operators } from "../../../../src/operators/Operators.js"
import { lastMonth } from "../../../../src/partner/finance/statements/rules.js"
import { addDays } from "../../../../src/sandbox/bokun/index.js"
import { createKey, insertBooking, makeWorld } from "../../../support/fixtures.js"
import { call, get, type Reply } from "../../../support/http.js"
import { conforms, dereferencedSpec } from "../../../support/openapi.js"
import { linkedBooking, merchantFor, paidAtSandbox, paymentsEnv, vendorFor } from "../../../support/payments.js"

const DAY = 86_400_000
const seen: Array<Reply> = []

const statements = (query: string, key: string, status = 200) =>
  Effect.map(get(`/api/v1/finance/statements${query ? `?${query}` : ""}`, key), (res) => {
    seen.push(res)
    expect(res.status, res.text).toBe(status)
    return res.body
  })

const at = (iso: string) => new Date(iso)
const sum = (xs: ReadonlyArray<any>, f: (x: any) => number) => xs.reduce((n, x) => n + f(x), 0)
const monthOf = statementMonth
const commission = (amountMinor: number, ratePercent = 8, currency = "NOK") => ({
  amountMinor: Math.round(amountMinor * ratePercent / 100),
  ratePercent,
  currency,
  status: "pending"
})

/** Every section adds up to its entries (when all are listed) and counts them by type. */
const expectAddsUp = (body: any) => {
  for (const st of body.statements) {
    for (const s of st.sections) {
      expect(s.entries_total).toBe(s.sales + s.cancellations + s.differences)
      if (s.entries.length === s.entries_total) {
        expect(sum(s.entries, (e) => e.gross_minor)).toBe(s.gross_minor)
        expect(sum(s.entries, (e) => e.commission_minor)).toBe(s.commission_minor)
        expect(sum(s.entries, (e) => e.reserve_fee_minor)).toBe(s.reserve_fee_minor)
        expect(s.entries.filter((e: any) => e.type === "sale").length).toBe(s.sales)
        expect(s.entries.filter((e: any) => e.type === "cancellation").length).toBe(s.cancellations)
        expect(s.entries.filter((e: any) => e.type === "difference").length).toBe(s.differences)
      }
      const times = s.entries.map((e: any) => e.occurred_at)
      expect([...times].sort()).toEqual(times)
    }
  }
}

/** The ledger rows of a booking, oldest first. */
const ledgerOf = (bookingId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{
      type: string
      gross_minor: number
      commission_minor: number
      reserve_fee_minor: number
      commission_rate_percent: number
      pending: boolean
      source_key: string
      occurred_at: Date
    }>`
      SELECT type, gross_minor, commission_minor, reserve_fee_minor, commission_rate_percent, pending, source_key, occurred_at
      FROM commission_entries WHERE booking_id = ${bookingId} ORDER BY occurred_at, created_at, id`).pipe(Effect.orDie)

const money = (rows: ReadonlyArray<any>) =>
  rows.map((r) => [r.type, r.gross_minor, r.commission_minor, r.reserve_fee_minor])

/** The booking's entries as the statements of the months its ledger rows fall in show them. */
const shownEntries = (key: string, partnerId: string, code: string, months: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const out: Array<any> = []
    for (const month of [...new Set(months)].sort()) {
      const body = yield* statements(`month=${month}&partner_id=${partnerId}`, key)
      expectAddsUp(body)
      for (const st of body.statements) {
        for (const s of st.sections) out.push(...s.entries.filter((e: any) => e.confirmation_code === code))
      }
    }
    return out
  })

/** A world (Alpha, Beta, Cetus) with a finance key over Alpha. */
const world = Effect.gen(function*() {
  const w = yield* makeWorld
  const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["finance:read"] })
  return { ...w, key: key.token }
})

layer(paymentsEnv(), { excludeTestServices: true, timeout: 180_000 })("GET /api/v1/finance/statements", (it) => {
  describe("the ledger: one entry per booking event", () => {
    it.effect("a sale, then a cancel through the cancel endpoint: the commission given back, final", () =>
      Effect.gen(function*() {
        const w = yield* world
        const merchant = yield* merchantFor(w.alpha)
        const { vendor } = yield* vendorFor(w.alpha)
        const { bookingId, code } = yield* linkedBooking(w.alpha, vendor, {
          amountMinor: 99800,
          commission: commission(99800)
        })
        const sale = yield* ledgerOf(bookingId)
        expect(money(sale)).toEqual([["sale", 99800, 7984, 0]])
        expect(sale[0]).toMatchObject({
          pending: false,
          source_key: sourceKey("sale", bookingId),
          commission_rate_percent: 8
        })

        // Paid yesterday: the cancel refunds (no void), the booking ends REFUNDED.
        yield* paidAtSandbox({ bookingId, code }, merchant.id, 99800, { at: new Date(Date.now() - DAY - 3_600_000) })
        const cancelKey = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["bookings.cancel:write"] })
        const res = yield* call(`/api/v1/bookings/${bookingId}/cancel`, {
          method: "POST",
          key: cancelKey.token,
          body: { reason: "Storm warning" },
          headers: { "Idempotency-Key": randomUUID() }
        })
        expect(res.status, res.text).toBe(200)
        expect(res.body.status).toBe("REFUNDED")

        const rows = yield* ledgerOf(bookingId)
        expect(money(rows)).toEqual([["sale", 99800, 7984, 0], ["cancellation", -99800, -7984, 0]])
        expect(rows.map((r) => r.pending)).toEqual([false, false])
        expect(rows[1]!.source_key).toBe(sourceKey("cancellation", bookingId))

        const shown = yield* shownEntries(w.key, w.alpha, code, rows.map((r) => monthOf(r.occurred_at)))
        expect(shown.map((e) => [e.type, e.gross_minor, e.commission_minor, e.reserve_fee_minor])).toEqual(
          money(rows)
        )
        expect(shown[1]).toMatchObject({
          type: "cancellation",
          confirmation_code: code,
          tour: "Harbour Cruise",
          commission_rate_percent: 8,
          occurred_at: rows[1]!.occurred_at.toISOString()
        })
        // No guest details in a finance answer.
        const body = yield* statements(`month=${monthOf(rows[0]!.occurred_at)}`, w.key)
        expect(JSON.stringify(body)).not.toContain("Guest Person")
        expect(JSON.stringify(body)).not.toContain("guest@example.com")
      }))

    it.effect("a reschedule at the same price through the reschedule endpoint adds nothing", () =>
      Effect.gen(function*() {
        const w = yield* world
        const { vendor } = yield* vendorFor(w.alpha)
        const product = vendor.products[0]!
        const { bookingId, day } = yield* linkedBooking(w.alpha, vendor, {
          amountMinor: 99800,
          commission: commission(99800)
        })
        const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["bookings.reschedule:write"] })
        const target = addDays(day, 1)
        const res = yield* call(`/api/v1/bookings/${bookingId}/reschedule`, {
          method: "POST",
          key: key.token,
          body: {
            date: target,
            start_time_id: String(product.startTimes.find((s) => s.time === "14:30")!.id),
            rate_id: String(product.rates[0]!.id)
          },
          headers: { "Idempotency-Key": randomUUID() }
        })
        expect(res.status, res.text).toBe(200)
        expect(res.body.date).toBe(target)
        expect(money(yield* ledgerOf(bookingId))).toEqual([["sale", 99800, 7984, 0]])
      }))

    it.effect("an amount change while live is a difference; holds, abandoned checkouts and no commission write nothing", () =>
      Effect.gen(function*() {
        const w = yield* world
        const sql = yield* SqlClient.SqlClient
        const id = yield* insertBooking({
          operatorId: w.alpha,
          amountMinor: 100000,
          commission: commission(100000, 10),
          bookedAt: at("2025-05-02T10:00:00Z")
        })
        // The price goes up by 200.00 (the writer leaves the commission amount: price delta × rate).
        yield* sql`UPDATE bookings SET amount_minor = 120000, updated_at = now() WHERE id = ${id}`
        // The commission re-priced by the writer itself: its own delta.
        yield* sql`UPDATE bookings SET amount_minor = 110000, commission_amount_minor = 11500 WHERE id = ${id}`
        // A no-op update, a check of another field, and a date move: nothing.
        yield* sql`UPDATE bookings SET amount_minor = 110000, cancel_reason = NULL, experience_date = '2026-12-24' WHERE id = ${id}`
        const rows = yield* ledgerOf(id)
        expect(money(rows)).toEqual([
          ["sale", 100000, 10000, 0],
          ["difference", 20000, 2000, 0],
          ["difference", -10000, -500, 0]
        ])
        expect(rows.slice(1).map((r) => r.source_key)).toEqual([`difference:${id}:1`, `difference:${id}:2`])
        // Writing the booking again (the backfill's function) is idempotent.
        yield* sql`SELECT commission_record_new(b) FROM bookings b WHERE id = ${id}`
        expect((yield* ledgerOf(id)).length).toBe(3)
        // Cancelled: the net of its entries reversed.
        yield* sql`UPDATE bookings SET status = 'CANCELLED' WHERE id = ${id}`
        expect(money((yield* ledgerOf(id)).slice(3))).toEqual([["cancellation", -110000, -11500, 0]])
        // Brought back to life and cancelled again: a second sale and cancellation with keys of their own.
        yield* sql`UPDATE bookings SET status = 'CONFIRMED' WHERE id = ${id}`
        yield* sql`UPDATE bookings SET status = 'REFUNDED' WHERE id = ${id}`
        const lives = yield* ledgerOf(id)
        expect(money(lives.slice(4))).toEqual([["sale", 110000, 11500, 0], ["cancellation", -110000, -11500, 0]])
        expect(lives.map((r) => r.source_key).filter((k) => !k.startsWith("difference"))).toEqual([
          `sale:${id}`,
          `cancellation:${id}`,
          `sale:${id}:2`,
          `cancellation:${id}:2`
        ])
        yield* sql`SELECT commission_record_new(b) FROM bookings b WHERE id = ${id}`
        expect((yield* ledgerOf(id)).length).toBe(6)

        for (const status of ["HOLD", "ABANDONED"]) {
          const hold = yield* insertBooking({
            operatorId: w.alpha,
            status,
            bookedAt: null,
            commission: commission(99800)
          })
          expect(yield* ledgerOf(hold)).toEqual([])
          yield* sql`UPDATE bookings SET amount_minor = 1000 WHERE id = ${hold}`
          expect(yield* ledgerOf(hold)).toEqual([])
        }
        // A hold confirmed: its sale then.
        const hold = yield* insertBooking({
          operatorId: w.alpha,
          status: "HOLD",
          bookedAt: null,
          commission: commission(50000)
        })
        yield* sql`UPDATE bookings SET status = 'CONFIRMED', booked_at = now() WHERE id = ${hold}`
        expect(money(yield* ledgerOf(hold))).toEqual([["sale", 99800, 4000, 0]])
        // A booking without commission moves no commission.
        const plain = yield* insertBooking({ operatorId: w.alpha })
        yield* sql`UPDATE bookings SET status = 'CANCELLED' WHERE id = ${plain}`
        expect(yield* ledgerOf(plain)).toEqual([])
      }))

    it.effect("pay-later: the reserve fee; pending (draft) until the balance is collected; a cancel settles the sale", () =>
      Effect.gen(function*() {
        const w = yield* world
        const sql = yield* SqlClient.SqlClient
        const payLater = (paidAt: Date | null) => ({
          status: paidAt ? "collected" : "upcoming",
          amountMinor: 80000,
          currency: "NOK",
          chargeAt: at("2025-07-20T07:00:00Z"),
          paidAt
        })
        const open = yield* insertBooking({
          operatorId: w.alpha,
          amountMinor: 100000,
          commission: commission(100000),
          payLater: payLater(null),
          bookedAt: at("2025-07-03T12:00:00Z")
        })
        const other = yield* insertBooking({
          operatorId: w.alpha,
          amountMinor: 100000,
          commission: commission(100000),
          payLater: payLater(null),
          bookedAt: at("2025-07-04T12:00:00Z")
        })
        yield* insertBooking({
          operatorId: w.alpha,
          amountMinor: 50000,
          commission: commission(50000),
          bookedAt: at("2025-07-05T12:00:00Z")
        })
        expect(money(yield* ledgerOf(open))).toEqual([["sale", 100000, 8000, 20000]])
        const first = yield* statements("month=2025-07", w.key)
        expect(first.statements[0].draft).toBe(true)
        expect(first.statements[0].sections[0]).toMatchObject({ reserve_fee_minor: 40000, sales: 3 })

        // The balance collected (as the charger or a paid link writes it): final.
        yield* sql`UPDATE bookings SET pay_later_status = 'collected', pay_later_paid_at = now() WHERE id = ${open}`
        expect((yield* ledgerOf(open)).map((r) => r.pending)).toEqual([false])
        expect((yield* statements("month=2025-07", w.key)).statements[0].draft).toBe(true)
        // The other one cancelled before its balance was charged: its sale is settled by the cancel.
        yield* sql`UPDATE bookings SET status = 'CANCELLED', pay_later_status = 'cancelled' WHERE id = ${other}`
        expect((yield* ledgerOf(other)).map((r) => [r.type, r.pending, r.reserve_fee_minor])).toEqual([
          ["sale", false, 20000],
          ["cancellation", false, -20000]
        ])
        const last = yield* statements("month=2025-07", w.key)
        expect(last.statements[0].draft).toBe(false)
        expect(last.statements[0].number).toBe(first.statements[0].number)
      }))
    it.effect("a cancellation is pending (the statement a draft) while its refund settles at the provider", () =>
      Effect.gen(function*() {
        const w = yield* world
        const sql = yield* SqlClient.SqlClient
        const id = yield* insertBooking({
          operatorId: w.alpha,
          amountMinor: 99800,
          commission: commission(99800),
          bookedAt: at("2025-09-03T10:00:00Z")
        })
        // The cancel's records as the cancel feature writes them: its change, the payment, a refund settling.
        const [change] = yield* sql<{ id: string }>`
          INSERT INTO booking_changes (booking_id, kind, state, lease_until)
          VALUES (${id}, 'cancel', 'released', now() + interval '1 minute') RETURNING id`
        const [payment] = yield* sql<{ id: string }>`
          INSERT INTO booking_payments (booking_id, purpose, merchant_id, provider_order_id, amount_minor, currency, paid_at)
          VALUES (${id}, 'full', 'm-1', ${"o-" + id}, 99800, 'NOK', '2025-09-03T10:00:00Z') RETURNING id`
        yield* sql`
          INSERT INTO booking_refunds (change_id, booking_id, payment_id, seq, method, idempotency_reference, amount_minor, currency, state)
          VALUES (${change!.id}, ${id}, ${payment!.id}, 1, 'void', ${"r-" + id}, 99800, 'NOK', 'settling')`
        yield* sql`UPDATE bookings SET status = 'CANCELLED', updated_at = '2025-09-04T10:00:00Z' WHERE id = ${id}`
        const rows = yield* ledgerOf(id)
        expect(rows.map((r) => [r.type, r.pending])).toEqual([["sale", false], ["cancellation", true]])
        const month = monthOf(rows[1]!.occurred_at)
        const draft = yield* statements(`month=${month}`, w.key)
        expect(draft.statements[0].draft).toBe(true)
        // Settled: final, and the booking moves on to REFUNDED without another entry.
        yield* sql`UPDATE booking_refunds SET state = 'completed', refunded_minor = 99800 WHERE booking_id = ${id}`
        yield* sql`UPDATE bookings SET status = 'REFUNDED' WHERE id = ${id}`
        expect((yield* ledgerOf(id)).map((r) => [r.type, r.pending])).toEqual([["sale", false], [
          "cancellation",
          false
        ]])
        expect((yield* statements(`month=${month}`, w.key)).statements[0].draft).toBe(false)
      }))
  })

  describe("the statement", () => {
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
})
