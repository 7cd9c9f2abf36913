import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import fc from "fast-check"
import {
  CANCELLED_DETAIL,
  COLLECTED_BY_US_DETAIL,
  COLLECTED_DETAIL,
  decidePaymentLink,
  nextLinkCheck,
  NOTHING_OWED_DETAIL,
  owedAfterCollected,
  owedFromBalance,
  type PaymentLinkTarget,
  reusable
} from "../../../src/partner/paymentLinks/rules.js"

const service = (over: Partial<Extract<PaymentLinkTarget, { source: "service" }>> = {}): PaymentLinkTarget => ({
  source: "service",
  status: "CONFIRMED",
  paymentStrategy: "pay_later",
  payLaterStatus: "upcoming",
  payLaterAmountMinor: 30000,
  payLaterCurrency: "NOK",
  currency: "NOK",
  inBookingSystem: true,
  ...over
})

const refusal = (target: PaymentLinkTarget) => {
  const d = decidePaymentLink(target)
  return Either.isLeft(d) ? d.left.detail : null
}

describe("decidePaymentLink", () => {
  it("pay-later upcoming or failed: deferred_balance of the pay-later amount, the booking system not asked", () => {
    for (const payLaterStatus of ["upcoming", "failed"]) {
      for (const status of ["CONFIRMED", "RESERVED"]) {
        expect(decidePaymentLink(service({ payLaterStatus, status }))).toEqual(Either.right({
          _tag: "Owed",
          owed: { kind: "deferred_balance", amountMinor: 30000, currency: "NOK" }
        }))
      }
    }
    const eur = decidePaymentLink(service({ payLaterCurrency: null, currency: "EUR" }))
    expect(Either.isRight(eur) && eur.right._tag === "Owed" && eur.right.owed.currency).toBe("EUR")
  })

  it("cancelled or refunded bookings, cancelled rows and cancelled pay-later balances: cancelled", () => {
    for (const status of ["CANCELLED", "REFUNDED", "HOLD", "ABANDONED"]) {
      expect(refusal(service({ status }))).toBe(CANCELLED_DETAIL)
      expect(refusal(service({ status, paymentStrategy: "pay_now" }))).toBe(CANCELLED_DETAIL)
    }
    expect(refusal({ source: "booking_system", status: "CANCELLED" })).toBe(CANCELLED_DETAIL)
    expect(refusal(service({ payLaterStatus: "cancelled" }))).toBe(CANCELLED_DETAIL)
  })

  it("collected: refused; zero or unknown pay-later state: nothing owed", () => {
    expect(refusal(service({ payLaterStatus: "collected" }))).toBe(COLLECTED_DETAIL)
    expect(refusal(service({ payLaterAmountMinor: 0 }))).toBe(NOTHING_OWED_DETAIL)
    expect(refusal(service({ payLaterAmountMinor: null }))).toBe(NOTHING_OWED_DETAIL)
    expect(refusal(service({ payLaterStatus: "something_else" }))).toBe(NOTHING_OWED_DETAIL)
  })

  it("pay-now bookings and booking-system rows ask the booking system; pay-now unknown there owes nothing", () => {
    expect(decidePaymentLink(service({ paymentStrategy: "pay_now" }))).toEqual(
      Either.right({ _tag: "AskBookingSystem" })
    )
    expect(decidePaymentLink({ source: "booking_system", status: "RESERVED" })).toEqual(
      Either.right({ _tag: "AskBookingSystem" })
    )
    expect(refusal(service({ paymentStrategy: "pay_now", inBookingSystem: false }))).toBe(NOTHING_OWED_DETAIL)
  })
})

describe("owedFromBalance", () => {
  it("a positive due is a provider_balance of exactly that; zero or less is nothing owed", () => {
    fc.assert(fc.property(fc.integer({ min: -1_000_000, max: 1_000_000 }), (due) => {
      const owed = owedFromBalance({ dueMinor: due, currency: "EUR" })
      if (due > 0) expect(owed).toEqual(Either.right({ kind: "provider_balance", amountMinor: due, currency: "EUR" }))
      else expect(Either.isLeft(owed) && owed.left.detail).toBe(NOTHING_OWED_DETAIL)
    }))
  })
})

