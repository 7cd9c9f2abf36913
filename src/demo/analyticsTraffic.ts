/**
 * Demo site traffic (issue 14): 400 days of visits to both demo sites, fjordexplorer.no (owned by
 * Fjord Explorer, which also sells Arctic Whale Safari's tours there) and tejocruises.pt, with a
 * weekly and a seasonal rhythm (Norway peaks in July, Lisbon is milder), several sources per
 * dimension, and funnels that convert: every demo booking made on a site gets the visit that made
 * it (landing page → tour view → availability check → checkout open → checkout attempt with the
 * booking's confirmation code, minutes before its creation), beside many visits that do not book.
 *
 * Generated from a fixed seed on the first start. Only the last 35 days are raw `site_events` (the
 * raw events the service keeps); the rollups take them in before the service says it is ready. The
 * days before go straight into the daily tables, summed by the rollups' own rules (rules.ts
 * `rollUpBatch` on each day's generated events, in memory), and their months are folded by that
 * first run.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import {
  AnalyticsRollupsRepo,
  noSiteCounters,
  pgArray,
  type SiteCounters,
  type SourceCounters,
  type TourCounters
} from "../analytics/AnalyticsRollupsRepo.js"
import {
  attributionDeltas,
  type Dimension,
  monthOf,
  NEW_VISITORS,
  rollUpBatch,
  SITE_VISITORS,
  type SiteEvent
} from "../analytics/rules.js"
import { DailyRatesRepo } from "../rates/DailyRatesRepo.js"
import { addDays, convertMinor, makeRateTable } from "../rates/rules.js"

const DAY = /^\d{4}-\d{2}-\d{2}$/
const DAY_MS = 86_400_000
/** What PostgreSQL answers when a month is already covered: the same name, an overlap, a default partition's rows. */
const COVERED = new Set(["42P07", "42P17", "23514"])

/** Days of history, and how many of the latest are raw events. */
export const DEMO_TRAFFIC_DAYS = 400
export const DEMO_RAW_DAYS = 35

/**
 * Creates the monthly partitions of `site_events` covering [from, to] (ISO days) that no partition
 * covers yet: a month some other partition already covers (the collection's salt job names its own)
 * is left as it is.
 */
export const ensureEventPartitions = (from: string, to: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    if (!DAY.test(from) || !DAY.test(to)) return yield* Effect.dieMessage(`not ISO days: ${from}, ${to}`)
    const first = new Date(`${from.slice(0, 7)}-01T00:00:00Z`)
    const last = new Date(`${to.slice(0, 7)}-01T00:00:00Z`)
    // The ranges the partitions cover (read first: creating one locks the table against writers).
    const covered = yield* sql<{ from_at: Date; to_at: Date }>`
      SELECT substring(b FROM 'FROM [(]''([^'']+)''[)]')::timestamptz AS from_at,
        substring(b FROM 'TO [(]''([^'']+)''[)]')::timestamptz AS to_at
      FROM (SELECT pg_get_expr(c.relpartbound, c.oid) AS b FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'site_events'::regclass) p
      WHERE b LIKE 'FOR VALUES FROM%'`
    for (let m = first; m <= last; m = new Date(Date.UTC(m.getUTCFullYear(), m.getUTCMonth() + 1, 1))) {
      const next = new Date(Date.UTC(m.getUTCFullYear(), m.getUTCMonth() + 1, 1))
      if (covered.some((c) => c.from_at <= m && c.to_at >= next)) continue
      // Named as the collection names its own (site_events_yYYYYmMM), so its retention drops them too.
      const name = `site_events_y${m.toISOString().slice(0, 4)}m${m.toISOString().slice(5, 7)}`
      // Identifiers and bounds built from validated dates only (DDL takes no parameters).
      yield* sql.unsafe(
        `CREATE TABLE ${name} PARTITION OF site_events FOR VALUES FROM ('${m.toISOString()}') TO ('${next.toISOString()}')`
      ).pipe(
        Effect.catchIf((e) => COVERED.has(String((e.cause as { code?: unknown } | undefined)?.code)), () => Effect.void)
      )
    }
  }).pipe(Effect.orDie)

