import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import {
  buildManifest,
  checkedInOf,
  compareDepartures,
  type DepartureKey,
  type ManifestEntry,
  noShowOf,
  paxBreakdownOf
} from "../../../src/partner/manifest/rules.js"
import type { ManifestRow } from "../../../src/partner/manifest/schemas.js"

const DAY = { date: "2026-03-29", timezone: "Europe/Oslo", synced_at: null }
let seq = 0

const row = (over: Partial<ManifestRow> = {}): ManifestRow => ({
  id: `00000000-0000-4000-8000-${String(++seq).padStart(12, "0")}`,
  reference: `BKN-${seq}`,
  confirmation_code: null,
  status: "CONFIRMED",
  partner: { id: "op-1", name: "Alpha" },
  channel: { class: "direct", source: null, title: "Direct" },
  participants: 2,
  pax_breakdown: null,
  guest: { name: "Guest" },
  pickup: null,
  payment_status: "PAID",
  check_in: { status: null, present: null },
  ...over
})

const dep = (over: Partial<DepartureKey> = {}): DepartureKey => ({
  startTime: "10:00",
  timezone: "Europe/Oslo",
  productTitle: "Fjord Cruise",
  rateTitle: "Standard",
  accountId: "acc-1",
  productId: "p-1",
  rateId: "r-1",
  ...over
})

const entry = (d: Partial<DepartureKey> = {}, r: Partial<ManifestRow> = {}): ManifestEntry => ({
  departure: dep(d),
  row: row(r)
})

describe("check-in counts", () => {
  it("counts passengers: present (capped at participants), everyone when present is null, no-shows by party", () => {
    const base = { participants: 4 }
    expect(checkedInOf({ ...base, check_in: { status: null, present: null } })).toBe(0)
    expect(checkedInOf({ ...base, check_in: { status: "checked_in", present: null } })).toBe(4)
    expect(checkedInOf({ ...base, check_in: { status: "checked_in", present: 3 } })).toBe(3)
    expect(checkedInOf({ ...base, check_in: { status: "checked_in", present: 0 } })).toBe(0)
    expect(checkedInOf({ ...base, check_in: { status: "checked_in", present: 9 } })).toBe(4)
    expect(checkedInOf({ ...base, check_in: { status: "no_show", present: null } })).toBe(0)
    expect(noShowOf({ ...base, check_in: { status: "no_show", present: null } })).toBe(4)
    expect(noShowOf({ ...base, check_in: { status: "checked_in", present: 3 } })).toBe(0)
    expect(noShowOf({ ...base, check_in: { status: null, present: null } })).toBe(0)
  })
})

