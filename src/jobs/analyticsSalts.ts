/**
 * Every hour (ANALYTICS_SALTS_CRON): the visitor-hash salts and the event partitions are kept as
 * docs/api/privacy.md says (src/analytics/rotateSalts.ts), once across all instances, recorded in
 * job_runs.
 */
import { ClusterCron } from "@effect/cluster"
import { Clock, Effect, Layer } from "effect"
import { AnalyticsCollectConfig } from "../analytics/config.js"
import { rotateSalts } from "../analytics/rotateSalts.js"
import { SiteEventsRepo } from "../analytics/SiteEventsRepo.js"
import { recordedRun } from "./runs.js"

export const ANALYTICS_SALTS = "analytics-salts"

export const analyticsSaltsJob = (config: Pick<AnalyticsCollectConfig, "saltsCron">) =>
  ClusterCron.make({
    name: ANALYTICS_SALTS,
    cron: config.saltsCron,
    execute: recordedRun(
      ANALYTICS_SALTS,
      () => Effect.flatMap(Clock.currentTimeMillis, (now) => rotateSalts(new Date(now)))
    ),
    // Each run does all that is due; a missed one needs no catching up.
    skipIfOlderThan: "1 hour"
  }).pipe(Layer.provide(SiteEventsRepo.Default))

/** The job with its schedule from ANALYTICS_SALTS_CRON. */
export const analyticsSaltsJobLive = Layer.unwrapEffect(Effect.map(AnalyticsCollectConfig, analyticsSaltsJob))
