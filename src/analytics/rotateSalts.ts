/**
 * The upkeep of collected events (run by src/jobs/analyticsSalts.ts; docs/api/privacy.md): tomorrow's
 * salt made ahead (so the first event after midnight finds it), salts of days before yesterday
 * deleted (a salt lives at most 48 hours past its day's start: after that no visitor hash of that
 * day can be recomputed from an address and a user agent), this month's and next month's partitions
 * of `site_events` made, and months whose last day is more than ANALYTICS_EVENTS_KEEP_DAYS old
 * dropped with their events. Every step is idempotent: a run repeated or run by two instances does
 * the same.
 */
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { AnalyticsCollectConfig } from "./config.js"
import { addMonths, monthStart, partitionName, utcDay } from "./events.js"
import { SiteEventsRepo } from "./SiteEventsRepo.js"

const DAY_MS = 86_400_000

export const rotateSalts = (now: Date) =>
  Effect.gen(function*() {
    const repo = yield* SiteEventsRepo
    const config = yield* AnalyticsCollectConfig
    yield* repo.saltOf(utcDay(now), randomBytes(32))
    yield* repo.saltOf(utcDay(new Date(now.getTime() + DAY_MS)), randomBytes(32))
    const saltsDeleted = yield* repo.deleteSaltsBefore(utcDay(new Date(now.getTime() - DAY_MS)))

    const thisMonth = monthStart(now)
    yield* repo.createPartition(thisMonth)
    yield* repo.createPartition(addMonths(thisMonth, 1))
    const keepFrom = now.getTime() - config.eventsKeepDays * DAY_MS
    const dropped: Array<string> = []
    for (const month of yield* repo.partitionMonths()) {
      // A month's partition goes once every event it can hold is older than the days kept.
      if (addMonths(month, 1).getTime() <= keepFrom) {
        yield* repo.dropPartition(month)
        dropped.push(partitionName(month))
      }
    }
    return { salts_deleted: saltsDeleted, partitions_dropped: dropped }
  })
