/** POST /book rules on their own: payment verification, refusal mapping, live price, phone, messages, and the ticket's lines. */
import { describe, expect, it } from "@effect/vitest"
import type { OrderStatus } from "../../../src/ports/PaymentProvider.js"
import { endpointBudgets } from "../../../src/quickbook/auth.js"
import {
  duplicateVariant,
  failedClerkMessage,
  failureOfRejection,
  liveTotal,
  PHONE_PATTERN,
  phoneRequired,
  refundReference,
  saleSettled,
  verifyPayment
} from "../../../src/quickbook/book/rules.js"

const paidAt = new Date("2026-11-21T10:00:00Z")
const order = (o: Partial<OrderStatus> = {}): OrderStatus => ({
  orderId: "o1",
  merchantId: "m1",
  terminalId: "t1",
  referenceId: "SVC-ABCDE12345",
  type: "purchase",
  purchaseOrderId: null,
  state: "paid",
  providerStatus: "PAYMENT_COMPLETED",
  amountMinor: 99800,
  currency: "NOK",
  paidMinor: 99800,
  paid: true,
  voided: false,
  paidAt,
  taxLines: [],
  payments: [{ paymentId: "p1", status: "completed", method: "CARD", amountMinor: 99800, failureReason: null }],
  transactions: [],
  ...o
})
const expected = {
  amountMinor: 99800,
  currency: "NOK",
  merchantId: "m1",
  reference: "SVC-ABCDE12345",
  terminalId: "t1"
}
const now = new Date("2026-11-21T10:05:00Z")

describe("verifyPayment", () => {
  it("verified when every field is the sale's", () => {
    expect(verifyPayment(order(), "p1", expected, now)).toEqual({
      _tag: "Verified",
      amountMinor: 99800,
      currency: "NOK",
      merchantId: "m1",
      terminalId: "t1",
      paidAt
    })
  })

  it("not found: another payment id, a payment not completed, a voided order, a return order", () => {
    expect(verifyPayment(order(), "p2", expected, now)._tag).toBe("NotFound")
    const failed = order({
      payments: [{ paymentId: "p1", status: "failed", method: "CARD", amountMinor: 99800, failureReason: "declined" }]
    })
    expect(verifyPayment(failed, "p1", expected, now)._tag).toBe("NotFound")
    expect(verifyPayment(order({ voided: true, paid: false }), "p1", expected, now)._tag).toBe("NotFound")
    expect(verifyPayment(order({ type: "return" }), "p1", expected, now)._tag).toBe("NotFound")
  })

  it("a mismatch names every field that differs", () => {
    const fieldsOf = (o: Partial<OrderStatus>, e = expected) => {
      const v = verifyPayment(order(o), "p1", e, now)
      return v._tag === "Mismatch" ? v.fields : v._tag
    }
    expect(fieldsOf({ amountMinor: 99700 })).toEqual(["amount"])
    expect(fieldsOf({ paid: false, paidMinor: 50000 })).toEqual(["amount"])
    expect(fieldsOf({ currency: "EUR" })).toEqual(["currency"])
    expect(fieldsOf({ merchantId: "m2", terminalId: "t9" })).toEqual(["merchant", "terminal"])
    expect(fieldsOf({ referenceId: null })).toEqual(["reference"])
    expect(fieldsOf({}, { ...expected, terminalId: null as unknown as string })).toEqual(["terminal"])
  })
})

describe("book rules", () => {
  it("booking-system refusals as failure reasons", () => {
    expect(failureOfRejection("no_seats")).toBe("sold_out")
    expect(failureOfRejection("price_changed")).toBe("price_changed")
    expect(failureOfRejection("hold_expired")).toBe("hold_expired")
    expect(failureOfRejection("hold_not_supported")).toBe("hold_not_supported")
    expect(failureOfRejection("invalid_phone")).toBe("phone_rejected")
    for (const other of ["not_allowed", "invalid", "not_found", "unauthorized"]) {
      expect(failureOfRejection(other)).toBe("provider_refused")
    }
  })

  it("live total at the departure's prices; undefined when a guest type has no price", () => {
    const guests = [{ type: "adult", label: "Adult", unitMinor: 49900 }, {
      type: "child",
      label: "Child",
      unitMinor: 24950
    }]
    const slot = { guests, bookingPriceMinor: null }
    expect(liveTotal([{ type: "adult", count: 2 }, { type: "child", count: 1 }], slot)).toBe(124750)
    expect(liveTotal([{ type: "senior", count: 1 }], slot)).toBeUndefined()
  })

  it("live total of a tour priced per booking: the booking price once, whatever the party (the quote's rule)", () => {
    const slot = {
      guests: [{ type: "adult", label: "Adult", unitMinor: 0 }, { type: "child", label: "Child", unitMinor: 0 }],
      bookingPriceMinor: 250000
    }
    expect(liveTotal([{ type: "adult", count: 3 }, { type: "child", count: 1 }], slot)).toBe(250000)
    expect(liveTotal([{ type: "adult", count: 1 }], slot)).toBe(250000)
    expect(liveTotal([{ type: "adult", count: 3 }], { ...slot, bookingPriceMinor: 270000 })).toBe(270000)
    expect(liveTotal([{ type: "senior", count: 1 }], slot)).toBeUndefined()
  })

  it("phone: required by the cart line or the tour; only international format", () => {
    expect(phoneRequired(false, false)).toBe(false)
    expect(phoneRequired(true, false)).toBe(true)
    expect(phoneRequired(false, true)).toBe(true)
    for (const ok of ["+4791234567", "+12025550123"]) expect(PHONE_PATTERN.test(ok)).toBe(true)
    for (const bad of ["91234567", "004791234567", "+47 912 34 567", "+0123456789", "+47", "+4791234567x"]) {
      expect(PHONE_PATTERN.test(bad), bad).toBe(false)
    }
  })

  it("refund references differ per attempt; the clerk message says where the money is, in both languages", () => {
    expect(refundReference("payprovider", "p1", 1)).not.toBe(refundReference("payprovider", "p1", 2))
    expect(failedClerkMessage("sold_out", true, "en")).toBe(
      "Not enough seats left on this departure. The payment has been returned to the card."
    )
    expect(failedClerkMessage("sold_out", false, "nb")).toContain("på vei tilbake")
    expect(failedClerkMessage("duplicate_payment", true, "en")).toMatch(
      /^This sale was already paid with another payment/
    )
  })

  it("a duplicate's lead follows its sale: stands only once confirmed, make a new quote once failed, still being booked otherwise", () => {
    expect(duplicateVariant("confirmed")).toBeUndefined()
    expect(duplicateVariant("failed")).toBe("sale_failed")
    for (const status of ["booking", "quoted", "held", null]) expect(duplicateVariant(status)).toBe("sale_booking")
    expect(saleSettled("confirmed") && saleSettled("failed")).toBe(true)
    expect(saleSettled("booking")).toBe(false)
    for (const lang of ["en", "nb"] as const) {
      expect(failedClerkMessage("duplicate_payment", false, lang, "sale_booking")).not.toBe(
        failedClerkMessage("duplicate_payment", false, lang)
      )
    }
    expect(failedClerkMessage("duplicate_payment", false, "en", "sale_booking")).not.toContain("stands")
  })

  it("POST /book spends the books budget", () => {
    expect(endpointBudgets.get("POST /api/quickbook/v1/book")).toBe("books")
  })
})
