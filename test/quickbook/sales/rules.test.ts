import { Either, ParseResult, Schema } from "effect"
import { describe, expect, it } from "vitest"
import type { DepartureRate } from "../../../src/ports/BookingSystem.js"
import { QuoteBody } from "../../../src/quickbook/sales/Api.js"
import {
  BOOKING_LINE_TYPE,
  cartTotal,
  DESK_DAYS_AHEAD,
  deskDayProblem,
  guestTypesOf,
  newReference,
  orderLineText,
  partyLinesOf,
  REFERENCE_PATTERN,
  slotsOf,
  vatIncluded
} from "../../../src/quickbook/sales/rules.js"

describe("quickbook sales rules", () => {
  it("references are SVC- and 10 uppercase letters or digits", () => {
    for (let i = 0; i < 100; i++) expect(newReference()).toMatch(REFERENCE_PATTERN)
  })

  it("guest type keys are title slugs, cat_<id> when empty or taken", () => {
    const c = (id: string, title: string) => ({ id, title, isDefault: id === "1", minAge: null, maxAge: null })
    expect(
      guestTypesOf([c("1", "Adult"), c("2", "Barn (3–15 år)"), c("3", "Senior"), c("4", "senior"), c("5", "!!")]).map((
        g
      ) => g.type)
    )
      .toEqual(["adult", "barn_3_15_ar", "cat_3", "cat_4", "cat_5"])
    // `booking` is the cart line's booking price entry: a category of that name gets cat_<id>.
    expect(guestTypesOf([c("1", "Adult"), c("7", "Booking"), c("8", " booking! ")]).map((g) => g.type)).toEqual([
      "adult",
      "cat_7",
      "cat_8"
    ])
    expect(BOOKING_LINE_TYPE).toBe("booking")
  })

  it("VAT included at 12%, rounded", () => {
    expect(vatIncluded(124750)).toBe(13366)
    expect(vatIncluded(11200)).toBe(1200)
    expect(vatIncluded(0)).toBe(0)
  })

  it("the order line stays within 40 characters", () => {
    expect(orderLineText("Harbour Cruise", "2026-11-22", "10:00")).toBe("Harbour Cruise 2026-11-22 10:00")
    const long = orderLineText("Nordlys og hvalsafari fra Tromsø med lunsj", "2026-11-22", "10:00")
    expect(long.length).toBe(40)
    expect(long.endsWith(" 2026-11-22 10:00")).toBe(true)
  })

  it("slots: the day's departures not started, by time, the first rate that prices them", () => {
    const types = guestTypesOf([{ id: "A", title: "Adult", isDefault: true, minAge: null, maxAge: null }])
    const dep = (
      startTime: string,
      rates: Array<{ rateId: string; amount: number }>,
      seatsLeft: number | null = 5
    ) => ({
      date: "2030-01-02",
      startTimeId: startTime,
      startTime,
      seatsLeft,
      soldOut: false,
      rates: rates.map((r) => ({
        rateId: r.rateId,
        title: null,
        prices: [{ pricingCategoryId: "A", amountMinor: r.amount, currency: "NOK" }]
      }))
    })
    const slots = slotsOf([
      dep("14:00", [{ rateId: "r2", amount: 200 }, { rateId: "r1", amount: 100 }], null),
      dep("09:00", [{ rateId: "r2", amount: 300 }], 0)
    ], {
      date: "2030-01-02",
      timeZone: "Europe/Oslo",
      currency: "NOK",
      rateIds: ["r1", "r2"],
      guestTypes: types,
      now: new Date("2030-01-01T00:00:00Z")
    })
    expect(slots.map((s) => [s.time, s.rateId, s.seatsLeft, s.soldOut, s.guests[0]!.unitMinor])).toEqual([
      ["09:00", "r2", 0, true, 300],
      ["14:00", "r1", null, false, 100]
    ])
  })

  describe("a tour priced per booking", () => {
    const types = guestTypesOf([
      { id: "A", title: "Adult", isDefault: true, minAge: null, maxAge: null },
      { id: "C", title: "Child", isDefault: false, minAge: null, maxAge: null }
    ])
    const ctx = {
      date: "2030-01-02",
      timeZone: "Europe/Oslo",
      currency: "NOK",
      rateIds: ["r1", "r2"],
      guestTypes: types,
      now: new Date("2030-01-01T00:00:00Z")
    }
    const dep = (rates: Array<DepartureRate>) => ({
      date: "2030-01-02",
      startTimeId: "s1",
      startTime: "10:00",
      seatsLeft: 8,
      soldOut: false,
      rates
    })
    const nok = (pricingCategoryId: string, amountMinor: number) => ({
      pricingCategoryId,
      amountMinor,
      currency: "NOK"
    })
    const slot = (rates: Array<DepartureRate>) => slotsOf([dep(rates)], ctx)[0]!

    it("slots: the booking price, every guest type the rate sells at 0", () => {
      // Per-guest rows are listed too (Bókun lists them): the categories listed are the ones sold.
      const listed = slot([{
        rateId: "r1",
        title: null,
        prices: [nok("A", 49900), nok("C", 24950)],
        pricePerBooking: { amountMinor: 250000, currency: "NOK" }
      }])
      expect(listed).toMatchObject({
        rateId: "r1",
        bookingPriceMinor: 250000,
        guests: [{ type: "adult", label: "Adult", unitMinor: 0 }, { type: "child", label: "Child", unitMinor: 0 }]
      })
      // A rate listing some categories sells those only.
      expect(
        slot([{
          rateId: "r1",
          title: null,
          prices: [nok("A", 1)],
          pricePerBooking: { amountMinor: 9, currency: "NOK" }
        }])
          .guests.map((g) => g.type)
      ).toEqual(["adult"])
    })

    it("slots: a rate with only a booking price prices the departure and sells every guest type", () => {
      const s = slot([
        { rateId: "r1", title: null, prices: [], pricePerBooking: { amountMinor: 250000, currency: "NOK" } },
        { rateId: "r2", title: null, prices: [nok("A", 49900)] }
      ])
      expect(s).toMatchObject({ rateId: "r1", bookingPriceMinor: 250000 })
      expect(s.guests.map((g) => [g.type, g.unitMinor])).toEqual([["adult", 0], ["child", 0]])
    })

    it("slots: a booking price in another currency does not price it; the next rate does, per guest", () => {
      const s = slot([
        { rateId: "r1", title: null, prices: [nok("A", 1)], pricePerBooking: { amountMinor: 25000, currency: "EUR" } },
        { rateId: "r2", title: null, prices: [nok("A", 49900)] }
      ])
      expect(s).toMatchObject({ rateId: "r2", bookingPriceMinor: null, guests: [{ type: "adult", unitMinor: 49900 }] })
      const none = slot([{
        rateId: "r1",
        title: null,
        prices: [],
        pricePerBooking: { amountMinor: 1, currency: "EUR" }
      }])
      expect(none).toMatchObject({ rateId: null, bookingPriceMinor: null, guests: [] })
    })

    it("the cart line's guests: each guest type at 0, then the booking price once; the lines add up to the total", () => {
      const s = slot([{
        rateId: "r1",
        title: null,
        prices: [],
        pricePerBooking: { amountMinor: 250000, currency: "NOK" }
      }])
      const lines = Either.getOrThrow(partyLinesOf([{ type: "adult", count: 3 }, { type: "child", count: 1 }], s))
      expect(lines).toEqual([
        { type: "adult", label: "Adult", count: 3, unitMinor: 0, lineMinor: 0 },
        { type: "child", label: "Child", count: 1, unitMinor: 0, lineMinor: 0 },
        { type: "booking", label: "Private booking (whole party)", count: 1, unitMinor: 250000, lineMinor: 250000 }
      ])
      expect(cartTotal(lines)).toBe(250000)
      // The same price for one guest or for twelve.
      expect(cartTotal(Either.getOrThrow(partyLinesOf([{ type: "adult", count: 12 }], s)))).toBe(250000)
      expect(partyLinesOf([{ type: "senior", count: 1 }], s)).toEqual(Either.left("senior"))
    })
  })

  it("the cart line's guests per guest: unit × count, no booking entry; a type without a price is named", () => {
    const slot = { guests: [{ type: "adult", label: "Adult", unitMinor: 49900 }], bookingPriceMinor: null }
    const lines = Either.getOrThrow(partyLinesOf([{ type: "adult", count: 2 }], slot))
    expect(lines).toEqual([{ type: "adult", label: "Adult", count: 2, unitMinor: 49900, lineMinor: 99800 }])
    expect(cartTotal(lines)).toBe(99800)
    expect(partyLinesOf([{ type: "adult", count: 1 }, { type: "child", count: 1 }], slot)).toEqual(Either.left("child"))
  })

  it("a desk day: from yesterday to a year ahead of the UTC day, one more day on each side for every zone", () => {
    const at = new Date("2026-11-26T15:00:00Z")
    for (const ok of ["2026-11-25", "2026-11-26", "2026-11-27", "2027-11-27", "2027-11-28"]) {
      expect(deskDayProblem(ok, at)).toBeUndefined()
    }
    expect(DESK_DAYS_AHEAD).toBe(366)
    for (const bad of ["2026-11-24", "2027-11-29", "9999-12-31", "0001-01-01", "2999-01-01"]) {
      expect(deskDayProblem(bad, at)).toBe("must be a day from 2026-11-25 to 2027-11-28 (yesterday to a year ahead)")
    }
    // At 10:30 UTC it is already the 27th at Kiritimati (UTC+14), a year ahead being 2027-11-28, and still the 25th in Pago Pago (UTC-11).
    expect(deskDayProblem("2027-11-28", new Date("2026-11-26T10:30:00Z"))).toBeUndefined()
    expect(deskDayProblem("2026-11-25", new Date("2026-11-26T10:30:00Z"))).toBeUndefined()
  })

  it("a quote's start.date and start.time: the partner API's day and time rules, each named by its path", () => {
    const decode = (start: unknown) =>
      Schema.decodeUnknownEither(QuoteBody)({
        activityId: "5c4f0e52-7e44-4d6e-9b7e-2b6f1f0f8a11",
        start,
        guests: [{ type: "adult", count: 1 }]
      }, {
        errors: "all"
      })
    const issues = (start: unknown) => {
      const result = decode(start)
      if (Either.isRight(result)) return []
      return ParseResult.ArrayFormatter.formatErrorSync(result.left).map((i) => `${i.path.join(".")}: ${i.message}`)
    }
    expect(issues({ date: "2026-11-27", time: "10:00" })).toEqual([])
    expect(issues({ date: "2026-02-30", time: "10:00" })).toEqual(["start.date: must be a real calendar date"])
    expect(issues({ date: "2026-2-3", time: "10:00" })).toEqual(["start.date: must be a date YYYY-MM-DD"])
    for (const time of ["24:00", "12:60", "9:00", "10:00:00"]) {
      expect(issues({ date: "2026-11-27", time })).toEqual(["start.time: must be a time HH:MM from 00:00 to 23:59"])
    }
  })
})
