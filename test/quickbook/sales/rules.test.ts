import { Either, ParseResult, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { QuoteBody } from "../../../src/quickbook/sales/Api.js"
import {
  DESK_DAYS_AHEAD,
  deskDayProblem,
  guestTypesOf,
  newReference,
  orderLineText,
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
