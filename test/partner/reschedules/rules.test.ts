import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import fc from "fast-check"
import {
  checkReschedulable,
  dayOptions,
  decideMove,
  hasStarted,
  isAlreadyOn,
  isOnTarget,
  localMinuteAt,
  NOT_AVAILABLE,
  NOT_RESCHEDULABLE,
  partyPrice,
  samePrice,
  UNLIMITED_REMAINING
} from "../../../src/partner/reschedules/rules.js"
import type { BookingLine, DepartureAvailability } from "../../../src/ports/BookingSystem.js"

const TZ = "Europe/Oslo"
// 2026-11-21 09:00 in Oslo (UTC+1).
const NOW = new Date("2026-11-21T08:00:00Z")

const line: BookingLine = {
  lineId: "L1",
  bookingId: "B1",
  bookingReference: "BKN-1",
  externalReference: "ABC",
  status: "CONFIRMED",
  productId: "P1",
  productTitle: "Harbour Cruise",
  rateId: "R1",
  rateTitle: "Standard",
  startTimeId: "S10",
  date: "2026-11-25",
  startTime: "10:00",
  participants: 3,
  pax: [{ pricingCategoryId: "A", title: "Adult", quantity: 2 }, {
    pricingCategoryId: "C",
    title: "Child",
    quantity: 1
  }],
  channel: { class: "service", source: null, title: null },
  guest: { name: null, email: null, phone: null },
  pickup: null,
  paymentStatus: "PAID",
  totalMinor: 2 * 500 + 250,
  currency: "NOK",
  createdAt: NOW,
  updatedAt: null
}

const rates = (standard = { A: 500, C: 250 }, lunch = { A: 700, C: 350 }) => [
  {
    rateId: "R1",
    title: "Standard",
    prices: [{ pricingCategoryId: "A", amountMinor: standard.A, currency: "NOK" }, {
      pricingCategoryId: "C",
      amountMinor: standard.C,
      currency: "NOK"
    }]
  },
  {
    rateId: "R2",
    title: "With lunch",
    prices: [{ pricingCategoryId: "A", amountMinor: lunch.A, currency: "NOK" }, {
      pricingCategoryId: "C",
      amountMinor: lunch.C,
      currency: "NOK"
    }]
  }
]

const dep = (
  date: string,
  id: string,
  time: string | null,
  seatsLeft: number | null,
  r = rates()
): DepartureAvailability => ({
  date,
  startTimeId: id,
  startTime: time,
  seatsLeft,
  soldOut: seatsLeft === 0,
  rates: r
})

const facts = {
  status: "CONFIRMED",
  experienceDate: "2026-11-25",
  startTime: "10:00",
  timezone: TZ,
  linked: true,
  paymentStrategy: "pay_now" as const,
  payLaterChargeAt: null,
  payLaterPaidAt: null
}

describe("reschedule eligibility", () => {
  it("a live, linked, future booking can move", () => {
    expect(checkReschedulable(facts, NOW)).toEqual(Either.right(undefined))
    expect(checkReschedulable({ ...facts, status: "RESERVED" }, NOW)).toEqual(Either.right(undefined))
  })

  it("each reason it cannot, with its own detail", () => {
    expect(checkReschedulable({ ...facts, status: "CANCELLED" }, NOW)).toEqual(Either.left(NOT_RESCHEDULABLE.cancelled))
    expect(checkReschedulable({ ...facts, status: "REFUNDED" }, NOW)).toEqual(Either.left(NOT_RESCHEDULABLE.cancelled))
    expect(checkReschedulable({ ...facts, linked: false }, NOW)).toEqual(Either.left(NOT_RESCHEDULABLE.notLinked))
    expect(checkReschedulable({ ...facts, experienceDate: "2026-11-21", startTime: "09:00" }, NOW))
      .toEqual(Either.left(NOT_RESCHEDULABLE.started))
    const payLater = { ...facts, paymentStrategy: "pay_later" as const }
    expect(checkReschedulable({ ...payLater, payLaterChargeAt: new Date(NOW.getTime() + 23 * 3_600_000) }, NOW))
      .toEqual(Either.left(NOT_RESCHEDULABLE.payLater))
    expect(checkReschedulable({ ...payLater, payLaterChargeAt: new Date(NOW.getTime() - 3_600_000) }, NOW))
      .toEqual(Either.left(NOT_RESCHEDULABLE.payLater))
    // Far enough from the charge, or already paid: fine.
    expect(checkReschedulable({ ...payLater, payLaterChargeAt: new Date(NOW.getTime() + 25 * 3_600_000) }, NOW))
      .toEqual(Either.right(undefined))
    expect(checkReschedulable({ ...payLater, payLaterChargeAt: NOW, payLaterPaidAt: NOW }, NOW)).toEqual(
      Either.right(undefined)
    )
  })

  it("started means the local start time has been reached, in the tour's zone", () => {
    expect(localMinuteAt(TZ, NOW)).toBe("2026-11-21T09:00")
    expect(hasStarted("2026-11-21", "09:00", TZ, NOW)).toBe(true)
    expect(hasStarted("2026-11-21", "09:01", TZ, NOW)).toBe(false)
    expect(hasStarted("2026-11-21", null, TZ, NOW)).toBe(true)
    expect(hasStarted("2026-11-21", "08:30", "Europe/Lisbon", NOW)).toBe(false)
  })
})

