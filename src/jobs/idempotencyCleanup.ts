/** Hourly: idempotency records past their 24-hour window are deleted (a reused key overwrites them anyway). */
import { ClusterCron } from "@effect/cluster"
import { Effect } from "effect"
import type { JobsConfig } from "../config.js"
import { IdempotencyStore } from "../partner/writes/IdempotencyStore.js"
import { recordedRun } from "./runs.js"

export const IDEMPOTENCY_CLEANUP = "idempotency-cleanup"

export const idempotencyCleanupJob = (config: Pick<JobsConfig, "idempotencyCleanupCron">) =>
  ClusterCron.make({
    name: IDEMPOTENCY_CLEANUP,
    cron: config.idempotencyCleanupCron,
    execute: recordedRun(IDEMPOTENCY_CLEANUP, () =>
      Effect.flatMap(IdempotencyStore, (store) => Effect.map(store.purgeExpired(), (deleted) => ({ deleted })))),
    skipIfOlderThan: "1 hour"
  })
