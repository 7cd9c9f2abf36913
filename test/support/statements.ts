/** Commission statements in tests: the read, the ledger rows of a booking, and the checks that sections add up. */
import { SqlClient } from "@effect/sql"
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { statementMonth } from "../../src/commissions/ledger.js"
import { createKey, makeWorld } from "./fixtures.js"
import { get, type Reply } from "./http.js"

/** GET /api/v1/finance/statements?<query>, expecting `status`; every answer is pushed to `seen`. */
export const statementsWith = (seen: Array<Reply>) => (query: string, key: string, status = 200) =>
  Effect.map(get(`/api/v1/finance/statements${query ? `?${query}` : ""}`, key), (res) => {
    seen.push(res)
    expect(res.status, res.text).toBe(status)
    return res.body
  })

export const at = (iso: string) => new Date(iso)
export const sum = (xs: ReadonlyArray<any>, f: (x: any) => number) => xs.reduce((n, x) => n + f(x), 0)
export const monthOf = statementMonth

/** A booking's commission at a rate, as `insertBooking` takes it. */
export const commission = (amountMinor: number, ratePercent = 8, currency = "NOK") => ({
  amountMinor: Math.round(amountMinor * ratePercent / 100),
  ratePercent,
  currency,
  status: "pending"
})

/** Every section adds up to its entries (when all are listed) and counts them by type. */
export const expectAddsUp = (body: any) => {
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
export const ledgerOf = (bookingId: string) =>
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

/** [type, gross, commission, reserve fee] of each row. */
export const money = (rows: ReadonlyArray<any>) =>
  rows.map((r) => [r.type, r.gross_minor, r.commission_minor, r.reserve_fee_minor])

/** A world (Alpha, Beta, Cetus) with a finance key over Alpha. */
export const financeWorld = Effect.gen(function*() {
  const w = yield* makeWorld
  const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["finance:read"] })
  return { ...w, key: key.token }
})