/** A private tour: one category "G", the rate's price is for the whole party. */
const privateLine = (guests: number, totalMinor = 250000): BookingLine => ({
  ...line,
  participants: guests,
  pax: [{ pricingCategoryId: "G", title: "Guest", quantity: guests }],
  totalMinor
})
const privateRate = (amountMinor: number, currency = "NOK") => ({
  rateId: "R1",
  title: "Private",
  prices: [{ pricingCategoryId: "G", amountMinor, currency }],
  pricePerBooking: { amountMinor, currency }
})

/** A party of adults and children and the per-guest prices of its categories. */
const arbParty = fc.record({
  adults: fc.integer({ min: 0, max: 20 }),
  children: fc.integer({ min: 0, max: 20 }),
  adult: fc.integer({ min: 0, max: 1_000_000 }),
  child: fc.integer({ min: 0, max: 1_000_000 })
}).filter((p) => p.adults + p.children > 0)

const perGuest = (p: { adults: number; children: number; adult: number; child: number }) => {
  const pax = [
    { pricingCategoryId: "A", title: "Adult", quantity: p.adults },
    { pricingCategoryId: "C", title: "Child", quantity: p.children }
  ]
  const prices = [{ pricingCategoryId: "A", amountMinor: p.adult, currency: "NOK" }, {
    pricingCategoryId: "C",
    amountMinor: p.child,
    currency: "NOK"
  }]
  const booked: BookingLine = {
    ...line,
    participants: p.adults + p.children,
    pax,
    totalMinor: p.adults * p.adult + p.children * p.child
  }
  return { booked, rate: { rateId: "R1", title: "Standard", prices } }
}

