import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import * as fc from "fast-check"
import {
  addDays,
  type CloseEntry,
  creditLines,
  decimalComma,
  documentNumber,
  invoiceLines,
  monthEnd,
  nextMonth,
  previousMonth,
  statusOf,
  totalsOf,
  vatNumberOf,
  vatOf
} from "../../src/invoices/rules.js"
import { checkPeriods } from "../../src/partner/finance/invoices/rules.js"

const entry = (over: Partial<CloseEntry>): CloseEntry => ({
  id: "e",
  booking_id: "b",
  operator_id: "o",
  type: "sale",
  occurred_at: new Date("2026-10-01T10:00:00Z"),
  currency: "NOK",
  gross_minor: 100000,
  commission_rate_percent: 15,
  commission_minor: 15000,
  confirmation_code: "C",
  tour: "T",
  experience_date: "2026-10-02",
  ...over
})

describe("invoice rules", () => {
  it("VAT rounds half away from zero, so a credit mirrors its invoice", () => {
    expect(vatOf(12345, 25)).toBe(3086)
    expect(vatOf(5003, 25)).toBe(1251)
    expect(vatOf(2, 25)).toBe(1) // 0.5 → 1
    fc.assert(fc.property(fc.integer({ min: -1e9, max: 1e9 }), (n) => vatOf(-n, 25) === -vatOf(n, 25)))
  })

  it("totals are the sums of the lines; payable is gross minus deducted; status", () => {
    const t = totalsOf([{ netMinor: 100, vatMinor: 25, deductedMinor: 100 }, {
      netMinor: 3,
      vatMinor: 1,
      deductedMinor: 3
    }])
    expect(t).toEqual({ netMinor: 103, vatMinor: 26, grossMinor: 129, deductedMinor: 103, payableMinor: 26 })
    expect(statusOf("invoice", 26)).toBe("open")
    expect(statusOf("invoice", 0)).toBe("settled")
    expect(statusOf("credit_note", -26)).toBe("credited")
  })

  it("an invoice line per booking and currency; a credit line per booking correcting the latest invoice, with the fee kept", () => {
    const entries = [
      entry({ id: "1", booking_id: "a", commission_minor: 1000 }),
      entry({ id: "2", booking_id: "a", type: "difference", commission_minor: 200 }),
      entry({ id: "3", booking_id: "b", commission_minor: 500, currency: "EUR" }),
      entry({ id: "4", booking_id: "c", type: "cancellation", commission_minor: -700 }),
      entry({ id: "5", booking_id: "d", type: "cancellation", commission_minor: -100 })
    ]
    const inv = invoiceLines(entries, 25)
    expect([...inv.keys()].sort()).toEqual(["EUR", "NOK"])
    expect(inv.get("NOK")!.map((l) => [l.bookingId, l.netMinor, l.vatMinor, l.entryIds])).toEqual([["a", 1200, 300, [
      "1",
      "2"
    ]]])
    const credits = creditLines(entries, 25, (booking) =>
      booking === "c"
        ? { invoiceId: "i", invoiceNumber: "INV-1", lineNetMinor: 1000, billedNetMinor: 1000, creditedNetMinor: 0 }
        : undefined)
    expect(
      credits.get("NOK")!.map((
        l
      ) => [l.bookingId, l.netMinor, l.correctsInvoiceId, l.originalNetMinor, l.cancellationFeeMinor])
    )
      .toEqual([["c", -700, "i", 1000, 300]])
  })

  it("months, days, numbers and printed forms", () => {
    expect(nextMonth("2025-12")).toBe("2026-01")
    expect(previousMonth("2026-01")).toBe("2025-12")
    expect(monthEnd("2024-02")).toBe("2024-02-29")
    expect(addDays("2026-12-25", 14)).toBe("2027-01-08")
    expect(documentNumber("INV-", 42)).toBe("INV-000042")
    expect(vatNumberOf("999999999")).toBe("NO 999 999 999 MVA")
    expect(decimalComma(-12345)).toBe("-123,45")
    expect(decimalComma(5)).toBe("0,05")
  })

  it("period_from..period_to: in order, at most 12 months", () => {
    expect(Either.isRight(checkPeriods({ period_from: "2025-01", period_to: "2025-12" }))).toBe(true)
    expect(Either.isLeft(checkPeriods({ period_from: "2025-01", period_to: "2026-01" }))).toBe(true)
    expect(Either.isLeft(checkPeriods({ period_from: "2025-02", period_to: "2025-01" }))).toBe(true)
    expect(Either.isRight(checkPeriods({ period_from: "2025-02" }))).toBe(true)
  })
})
