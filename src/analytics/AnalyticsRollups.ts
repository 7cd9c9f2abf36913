/**
 * The site analytics rollups (migration 0026; docs/decisions.md "Analytics rollups"): the new rows
 * of `site_events` summed into the daily tables the analytics reads use, every five minutes
 * (src/jobs/analyticsRollups.ts). A run:
 *
 * 1. Finds the safe window's upper id: under a brief SHARE lock on `site_events` (which waits for
 *    every INSERT in flight to commit or roll back) it reads the id sequence's value. Every id up to
 *    it is then committed or will never exist, so an id a slow writer drew below a faster writer's
 *    is never stepped over (AnalyticsRollupsRepo.safeId).
 * 2. Takes the events with id > watermark up to that id in batches (ANALYTICS_ROLLUP_BATCH_SIZE),
 *    each in ONE transaction: sessions extended or started (rules.ts), insert-if-absent dedupe keys
 *    for the distinct counts, the additive daily counters, the booking codes of checkout attempts,
 *    the (site, month) pairs touched, and the watermark moved to the batch's last id. A crash
 *    anywhere in a batch rolls all of it back, and the next run takes the same events again.
 * 3. Attributions: each booking code a checkout attempt carried counts a conversion (and its
 *    revenue in EUR at the booking day's rate) on its session's start day and labels while the
 *    booking is live on that site. Attributions not checked yet, waiting for a rate, or whose booking
 *    changed since the last look (the sales rollups' `bookings.sales_changed_at`) are checked again,
 *    and the difference is added: a booking made after its event was rolled up counts when it
 *    appears, a booking cancelled months later takes its conversion and revenue back from the day
 *    it was credited to (which folds that month again).
 * 4. Folds the closed months whose days changed into the monthly tier (their sums, rebuilt).
 * 5. Prunes dedupe keys and sessions older than two days (before the newest event's day − 1).
 *
 * Each step costs what is new (events, changed bookings, touched months), never the history.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option } from "effect"
import { transactionAtEdge } from "../db/repoEdge.js"
import { CrashPoints } from "../lib/CrashPoints.js"
import { annotateSpan } from "../observability/spanFn.js"
import { DailyRatesRepo } from "../rates/DailyRatesRepo.js"
import { addDays, convertMinor, makeRateTable } from "../rates/rules.js"
import {
  AnalyticsRollupsRepo,
  noSiteCounters,
  type SiteCounters,
  type SourceCounters,
  type TourCounters
} from "./AnalyticsRollupsRepo.js"
import { AnalyticsRollupsConfig } from "./config.js"
import {
  type AttributionChange,
  attributionDeltas,
  dayOf,
  type Dimension,
  DIMENSIONS,
  monthOf,
  NEW_VISITORS,
  rollUpBatch,
  SITE_VISITORS,
  type SiteEvent
} from "./rules.js"

const DAY_MS = 86_400_000
const LIVE = new Set(["RESERVED", "CONFIRMED"])
const STEP_COLUMN = {
  tour_view: "views",
  availability_check: "availabilityChecks",
  checkout_open: "checkoutOpens",
  checkout_attempt: "checkoutAttempts"
} as const

export interface RefreshResult {
  /** Events taken in by this run. */
  readonly events: number
  readonly batches: number
  /** The safe window's upper id; null when the writers did not let go in time (nothing new taken). */
  readonly safeId: number | null
  readonly attributionsChecked: number
  readonly monthsFolded: number
  readonly pruned: { readonly visitorKeys: number; readonly stepKeys: number; readonly sessions: number } | null
}

