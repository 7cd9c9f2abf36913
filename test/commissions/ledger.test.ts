/**
 * The commission ledger's writers (migration 0032: triggers on bookings) through the real server on a
 * fresh PostgreSQL, with the Bókun and Surfboard sandboxes for the writes that move bookings: a sale,
 * a cancel through the cancel endpoint, a reschedule through the reschedule endpoint (nothing), price
 * and commission changes, holds, pay-later pending until collected, a cancellation pending while its
 * refund settles; each as the month's statement shows it.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { sourceKey } from "../../src/commissions/ledger.js"
import { addDays } from "../../src/sandbox/bokun/index.js"
import { createKey, insertBooking } from "../support/fixtures.js"
import { call, type Reply } from "../support/http.js"
import { conforms, dereferencedSpec } from "../support/openapi.js"
import { linkedBooking, merchantFor, paidAtSandbox, paymentsEnv, vendorFor } from "../support/payments.js"
import {
  at,
  commission,
  expectAddsUp,
  financeWorld as world,
  ledgerOf,
  money,
  monthOf,
  statementsWith
} from "../support/statements.js"

const DAY = 86_400_000
const seen: Array<Reply> = []
const statements = statementsWith(seen)

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

layer(paymentsEnv(), { excludeTestServices: true, timeout: 180_000 })(
  "the commission ledger: one entry per booking event",
  (it) => {
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

    it.effect("every statements answer of this file matches the OpenAPI document", () =>
      Effect.gen(function*() {
        const spec = yield* dereferencedSpec
        expect(seen.length).toBeGreaterThan(5)
        for (const res of seen) conforms(spec, "get", "/api/v1/finance/statements", res)
      }))
  }
)
