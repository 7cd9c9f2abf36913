/**
 * The site analytics rollups (src/analytics/AnalyticsRollups.ts) on a real PostgreSQL: events in
 * site_events as the collection writes them, runs as the job runs them, the daily and monthly tables
 * read back.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Clock, Effect, Exit, Fiber } from "effect"
import pg from "pg"
import { insertBooking, makeWorld } from "../support/fixtures.js"
import { insertRate } from "../support/sales.js"
import { TestServer, testServer } from "../support/server.js"
import { createSite, insertTour } from "../support/tours.js"
import { insertEvents, runRollups, runRollupsAt, siteDays, snapshot, sourceRows, tourRows, visitor } from "./support.js"

const sum = <T>(xs: ReadonlyArray<T>, f: (x: T) => number) => xs.reduce((n, x) => n + f(x), 0)

const newSite = Effect.gen(function*() {
  const w = yield* makeWorld
  const site = yield* createSite(w.alpha, "Analytics")
  const tour = yield* insertTour({ operatorId: w.alpha, sites: [site] })
  return { ...w, site, tour }
})

layer(testServer(), { excludeTestServices: true, timeout: 120_000 })("analytics rollups", (it) => {
  it.effect("sessions: gaps of at most 30 minutes, counted on the day they start across UTC midnight; bounces; days add up", () =>
    Effect.gen(function*() {
      const { site, tour } = yield* newSite
      const [a, b, c] = [visitor(), visitor(), visitor()]
      yield* insertEvents([
        // a: one session from 23:50 on 10 March to 00:40 on 11 March (gaps of 20 and exactly 30 minutes) ...
        {
          at: "2026-03-10T23:50:00Z",
          site,
          visitor: a,
          newVisitor: true,
          channel: "Organic Search",
          referrer: "google.com"
        },
        { at: "2026-03-11T00:10:00Z", site, visitor: a, path: "/tours" },
        { at: "2026-03-11T00:40:00Z", site, visitor: a },
        // ... then a second one: 30 minutes and 1 second later, a single pageview (a bounce).
        { at: "2026-03-11T01:10:01Z", site, visitor: a },
        // b: one pageview and a tour view 20 minutes later: one session, one pageview (a bounce), 1,200 s.
        { at: "2026-03-11T10:00:00Z", site, visitor: b },
        { at: "2026-03-11T10:20:00Z", site, visitor: b, kind: "tour_view", tourId: tour },
        // c: a tour view only: a session with no pageview (no bounce).
        { at: "2026-03-11T12:00:00Z", site, visitor: c, kind: "tour_view", tourId: tour }
      ])
      // Two events per batch: sessions go on across batches (and transactions).
      const result = yield* runRollups({ ANALYTICS_ROLLUP_BATCH_SIZE: "2" })
      expect(result.batches).toBeGreaterThanOrEqual(4)

      const days = yield* siteDays(site)
      expect(days).toEqual([
        {
          day: "2026-03-10",
          visitors: 1,
          new_visitors: 1,
          sessions: 1,
          pageviews: 1,
          bounces: 0,
          duration_seconds: 3000
        },
        {
          day: "2026-03-11",
          visitors: 3,
          new_visitors: 0,
          sessions: 3,
          pageviews: 4,
          bounces: 2,
          duration_seconds: 1200
        }
      ])
      // Over the range: the sum of the days (4 sessions in all, 5 pageviews, 2 bounces).
      expect(sum(days, (d) => d.sessions)).toBe(4)
      expect(sum(days, (d) => d.pageviews)).toBe(5)

      // A session's labels are its first event's: a's visit came from Organic Search on 10 March.
      expect(yield* sourceRows(site, "channel")).toEqual([
        { day: "2026-03-10", label: "Organic Search", visitors: 1, conversions: 0, revenue_eur_minor: 0 },
        { day: "2026-03-11", label: "Direct", visitors: 3, conversions: 0, revenue_eur_minor: 0 }
      ])
      expect((yield* sourceRows(site, "referrer")).map((r) => [r.day, r.label, r.visitors])).toEqual([
        ["2026-03-10", "google.com", 1],
        ["2026-03-11", "(none)", 3]
      ])
      expect((yield* sourceRows(site, "path")).map((r) => [r.day, r.label, r.visitors])).toEqual([
        ["2026-03-10", "/", 1],
        ["2026-03-11", "/", 3],
        ["2026-03-11", "/tours", 1]
      ])
      // The funnel: distinct sessions that viewed the tour.
      expect((yield* tourRows(site)).map((r) => [r.day, r.views, r.checkout_attempts])).toEqual([["2026-03-11", 2, 0]])

      // March is a closed month: its monthly row is the sum of its days.
      const sql = yield* SqlClient.SqlClient
      const [month] = yield* sql<any>`SELECT * FROM analytics_site_monthly WHERE site_id = ${site}`
      expect(month).toMatchObject({
        month: "2026-03-01",
        visitors: 4,
        new_visitors: 1,
        sessions: 4,
        pageviews: 5,
        bounces: 2,
        duration_seconds: 4200
      })

      // A run with nothing new changes nothing.
      const before = yield* snapshot(site)
      yield* runRollups()
      expect(yield* snapshot(site)).toEqual(before)
    }))

  it.effect("an event inserted now shows after the next run, not before", () =>
    Effect.gen(function*() {
      const { site } = yield* newSite
      const now = new Date(yield* Clock.currentTimeMillis).toISOString()
      const today = now.slice(0, 10)
      yield* runRollups()
      yield* insertEvents([{ at: now, site, visitor: visitor(), newVisitor: true }])
      expect(yield* siteDays(site)).toEqual([])
      yield* runRollups()
      expect((yield* siteDays(site)).map((d) => [d.day, d.visitors, d.new_visitors])).toEqual([[today, 1, 1]])
      yield* insertEvents([{ at: now, site, visitor: visitor() }])
      expect((yield* siteDays(site))[0]!.visitors).toBe(1)
      yield* runRollups()
      expect((yield* siteDays(site))[0]!.visitors).toBe(2)
    }))

  describe("a run that crashes half-way and runs again", () => {
    for (const step of ["analyticsRollups.after_dedupe", "analyticsRollups.before_watermark"]) {
      it.effect(`counts nothing twice (crash at ${step})`, () =>
        Effect.gen(function*() {
          const { site, tour } = yield* newSite
          yield* runRollups()
          const sql = yield* SqlClient.SqlClient
          const watermark = () =>
            Effect.map(
              sql<{ last_id: number }>`SELECT last_id FROM analytics_rollup_state WHERE rollup = 'events'`,
              (rows) => rows[0]?.last_id ?? 0
            )
          const mark = yield* watermark()
          const [a, b] = [visitor(), visitor()]
          yield* insertEvents([
            { at: "2026-04-02T09:00:00Z", site, visitor: a, newVisitor: true, channel: "Email" },
            { at: "2026-04-02T09:01:00Z", site, visitor: a, kind: "tour_view", tourId: tour },
            { at: "2026-04-02T09:02:00Z", site, visitor: a, kind: "availability_check", tourId: tour },
            { at: "2026-04-02T09:03:00Z", site, visitor: b, channel: "Email" },
            { at: "2026-04-02T09:04:00Z", site, visitor: a }
          ])
          const crashed = yield* Effect.exit(runRollups({ CRASH_AT: step }))
          expect(Exit.isFailure(crashed)).toBe(true)
          // Nothing of the crashed batch stayed: no counter, no dedupe key, the watermark where it was.
          expect(yield* siteDays(site)).toEqual([])
          expect(yield* watermark()).toBe(mark)
          const [keys] = yield* sql<{ n: number }>`
            SELECT count(*)::int AS n FROM analytics_seen_visitors WHERE site_id = ${site}`
          expect(keys!.n).toBe(0)

          yield* runRollups()
          yield* runRollups()
          expect(yield* siteDays(site)).toEqual([{
            day: "2026-04-02",
            visitors: 2,
            new_visitors: 1,
            sessions: 2,
            pageviews: 3,
            bounces: 1,
            duration_seconds: 240
          }])
          expect(yield* sourceRows(site, "channel")).toEqual([
            { day: "2026-04-02", label: "Email", visitors: 2, conversions: 0, revenue_eur_minor: 0 }
          ])
          expect((yield* tourRows(site)).map((r) => [r.views, r.availability_checks])).toEqual([[1, 1]])
        }))
    }
  })

  it.effect("an id drawn by a writer still in flight is not stepped over (the safe window)", () =>
    Effect.gen(function*() {
      const { site } = yield* newSite
      yield* runRollups()
      const { databaseUrl } = yield* TestServer
      const slow = new pg.Client({ connectionString: databaseUrl })
      yield* Effect.acquireRelease(Effect.promise(() => slow.connect()), () => Effect.promise(() => slow.end()))
      yield* insertEvents([{ at: "2026-05-05T08:00:00Z", site, visitor: visitor() }]) // makes the partition
      yield* runRollups()
      // A writer draws an id and has not committed yet; a faster one draws the next id and commits.
      yield* Effect.promise(() => slow.query("BEGIN"))
      yield* Effect.promise(() =>
        slow.query(
          `INSERT INTO site_events (at, site_id, kind, visitor, new_visitor, path, channel, device, browser, os)
           VALUES ('2026-05-05T09:00:00Z', $1, 'pageview', $2, false, '/', 'Direct', 'desktop', 'Firefox', 'Linux')`,
          [site, visitor()]
        )
      )
      yield* insertEvents([{ at: "2026-05-05T09:00:01Z", site, visitor: visitor() }])

      // A run whose wait for the writer times out takes in nothing new (not the later id alone).
      const waited = yield* runRollups({ ANALYTICS_ROLLUP_LOCK_TIMEOUT_MS: "200" })
      expect(waited.safeId).toBeNull()
      expect(waited.events).toBe(0)
      expect((yield* siteDays(site))[0]!.visitors).toBe(1)

      // A run that waits: the writer commits while it waits, and both events are taken in.
      const run = yield* Effect.fork(runRollups({ ANALYTICS_ROLLUP_LOCK_TIMEOUT_MS: "20000" }))
      yield* Effect.sleep("300 millis")
      yield* Effect.promise(() => slow.query("COMMIT"))
      const result = yield* Fiber.join(run)
      expect(result.events).toBe(2)
      expect((yield* siteDays(site))[0]!.visitors).toBe(3)
    }).pipe(Effect.scoped))

  it.effect("the monthly tier: closed months are the sums of their days, folded again when a day changes", () =>
    Effect.gen(function*() {
      const { site } = yield* newSite
      const sql = yield* SqlClient.SqlClient
      const monthly = () =>
        sql<any>`
          SELECT month, visitors, sessions, pageviews, bounces, duration_seconds FROM analytics_site_monthly
          WHERE site_id = ${site} ORDER BY month`
      const sourceMonthly = () =>
        sql<any>`
          SELECT month, dimension, label, visitors, conversions, revenue_eur_minor FROM analytics_source_monthly
          WHERE site_id = ${site} ORDER BY month, dimension, label`
      const sumsOfDays = () =>
        sql<any>`
          SELECT date_trunc('month', day)::date::text AS month, dimension, label, sum(visitors)::int AS visitors,
            sum(conversions)::int AS conversions, sum(revenue_eur_minor)::bigint AS revenue_eur_minor
          FROM analytics_source_daily WHERE site_id = ${site} GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`
      yield* insertEvents([
        { at: "2025-04-29T10:00:00Z", site, visitor: visitor(), channel: "Email" },
        { at: "2025-04-30T23:50:00Z", site, visitor: visitor(), channel: "Referral", referrer: "example.org" },
        { at: "2025-05-01T00:10:00Z", site, visitor: visitor() }
      ])
      // Mid-May: April is closed and folded, May is not.
      yield* runRollupsAt("2025-05-15T12:00:00Z")
      expect(yield* monthly()).toEqual([
        { month: "2025-04-01", visitors: 2, sessions: 2, pageviews: 2, bounces: 2, duration_seconds: 0 }
      ])
      // June: May is folded too, and each month's sources are the sums of its days.
      yield* runRollupsAt("2025-06-02T00:00:00Z")
      expect((yield* monthly()).map((m: any) => m.month)).toEqual(["2025-04-01", "2025-05-01"])
      expect(yield* sourceMonthly()).toEqual(yield* sumsOfDays())

      // A late event on a day of a closed month: the month is folded again.
      const late = visitor()
      yield* insertEvents([
        { at: "2025-04-29T11:00:00Z", site, visitor: late, channel: "Email" },
        { at: "2025-04-29T11:05:00Z", site, visitor: late, channel: "Email" }
      ])
      yield* runRollupsAt("2025-06-02T00:05:00Z")
      expect((yield* monthly())[0]).toEqual({
        month: "2025-04-01",
        visitors: 3,
        sessions: 3,
        pageviews: 4,
        bounces: 2,
        duration_seconds: 300
      })
      expect(yield* sourceMonthly()).toEqual(yield* sumsOfDays())
      const [days] = yield* sql<any>`
        SELECT sum(visitors)::int AS visitors, sum(sessions)::int AS sessions, sum(pageviews)::int AS pageviews
        FROM analytics_site_daily WHERE site_id = ${site} AND day < '2025-05-01'`
      expect(days).toEqual({ visitors: 3, sessions: 3, pageviews: 4 })
    }))

  it.effect("dedupe keys and sessions are pruned after two days", () =>
    Effect.gen(function*() {
      const { site, tour } = yield* newSite
      const sql = yield* SqlClient.SqlClient
      const kept = () =>
        sql<{ visitors: number; steps: number; sessions: number }>`
          SELECT (SELECT count(*) FROM analytics_seen_visitors WHERE site_id = ${site} AND day = '2026-06-01')::int
              AS visitors,
            (SELECT count(*) FROM analytics_seen_steps WHERE site_id = ${site} AND day = '2026-06-01')::int AS steps,
            (SELECT count(*) FROM analytics_sessions WHERE site_id = ${site} AND start_day = '2026-06-01')::int
              AS sessions`.pipe(Effect.map((rows) => rows[0]!))
      const v = visitor()
      yield* insertEvents([
        { at: "2026-06-01T10:00:00Z", site, visitor: v },
        { at: "2026-06-01T10:01:00Z", site, visitor: v, kind: "tour_view", tourId: tour }
      ])
      yield* runRollups()
      const before = yield* kept()
      expect(before.visitors).toBeGreaterThan(0)
      expect(before.steps).toBe(1)
      expect(before.sessions).toBe(1)
      // The next day's events keep them (a session may run past midnight) ...
      yield* insertEvents([{ at: "2026-06-02T10:00:00Z", site, visitor: visitor() }])
      yield* runRollups()
      expect(yield* kept()).toEqual(before)
      // ... two days later they are gone; the daily counts stay.
      yield* insertEvents([{ at: "2026-06-03T10:00:00Z", site, visitor: visitor() }])
      const result = yield* runRollups()
      expect(yield* kept()).toEqual({ visitors: 0, steps: 0, sessions: 0 })
      expect(result.pruned!.visitorKeys).toBeGreaterThan(0)
      expect((yield* siteDays(site)).map((d) => [d.day, d.visitors])).toEqual([
        ["2026-06-01", 1],
        ["2026-06-02", 1],
        ["2026-06-03", 1]
      ])
    }))

  it.effect("conversions and revenue per source follow the bookings: made later, cancelled later, on the site only", () =>
    Effect.gen(function*() {
      const w = yield* newSite
      const { site, tour } = w
      const other = yield* createSite(w.alpha, "Other")
      const sql = yield* SqlClient.SqlClient
      const book = (code: string, siteId: string, amountMinor: number, currency: string) =>
        Effect.flatMap(
          insertBooking({
            operatorId: w.alpha,
            tourId: tour,
            amountMinor,
            currency,
            createdAt: new Date("2026-07-01T10:06:00Z")
          }),
          (id) =>
            sql`UPDATE bookings SET confirmation_code = ${code}, site_id = ${siteId} WHERE id = ${id}`.pipe(
              Effect.orDie
            )
        )
      const codes = { paid: `PAID-${w.tag}`, late: `LATE-${w.tag}`, elsewhere: `ELSE-${w.tag}` }
      yield* insertRate("EUR", "2026-07-01", 11.5)
      yield* book(codes.paid, site, 5000, "EUR")
      yield* book(codes.elsewhere, other, 7000, "EUR")
      const [v, x, z] = [visitor(), visitor(), visitor()]
      yield* insertEvents([
        { at: "2026-07-01T10:00:00Z", site, visitor: v, channel: "Paid Search", utmSource: "google" },
        {
          at: "2026-07-01T10:04:00Z",
          site,
          visitor: v,
          kind: "checkout_attempt",
          tourId: tour,
          bookingCode: codes.paid
        },
        // The same code twice in the session: one conversion.
        {
          at: "2026-07-01T10:05:00Z",
          site,
          visitor: v,
          kind: "checkout_attempt",
          tourId: tour,
          bookingCode: codes.paid
        },
        { at: "2026-07-01T11:00:00Z", site, visitor: x, channel: "Email" },
        {
          at: "2026-07-01T11:02:00Z",
          site,
          visitor: x,
          kind: "checkout_attempt",
          tourId: tour,
          bookingCode: codes.late
        },
        // A code of a booking made on another site does not convert here.
        { at: "2026-07-01T12:00:00Z", site, visitor: z, channel: "Organic Social" },
        {
          at: "2026-07-01T12:01:00Z",
          site,
          visitor: z,
          kind: "checkout_attempt",
          tourId: tour,
          bookingCode: codes.elsewhere
        }
      ])
      yield* runRollups()
      const channels = () =>
        Effect.map(
          sourceRows(site, "channel"),
          (rows) => rows.map((r) => [r.label, r.conversions, r.revenue_eur_minor])
        )
      expect(yield* channels()).toEqual([
        ["Email", 0, 0],
        ["Organic Social", 0, 0],
        ["Paid Search", 1, 5000]
      ])
      expect((yield* sourceRows(site, "utm_source")).map((r) => [r.label, r.conversions])).toEqual([
        ["(none)", 0],
        ["google", 1]
      ])
      expect((yield* tourRows(site)).map((r) => r.checkout_attempts)).toEqual([3])

      // The booking behind the Email visit is made after its event was rolled up: NOK 115.00 at 11.5 NOK/EUR.
      yield* book(codes.late, site, 11500, "NOK")
      yield* runRollups()
      expect(yield* channels()).toEqual([
        ["Email", 1, 1000],
        ["Organic Social", 0, 0],
        ["Paid Search", 1, 5000]
      ])
      // The paid one is cancelled later: its conversion and revenue leave the day it was credited to,
      // and the closed month is folded again.
      yield* sql`UPDATE bookings SET status = 'CANCELLED' WHERE confirmation_code = ${codes.paid}`
      yield* runRollups()
      expect(yield* channels()).toEqual([
        ["Email", 1, 1000],
        ["Organic Social", 0, 0],
        ["Paid Search", 0, 0]
      ])
      const month = yield* sql<any>`
        SELECT label, conversions, revenue_eur_minor FROM analytics_source_monthly
        WHERE site_id = ${site} AND dimension = 'channel' ORDER BY label`
      expect(month.map((m: any) => [m.label, m.conversions, m.revenue_eur_minor])).toEqual(yield* channels())
      // A run with nothing new changes nothing.
      yield* runRollups()
      expect((yield* channels())[2]).toEqual(["Paid Search", 0, 0])
    }))

  it.effect("a conversion's revenue waits for its day's exchange rate and is added when the rate arrives", () =>
    Effect.gen(function*() {
      const { alpha, site, tag, tour } = yield* newSite
      const sql = yield* SqlClient.SqlClient
      const now = yield* Clock.currentTimeMillis
      const today = new Date(now).toISOString().slice(0, 10)
      const code = `RATE-${tag}`
      const id = yield* insertBooking({
        operatorId: alpha,
        tourId: tour,
        amountMinor: 23000,
        currency: "NOK",
        createdAt: new Date(now)
      })
      yield* sql`UPDATE bookings SET confirmation_code = ${code}, site_id = ${site} WHERE id = ${id}`
      // Made an hour ago (long before the runs' look-back at changed bookings): only the wait for the rate brings it back.
      yield* sql`UPDATE bookings SET sales_changed_at = now() - interval '1 hour' WHERE id = ${id}`
      const v = visitor()
      yield* insertEvents([
        { at: new Date(now - 60_000).toISOString(), site, visitor: v, channel: "Email" },
        {
          at: new Date(now - 30_000).toISOString(),
          site,
          visitor: v,
          kind: "checkout_attempt",
          tourId: tour,
          bookingCode: code
        }
      ])
      const email = () =>
        Effect.map(
          sourceRows(site, "channel"),
          (rows) => rows.filter((r) => r.label === "Email").map((r) => [r.conversions, r.revenue_eur_minor])
        )
      // No EUR rate within a week of today yet: the conversion counts, its revenue waits.
      yield* runRollups()
      expect(yield* email()).toEqual([[1, 0]])
      yield* runRollups()
      expect(yield* email()).toEqual([[1, 0]])
      // NOK 230.00 at 11.5 NOK/EUR.
      yield* insertRate("EUR", today, 11.5)
      yield* runRollups()
      expect(yield* email()).toEqual([[1, 2000]])
      yield* runRollups()
      expect(yield* email()).toEqual([[1, 2000]])
    }))
})