describe("buildManifest", () => {
  it("groups by start time, product and rate; counts passengers; cancelled rows apart and uncounted", () => {
    const a1 = entry({}, { guest: { name: "Bjørn" }, participants: 3, check_in: { status: "checked_in", present: 2 } })
    const a2 = entry({}, {
      guest: { name: "Anna" },
      participants: 1,
      status: "RESERVED",
      check_in: { status: "no_show", present: null }
    })
    const family = entry({ rateId: "r-2", rateTitle: "Family" }, {
      participants: 4,
      check_in: { status: "checked_in", present: null }
    })
    const early = entry({ startTime: "08:00" }, { participants: 5 })
    const gone = entry({}, { status: "CANCELLED", participants: 7, check_in: { status: "checked_in", present: null } })
    const m = buildManifest(DAY, [a1, family, gone, a2, early])

    expect(m.departures.map((d) => [d.start_time, d.rate_title, d.passengers, d.checked_in, d.no_show])).toEqual([
      ["08:00", "Standard", 5, 0, 0],
      ["10:00", "Family", 4, 4, 0],
      ["10:00", "Standard", 4, 2, 1]
    ])
    expect(m.departures[2]!.bookings.map((r) => r.guest.name)).toEqual(["Anna", "Bjørn"])
    expect(m.departures[2]!.bookings[0]!.status).toBe("RESERVED")
    expect(m.cancelled.map((r) => r.id)).toEqual([gone.row.id])
    expect(m.totals).toEqual({ departures: 3, bookings: 4, passengers: 13, checked_in: 6, no_show: 1 })
    expect(m).toMatchObject({ date: "2026-03-29", timezone: "Europe/Oslo", synced_at: null })
  })

  it("an empty day has no departures and zero totals", () => {
    expect(buildManifest(DAY, [])).toEqual({
      ...DAY,
      totals: { departures: 0, bookings: 0, passengers: 0, checked_in: 0, no_show: 0 },
      departures: [],
      cancelled: []
    })
  })

  it("a departure whose rows are all cancelled does not appear", () => {
    const m = buildManifest(DAY, [entry({ startTime: "12:00" }, { status: "CANCELLED" }), entry()])
    expect(m.departures.map((d) => d.start_time)).toEqual(["10:00"])
    expect(m.cancelled).toHaveLength(1)
  })

  it("same titles of different products, accounts, rates or time zones stay separate departures", () => {
    const m = buildManifest(DAY, [
      entry(),
      entry({ productId: "p-2" }),
      entry({ accountId: "acc-2" }),
      entry({ rateId: null }),
      entry({ timezone: "Europe/Lisbon" }),
      entry()
    ])
    expect(m.departures).toHaveLength(5)
    expect(m.departures.map((d) => d.bookings.length).sort()).toEqual([1, 1, 1, 1, 2])
  })

  it("daylight-saving labels are only labels: 01:30, 02:30 and 03:00 sort and group as written", () => {
    const m = buildManifest(DAY, [
      entry({ startTime: "03:00" }),
      entry({ startTime: "02:30" }),
      entry({ startTime: "01:30" }),
      entry({ startTime: "02:30" }),
      entry({ startTime: null }),
      entry({ startTime: "23:59" }),
      entry({ startTime: "00:00" })
    ])
    expect(m.departures.map((d) => [d.start_time, d.bookings.length])).toEqual([
      ["00:00", 1],
      ["01:30", 1],
      ["02:30", 2],
      ["03:00", 1],
      ["23:59", 1],
      [null, 1]
    ])
  })

  it("orders by product then rate title for people (numbers by value, null last), rows by guest, reference, id", () => {
    const m = buildManifest(DAY, [
      entry({ productId: "p-10", productTitle: "Boat 10" }),
      entry({ productId: "p-2", productTitle: "Boat 2" }),
      entry({ productId: "p-n", productTitle: null }),
      entry({ productId: "p-a", productTitle: "aurora" }),
      entry({ productId: "p-2", productTitle: "Boat 2", rateId: "r-9", rateTitle: null }),
      entry({ productId: "p-2", productTitle: "Boat 2", rateId: "r-8", rateTitle: "Adult" })
    ])
    expect(m.departures.map((d) => `${d.product_title}/${d.rate_title}`)).toEqual([
      "aurora/Standard",
      "Boat 2/Adult",
      "Boat 2/Standard",
      "Boat 2/null",
      "Boat 10/Standard",
      "null/Standard"
    ])

    const rows = buildManifest(DAY, [
      entry({}, { guest: { name: null }, reference: "A" }),
      entry({}, { guest: { name: "Zoe" }, reference: "B" }),
      entry({}, { guest: { name: "émile" }, reference: "C" }),
      entry({}, { guest: { name: "Emil" }, reference: null }),
      entry({}, { guest: { name: "Emil" }, reference: "D" })
    ]).departures[0]!.bookings
    expect(rows.map((r) => `${r.guest.name}/${r.reference}`)).toEqual([
      "Emil/D",
      "Emil/null",
      "émile/C",
      "Zoe/B",
      "null/A"
    ])
  })

  it("cancelled rows follow their departure's order, then the row order", () => {
    const m = buildManifest(DAY, [
      entry({ startTime: "14:00" }, { status: "CANCELLED", guest: { name: "A" } }),
      entry({ startTime: "09:00" }, { status: "CANCELLED", guest: { name: "B" } }),
      entry({ startTime: "09:00" }, { status: "CANCELLED", guest: { name: "A" } })
    ])
    expect(m.cancelled.map((r) => r.guest.name)).toEqual(["A", "B", "A"])
    expect(m.totals.bookings).toBe(0)
  })
})

