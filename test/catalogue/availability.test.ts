import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import fc from "fast-check"
import {
  adultPrice,
  checkRange,
  chunksOf,
  isBookable,
  knownDays,
  seasonOf,
  seasonWindow,
  unknownDays
} from "../../src/catalogue/availability.js"
import { addDays, dayCount, daysBetween } from "../../src/domain/localDay.js"
import type { DepartureAvailability } from "../../src/ports/BookingSystem.js"

const TZ = "Europe/Oslo"
// 2026-11-21 09:00 in Oslo (UTC+1).
const NOW = new Date("2026-11-21T08:00:00Z")
const ctx = { timeZone: TZ, currency: "NOK", defaultCategoryId: "A", now: NOW }

const departure = (
  date: string,
  over: Partial<DepartureAvailability> & { adult?: number } = {}
): DepartureAvailability => ({
  date,
  startTimeId: "S1",
  startTime: "10:00",
  seatsLeft: 10,
  soldOut: false,
  rates: [
    {
      rateId: "R1",
      title: "Standard",
      prices: [
        { pricingCategoryId: "A", amountMinor: over.adult ?? 50000, currency: "NOK" },
        { pricingCategoryId: "C", amountMinor: 10000, currency: "NOK" }
      ]
    },
    { rateId: "R2", title: "Lunch", prices: [{ pricingCategoryId: "A", amountMinor: 65000, currency: "NOK" }] }
  ],
  ...over
})

const day = fc.integer({ min: 0, max: 3000 }).map((n) => addDays("2025-01-01", n))

describe("ranges", () => {
  it("chunks cover the range exactly, in order, each at most 31 days", () =>
    fc.assert(
      fc.property(day, fc.integer({ min: 0, max: 800 }), fc.integer({ min: 1, max: 40 }), (from, span, size) => {
        const to = addDays(from, span)
        const chunks = chunksOf(from, to, size)
        expect(chunks.flatMap((c) => daysBetween(c.from, c.to))).toEqual(daysBetween(from, to))
        expect(chunks.every((c) => dayCount(c.from, c.to) <= size)).toBe(true)
      })
    ))

  it("366 days are 12 chunks of 31 days at most", () => {
    expect(chunksOf("2026-11-22", addDays("2026-11-22", 365))).toHaveLength(12)
    expect(chunksOf("2026-11-22", "2026-11-22")).toEqual([{ from: "2026-11-22", to: "2026-11-22" }])
  })

  it("checkRange: to before from, more than 366 days; DST and leap years count calendar days", () => {
    expect(checkRange("2026-11-22", "2026-11-21")).toEqual(
      Either.left({ field: "to", detail: "to must not be before from" })
    )
    expect(checkRange("2027-01-01", "2027-12-31")).toEqual(Either.right(365))
    expect(checkRange("2028-01-01", "2028-12-31")).toEqual(Either.right(366))
    expect(Either.isLeft(checkRange("2027-01-01", "2028-01-01"))).toBe(false)
    expect(Either.isLeft(checkRange("2027-01-01", "2028-01-02"))).toBe(true)
    expect(dayCount("2026-03-28", "2026-03-30")).toBe(3)
  })

  it("the season is 12 months from today; the price ignores today and the next 6 days", () => {
    expect(seasonWindow("2026-11-21")).toEqual({ from: "2026-11-21", to: "2027-11-20", priceFrom: "2026-11-28" })
    expect(seasonWindow("2028-02-29").to).toBe("2029-02-28")
    expect(seasonWindow("2026-01-01").to).toBe("2026-12-31")
  })
})

describe("departures", () => {
  it("bookable: on sale, seats left (or no limit), not started in the tour's zone", () => {
    expect(isBookable(departure("2026-11-21"), TZ, NOW)).toBe(true)
    expect(isBookable(departure("2026-11-21", { startTime: "09:00" }), TZ, NOW)).toBe(false)
    expect(isBookable(departure("2026-11-21", { startTime: null }), TZ, NOW)).toBe(false)
    expect(isBookable(departure("2026-11-22", { seatsLeft: 0 }), TZ, NOW)).toBe(false)
    expect(isBookable(departure("2026-11-22", { seatsLeft: null }), TZ, NOW)).toBe(true)
    expect(isBookable(departure("2026-11-22", { soldOut: true, seatsLeft: 4 }), TZ, NOW)).toBe(false)
  })

  it("adult price: the default category's lowest over the rates, in the tour's currency only", () => {
    expect(adultPrice(departure("2026-11-22"), ctx)).toBe(50000)
    expect(adultPrice(departure("2026-11-22", { adult: 70000 }), ctx)).toBe(65000)
    expect(adultPrice(departure("2026-11-22"), { ...ctx, defaultCategoryId: null })).toBeNull()
    expect(adultPrice(departure("2026-11-22"), { ...ctx, currency: "EUR" })).toBeNull()
    expect(adultPrice(departure("2026-11-22", { rates: [] }), ctx)).toBeNull()
  })

  it("season: first bookable day from today; the price from day 7 on, bookable departures only", () => {
    const season = seasonOf([
      departure("2026-11-21", { startTime: "08:00", adult: 100 }),
      departure("2026-11-22", { adult: 200 }),
      departure("2026-11-27", { adult: 300 }),
      departure("2026-11-28", { adult: 45000 }),
      departure("2026-12-01", { adult: 100, seatsLeft: 0 }),
      departure("2027-11-21", { adult: 100 })
    ], ctx)
    expect(season).toEqual({ fromPriceMinor: 45000, nextAvailableDate: "2026-11-22" })
    expect(seasonOf([], ctx)).toEqual({ fromPriceMinor: null, nextAvailableDate: null })
  })
})

describe("the availability answer", () => {
  it("unknown: every day open (never sold out) without a price, no departures", () => {
    expect(unknownDays({ from: "2026-11-21", to: "2026-11-22" })).toEqual({
      known: false,
      days: [
        { date: "2026-11-21", available: true, from_price_minor: null },
        { date: "2026-11-22", available: true, from_price_minor: null }
      ],
      departures: null
    })
  })

  it("known: remaining 0 when sold out, 9999 without a limit; fits_party against pax; started ones left out", () => {
    const answer = knownDays(
      [
        departure("2026-11-21", { startTime: "08:00" }),
        departure("2026-11-21", { startTime: "12:00", startTimeId: "S2", seatsLeft: 2 }),
        departure("2026-11-22", { seatsLeft: null }),
        departure("2026-11-23", { soldOut: true, seatsLeft: 5 })
      ],
      { from: "2026-11-21", to: "2026-11-23", pax: 3 },
      ctx
    )
    expect(answer.days).toEqual([
      { date: "2026-11-21", available: true, from_price_minor: 50000 },
      { date: "2026-11-22", available: true, from_price_minor: 50000 },
      { date: "2026-11-23", available: false, from_price_minor: null }
    ])
    expect(answer.departures!.map((d) => [d.date, d.start_time, d.remaining, d.fits_party])).toEqual([
      ["2026-11-21", "12:00", 2, false],
      ["2026-11-22", "10:00", 9999, true],
      ["2026-11-23", "10:00", 0, false]
    ])
    const long = knownDays([], { from: "2026-11-21", to: "2026-12-05", pax: 1 }, ctx)
    expect(long.days).toHaveLength(15)
    expect(long.departures).toBeNull()
    expect(knownDays([], { from: "2026-11-21", to: "2026-12-04", pax: 1 }, ctx).departures).toEqual([])
  })
})
