/** The settlement rules (pure): adjustments, chargebacks of a report, the import's start, the file, dispute facts. */
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { adjustmentType } from "../../src/partner/finance/payouts/rules.js"
import type { SettlementCharge, SettlementReport } from "../../src/ports/PaymentProvider.js"
import {
  adjustmentsOf,
  chargebacksOf,
  checkDisputeFacts,
  importFrom,
  parseSettlementFile,
  sortAtOf
} from "../../src/settlements/rules.js"

const charge = (c: Partial<SettlementCharge>): SettlementCharge => ({
  chargeId: "c",
  type: "CHARGEBACK",
  description: "Chargeback",
  date: null,
  debitMinor: 0,
  creditMinor: 0,
  orderId: null,
  paymentId: null,
  referenceId: null,
  transactionDate: null,
  transactionAmountMinor: null,
  transactionCurrency: null,
  ...c
})

const report: SettlementReport = {
  payoutId: "po1",
  merchantId: "m1",
  settlementDate: "2026-03-02",
  transactionsFrom: "2026-03-01",
  transactionsTo: "2026-03-01",
  reportType: "DAILY",
  currency: "NOK",
  salesMinor: 1000,
  refundsMinor: 0,
  feesMinor: 10,
  payoutMinor: 990,
  pdfUrl: null
}

describe("settlement rules", () => {
  it("adjustments: net is credit minus debit", () => {
    expect(adjustmentsOf([charge({ debitMinor: 500 }), charge({ creditMinor: 200, type: "X" })]).map((a) => a.netMinor))
      .toEqual([-500, 200])
  })

  it("chargebacks: each CHARGEBACK with the fee charged for the same payment or order", () => {
    const found = chargebacksOf("m1", report, {
      payoutId: "po1",
      feeVatMinor: 0,
      charges: [
        charge({
          chargeId: "a",
          paymentId: "p1",
          debitMinor: 900,
          transactionAmountMinor: 900,
          transactionCurrency: "NOK"
        }),
        charge({ chargeId: "fa", type: "CHARGEBACK_FEE", paymentId: "p1", debitMinor: 150 }),
        charge({
          chargeId: "b",
          orderId: "o2",
          debitMinor: 300,
          transactionAmountMinor: 30,
          transactionCurrency: "EUR"
        }),
        charge({ chargeId: "fb", type: "CHARGEBACK_FEE", orderId: "o2", debitMinor: 150 }),
        charge({ chargeId: "c", paymentId: "p3", debitMinor: 100 }),
        charge({ chargeId: "x", type: "PARTNER_FEE", paymentId: "p3", debitMinor: 7 })
      ]
    })
    expect(found.map((c) => [c.sourceKey, c.settledAmountMinor, c.settledFeeMinor, c.feeMinor, c.currency])).toEqual([
      ["charge:m1:po1:a", 900, 150, 150, "NOK"],
      ["charge:m1:po1:b", 300, 150, null, "EUR"],
      ["charge:m1:po1:c", 100, null, null, null]
    ])
    expect(found[0]!.settledOn).toBe("2026-03-02")
  })

  it("payouts sort by settlement day, else by import time; the import starts at the last day or firstDays back", () => {
    expect(sortAtOf(report, new Date(0)).toISOString()).toBe("2026-03-02T00:00:00.000Z")
    expect(sortAtOf({ settlementDate: null }, new Date(5)).getTime()).toBe(5)
    expect(importFrom("2026-03-02", "2026-11-27", 400)).toBe("2026-03-02")
    expect(importFrom(null, "2026-03-02", 1)).toBe("2026-03-01")
  })

  it("a settlement file: refunds stored negative, currency NOK by default; anything else is refused with the reason", () => {
    const ok = parseSettlementFile({
      merchantId: "m1",
      reports: [{ payoutId: "p", totalSale: 10, totalRefund: 3, fee: 1, feeVat: 0, payout: 6, charges: [] }]
    })
    expect(Either.getOrThrow(ok).reports[0]!.report).toEqual(expect.objectContaining({
      refundsMinor: -3,
      currency: "NOK",
      settlementDate: null
    }))
    for (
      const bad of [
        {},
        {
          merchantId: "m1",
          reports: [{ payoutId: "p", totalSale: 1.5, totalRefund: 0, fee: 0, feeVat: 0, payout: 0 }]
        },
        { merchantId: "m1", reports: [{ payoutId: "p", totalSale: 1, totalRefund: -1, fee: 0, feeVat: 0, payout: 0 }] },
        {
          merchantId: "m1",
          reports: [{
            payoutId: "p",
            settlementDate: "2.3.2026",
            totalSale: 1,
            totalRefund: 0,
            fee: 0,
            feeVat: 0,
            payout: 0
          }]
        },
        { merchantId: "m1", reports: [], extra: true }
      ]
    ) {
      expect(Either.isLeft(parseSettlementFile(bad))).toBe(true)
    }
  })

  it("dispute facts: at least one; known statuses; real days; clearing", () => {
    expect(Either.isLeft(checkDisputeFacts({}))).toBe(true)
    expect(Either.isLeft(checkDisputeFacts({ disputeStatus: "maybe" }))).toBe(true)
    expect(Either.isLeft(checkDisputeFacts({ respondBy: "2026-02-30" }))).toBe(true)
    expect(Either.isLeft(checkDisputeFacts({ disputeReference: " " }))).toBe(true)
    expect(Either.getOrThrow(checkDisputeFacts({ disputeStatus: "won", clear: ["reason"] }))).toEqual({
      disputeReference: undefined,
      disputeStatus: "won",
      reason: null,
      respondBy: undefined,
      registeredAt: undefined
    })
  })

  it("adjustment types as the API names them", () => {
    expect(adjustmentType("SERVICE_PROVIDER_FEE")).toBe("service_provider_fee")
    expect(adjustmentType("Chargeback Fee")).toBe("chargeback_fee")
    expect(adjustmentType("  --  ")).toBe("other")
  })
})