describe("buildManifest properties", () => {
  const key = fc.record({
    startTime: fc.option(fc.constantFrom("00:00", "01:30", "02:30", "03:00", "10:00", "23:59"), { nil: null }),
    timezone: fc.constantFrom("Europe/Oslo", "Europe/Lisbon"),
    productTitle: fc.option(fc.constantFrom("Fjord", "fjord", "Boat 2", "Boat 10", "Ø"), { nil: null }),
    rateTitle: fc.option(fc.constantFrom("Adult", "Family"), { nil: null }),
    accountId: fc.constantFrom("acc-1", "acc-2"),
    productId: fc.constantFrom("p-1", "p-2"),
    rateId: fc.option(fc.constantFrom("r-1", "r-2"), { nil: null })
  })
  const checkIn = fc.oneof(
    fc.constant({ status: null, present: null }),
    fc.record({ status: fc.constant("checked_in" as const), present: fc.option(fc.nat(12), { nil: null }) }),
    fc.constant({ status: "no_show" as const, present: null })
  )
  const entries = fc.array(
    fc.record({
      departure: key,
      status: fc.constantFrom("CONFIRMED" as const, "RESERVED" as const, "CANCELLED" as const),
      participants: fc.nat(9),
      name: fc.option(fc.constantFrom("Ana", "ana", "Bo", "Åse"), { nil: null }),
      checkIn
    }),
    { maxLength: 60 }
  ).map((xs) =>
    xs.map((x, i): ManifestEntry => ({
      departure: x.departure,
      row: row({
        id: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
        status: x.status,
        participants: x.participants,
        guest: { name: x.name },
        check_in: x.checkIn
      })
    }))
  )

  it("totals are the sums of the departures; every live row is in exactly one departure; cancelled rows only in cancelled", () => {
    fc.assert(fc.property(entries, (es) => {
      const m = buildManifest(DAY, es)
      const sum = (f: (d: (typeof m.departures)[number]) => number) => m.departures.reduce((n, d) => n + f(d), 0)
      expect(m.totals).toEqual({
        departures: m.departures.length,
        bookings: sum((d) => d.bookings.length),
        passengers: sum((d) => d.passengers),
        checked_in: sum((d) => d.checked_in),
        no_show: sum((d) => d.no_show)
      })
      const placed = m.departures.flatMap((d) => d.bookings.map((r) => r.id))
      const live = es.filter((e) => e.row.status !== "CANCELLED").map((e) => e.row.id)
      expect(placed.slice().sort()).toEqual(live.slice().sort())
      expect(new Set(placed).size).toBe(placed.length)
      expect(m.cancelled.map((r) => r.id).sort()).toEqual(
        es.filter((e) => e.row.status === "CANCELLED").map((e) => e.row.id).sort()
      )
      for (const d of m.departures) {
        expect(d.bookings.length).toBeGreaterThan(0)
        expect(d.passengers).toBe(d.bookings.reduce((n, r) => n + r.participants, 0))
        expect(d.checked_in + d.no_show).toBeLessThanOrEqual(d.passengers)
      }
    }))
  })

  it("departures are in order and the result does not depend on the order rows arrive in", () => {
    fc.assert(
      fc.property(
        entries.chain((es) =>
          fc.tuple(fc.constant(es), fc.shuffledSubarray(es, { minLength: es.length, maxLength: es.length }))
        ),
        ([es, shuffled]) => {
          const m = buildManifest(DAY, es)
          expect(buildManifest(DAY, shuffled)).toEqual(m)
          const keys = es.filter((e) => e.row.status !== "CANCELLED")
          const firstKeyOf = (d: (typeof m.departures)[number]) =>
            keys.find((e) => e.row.id === d.bookings[0]!.id)!.departure
          for (let i = 1; i < m.departures.length; i++) {
            expect(compareDepartures(firstKeyOf(m.departures[i - 1]!), firstKeyOf(m.departures[i]!))).toBeLessThan(0)
          }
        }
      )
    )
  })
})

describe("paxBreakdownOf", () => {
  it("keeps title and quantity of each stored line; anything but an array is null", () => {
    expect(paxBreakdownOf([{ pricingCategoryId: "1", title: "Adult", quantity: 2 }, { title: "Child", quantity: 1 }]))
      .toEqual([
        { title: "Adult", quantity: 2 },
        { title: "Child", quantity: 1 }
      ])
    expect(paxBreakdownOf([])).toEqual([])
    expect(paxBreakdownOf(null)).toBeNull()
    expect(paxBreakdownOf({ title: "Adult" })).toBeNull()
    expect(paxBreakdownOf([{ quantity: -1 }, null])).toEqual([{ title: "", quantity: 0 }, { title: "", quantity: 0 }])
  })
})