describe("same price", () => {
  it("the party's price from unit prices per category", () => {
    expect(partyPrice(line.pax, rates()[0]!, "NOK")).toBe(1250)
    expect(partyPrice(line.pax, { prices: [{ pricingCategoryId: "A", amountMinor: 500, currency: "NOK" }] }, "NOK"))
      .toBeNull()
  })

  it("a rate priced per booking costs its one price whatever the party's size", () => {
    expect(partyPrice(privateLine(3).pax, privateRate(250000), "NOK")).toBe(250000)
    expect(samePrice(privateLine(3), privateRate(250000))).toBe(true)
    expect(samePrice(privateLine(1), privateRate(250000))).toBe(true)
    expect(samePrice(privateLine(3), privateRate(260000))).toBe(false)
    // A rate that lists no per-guest prices sells any category for its one price.
    expect(samePrice(privateLine(3), { prices: [], pricePerBooking: { amountMinor: 250000, currency: "NOK" } })).toBe(
      true
    )
    // A category the rate does not sell is no price at all.
    expect(
      partyPrice(
        [...privateLine(3).pax, { pricingCategoryId: "X", title: "Pet", quantity: 1 }],
        privateRate(250000),
        "NOK"
      )
    )
      .toBeNull()
  })

  it("a price in another currency is not the same price", () => {
    expect(samePrice(privateLine(3), privateRate(250000, "EUR"))).toBe(false)
    expect(samePrice(line, { prices: rates()[0]!.prices.map((p) => ({ ...p, currency: "EUR" })) })).toBe(false)
  })

  it("per guest: the sum over adults and children equals the line's total, and any other price differs", () => {
    fc.assert(fc.property(arbParty, fc.integer({ min: 1, max: 1000 }), (p, delta) => {
      const { booked, rate } = perGuest(p)
      expect(samePrice(booked, rate)).toBe(true)
      // The party's own categories cost more now: not the same price.
      const dearer = rate.prices.map((x) => ({ ...x, amountMinor: x.amountMinor + delta }))
      expect(samePrice(booked, { prices: dearer })).toBe(false)
    }))
  })

  it("per booking: same price for any party size exactly when the rate's price is the line's total", () => {
    fc.assert(fc.property(
      fc.integer({ min: 1, max: 50 }),
      fc.integer({ min: 1, max: 1_000_000 }),
      fc.integer({ min: 1, max: 1_000_000 }),
      (guests, total, other) => {
        expect(samePrice(privateLine(guests, total), privateRate(total))).toBe(true)
        expect(samePrice(privateLine(guests, total), privateRate(other))).toBe(other === total)
      }
    ))
  })

  it("a private party of 3 can move to a departure of the same price, in the day's options and the move", () => {
    const booked = privateLine(3)
    const departures = [{ ...dep("2026-11-26", "S10", "10:00", 8), rates: [privateRate(250000)] }]
    expect(dayOptions(booked, "2026-11-26", departures, TZ, NOW)).toMatchObject({
      available: true,
      price_differs: false
    })
    expect(Either.isRight(decideMove(booked, { date: "2026-11-26" }, departures, TZ, NOW))).toBe(true)
    const dearer = [{ ...departures[0]!, rates: [privateRate(300000)] }]
    expect(decideMove(booked, { date: "2026-11-26" }, dearer, TZ, NOW)).toEqual(Either.left(NOT_AVAILABLE.priceDiffers))
  })
})

describe("options of a day", () => {
  it("lists departures with room at the same price, sorted by time", () => {
    const day = dayOptions(
      line,
      "2026-11-26",
      [dep("2026-11-26", "S14", "14:30", 10), dep("2026-11-26", "S10", "10:00", null)],
      TZ,
      NOW
    )
    expect(day).toEqual({
      available: true,
      price_differs: false,
      detail: null,
      options: [
        {
          start_time_id: "S10",
          rate_id: "R1",
          start_time: "10:00",
          label: "10:00 · Standard",
          remaining: UNLIMITED_REMAINING
        },
        { start_time_id: "S14", rate_id: "R1", start_time: "14:30", label: "14:30 · Standard", remaining: 10 }
      ]
    })
  })

  it("sold out, too few seats, no departure, departed, price differs", () => {
    expect(
      dayOptions(
        line,
        "2026-11-26",
        [dep("2026-11-26", "S10", "10:00", 0), dep("2026-11-26", "S14", "14:30", 2)],
        TZ,
        NOW
      )
    )
      .toMatchObject({
        available: false,
        price_differs: false,
        options: [],
        detail: NOT_AVAILABLE.soldOut("2026-11-26", 3)
      })
    expect(dayOptions(line, "2026-11-27", [], TZ, NOW).detail).toBe(NOT_AVAILABLE.noDeparture("2026-11-27"))
    expect(dayOptions(line, "2026-11-21", [dep("2026-11-21", "S08", "08:00", 10)], TZ, NOW).detail)
      .toBe(NOT_AVAILABLE.departed("2026-11-21"))
    const dearer = dayOptions(
      line,
      "2026-11-26",
      [dep("2026-11-26", "S10", "10:00", 10, rates({ A: 600, C: 250 }))],
      TZ,
      NOW
    )
    expect(dearer).toEqual({ available: false, price_differs: true, detail: NOT_AVAILABLE.priceDiffers, options: [] })
  })

  it("the booking's own departure needs no seats", () => {
    const own = dayOptions(line, "2026-11-25", [dep("2026-11-25", "S10", "10:00", 0)], TZ, NOW)
    expect(own.options.map((o) => o.start_time_id)).toEqual(["S10"])
  })
})