export class AnalyticsRollups extends Effect.Service<AnalyticsRollups>()("Analytics/AnalyticsRollups", {
  effect: Effect.gen(function*() {
    const repo = yield* AnalyticsRollupsRepo
    const rates = yield* DailyRatesRepo
    const crash = yield* CrashPoints
    const sql = yield* SqlClient.SqlClient
    const config = yield* AnalyticsRollupsConfig
    const inTransaction = transactionAtEdge(sql)

    /** Everything a batch of events adds, written in the caller's transaction. */
    const apply = (events: ReadonlyArray<SiteEvent>) =>
      Effect.gen(function*() {
        const first = new Map<string, { siteId: string; visitor: string; from: number }>()
        for (const e of events) {
          const key = `${e.siteId}|${e.visitor}`
          const known = first.get(key)
          if (known === undefined || e.at < known.from) {
            first.set(key, { siteId: e.siteId, visitor: e.visitor, from: e.at })
          }
        }
        const open = yield* repo.openSessions([...first.values()])
        const rolled = rollUpBatch(events, open)
        yield* repo.saveSessions(rolled.sessions)
        const seen = yield* repo.insertSeen(rolled.seen)
        yield* crash.reached("analyticsRollups.after_dedupe")
        const steps = yield* repo.insertSteps(rolled.steps)

        const site = new Map<string, SiteCounters>()
        const siteRow = (siteId: string, day: string) => {
          const key = `${siteId}|${day}`
          let row = site.get(key)
          if (row === undefined) {
            row = noSiteCounters(siteId, day)
            site.set(key, row)
          }
          return row
        }
        for (const d of rolled.site) {
          const row = siteRow(d.siteId, d.day)
          row.sessions += d.sessions
          row.pageviews += d.pageviews
          row.bounces += d.bounces
          row.durationSeconds += d.durationSeconds
        }
        const sources: Array<SourceCounters> = []
        for (const c of seen) {
          if (c.dimension === SITE_VISITORS) {
            siteRow(c.site_id, c.day).visitors += c.n
          } else if (c.dimension === NEW_VISITORS) {
            siteRow(c.site_id, c.day).newVisitors += c.n
          } else if ((DIMENSIONS as ReadonlyArray<string>).includes(c.dimension)) {
            sources.push({
              siteId: c.site_id,
              day: c.day,
              dimension: c.dimension as Dimension,
              label: c.label,
              visitors: c.n,
              conversions: 0,
              revenue: 0
            })
          }
        }
        const tours = new Map<string, TourCounters>()
        for (const c of steps) {
          const key = `${c.site_id}|${c.tour_id}|${c.day}`
          const row = tours.get(key) ??
            {
              siteId: c.site_id,
              tourId: c.tour_id,
              day: c.day,
              views: 0,
              availabilityChecks: 0,
              checkoutOpens: 0,
              checkoutAttempts: 0
            }
          const column = STEP_COLUMN[c.kind as keyof typeof STEP_COLUMN]
          if (column !== undefined) row[column] += c.n
          tours.set(key, row)
        }
        yield* repo.addSiteDaily([...site.values()])
        yield* repo.addSourceDaily(sources)
        yield* repo.addTourDaily([...tours.values()])
        yield* repo.insertAttributions(rolled.attempts)
        const months = new Map<string, { siteId: string; month: string }>()
        for (const r of [...site.values(), ...sources, ...tours.values()]) {
          const month = monthOf(r.day)
          months.set(`${r.siteId}|${month}`, { siteId: r.siteId, month })
        }
        yield* repo.markDirty([...months.values()])
      })

    /** One batch after the watermark, up to `upTo`, in one transaction. */
    const takeBatch = (upTo: number) =>
      inTransaction(Effect.gen(function*() {
        yield* repo.lock()
        const after = yield* repo.watermark()
        if (after >= upTo) return { events: 0, done: true, lastAt: null as number | null }
        const events = yield* repo.batch(after, upTo, config.batchSize)
        const full = events.length >= config.batchSize
        if (events.length > 0) yield* apply(events)
        yield* crash.reached("analyticsRollups.before_watermark")
        yield* repo.setWatermark(full ? events[events.length - 1]!.id : upTo)
        const lastAt = events.reduce<number | null>((max, e) => max === null || e.at > max ? e.at : max, null)
        return { events: events.length, done: !full, lastAt }
      }))

    /** Checks the attributions that are due and adds what changed (see the module comment, 3). */
    const checkAttributions = inTransaction(Effect.gen(function*() {
      yield* repo.lock()
      const started = yield* repo.now()
      const last = yield* repo.attributionWatermark()
      const since = Option.map(last, (at) => new Date(at.getTime() - config.bookingOverlapSeconds * 1000))
      const rows = yield* repo.attributionsToCheck(Option.getOrNull(since))
      if (rows.length > 0) {
        const days = rows.flatMap((r) => r.booking_day === null ? [] : [r.booking_day]).sort()
        const currencies = [...new Set(rows.flatMap((r) => r.currency === null ? [] : [r.currency, "EUR"]))]
          .filter((c) => c !== "NOK")
        const table = makeRateTable(
          days.length === 0 || currencies.length === 0
            ? []
            : yield* rates.range({ currencies, from: addDays(days[0]!, -7), to: days[days.length - 1]! })
        )
        const changes: Array<AttributionChange> = []
        const saved: Array<
          { siteId: string; bookingCode: string; live: boolean; revenue: number; rateMissing: boolean }
        > = []
        for (const r of rows) {
          const live = r.booking_status !== null && LIVE.has(r.booking_status)
          const eur = live && r.amount_minor !== null && r.currency !== null && r.booking_day !== null
            ? convertMinor(table, r.amount_minor, r.currency, "EUR", r.booking_day)
            : 0
          const after = { live, revenue: eur ?? 0 }
          changes.push({
            siteId: r.site_id,
            sessionId: r.session_id,
            startDay: r.start_day,
            labels: r.labels,
            before: { live: r.live, revenue: r.revenue_eur_minor },
            after
          })
          saved.push({
            siteId: r.site_id,
            bookingCode: r.booking_code,
            live,
            revenue: after.revenue,
            rateMissing: eur === null
          })
        }
        const deltas = attributionDeltas(changes)
        yield* repo.addSourceDaily(deltas.map((d) => ({ ...d, visitors: 0 })))
        yield* repo.markDirty(
          [...new Map(deltas.map((d) => [`${d.siteId}|${monthOf(d.day)}`, { siteId: d.siteId, month: monthOf(d.day) }]))
            .values()]
        )
        yield* repo.saveAttributions(saved)
      }
      yield* repo.setAttributionWatermark(started)
      return rows.length
    }))

    const foldMonths = inTransaction(Effect.gen(function*() {
      yield* repo.lock()
      const today = dayOf(yield* Clock.currentTimeMillis)
      return yield* repo.foldClosedMonths(monthOf(today))
    }))

    /** Brings the rollups up to date with every committed event and changed booking. */
    const refresh = Effect.fn("AnalyticsRollups.refresh")(function*() {
      const safe = yield* inTransaction(repo.safeId(config.lockTimeoutMs))
      let events = 0
      let batches = 0
      let lastAt: number | null = null
      if (Option.isSome(safe)) {
        for (;;) {
          const b = yield* takeBatch(safe.value)
          events += b.events
          if (b.events > 0) batches += 1
          if (b.lastAt !== null && (lastAt === null || b.lastAt > lastAt)) lastAt = b.lastAt
          if (b.done) break
        }
      } else {
        yield* Effect.logWarning(
          `analytics rollups: event writers held site_events past ${config.lockTimeoutMs} ms; nothing new taken in this run`
        )
      }
      const attributionsChecked = yield* checkAttributions
      const monthsFolded = yield* foldMonths
      const pruned = lastAt === null ? null : yield* inTransaction(
        Effect.zipRight(
          repo.lock(),
          repo.prune(dayOf(lastAt - DAY_MS), new Date(`${dayOf(lastAt - DAY_MS)}T00:00:00Z`))
        )
      )
      const result: RefreshResult = {
        events,
        batches,
        safeId: Option.getOrNull(safe),
        attributionsChecked,
        monthsFolded,
        pruned
      }
      yield* annotateSpan({ "analytics.events": events, "analytics.batches": batches })
      return result
    })

    return { refresh } as const
  }),
  dependencies: [AnalyticsRollupsRepo.Default, DailyRatesRepo.Default, CrashPoints.Default]
}) {}
