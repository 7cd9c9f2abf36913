import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import fc from "fast-check"
import {
  channelSurfaceId,
  checkAnalyticsRange,
  conversionOf,
  type Lookups,
  tourFigures,
  type TourRow
} from "../../../src/partner/analytics/rules.js"
import { siteItem } from "../../../src/partner/analytics/siteRules.js"

const day = fc.integer({ min: 1, max: 5 }).map((n) => `2026-05-0${n}`)
const count = fc.integer({ min: 0, max: 40 })
const SITES = ["s-1", "s-2"]
const TOURS = ["t-own", "t-other"]
const funnel = fc.record({
  site_id: fc.constantFrom(...SITES),
  tour_id: fc.constantFrom(...TOURS),
  operator_id: fc.constant(null),
  day,
  views: count,
  availability_checks: count,
  checkout_opens: count,
  checkout_attempts: count
})
const siteSale = fc.record({
  site_id: fc.constantFrom(...SITES),
  tour_id: fc.constantFrom<string | null>(...TOURS, null),
  operator_id: fc.constantFrom("op-own", "op-other"),
  day,
  currency: fc.constantFrom("NOK", "EUR"),
  bookings: count,
  revenue_minor: fc.integer({ min: 0, max: 1_000_000 })
})
const channelSale = fc.record({
  tour_id: fc.constantFrom<string | null>("t-own", null),
  operator_id: fc.constant("op-own"),
  label: fc.constantFrom("Viator", "GetYourGuide", "viator"),
  day,
  currency: fc.constantFrom("NOK", "EUR"),
  bookings: count,
  participants: count,
  revenue_minor: fc.integer({ min: 0, max: 1_000_000 })
})
/** NOK to EUR at a rate that rounds (11.37 NOK per EUR). */
const toEur = (amount: number, currency: string) => currency === "EUR" ? amount : Math.round(amount / 11.37)
const lookups: Lookups = {
  inView: new Set(["op-own"]),
  site: (id) => ({ domain: `${id}.example`, name: id }),
  tour: (id) => ({ name: id, operatorId: id === "t-own" ? "op-own" : "op-other" }),
  operator: (id) => ({ id, name: id })
}
const sum = (xs: ReadonlyArray<any>, f: (x: any) => number) => xs.reduce((n, x) => n + f(x), 0)

