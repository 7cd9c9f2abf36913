/**
 * Every five minutes (ANALYTICS_ROLLUP_CRON): the site analytics rollups take in the events committed
 * since their last run and the bookings that changed (src/analytics/AnalyticsRollups.ts), so the
 * analytics reads are at most about five minutes behind the sites.
 */
import { ClusterCron } from "@effect/cluster"
import { Effect, Layer } from "effect"
import { AnalyticsRollups } from "../analytics/AnalyticsRollups.js"
import { AnalyticsRollupsConfig } from "../analytics/config.js"
import { recordedRun } from "./runs.js"

export const ANALYTICS_ROLLUPS = "analytics-rollups"

export const analyticsRollupsJob = (config: Pick<AnalyticsRollupsConfig, "cron">) =>
  ClusterCron.make({
    name: ANALYTICS_ROLLUPS,
    cron: config.cron,
    execute: recordedRun(ANALYTICS_ROLLUPS, () => Effect.flatMap(AnalyticsRollups, (r) => r.refresh())),
    // A missed run needs no catching up: the next one takes in everything after the watermark.
    skipIfOlderThan: "10 minutes"
  }).pipe(Layer.provide(AnalyticsRollups.Default))

/** The job with its settings read (src/jobs/index.ts). */
export const analyticsRollupsJobLive = Layer.unwrapEffect(Effect.map(AnalyticsRollupsConfig, analyticsRollupsJob))