describe("deciding a move", () => {
  const day = [
    dep("2026-11-26", "S10", "10:00", 10),
    dep("2026-11-26", "S14", "14:30", 1),
    dep("2026-11-26", "S18", "18:00", 10, rates({ A: 500, C: 250 }, { A: 500, C: 250 }))
  ]

  it("keeps the time of day and the rate when omitted", () => {
    expect(decideMove(line, { date: "2026-11-26" }, day, TZ, NOW)).toEqual(Either.right({
      date: "2026-11-26",
      startTimeId: "S10",
      startTime: "10:00",
      rateId: "R1",
      rateTitle: "Standard",
      changeRate: false
    }))
  })

  it("a line without a rate keeps having none unless a rate is asked for", () => {
    const noRate = { ...line, rateId: null, rateTitle: null }
    expect(decideMove(noRate, { date: "2026-11-26" }, day, TZ, NOW)).toMatchObject(Either.right({ changeRate: false }))
    expect(decideMove(noRate, { date: "2026-11-26", rate_id: "R1" }, day, TZ, NOW)).toMatchObject(
      Either.right({ rateId: "R1", changeRate: true })
    )
  })

  it("another rate at the same price changes the rate", () => {
    expect(decideMove(line, { date: "2026-11-26", start_time_id: "S18", rate_id: "R2" }, day, TZ, NOW))
      .toEqual(
        Either.right({
          date: "2026-11-26",
          startTimeId: "S18",
          startTime: "18:00",
          rateId: "R2",
          rateTitle: "With lunch",
          changeRate: true
        })
      )
  })

  it("every refusal", () => {
    expect(decideMove(line, { date: "2026-11-27" }, day, TZ, NOW)).toEqual(
      Either.left(NOT_AVAILABLE.noDeparture("2026-11-27"))
    )
    expect(decideMove(line, { date: "2026-11-26", start_time_id: "nope" }, day, TZ, NOW))
      .toEqual(Either.left(NOT_AVAILABLE.noStartTime("2026-11-26", "nope")))
    expect(decideMove(line, { date: "2026-11-26", start_time_id: "S14" }, day, TZ, NOW))
      .toEqual(Either.left(NOT_AVAILABLE.soldOut("2026-11-26", 3)))
    expect(decideMove(line, { date: "2026-11-26", rate_id: "R2" }, day, TZ, NOW)).toEqual(
      Either.left(NOT_AVAILABLE.priceDiffers)
    )
    expect(decideMove(line, { date: "2026-11-26", rate_id: "R9" }, day, TZ, NOW)).toEqual(
      Either.left(NOT_AVAILABLE.noRate("R9"))
    )
    expect(
      decideMove(line, { date: "2026-11-21" }, [dep("2026-11-21", "S08", "08:00", 10)], TZ, NOW).pipe(Either.isLeft)
    ).toBe(true)
  })

  it("already on date: same day and start time (and rate, when given)", () => {
    expect(isAlreadyOn(line, { date: "2026-11-25" })).toBe(true)
    expect(isAlreadyOn(line, { date: "2026-11-25", start_time_id: "S10", rate_id: "R1" })).toBe(true)
    expect(isAlreadyOn(line, { date: "2026-11-25", start_time_id: "S14" })).toBe(false)
    expect(isAlreadyOn(line, { date: "2026-11-25", rate_id: "R2" })).toBe(false)
    expect(isAlreadyOn(line, { date: "2026-11-26" })).toBe(false)
  })

  it("a line is on its target when day, start time and (a changed) rate match", () => {
    expect(isOnTarget(line, { date: "2026-11-25", startTimeId: "S10", rateId: null })).toBe(true)
    expect(isOnTarget(line, { date: "2026-11-25", startTimeId: "S10", rateId: "R2" })).toBe(false)
    expect(isOnTarget(line, { date: "2026-11-26", startTimeId: "S10", rateId: null })).toBe(false)
  })
})
