/** The pure rules of the analytics rollups (src/analytics/rules.ts): sessions and attributions. */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { attributionDeltas, NONE, rollUpBatch, type Session, type SiteEvent } from "../../src/analytics/rules.js"

const SITE = "00000000-0000-0000-0000-000000000001"
let nextId = 1
const ev = (at: string | number, visitor = "v", extra: Partial<SiteEvent> = {}): SiteEvent => ({
  id: nextId++,
  at: typeof at === "number" ? at : Date.parse(at),
  siteId: SITE,
  kind: "pageview",
  visitor,
  newVisitor: false,
  tourId: null,
  path: "/",
  referrerHost: null,
  channel: "Direct",
  utmSource: null,
  utmMedium: null,
  utmCampaign: null,
  country: null,
  device: "desktop",
  browser: "Firefox",
  os: "Linux",
  bookingCode: null,
  ...extra
})

/** Rolls `events` up in the given batches, carrying the sessions over as the database would. */
const inBatches = (batches: ReadonlyArray<ReadonlyArray<SiteEvent>>) => {
  const sessions = new Map<number, Session>()
  const totals = new Map<string, { sessions: number; pageviews: number; bounces: number; durationSeconds: number }>()
  for (const batch of batches) {
    const r = rollUpBatch(batch, [...sessions.values()])
    for (const s of r.sessions) sessions.set(s.id, s)
    for (const d of r.site) {
      const t = totals.get(d.day) ?? { sessions: 0, pageviews: 0, bounces: 0, durationSeconds: 0 }
      t.sessions += d.sessions
      t.pageviews += d.pageviews
      t.bounces += d.bounces
      t.durationSeconds += d.durationSeconds
      totals.set(d.day, t)
    }
  }
  return { sessions: [...sessions.values()], totals }
}

describe("rollUpBatch", () => {
  it("a gap of 30 minutes continues a session, 30 minutes and a second starts one; the start day keeps it", () => {
    const { sessions, totals } = inBatches([[
      ev("2026-03-10T23:45:00Z"),
      ev("2026-03-11T00:15:00Z"),
      ev("2026-03-11T00:45:01Z")
    ]])
    expect(sessions.map((s) => [s.startDay, s.pageviews])).toEqual([["2026-03-10", 2], ["2026-03-11", 1]])
    expect(totals.get("2026-03-10")).toEqual({ sessions: 1, pageviews: 1, bounces: 0, durationSeconds: 1800 })
    expect(totals.get("2026-03-11")).toEqual({ sessions: 1, pageviews: 2, bounces: 1, durationSeconds: 0 })
  })

  it("a session's labels are its first event's; absent values are (none)", () => {
    const { sessions } = inBatches([[
      ev("2026-03-10T10:00:00Z", "v", { channel: "Paid Search", utmSource: "google", path: "/landing" }),
      ev("2026-03-10T10:01:00Z", "v", { channel: "Referral", referrerHost: "fjordexplorer.no", path: "/tours" })
    ]])
    expect(sessions[0]!.labels).toEqual([
      "Paid Search",
      NONE,
      "google",
      NONE,
      NONE,
      NONE,
      "desktop",
      "Firefox",
      "Linux",
      "/landing"
    ])
  })

  it("property: however the events are split into batches, the days' counters are the same", () => {
    const base = Date.parse("2026-03-10T22:00:00Z")
    const arbitraryEvents = fc.array(
      fc.record({
        minute: fc.integer({ min: 0, max: 240 }),
        visitor: fc.constantFrom("a", "b", "c"),
        kind: fc.constantFrom("pageview", "pageview", "tour_view")
      }),
      { minLength: 1, maxLength: 40 }
    )
    fc.assert(fc.property(arbitraryEvents, fc.integer({ min: 1, max: 10 }), (raw, size) => {
      // Events in time order, as ids follow arrival.
      const events = [...raw].sort((x, y) => x.minute - y.minute).map((r) =>
        ev(base + r.minute * 60_000, r.visitor, { kind: r.kind })
      )
      const whole = inBatches([events]).totals
      const batches: Array<Array<SiteEvent>> = []
      for (let i = 0; i < events.length; i += size) batches.push(events.slice(i, i + size))
      const split = inBatches(batches).totals
      const clean = (m: Map<string, object>) =>
        Object.fromEntries(
          [...m.entries()].filter(([, t]) => Object.values(t).some((n) => n !== 0)).sort(([a], [b]) =>
            a.localeCompare(b)
          )
        )
      expect(clean(split)).toEqual(clean(whole))
      // Every session is counted once and the pageviews are all there.
      const sessionsCounted = [...whole.values()].reduce((n, t) => n + t.sessions, 0)
      expect(sessionsCounted).toBe(inBatches([events]).sessions.length)
      expect([...whole.values()].reduce((n, t) => n + t.pageviews, 0)).toBe(
        events.filter((e) => e.kind === "pageview").length
      )
    }))
  })
})

describe("attributionDeltas", () => {
  const labels = ["Email", NONE, NONE, NONE, NONE, "NO", "mobile", "Safari", "iOS", "/"]
  const change = (before: [boolean, number], after: [boolean, number], sessionId = 1) => ({
    siteId: SITE,
    sessionId,
    startDay: "2026-07-01",
    labels,
    before: { live: before[0], revenue: before[1] },
    after: { live: after[0], revenue: after[1] }
  })

  it("a session converts once however many bookings it made; a cancellation takes back its part", () => {
    const made = attributionDeltas([change([false, 0], [true, 1000]), change([false, 0], [true, 500])])
    expect(made.find((d) => d.dimension === "channel")).toMatchObject({ label: "Email", conversions: 1, revenue: 1500 })
    expect(made).toHaveLength(10)
    const oneCancelled = attributionDeltas([change([true, 1000], [false, 0]), change([true, 500], [true, 500])])
    expect(oneCancelled.find((d) => d.dimension === "channel")).toMatchObject({ conversions: 0, revenue: -1000 })
    const bothCancelled = attributionDeltas([change([true, 1000], [false, 0]), change([true, 500], [false, 0])])
    expect(bothCancelled.find((d) => d.dimension === "channel")).toMatchObject({ conversions: -1, revenue: -1500 })
    expect(attributionDeltas([change([true, 1000], [true, 1000])])).toEqual([])
  })
})