describe("reusable", () => {
  const now = new Date("2026-11-21T10:00:00Z")
  const owed = { kind: "deferred_balance" as const, amountMinor: 500, currency: "NOK" }
  const link = {
    state: "open" as const,
    amountMinor: 500,
    currency: "NOK",
    expiresAt: new Date("2026-11-28T10:00:00Z")
  }

  it("an open or creating link for the same amount and currency, not about to expire", () => {
    expect(reusable(link, owed, now)).toBe(true)
    expect(reusable({ ...link, state: "creating", expiresAt: null }, owed, now)).toBe(true)
    expect(reusable({ ...link, state: "closed" }, owed, now)).toBe(false)
    expect(reusable({ ...link, state: "closing" }, owed, now)).toBe(false)
    expect(reusable({ ...link, amountMinor: 501 }, owed, now)).toBe(false)
    expect(reusable({ ...link, currency: "EUR" }, owed, now)).toBe(false)
    expect(reusable({ ...link, expiresAt: new Date(now.getTime() + 30_000) }, owed, now)).toBe(false)
    expect(reusable({ ...link, expiresAt: new Date(now.getTime() + 120_000) }, owed, now)).toBe(true)
  })
})

describe("nextLinkCheck", () => {
  const now = new Date("2026-11-21T10:00:00Z")
  const MIN = 60_000

  it("5 minutes after the first check, doubling to an hour, with jitter between half and all of it", () => {
    const delays = (random: number) =>
      [1, 2, 3, 4, 5, 6, 10].map((n) => nextLinkCheck(n, null, now, random).getTime() - now.getTime())
    expect(delays(0.999999).map((d) => Math.round(d / MIN))).toEqual([5, 10, 20, 40, 60, 60, 60])
    expect(delays(0).map((d) => d / MIN)).toEqual([2.5, 5, 10, 20, 30, 30, 30])
  })

  it("never later than a minute past the link's expiry; an expired link backs off as usual", () => {
    const soon = new Date(now.getTime() + 2 * MIN)
    expect(nextLinkCheck(6, soon, now, 0.5).getTime()).toBe(soon.getTime() + MIN)
    const past = new Date(now.getTime() - MIN)
    expect(nextLinkCheck(1, past, now, 1 - Number.EPSILON).getTime() - now.getTime()).toBeGreaterThan(4 * MIN)
  })

  it("always in the future, never more than an hour away", () =>
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10_000 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (checks, random) => {
          const delay = nextLinkCheck(checks, null, now, random).getTime() - now.getTime()
          return delay >= 2.5 * MIN && delay <= 60 * MIN
        }
      )
    ))
})

describe("owedAfterCollected", () => {
  const owed = { kind: "provider_balance" as const, amountMinor: 99800, currency: "NOK" }
  const detail = (r: ReturnType<typeof owedAfterCollected>) => (Either.isLeft(r) ? r.left.detail : null)

  it("nothing collected by us: the booking system's amount", () => {
    expect(owedAfterCollected(owed, [])).toEqual(Either.right(owed))
    expect(owedAfterCollected(owed, [{ amountMinor: 0, currency: "EUR" }])).toEqual(Either.right(owed))
  })

  it("collected all of it (a desk sale the booking system shows unpaid) or more: refused", () => {
    expect(detail(owedAfterCollected(owed, [{ amountMinor: 99800, currency: "NOK" }]))).toBe(COLLECTED_BY_US_DETAIL)
    expect(
      detail(
        owedAfterCollected(owed, [{ amountMinor: 50000, currency: "NOK" }, { amountMinor: 60000, currency: "NOK" }])
      )
    )
      .toBe(COLLECTED_BY_US_DETAIL)
  })

  it("collected part: a link for the rest", () => {
    expect(owedAfterCollected(owed, [{ amountMinor: 19960, currency: "NOK" }])).toEqual(
      Either.right({ ...owed, amountMinor: 79840 })
    )
  })

  it("collected in another currency: refused, naming it", () => {
    expect(detail(owedAfterCollected(owed, [{ amountMinor: 100, currency: "EUR" }]))).toContain("EUR")
  })

  it("never more than the booking system asks, never zero or less", () =>
    fc.assert(fc.property(
      fc.integer({ min: 1, max: 10_000_000 }),
      fc.array(fc.integer({ min: 0, max: 10_000_000 }), { maxLength: 5 }),
      (due, paid) => {
        const r = owedAfterCollected(
          { ...owed, amountMinor: due },
          paid.map((amountMinor) => ({ amountMinor, currency: "NOK" }))
        )
        const total = paid.reduce((a, b) => a + b, 0)
        if (Either.isRight(r)) return r.right.amountMinor === due - total && r.right.amountMinor > 0
        return due - total <= 0
      }
    )))
})
