/**
 * The collector's state: salts that rotate at UTC midnight (the same address and browser on two
 * days are two visitors), batches written as they fill and everything still waiting written when
 * the service stops, and the salt job (old salts deleted, tomorrow's made, old months dropped), on
 * a real PostgreSQL; the job also through its ClusterCron, recorded in job_runs.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Schedule, Scope, TestClock, TestContext } from "effect"
import { type CollectInput, Collector } from "../../src/analytics/Collector.js"
import { addMonths, monthStart, partitionName, utcDay } from "../../src/analytics/events.js"
import { rotateSalts } from "../../src/analytics/rotateSalts.js"
import { SiteEventsRepo } from "../../src/analytics/SiteEventsRepo.js"
import { layerFromUrl } from "../../src/db/Database.js"
import { ANALYTICS_SALTS } from "../../src/jobs/analyticsSalts.js"
import { PublishableKeys } from "../../src/partner/auth/PublishableKeys.js"
import { makeWorld } from "../support/fixtures.js"
import { jobsInstance } from "../support/jobs.js"
import { freshDatabase, serverOn, TestServer, testServer } from "../support/server.js"
import { createSite } from "../support/tours.js"

const env = Layer.mergeAll(Collector.Default, PublishableKeys.Default, SiteEventsRepo.Default).pipe(
  Layer.provideMerge(testServer())
)

const UA =
  "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15"
const ORIGIN = "https://www.site.example"

const siteWithKey = Effect.gen(function*() {
  const w = yield* makeWorld
  const site = yield* createSite(w.alpha, "Alpha")
  const created = yield* Effect.flatMap(
    PublishableKeys,
    (keys) => keys.create({ siteId: site, createdBy: w.alice, name: "Analytics", origins: ["www.site.example"] })
  ).pipe(
    Effect.orDie
  )
  return { site, pk: created.key }
})

const event = (pk: string, ip: string): CollectInput => ({
  key: pk,
  kind: "pageview",
  url: `${ORIGIN}/`,
  referrer: null,
  newVisitor: false,
  tourId: null,
  bookingCode: null,
  origin: ORIGIN,
  userAgent: UA,
  ip,
  headers: {}
})

/** Runs `self` with the clock at `iso` (the collector reads the receive time from Clock). */
const at = (iso: string) => <A, E, R>(self: Effect.Effect<A, E, R>) =>
  TestClock.setTime(Date.parse(iso)).pipe(Effect.zipRight(self), Effect.provide(TestContext.TestContext))

const rowsOf = (site: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ at: Date; visitor: string }>`SELECT at, visitor FROM site_events WHERE site_id = ${site} ORDER BY id`.pipe(
        Effect.orDie
      )
  )

