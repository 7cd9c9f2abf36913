import { describe, expect, it } from "vitest"
import { guestTypesOf, newReference, orderLineText, REFERENCE_PATTERN, slotsOf, vatIncluded } from "../../src/domain/quickbookSales.js"

describe("quickbook sales rules", () => {
  it("references are SVC- and 10 uppercase letters or digits", () => {
    for (let i = 0; i < 100; i++) expect(newReference()).toMatch(REFERENCE_PATTERN)
  })

  it("guest type keys are title slugs, cat_<id> when empty or taken", () => {
    const c = (id: string, title: string) => ({ id, title, isDefault: id === "1", minAge: null, maxAge: null })
    expect(guestTypesOf([c("1", "Adult"), c("2", "Barn (3–15 år)"), c("3", "Senior"), c("4", "senior"), c("5", "!!")]).map((g) => g.type))
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
    const dep = (startTime: string, rates: Array<{ rateId: string; amount: number }>, seatsLeft: number | null = 5) => ({
      date: "2030-01-02",
      startTimeId: startTime,
      startTime,
      seatsLeft,
      soldOut: false,
      rates: rates.map((r) => ({ rateId: r.rateId, title: null, prices: [{ pricingCategoryId: "A", amountMinor: r.amount, currency: "NOK" }] }))
    })
    const slots = slotsOf([dep("14:00", [{ rateId: "r2", amount: 200 }, { rateId: "r1", amount: 100 }], null), dep("09:00", [{ rateId: "r2", amount: 300 }], 0)], {
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
})
