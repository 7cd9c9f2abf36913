/** Cancel rules (src/partner/cancels/rules.ts): what goes back, void or refund by the UTC cut-off, and the §3 outcome. */
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import {
  type CancelFacts,
  cancelOutcome,
  paidMinor,
  type PaymentFacts,
  paymentsToRefund,
  type RefundFacts,
  refundMethod,
  refundReference
} from "../../../src/partner/cancels/rules.js"

const payNow: CancelFacts = {
  status: "CONFIRMED",
  amountMinor: 99800,
  currency: "NOK",
  paymentStrategy: "pay_now",
  payLaterStatus: null,
  payLaterAmountMinor: null
}
const payLater = (status: string): CancelFacts => ({
  ...payNow,
  paymentStrategy: "pay_later",
  payLaterStatus: status,
  payLaterAmountMinor: 79840
})

const payment = (amountMinor: number, o: Partial<PaymentFacts> = {}): PaymentFacts => ({
  id: `p-${amountMinor}`,
  amountMinor,
  currency: "NOK",
  paidAt: new Date("2026-11-20T10:00:00Z"),
  providerPaymentId: "pay_1",
  ...o
})

describe("paidMinor: what a full refund returns", () => {
  it("pay now: the whole price", () => expect(paidMinor(payNow)).toBe(99800))
  it("pay later, balance not collected (upcoming, failed): the reservation fee only", () => {
    expect(paidMinor(payLater("upcoming"))).toBe(19960)
    expect(paidMinor(payLater("failed"))).toBe(19960)
  })
  it("pay later, balance collected: fee and balance", () => expect(paidMinor(payLater("collected"))).toBe(99800))
  it("a free booking: nothing", () => expect(paidMinor({ ...payNow, amountMinor: 0 })).toBe(0))
})

describe("paymentsToRefund", () => {
  it("payments that add up to what was paid are refunded", () => {
    expect(paymentsToRefund(payLater("collected"), [payment(19960), payment(79840)])).toEqual(
      Either.right([payment(19960), payment(79840)])
    )
    expect(paymentsToRefund({ ...payNow, amountMinor: 0 }, [])).toEqual(Either.right([]))
  })
  it("nothing on record for a paid booking: refused, naming the amount", () => {
    const refused = paymentsToRefund(payNow, [])
    expect(Either.isLeft(refused)).toBe(true)
    expect(Either.getLeft(refused).pipe((o) => o._tag === "Some" ? o.value : "")).toContain(
      "no record of the payment of 99800"
    )
  })
  it("too little or too much on record: refused, never a partial or double refund", () => {
    expect(Either.isLeft(paymentsToRefund(payNow, [payment(50000)]))).toBe(true)
    expect(Either.isLeft(paymentsToRefund(payNow, [payment(99800), payment(100)]))).toBe(true)
    // An unpaid pay-later booking with the balance recorded as paid: the booking says otherwise.
    expect(Either.isLeft(paymentsToRefund(payLater("upcoming"), [payment(19960), payment(79840)]))).toBe(true)
  })
  it("a payment in another currency: refused", () => {
    expect(Either.isLeft(paymentsToRefund(payNow, [payment(99800, { currency: "EUR" })]))).toBe(true)
  })
})

describe("refundMethod: void the same UTC day before 23:00 UTC, refund after", () => {
  const at = (iso: string) => new Date(iso)
  it("just before and at the cut-off", () => {
    const p = payment(100, { paidAt: at("2026-11-21T08:00:00Z") })
    expect(refundMethod(p, at("2026-11-21T22:59:59.999Z"))).toBe("void")
    expect(refundMethod(p, at("2026-11-21T23:00:00Z"))).toBe("refund")
  })
  it("paid after the cut-off: already settling into the next batch, refund", () => {
    expect(refundMethod(payment(100, { paidAt: at("2026-11-21T23:30:00Z") }), at("2026-11-21T23:31:00Z"))).toBe(
      "refund"
    )
  })
  it("UTC days, not local days: paid 00:30 Oslo time (23:30 UTC the day before) is not voidable at 01:00 Oslo", () => {
    // 2026-11-22 00:30 in Oslo is 2026-11-21 23:30 UTC.
    expect(refundMethod(payment(100, { paidAt: at("2026-11-21T23:30:00Z") }), at("2026-11-22T00:00:00Z"))).toBe(
      "refund"
    )
  })
  it("on the day clocks change (Europe, 2026-03-29 and 2026-10-25) the cut-off stays 23:00 UTC", () => {
    for (const day of ["2026-03-29", "2026-10-25"]) {
      const p = payment(100, { paidAt: at(`${day}T00:30:00Z`) })
      expect(refundMethod(p, at(`${day}T22:59:00Z`))).toBe("void")
      expect(refundMethod(p, at(`${day}T23:00:00Z`))).toBe("refund")
    }
  })
  it("the next UTC day, and a payment without a provider payment id: refund", () => {
    expect(refundMethod(payment(100, { paidAt: at("2026-12-31T10:00:00Z") }), at("2027-01-01T00:00:01Z"))).toBe(
      "refund"
    )
    expect(
      refundMethod(
        payment(100, { providerPaymentId: null, paidAt: at("2026-11-21T08:00:00Z") }),
        at("2026-11-21T09:00:00Z")
      )
    ).toBe("refund")
  })
})

describe("cancelOutcome: the §3 table", () => {
  const row = (method: RefundFacts["method"], state: RefundFacts["state"], amountMinor = 100): RefundFacts => ({
    method,
    state,
    amountMinor,
    refundedMinor: state === "completed" ? amountMinor : 0
  })
  it("nothing to return: CANCELLED, none", () =>
    expect(cancelOutcome("CONFIRMED", [])).toEqual({ status: "CANCELLED", outcome: "none", alert: false }))
  it("every payment back (refunds completed, voids voided): REFUNDED, refunded", () => {
    expect(cancelOutcome("CONFIRMED", [row("refund", "completed"), row("void", "completed")]))
      .toEqual({ status: "REFUNDED", outcome: "refunded", alert: false })
    expect(cancelOutcome("RESERVED", [row("void", "superseded"), row("refund", "completed")]).status).toBe("REFUNDED")
  })
  it("only a void still settling: CANCELLED, pending, no alert", () =>
    expect(cancelOutcome("CONFIRMED", [row("void", "settling"), row("refund", "completed")]))
      .toEqual({ status: "CANCELLED", outcome: "pending", alert: false }))
  it("a refund without an answer, settling, refused, or the rest of a partial one open: live status kept, pending, alerted", () => {
    for (
      const open of [[row("refund", "requested")], [row("refund", "settling")], [row("refund", "failed")], [
        row("refund", "partial"),
        row("refund", "requested")
      ], [row("void", "requested")]]
    ) {
      expect(cancelOutcome("CONFIRMED", open)).toEqual({ status: "CONFIRMED", outcome: "pending", alert: true })
    }
    expect(cancelOutcome("RESERVED", [row("refund", "requested")]).status).toBe("RESERVED")
  })
  it("a partial refund followed by the rest: REFUNDED once the rest completed", () =>
    expect(cancelOutcome("CONFIRMED", [row("refund", "partial"), row("refund", "completed")]).status).toBe("REFUNDED"))
})

describe("refundReference", () => {
  it("names the change, the payment and the attempt: a new request never reuses one", () => {
    expect(refundReference("c1", "p1", 1)).toBe("cancel:c1:p1:1")
    expect(refundReference("c1", "p1", 2)).not.toBe(refundReference("c1", "p1", 1))
  })
})
