/**
 * The mirror refresh schedule (spec §1 "Freshness"): every two hours over the near term (today and
 * the next 3 days) and nightly over the next 90 days, each run once across all instances.
 */
import { ClusterCron } from "@effect/cluster"
import { Effect, Layer } from "effect"
import { MirrorConfig } from "../mirror/config.js"
import { Mirror } from "../mirror/Mirror.js"
import { type JobsConfig } from "./config.js"
import { recordedRun } from "./runs.js"

export const MIRROR_NEAR_TERM = "mirror-near-term"
export const MIRROR_NIGHTLY = "mirror-nightly"

const refresh = (name: string, kind: "near_term" | "nightly", days: (c: MirrorConfig) => number) =>
  recordedRun(name, (jobRunId) =>
    Effect.gen(function*() {
      const mirror = yield* Mirror
      const config = yield* MirrorConfig
      const { results: _, ...summary } = yield* mirror.refresh({ kind, daysAhead: days(config), jobRunId })
      return summary
    }))

export const mirrorJobs = (config: Pick<JobsConfig, "mirrorNearTermCron" | "mirrorNightlyCron">) =>
  Layer.mergeAll(
    ClusterCron.make({
      name: MIRROR_NEAR_TERM,
      cron: config.mirrorNearTermCron,
      execute: refresh(MIRROR_NEAR_TERM, "near_term", (c) => c.nearTermDays),
      // A run missed by more than an hour (every instance was down) is skipped: the next one is near.
      skipIfOlderThan: "1 hour"
    }),
    ClusterCron.make({
      name: MIRROR_NIGHTLY,
      cron: config.mirrorNightlyCron,
      execute: refresh(MIRROR_NIGHTLY, "nightly", (c) => c.nightlyDays),
      skipIfOlderThan: "12 hours"
    })
  )