describe("analytics rules", () => {
  it("the range: `to` at most 400 days after `from`, never before it", () => {
    expect(checkAnalyticsRange("2025-01-01", "2026-02-05")).toEqual(Either.right(401))
    expect(checkAnalyticsRange("2026-05-01", "2026-05-01")).toEqual(Either.right(1))
    expect(Either.getLeft(checkAnalyticsRange("2025-01-01", "2026-02-06"))).toMatchObject({
      _tag: "Some",
      value: { field: "to", detail: "to is 401 days after from; at most 400" }
    })
    expect(Either.isLeft(checkAnalyticsRange("2026-05-02", "2026-05-01"))).toBe(true)
  })

  it("channel surface ids: lower case, accents dropped, runs of other characters one dash, never a dot", () => {
    expect(channelSurfaceId("Viator")).toBe("viator")
    expect(channelSurfaceId("GetYourGuide Deutschland GmbH")).toBe("getyourguide-deutschland-gmbh")
    expect(channelSurfaceId("  Fjord Tours & Co. (Ålesund) ")).toBe("fjord-tours-co-alesund")
    expect(channelSurfaceId("Booking.com")).toBe("booking-com")
    expect(channelSurfaceId("***")).toBe("channel")
    fc.assert(fc.property(fc.string({ maxLength: 300 }), (label) => {
      const id = channelSurfaceId(label)
      expect(id).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/)
      expect(id.length).toBeLessThanOrEqual(64)
      expect(channelSurfaceId(id)).toBe(id)
    }))
  })

  it("conversion ratios: null when the step before is zero, never 0 or infinity", () => {
    expect(conversionOf({ views: 0, availability_checks: 0, checkout_opens: 0, checkout_attempts: 0 }, 2)).toEqual({
      view_to_check: null,
      check_to_open: null,
      open_to_attempt: null,
      attempt_to_booking: null,
      view_to_booking: null
    })
    expect(conversionOf({ views: 3, availability_checks: 1, checkout_opens: 0, checkout_attempts: 0 }, 0)).toEqual({
      view_to_check: 0.3333,
      check_to_open: 0,
      open_to_attempt: null,
      attempt_to_booking: null,
      view_to_booking: 0
    })
  })

  it("surfaces sum their rows, total rows sum the day rows, revenue shares add up to 1", () =>
    fc.assert(fc.property(
      fc.array(funnel, { maxLength: 30 }),
      fc.array(siteSale, { maxLength: 30 }),
      fc.array(channelSale, { maxLength: 20 }),
      (funnels, siteSales, channelSales) => {
        const input = { funnels, siteSales, channelSales, surfaceFilter: undefined, lookups, toEur }
        const days = Either.getOrThrow(tourFigures({ ...input, granularity: "day" }))
        const total = Either.getOrThrow(tourFigures({ ...input, granularity: "total" }))
        expect(total.surfaces).toEqual(days.surfaces)
        for (const row of total.rows) {
          const parts = days.rows.filter((r) =>
            r.surface.id === row.surface.id && r.tour.id === row.tour.id && r.operator?.id === row.operator?.id
          )
          expect(sum(parts, (r) => r.revenue_minor)).toBe(row.revenue_minor)
          expect(sum(parts, (r) => r.bookings)).toBe(row.bookings)
        }
        for (const s of days.surfaces) {
          const rows = days.rows.filter((r) => r.surface.id === s.surface.id && r.surface.type === s.surface.type)
          expect(sum(rows, (r) => r.revenue_minor)).toBe(s.revenue_minor)
          expect(sum(rows, (r) => r.bookings)).toBe(s.bookings)
          if (s.funnel) expect(sum(rows, (r) => r.funnel!.views)).toBe(s.funnel.views)
          else expect(sum(rows, (r) => r.participants!)).toBe(s.participants)
        }
        const revenue = sum(days.surfaces, (s) => s.revenue_minor)
        if (revenue > 0) expect(Math.abs(sum(days.surfaces, (s) => s.revenue_share) - 1)).toBeLessThan(0.001)
        // Labels that give one id ("Viator", "viator") are one surface.
        expect(days.surfaces.filter((s) => s.surface.id === "viator").length).toBeLessThanOrEqual(1)
        // basis: own_tour exactly for the operators in view.
        for (const r of days.rows) expect(r.basis).toBe(r.operator?.id === "op-own" ? "own_tour" : "site_owner")
      }
    )))

  it("rows are in localeCompare order of date, surface, revenue, tour name and id (ranked, not compared per pair)", () => {
    // Names and domains where localeCompare and code-point order differ (case, accents, punctuation).
    const NAMES = ["Ålesund fjord", "alesund fjord", "Zebra", "zebra", "a-b", "ab", "Éclair", "eclair", "Ab"]
    const DOMAINS = ["a-b.example", "ab.example", "Ab.example", "b.example"]
    const tourIds = NAMES.map((_, i) => `t-${String.fromCharCode(97 + i)}`)
    const tricky: Lookups = {
      inView: new Set(["op-own"]),
      site: (id) => ({ domain: DOMAINS[Number(id.slice(2)) % DOMAINS.length]!, name: id }),
      tour: (id) => ({ name: NAMES[tourIds.indexOf(id)] ?? id, operatorId: "op-own" }),
      operator: (id) => ({ id, name: id })
    }
    const row = fc.record({
      site_id: fc.constantFrom("s-0", "s-1", "s-2", "s-3"),
      tour_id: fc.constantFrom(...tourIds),
      operator_id: fc.constant("op-own"),
      day,
      currency: fc.constant("EUR"),
      bookings: count,
      revenue_minor: fc.integer({ min: 0, max: 3 })
    })
    const original = (a: TourRow, b: TourRow) =>
      (a.date ?? "").localeCompare(b.date ?? "") ||
      a.surface.type.localeCompare(b.surface.type) * -1 ||
      a.surface.id.localeCompare(b.surface.id) ||
      b.revenue_minor - a.revenue_minor ||
      (a.tour.name ?? "").localeCompare(b.tour.name ?? "") ||
      (a.tour.id ?? "").localeCompare(b.tour.id ?? "")
    fc.assert(fc.property(
      fc.array(row, { maxLength: 60 }),
      fc.array(channelSale, { maxLength: 20 }),
      fc.constantFrom<"day" | "total">("day", "total"),
      (siteSales, channelSales, granularity) => {
        const { rows } = Either.getOrThrow(tourFigures({
          granularity,
          funnels: [],
          siteSales,
          channelSales,
          surfaceFilter: undefined,
          lookups: tricky,
          toEur
        }))
        // Sorted by the localeCompare comparator (a stable sort of a sorted list changes nothing).
        expect([...rows].sort(original)).toEqual(rows)
      }
    ))
  })

  it("a sale without a rate is not a figure: Left lists the currency and day", () => {
    const result = tourFigures({
      granularity: "day",
      funnels: [],
      siteSales: [{
        site_id: "s-1",
        tour_id: "t-own",
        operator_id: "op-own",
        day: "2026-05-01",
        currency: "USD",
        bookings: 1,
        revenue_minor: 100
      }],
      channelSales: [],
      surfaceFilter: undefined,
      lookups,
      toEur: (amount, currency) => (currency === "USD" ? null : amount)
    })
    expect(result).toEqual(Either.left([{ currency: "USD", day: "2026-05-01" }]))
  })

  it("a site item: traffic is the sum of the days; owners get the funnel and source conversions, added sites null", () => {
    const base = {
      traffic: [
        {
          site_id: "s",
          day: "2026-05-01",
          visitors: 10,
          new_visitors: 4,
          sessions: 12,
          pageviews: 30,
          bounces: 3,
          duration_seconds: 600
        },
        {
          site_id: "s",
          day: "2026-05-02",
          visitors: 5,
          new_visitors: 5,
          sessions: 0,
          pageviews: 5,
          bounces: 0,
          duration_seconds: 0
        }
      ],
      sources: [
        { site_id: "s", dimension: "country", label: "NO", visitors: 9, conversions: 1, revenue_eur_minor: 50 },
        {
          site_id: "s",
          dimension: "channel",
          label: "Direct",
          visitors: 3,
          conversions: 0,
          revenue_eur_minor: 0
        }
      ],
      funnel: { views: 8, availability_checks: 4, checkout_opens: 2, checkout_attempts: 1 },
      sales: [{ site_id: "s", day: "2026-05-03", currency: "EUR", bookings: 1, revenue_minor: 900 }],
      toEur
    }
    const owner = Either.getOrThrow(
      siteItem({ ...base, site: { id: "s", domain: "s.example", name: "S", owner: true } })
    )
    expect(owner.traffic).toEqual({
      visitors: 15,
      new_visitors: 9,
      sessions: 12,
      pageviews: 35,
      bounce_rate: 0.25,
      avg_session_seconds: 50
    })
    expect(owner.days.map((d) => d.date)).toEqual(["2026-05-01", "2026-05-02", "2026-05-03"])
    expect(owner.sources.map((s) => s.dimension)).toEqual(["channel", "country"])
    expect(owner.funnel?.map((f) => f.count)).toEqual([15, 8, 4, 2, 1, 1])
    expect(owner.sales).toEqual({ bookings: 1, revenue_minor: 900 })
    const added = Either.getOrThrow(
      siteItem({ ...base, site: { id: "s", domain: "s.example", name: "S", owner: false } })
    )
    expect([added.role, added.sales_scope, added.funnel]).toEqual(["added", "own_tours", null])
    expect(added.sources.every((s) => s.conversions === null && s.revenue_minor === null)).toBe(true)
  })
})
