import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { lastMonth, monthPeriod, statements, tooMany } from "../../../../src/partner/finance/statements/rules.js"

describe("statement rules", () => {
  it("a month's UTC bounds, the end exclusive (December into January)", () => {
    const dec = Either.getOrThrow(monthPeriod("2025-12"))
    expect([dec.start.toISOString(), dec.end.toISOString()]).toEqual([
      "2025-12-01T00:00:00.000Z",
      "2026-01-01T00:00:00.000Z"
    ])
    expect(Either.getOrThrow(monthPeriod("9998-12")).end.toISOString()).toBe("9999-01-01T00:00:00.000Z")
    const feb = Either.getOrThrow(monthPeriod("2024-02"))
    expect(feb.end.toISOString()).toBe("2024-03-01T00:00:00.000Z")
    for (const bad of ["2025-13", "2025-00", "2025-1", "1969-12", "9999-01", "9999-12", "2025-01-01", ""]) {
      const r = monthPeriod(bad)
      expect(Either.isLeft(r), bad).toBe(true)
      if (Either.isLeft(r)) expect(r.left.field).toBe("month")
    }
  })

  it("the default month is the one before the current UTC month", () => {
    expect(lastMonth(Date.parse("2026-01-01T00:00:00.000Z"))).toBe("2025-12")
    expect(lastMonth(Date.parse("2025-12-31T23:59:59.999Z"))).toBe("2025-11")
    expect(lastMonth(Date.parse("2026-03-31T12:00:00Z"))).toBe("2026-02")
  })

  it("more than 6 operators is too many", () => {
    expect(tooMany(6)).toBe(false)
    expect(tooMany(7)).toBe(true)
  })

  it("statements: operators with entries only, by name; draft when any section is pending", () => {
    const section = (operator_id: string, currency: string, pending: boolean) => ({
      operator_id,
      currency,
      sales: 1,
      cancellations: 0,
      differences: 0,
      gross_minor: 100,
      commission_minor: 8,
      reserve_fee_minor: 0,
      entries_total: 1,
      pending
    })
    const out = statements({
      partners: [{ id: "b", name: "Zeta" }, { id: "a", name: "Alpha" }, { id: "c", name: "Empty" }],
      numbers: new Map([["a", "CS-202501-0002"], ["b", "CS-202501-0001"]]),
      sections: [section("b", "NOK", false), section("a", "NOK", false), section("a", "EUR", true)],
      entries: [{
        operator_id: "a",
        type: "sale",
        occurred_at: new Date("2025-01-02T00:00:00Z"),
        currency: "EUR",
        confirmation_code: "X",
        tour: "T",
        experience_date: null,
        gross_minor: 100,
        commission_rate_percent: 8,
        commission_minor: 8,
        reserve_fee_minor: 0
      }]
    })
    expect(out.map((s) => [s.partner.name, s.number, s.draft, s.sections.map((x) => x.currency)])).toEqual([
      ["Alpha", "CS-202501-0002", true, ["EUR", "NOK"]],
      ["Zeta", "CS-202501-0001", false, ["NOK"]]
    ])
    expect(out[0]!.sections[0]!.entries[0]!.occurred_at).toBe("2025-01-02T00:00:00.000Z")
  })
})
