import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import fc from "fast-check"
import {
  type ChannelDayRow,
  checkSalesRange,
  type LedgerCoverage,
  ledgerGaps,
  otherChannelFigures,
  ownDaysJson,
  ownSales,
  salesSummary,
  salesSummaryJson
} from "../../../src/partner/sales/rules.js"
import { makeRateTable } from "../../../src/rates/rules.js"

const day = fc.integer({ min: 0, max: 30 }).map((n) => `2026-01-${String(n + 1).padStart(2, "0")}`)
const row = fc.record({
  day,
  label: fc.constantFrom("Viator", "GetYourGuide", "Expedia", "Direct"),
  currency: fc.constantFrom("NOK", "EUR", "USD"),
  bookings: fc.integer({ min: 0, max: 50 }),
  participants: fc.integer({ min: 0, max: 200 }),
  revenue_minor: fc.integer({ min: 0, max: 10_000_000 })
})
/** A conversion that rounds (so rounding is exercised): EUR × 11.37, USD × 10.51. */
const convert = (amount: number, currency: string) =>
  currency === "NOK" ? amount : Math.round(amount * (currency === "EUR" ? 11.37 : 10.51))

describe("sales rules", () => {
  it("other-channel days and channels add up to the totals after conversion", () =>
    fc.assert(fc.property(fc.array(row, { maxLength: 60 }), (rows: Array<ChannelDayRow>) => {
      const figures = Either.getOrThrow(otherChannelFigures(rows, convert))
      const total = (xs: ReadonlyArray<{ revenue_minor: number; bookings: number }>) =>
        xs.reduce((n, x) => ({ revenue_minor: n.revenue_minor + x.revenue_minor, bookings: n.bookings + x.bookings }), {
          revenue_minor: 0,
          bookings: 0
        })
      expect(total(figures.days)).toEqual({
        revenue_minor: figures.totals.revenue_minor,
        bookings: figures.totals.bookings
      })
      expect(total(figures.channels)).toEqual({
        revenue_minor: figures.totals.revenue_minor,
        bookings: figures.totals.bookings
      })
      expect(figures.channels.reduce((n, c) => n + c.participants, 0)).toBe(figures.totals.participants)
      expect(figures.days.map((d) => d.date)).toEqual([...new Set(figures.days.map((d) => d.date))].sort())
    })))

  it("a missing rate gives no figures, naming each currency and day once", () => {
    const rows: Array<ChannelDayRow> = [
      { day: "2026-01-02", label: "Viator", currency: "EUR", bookings: 1, participants: 2, revenue_minor: 100 },
      { day: "2026-01-02", label: "Expedia", currency: "EUR", bookings: 1, participants: 2, revenue_minor: 100 },
      { day: "2026-01-03", label: "Viator", currency: "NOK", bookings: 1, participants: 2, revenue_minor: 100 }
    ]
    const result = otherChannelFigures(rows, (amount, currency) => currency === "EUR" ? null : amount)
    expect(result).toEqual(Either.left([{ currency: "EUR", day: "2026-01-02" }]))
  })

  it("own sales: totals per currency and operator are the sums of the days", () =>
    fc.assert(fc.property(
      fc.array(
        fc.record({
          day,
          currency: fc.constantFrom("NOK", "EUR"),
          operator_id: fc.constantFrom("a", "b"),
          bookings: fc.integer({ min: 1, max: 9 }),
          revenue_minor: fc.integer({ min: 0, max: 1_000_000 })
        }),
        { maxLength: 40 }
      ),
      (rows) => {
        const { days, totals } = ownSales(rows, (id) => ({ id, name: id.toUpperCase() }))
        expect(days).toHaveLength(rows.length)
        for (const t of totals) {
          const mine = days.filter((d) => d.currency === t.currency && d.partner.id === t.partner.id)
          expect(mine.reduce((n, d) => n + d.revenue_minor, 0)).toBe(t.revenue_minor)
          expect(mine.reduce((n, d) => n + d.bookings, 0)).toBe(t.bookings)
        }
        expect(totals.reduce((n, t) => n + t.bookings, 0)).toBe(rows.reduce((n, r) => n + r.bookings, 0))
      }
    )))

  describe("the answer as JSON text (what GET /sales sends)", () => {
    const operator = fc.constantFrom("a", "b", "c", "d")
    const ownRow = fc.record({
      day,
      currency: fc.constantFrom("NOK", "EUR", "SEK"),
      operator_id: operator,
      bookings: fc.integer({ min: 0, max: 99 }),
      revenue_minor: fc.integer({ min: -1_000_000, max: 1e12 })
    })
    // Names that need escaping, and an operator of the rows the key does not name ("d": `{id, name: id}`).
    const partners = [
      { id: "a", name: "Fjord \"Explorer\" AS" },
      { id: "b", name: "Ålesund\\Bølge\nTurer" },
      { id: "c", name: "Tromsø 🐋 Safari" }
    ]
    const account = fc.record({
      account_id: fc.constantFrom("x", "y"),
      operator_ids: fc.subarray(["a", "b", "c", "d"], { minLength: 1 }),
      covered_from: fc.constantFrom("2025-06-01", "2026-01-15", null),
      covered_until: fc.constantFrom(new Date("2026-02-01T10:00:00Z"), null),
      last_outcome: fc.constantFrom("ok", "failed", null),
      last_attempt_at: fc.constantFrom(new Date("2026-02-01T10:00:00Z"), null)
    })
    const input = fc.record({
      own: fc.array(ownRow, { maxLength: 80 }).map((rows) =>
        [...rows].sort((x, y) => x.day.localeCompare(y.day) || x.operator_id.localeCompare(y.operator_id))
      ),
      channelRows: fc.array(row, { maxLength: 60 }),
      accounts: fc.array(account, { maxLength: 3 }),
      currency: fc.constantFrom("NOK" as const, "EUR" as const),
      withRates: fc.boolean()
    }).map(({ accounts, withRates, ...rest }) => ({
      ...rest,
      from: "2026-01-01",
      to: "2026-01-31",
      partners,
      accounts: accounts as Array<LedgerCoverage>,
      gaps: ledgerGaps(accounts, { from: "2026-01-01", to: "2026-01-31" }, new Date("2026-02-01T10:10:00Z"), 3_600_000),
      // EUR and NOK on most days (a weekend or a gap leaves some without), never USD: missing rates happen.
      table: withRates
        ? makeRateTable(
          Array.from({ length: 31 }, (_, n) => `2026-01-${String(n + 1).padStart(2, "0")}`)
            .filter((_, n) => n % 9 !== 4)
            .map((d, n) => ({ currency: "EUR", day: d, nokPerUnit: 11.2 + n / 97 }))
        )
        : null
    }))

    it("property: the very text of JSON.stringify(salesSummary), for any rows, gaps and rates", () =>
      fc.assert(fc.property(input, (i) => {
        const text = salesSummaryJson(i)
        expect(text).toBe(JSON.stringify(salesSummary(i)))
        // Every figure is there: the own days are the rows, their totals add up, each day names its operator.
        const body = JSON.parse(text)
        expect(body.panion.days.map((d: any) => [d.date, d.revenue_minor, d.bookings, d.currency, d.partner.id]))
          .toEqual(i.own.map((r) => [r.day, r.revenue_minor, r.bookings, r.currency, r.operator_id]))
        for (const t of body.panion.totals) {
          const mine = body.panion.days.filter((d: any) => d.currency === t.currency && d.partner.id === t.partner.id)
          expect(mine.reduce((n: number, d: any) => n + d.revenue_minor, 0)).toBe(t.revenue_minor)
          expect(mine.reduce((n: number, d: any) => n + d.bookings, 0)).toBe(t.bookings)
        }
      })))

    it("own days: the fields of each day in the schema's order, the operator's object as the key has it", () => {
      const text = ownDaysJson(
        [
          { day: "2026-01-01", currency: "NOK", operator_id: "a", bookings: 2, revenue_minor: 259000 },
          { day: "2026-01-01", currency: "EUR", operator_id: "d", bookings: 1, revenue_minor: -50 }
        ],
        (id) => partners.find((p) => p.id === id) ?? { id, name: id }
      )
      expect(text).toBe(
        `[{"date":"2026-01-01","revenue_minor":259000,"bookings":2,"currency":"NOK","partner":{"id":"a","name":"Fjord \\"Explorer\\" AS"}},` +
          `{"date":"2026-01-01","revenue_minor":-50,"bookings":1,"currency":"EUR","partner":{"id":"d","name":"d"}}]`
      )
      expect(ownDaysJson([], () => partners[0]!)).toBe("[]")
    })
  })

  it("the range: inclusive, at most 366 days counting both ends", () => {
    expect(checkSalesRange("2026-01-01", "2026-01-01")).toEqual(Either.right(1))
    expect(checkSalesRange("2025-01-01", "2026-01-01")).toEqual(Either.right(366))
    expect(Either.isLeft(checkSalesRange("2025-01-01", "2026-01-02"))).toBe(true)
    expect(Either.isLeft(checkSalesRange("2026-01-02", "2026-01-01"))).toBe(true)
  })

  describe("ledger gaps", () => {
    const now = new Date("2026-11-26T12:00:00Z")
    const account = {
      account_id: "acc",
      operator_ids: ["a"],
      covered_from: "2025-10-22",
      covered_until: new Date("2026-11-26T11:58:00Z"),
      last_outcome: "ok",
      last_attempt_at: new Date("2026-11-26T11:58:00Z")
    }
    const range = { from: "2026-11-01", to: "2026-11-26" }
    const reasons = (a: typeof account, r = range) => ledgerGaps([a], r, now, 30 * 60_000).map((g) => g.reason)
    it("a complete, fresh ledger has none", () => expect(reasons(account)).toEqual([]))
    it("a failed last read", () => expect(reasons({ ...account, last_outcome: "failed" })).toEqual(["refresh_failed"]))
    it("never read", () => expect(reasons({ ...account, covered_from: null as any })).toEqual(["not_read_yet"]))
    it("read from a later day", () =>
      expect(reasons(account, { from: "2025-10-21", to: "2025-10-30" })).toEqual(["not_covered"]))
    it("stale only for a range reaching its last day", () => {
      const old = { ...account, covered_until: new Date("2026-11-25T23:00:00Z") }
      expect(reasons(old)).toEqual(["stale"])
      expect(reasons(old, { from: "2026-11-01", to: "2026-11-24" })).toEqual([])
    })
  })
})