/** A small seeded generator (mulberry32): the same traffic on every fresh demo. */
const random = (seed: number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6D2B79F5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
type Random = () => number

const pick = <T>(rnd: Random, weighted: ReadonlyArray<readonly [T, number]>): T => {
  const total = weighted.reduce((n, [, w]) => n + w, 0)
  let r = rnd() * total
  for (const [value, w] of weighted) {
    r -= w
    if (r < 0) return value
  }
  return weighted[weighted.length - 1]![0]
}

interface Source {
  readonly channel: string
  readonly referrer: string | null
  readonly utm: readonly [string, string, string] | null
}

interface SiteProfile {
  readonly domain: string
  readonly base: number
  /** 0..1 over the year: how busy day-of-year `doy` is. */
  readonly season: (doy: number) => number
  readonly sources: ReadonlyArray<readonly [Source, number]>
  readonly countries: ReadonlyArray<readonly [string | null, number]>
}

const peak = (doy: number, at: number) => 0.5 + 0.5 * Math.cos((2 * Math.PI * (doy - at)) / 365)

const PROFILES: ReadonlyArray<SiteProfile> = [
  {
    domain: "fjordexplorer.no",
    base: 150,
    season: (doy) => 0.35 + 1.2 * peak(doy, 190) ** 1.5,
    sources: [
      [{ channel: "Organic Search", referrer: "google.com", utm: null }, 30],
      [{ channel: "Organic Search", referrer: "bing.com", utm: null }, 5],
      [{ channel: "Organic Search", referrer: "duckduckgo.com", utm: null }, 3],
      [{ channel: "Direct", referrer: null, utm: null }, 22],
      [{ channel: "Organic Social", referrer: "facebook.com", utm: null }, 7],
      [{ channel: "Organic Social", referrer: "instagram.com", utm: null }, 5],
      [{ channel: "Paid Search", referrer: "google.com", utm: ["google", "cpc", "summer-fjords"] }, 9],
      [{ channel: "Paid Social", referrer: "facebook.com", utm: ["facebook", "paid_social", "whales-winter"] }, 3],
      [{ channel: "Email", referrer: null, utm: ["newsletter", "email", "monthly"] }, 6],
      [{ channel: "Referral", referrer: "tripadvisor.com", utm: null }, 6],
      [{ channel: "Referral", referrer: "visitnorway.com", utm: null }, 4]
    ],
    countries: [["NO", 34], ["DE", 15], ["US", 12], ["GB", 10], ["SE", 8], ["NL", 6], ["FR", 5], ["ES", 4], [null, 3]]
  },
  {
    domain: "tejocruises.pt",
    base: 110,
    season: (doy) => 0.6 + 0.6 * peak(doy, 200),
    sources: [
      [{ channel: "Organic Search", referrer: "google.com", utm: null }, 34],
      [{ channel: "Organic Search", referrer: "bing.com", utm: null }, 4],
      [{ channel: "Direct", referrer: null, utm: null }, 20],
      [{ channel: "Organic Social", referrer: "instagram.com", utm: null }, 10],
      [{ channel: "Paid Search", referrer: "google.com", utm: ["google", "cpc", "lisbon-sunset"] }, 8],
      [{ channel: "Email", referrer: null, utm: ["newsletter", "email", "spring-offers"] }, 4],
      [{ channel: "Referral", referrer: "tripadvisor.com", utm: null }, 9],
      [{ channel: "Referral", referrer: "visitlisboa.com", utm: null }, 6],
      [{ channel: "Organic Video", referrer: "youtube.com", utm: null }, 5]
    ],
    countries: [["PT", 20], ["ES", 15], ["FR", 12], ["GB", 12], ["DE", 10], ["US", 10], ["BR", 8], ["NL", 5], [null, 3]]
  }
]

/** Mon..Sun (getUTCDay: Sun = 0). */
const WEEKLY = [1.3, 0.9, 0.9, 0.95, 1, 1.1, 1.35]

const device = (rnd: Random) => {
  const kind = pick(rnd, [["mobile", 58], ["desktop", 36], ["tablet", 6]] as const)
  if (kind === "desktop") {
    const browser = pick(rnd, [["Chrome", 58], ["Safari", 15], ["Firefox", 12], ["Microsoft Edge", 15]] as const)
    const os = browser === "Safari" ? "macOS" : pick(rnd, [["Windows", 62], ["macOS", 28], ["Linux", 10]] as const)
    return { device: kind, browser, os }
  }
  const browser = pick(rnd, [["Safari", 50], ["Chrome", 44], ["Samsung Internet", 6]] as const)
  const os = browser === "Safari" ? "iOS" : browser === "Samsung Internet" ? "Android" : rnd() < 0.7 ? "Android" : "iOS"
  return { device: kind, browser, os }
}

const hex = (rnd: Random) => {
  let s = ""
  while (s.length < 64) s += Math.floor(rnd() * 0x100000000).toString(16).padStart(8, "0")
  return s
}

interface DemoTour {
  readonly id: string
  readonly slug: string
}
interface DemoBooking {
  readonly code: string
  readonly tourId: string
  readonly createdAt: number
  readonly status: string
  readonly amountMinor: number
  readonly currency: string
}

/** One site's generated events of one UTC day, up to `until` (epoch ms). */
const dayEvents = (
  profile: SiteProfile,
  siteId: string,
  day: string,
  tours: ReadonlyArray<DemoTour>,
  bookings: ReadonlyArray<DemoBooking>,
  until: number,
  seed: number
): Array<SiteEvent> => {
  const rnd = random(seed)
  const start = Date.parse(`${day}T00:00:00Z`)
  const date = new Date(start)
  const doy = Math.floor((start - Date.UTC(date.getUTCFullYear(), 0, 1)) / DAY_MS)
  const visitors = Math.round(profile.base * WEEKLY[date.getUTCDay()]! * profile.season(doy) * (0.85 + 0.3 * rnd()))
  const events: Array<SiteEvent> = []
  const visit = (at0: number, booking: DemoBooking | null) => {
    const source = pick(rnd, profile.sources)
    const who = { visitor: hex(rnd), country: pick(rnd, profile.countries), ...device(rnd) }
    const newVisitor = rnd() < 0.7
    const tour = booking !== null
      ? tours.find((t) => t.id === booking.tourId) ?? tours[0]!
      : tours[Math.floor(rnd() * tours.length)]!
    const landing = booking !== null || rnd() < 0.45
      ? `/tours/${tour.slug}`
      : pick(
        rnd,
        [["/", 60], ["/about", 8], ["/blog/best-time-to-visit", 12], ["/contact", 5], ["/tours", 15]] as const
      )
    let at = at0
    const push = (kind: SiteEvent["kind"], path: string, extra: Partial<SiteEvent> = {}) => {
      if (at > until) return
      events.push({
        id: 0,
        at,
        siteId,
        kind,
        visitor: who.visitor,
        newVisitor: newVisitor && at === at0,
        tourId: null,
        path,
        referrerHost: at === at0 ? source.referrer : profile.domain,
        channel: at === at0 ? source.channel : "Direct",
        utmSource: at === at0 ? source.utm?.[0] ?? null : null,
        utmMedium: at === at0 ? source.utm?.[1] ?? null : null,
        utmCampaign: at === at0 ? source.utm?.[2] ?? null : null,
        country: who.country,
        device: who.device,
        browser: who.browser,
        os: who.os,
        bookingCode: null,
        ...extra
      })
      at += Math.floor((20 + rnd() * 160) * 1000)
    }
    push("pageview", landing)
    if (booking === null && rnd() < 0.42) return // a bounce
    const more = Math.floor(rnd() * 3)
    for (let i = 0; i < more; i++) {
      push("pageview", pick(rnd, [["/tours", 40], ["/", 20], ["/about", 10], [`/tours/${tour.slug}`, 30]] as const))
    }
    const path = `/tours/${tour.slug}`
    if (booking === null && rnd() < 0.35) return
    push("tour_view", path, { tourId: tour.id })
    if (booking === null && rnd() < 0.5) return
    push("availability_check", path, { tourId: tour.id })
    if (booking === null && rnd() < 0.55) return
    push("checkout_open", path, { tourId: tour.id })
    if (booking === null && rnd() < 0.7) return
    // A checkout attempt: with the booking's code when it made one (an attempt that failed has none).
    push("checkout_attempt", path, { tourId: tour.id, bookingCode: booking?.code ?? null })
  }
  for (let i = 0; i < visitors; i++) {
    // Local daytime for the visitors, most of them: 05:00-22:00 UTC.
    visit(start + Math.floor((5 + rnd() * 17) * 3_600_000), null)
  }
  // The visits that made the day's bookings: the attempt a few minutes before the booking's creation.
  for (const b of bookings) {
    const at0 = Math.max(start, b.createdAt - Math.floor((4 + rnd() * 10) * 60_000))
    visit(at0, b)
  }
  return events
}

/**
 * Writes the demo's site traffic (first start only: nothing is written when the sites already have
 * some). Answers how many raw events and daily rows it wrote.
 */
export const seedDemoTraffic = (now: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* AnalyticsRollupsRepo
    const ratesRepo = yield* DailyRatesRepo
    const [state] = yield* sql<{ empty: boolean }>`
      SELECT NOT EXISTS (SELECT 1 FROM analytics_site_daily) AND NOT EXISTS (SELECT 1 FROM site_events) AS empty`
    if (!state!.empty) return { rawEvents: 0, days: 0 }
    const sites = yield* sql<{ id: string; domain: string }>`
      SELECT id, domain FROM sites WHERE domain IN ${sql.in(PROFILES.map((p) => p.domain))}`
    const tourRows = yield* sql<{ site_id: string; id: string; slug: string }>`
      SELECT st.site_id, t.id, t.slug FROM site_tours st JOIN tours t ON t.id = st.tour_id
      WHERE t.status = 'published' AND t.slug IS NOT NULL ORDER BY st.position`
    const today = new Date(now).toISOString().slice(0, 10)
    const first = addDays(today, -(DEMO_TRAFFIC_DAYS - 1))
    const rawFrom = addDays(today, -(DEMO_RAW_DAYS - 1))
    const bookingRows = yield* sql<
      {
        code: string
        site_id: string
        tour_id: string
        created_at: Date
        status: string
        amount_minor: number
        currency: string
      }
    >`
      SELECT confirmation_code AS code, site_id, tour_id, created_at, status, amount_minor, currency::text AS currency
      FROM bookings WHERE site_id IS NOT NULL AND tour_id IS NOT NULL
        AND status IN ('RESERVED', 'CONFIRMED', 'CANCELLED', 'REFUNDED')
        AND created_at >= ${first}::date AND created_at <= ${new Date(now)}`
    const rates = makeRateTable(yield* ratesRepo.range({ currencies: ["EUR"], from: addDays(first, -7), to: today }))
    const byCode = new Map(bookingRows.map((b) => [b.code, b]))

    const raw: Array<SiteEvent> = []
    const site: Array<SiteCounters> = []
    const sources: Array<SourceCounters> = []
    const tours: Array<TourCounters> = []
    let days = 0
    for (const [index, profile] of PROFILES.entries()) {
      const siteId = sites.find((s) => s.domain === profile.domain)?.id
      if (siteId === undefined) continue
      const siteTours = tourRows.filter((t) => t.site_id === siteId)
      if (siteTours.length === 0) continue
      const bookingsByDay = new Map<string, Array<DemoBooking>>()
      for (const b of bookingRows.filter((b) => b.site_id === siteId)) {
        const day = b.created_at.toISOString().slice(0, 10)
        const list = bookingsByDay.get(day) ?? []
        list.push({
          code: b.code,
          tourId: b.tour_id,
          createdAt: b.created_at.getTime(),
          status: b.status,
          amountMinor: b.amount_minor,
          currency: b.currency
        })
        bookingsByDay.set(day, list)
      }
      for (let day = first; day <= today; day = addDays(day, 1)) {
        const events = dayEvents(
          profile,
          siteId,
          day,
          siteTours,
          bookingsByDay.get(day) ?? [],
          now,
          (index + 1) * 100_003 + Date.parse(day) / DAY_MS
        )
        if (day >= rawFrom) {
          raw.push(...events)
          continue
        }
        // An older day: summed by the rollups' own rules, straight into the daily rows.
        days += 1
        events.sort((a, b) => a.at - b.at)
        events.forEach((e, i) => (e as { id: number }).id = i + 1)
        const r = rollUpBatch(events, [])
        const counters = noSiteCounters(siteId, day)
        for (const d of r.site) {
          counters.sessions += d.sessions
          counters.pageviews += d.pageviews
          counters.bounces += d.bounces
          counters.durationSeconds += d.durationSeconds
        }
        const labels = new Map<string, SourceCounters>()
        for (const k of r.seen) {
          if (k.dimension === SITE_VISITORS) counters.visitors += 1
          else if (k.dimension === NEW_VISITORS) counters.newVisitors += 1
          else {
            const key = `${k.dimension}|${k.label}`
            const row = labels.get(key) ??
              {
                siteId,
                day,
                dimension: k.dimension as Dimension,
                label: k.label,
                visitors: 0,
                conversions: 0,
                revenue: 0
              }
            row.visitors += 1
            labels.set(key, row)
          }
        }
        const conversions = attributionDeltas(r.attempts.flatMap((a) => {
          const b = byCode.get(a.bookingCode)
          if (b === undefined || b.site_id !== siteId) return []
          const live = b.status === "RESERVED" || b.status === "CONFIRMED"
          const revenue = live ? convertMinor(rates, b.amount_minor, b.currency, "EUR", day) ?? 0 : 0
          return [{ ...a, before: { live: false, revenue: 0 }, after: { live, revenue } }]
        }))
        for (const c of conversions) {
          const key = `${c.dimension}|${c.label}`
          const row = labels.get(key) ??
            { siteId, day, dimension: c.dimension, label: c.label, visitors: 0, conversions: 0, revenue: 0 }
          row.conversions += c.conversions
          row.revenue += c.revenue
          labels.set(key, row)
        }
        site.push(counters)
        sources.push(...labels.values())
        const steps = new Map<string, TourCounters>()
        for (const s of r.steps) {
          const row = steps.get(s.tourId) ??
            { siteId, tourId: s.tourId, day, views: 0, availabilityChecks: 0, checkoutOpens: 0, checkoutAttempts: 0 }
          if (s.kind === "tour_view") row.views += 1
          else if (s.kind === "availability_check") row.availabilityChecks += 1
          else if (s.kind === "checkout_open") row.checkoutOpens += 1
          else if (s.kind === "checkout_attempt") row.checkoutAttempts += 1
          steps.set(s.tourId, row)
        }
        tours.push(...steps.values())
      }
    }
    for (let i = 0; i < site.length; i += 5_000) yield* repo.addSiteDaily(site.slice(i, i + 5_000))
    for (let i = 0; i < sources.length; i += 5_000) yield* repo.addSourceDaily(sources.slice(i, i + 5_000))
    for (let i = 0; i < tours.length; i += 5_000) yield* repo.addTourDaily(tours.slice(i, i + 5_000))
    yield* repo.markDirty([
      ...new Map(site.map((s) => [`${s.siteId}|${monthOf(s.day)}`, { siteId: s.siteId, month: monthOf(s.day) }]))
        .values()
    ])

    // The raw days, in time order (ids follow arrival, as the collection writes them).
    raw.sort((a, b) => a.at - b.at)
    yield* ensureEventPartitions(rawFrom, today)
    for (let i = 0; i < raw.length; i += 10_000) {
      const chunk = raw.slice(i, i + 10_000)
      const col = <K extends keyof SiteEvent>(k: K) =>
        pgArray(chunk.map((e) => e[k] as string | number | boolean | null))
      yield* sql`
        INSERT INTO site_events (at, site_id, kind, visitor, new_visitor, tour_id, path, referrer_host, channel,
          utm_source, utm_medium, utm_campaign, country, device, browser, os, booking_code)
        SELECT * FROM unnest(${pgArray(chunk.map((e) => new Date(e.at).toISOString()))}::timestamptz[],
          ${col("siteId")}::uuid[], ${col("kind")}::text[], ${col("visitor")}::text[], ${col("newVisitor")}::boolean[],
          ${col("tourId")}::uuid[], ${col("path")}::text[], ${col("referrerHost")}::text[], ${col("channel")}::text[],
          ${col("utmSource")}::text[], ${col("utmMedium")}::text[], ${col("utmCampaign")}::text[],
          ${col("country")}::char(2)[], ${col("device")}::text[], ${col("browser")}::text[], ${col("os")}::text[],
          ${col("bookingCode")}::text[])`
    }
    return { rawEvents: raw.length, days }
  }).pipe(Effect.withSpan("Demo.seedTraffic"))