layer(env, { excludeTestServices: true, timeout: 180_000 })("the collector", (it) => {
  it.effect("salts rotate at UTC midnight: one address and browser are one visitor a day, two over two days", () =>
    Effect.gen(function*() {
      const s = yield* siteWithKey
      const collector = yield* Collector
      const sql = yield* SqlClient.SqlClient
      yield* collector.collect(event(s.pk, "198.51.100.7")).pipe(at("2031-01-31T23:58:00Z"))
      yield* collector.collect(event(s.pk, "198.51.100.7")).pipe(at("2031-01-31T23:59:59Z"))
      yield* collector.collect(event(s.pk, "198.51.100.7")).pipe(at("2031-02-01T00:00:01Z"))
      yield* collector.collect(event(s.pk, "198.51.100.8")).pipe(at("2031-02-01T00:00:02Z"))
      yield* collector.flush
      const rows = yield* rowsOf(s.site)
      expect(rows.map((r) => utcDay(r.at))).toEqual(["2031-01-31", "2031-01-31", "2031-02-01", "2031-02-01"])
      const [a, b, c, d] = rows.map((r) => r.visitor)
      expect(a).toBe(b)
      expect(c).not.toBe(a)
      expect(d).not.toBe(c)
      const salts = yield* sql<{ day: string }>`
        SELECT day::text AS day FROM site_salts WHERE day IN ('2031-01-31', '2031-02-01') ORDER BY day`.pipe(
        Effect.orDie
      )
      expect(salts.map((r) => r.day)).toEqual(["2031-01-31", "2031-02-01"])
      // Each month's events are in that month's partition (made by the writer when missing).
      const parts = yield* sql<{ part: string; n: number }>`
        SELECT tableoid::regclass::text AS part, count(*)::int AS n FROM site_events WHERE site_id = ${s.site}
        GROUP BY 1 ORDER BY 1`.pipe(Effect.orDie)
      expect(parts).toEqual([{ part: "site_events_y2031m01", n: 2 }, { part: "site_events_y2031m02", n: 2 }])
    }))

  it.effect("the salt job keeps yesterday's, today's and tomorrow's salts and drops months past 35 days", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* SiteEventsRepo
      const now = new Date()
      const day = (offset: number) => utcDay(new Date(now.getTime() + offset * 86_400_000))
      for (const offset of [-4, -3, -2, -1, 0]) {
        yield* sql`INSERT INTO site_salts (day, salt) VALUES (${day(offset)}::date, '\\x00'::bytea)
          ON CONFLICT DO NOTHING`.pipe(Effect.orDie)
      }
      // An old month with an event in it, and the month just before this one.
      const old = addMonths(monthStart(now), -3)
      const previous = addMonths(monthStart(now), -1)
      yield* repo.createPartition(old)
      yield* repo.createPartition(previous)
      yield* sql`INSERT INTO site_events (at, site_id, kind, visitor, new_visitor, path, channel, device, browser, os)
        VALUES (${old.toISOString()}::timestamptz + interval '1 day', gen_random_uuid(), 'pageview', 'x', false, '/',
          'Direct', 'desktop', 'Firefox', 'Linux')`.pipe(Effect.orDie)

      const summary = yield* rotateSalts(now)
      expect(summary.partitions_dropped).toEqual([partitionName(old)])
      const salts = yield* sql<{ day: string }>`SELECT day::text AS day FROM site_salts WHERE day BETWEEN ${
        day(-4)
      }::date AND ${day(1)}::date
        ORDER BY day`.pipe(Effect.orDie)
      expect(salts.map((r) => r.day)).toEqual([day(-1), day(0), day(1)])
      expect(summary.salts_deleted).toBeGreaterThanOrEqual(3)
      const months = (yield* repo.partitionMonths()).map((m) => m.getTime())
      expect(months).not.toContain(old.getTime())
      // Last month stays while it may hold events of the last 35 days; this one and the next are there.
      for (const m of [previous, monthStart(now), addMonths(monthStart(now), 1)]) expect(months).toContain(m.getTime())
      // Run again: nothing more to do.
      expect((yield* rotateSalts(now)).partitions_dropped).toEqual([])
    }))

  it.scoped("batches are written as they fill; what waits is written when the service stops", () =>
    Effect.gen(function*() {
      const url = yield* freshDatabase
      const sql = Context.get(yield* Layer.build(layerFromUrl(url, 2)), SqlClient.SqlClient)
      // A server whose buffer writes 3 at a time and would otherwise wait an hour.
      const scope = yield* Scope.make()
      const server = yield* Layer.buildWithScope(
        PublishableKeys.Default.pipe(
          Layer.provideMerge(serverOn(url, { ANALYTICS_BATCH_SIZE: "3", ANALYTICS_FLUSH_INTERVAL_MS: "3600000" }))
        ),
        scope
      )
      const s = yield* siteWithKey.pipe(Effect.provide(server))
      const { baseUrl } = Context.get(server, TestServer)
      for (let i = 0; i < 7; i++) {
        const res = yield* Effect.promise(() =>
          fetch(`${baseUrl}/api/v1/collect`, {
            method: "POST",
            headers: { "content-type": "text/plain", origin: ORIGIN, "user-agent": UA },
            body: JSON.stringify({ key: s.pk, kind: "pageview", url: `${ORIGIN}/p${i}`, new_visitor: i === 0 })
          })
        )
        expect(res.status).toBe(202)
      }
      const count = sql<{ n: number }>`SELECT count(*)::int AS n FROM site_events`.pipe(
        Effect.map((rows) => rows[0]!.n),
        Effect.orDie
      )
      // Two full batches are written at once; the seventh event waits for the next flush.
      const written = yield* count.pipe(
        Effect.filterOrFail((n) => n >= 6),
        Effect.retry(Schedule.spaced("50 millis").pipe(Schedule.upTo("20 seconds"))),
        Effect.orDie
      )
      expect(written).toBe(6)
      // The service stops: the seventh is written before the database pool closes.
      yield* Scope.close(scope, Exit.void)
      expect(yield* count).toBe(7)
      const paths = yield* sql<{ path: string }>`SELECT path FROM site_events ORDER BY id`.pipe(Effect.orDie)
      expect(paths.map((r) => r.path)).toEqual([0, 1, 2, 3, 4, 5, 6].map((i) => `/p${i}`))
    }))
})

// A layer block of its own: layers built in a test share its block's memo map, and the jobs must build
// their SiteEventsRepo on their own database, not take the one above.
layer(Layer.empty, { excludeTestServices: true, timeout: 120_000 })("the salt job", (it) => {
  it.scoped("the salt job runs on its ClusterCron schedule, recorded in job_runs", () =>
    Effect.gen(function*() {
      const url = yield* freshDatabase
      const sql = Context.get(yield* Layer.build(layerFromUrl(url, 2)), SqlClient.SqlClient)
      yield* Layer.build(jobsInstance(url, undefined, { ANALYTICS_SALTS_CRON: "*/2 * * * * *" }))
      const runs = yield* sql<{ outcome: string; summary: any }>`
        SELECT outcome, summary FROM job_runs WHERE job = ${ANALYTICS_SALTS} AND outcome <> 'running'`.pipe(
        Effect.filterOrFail((rows) => rows.length >= 1),
        Effect.retry(Schedule.spaced("500 millis").pipe(Schedule.intersect(Schedule.recurs(60))))
      )
      expect(runs[0]!.outcome, JSON.stringify(runs)).toBe("ok")
      const tomorrow = utcDay(new Date(Date.now() + 86_400_000))
      const salts = yield* sql<{ day: string }>`SELECT day::text AS day FROM site_salts ORDER BY day`
      expect(salts.map((r) => r.day)).toContain(tomorrow)
    }))
})
