/**
 * Hourly: idempotency records past their 24-hour window are deleted (a reused key overwrites them
 * anyway), and the assistant's confirmations a day past their expiry (src/assistant/confirmations/).
 */
import { ClusterCron } from "@effect/cluster"
import { Effect } from "effect"
import { ConfirmationsRepo } from "../assistant/confirmations/ConfirmationsRepo.js"
import { IdempotencyStore } from "../partner/writes/IdempotencyStore.js"
import type { JobsConfig } from "./config.js"
import { recordedRun } from "./runs.js"

export const IDEMPOTENCY_CLEANUP = "idempotency-cleanup"

export const idempotencyCleanupJob = (config: Pick<JobsConfig, "idempotencyCleanupCron">) =>
  ClusterCron.make({
    name: IDEMPOTENCY_CLEANUP,
    cron: config.idempotencyCleanupCron,
    execute: recordedRun(IDEMPOTENCY_CLEANUP, () =>
      Effect.gen(function*() {
        const deleted = yield* Effect.flatMap(IdempotencyStore, (store) => store.purgeExpired())
        const confirmations = yield* Effect.flatMap(ConfirmationsRepo, (repo) => repo.purgeExpired()).pipe(
          Effect.provide(ConfirmationsRepo.Default)
        )
        return { deleted, confirmations }
      })),
    skipIfOlderThan: "1 hour"
  })
