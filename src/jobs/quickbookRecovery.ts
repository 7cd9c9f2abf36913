/**
 * Every minute by default (QUICKBOOK_RECOVERY_CRON): desk-sale payments a crash left half-done past
 * their lease are finished once (verified again, booked with the same external reference, or
 * refunded with the same idempotency reference), and refunds the provider has not confirmed yet are
 * asked again when their backoff runs out. See src/quickbook/book/QuickbookBookRecovery.ts.
 */
import { ClusterCron } from "@effect/cluster"
import { Effect, Layer } from "effect"
import { QuickbookBookRecovery } from "../quickbook/book/QuickbookBookRecovery.js"
import type { JobsConfig } from "./config.js"
import { recordedRun } from "./runs.js"

export const QUICKBOOK_RECOVERY = "quickbook-recovery"

export const quickbookRecoveryJob = (config: Pick<JobsConfig, "quickbookRecoveryCron">) =>
  ClusterCron.make({
    name: QUICKBOOK_RECOVERY,
    cron: config.quickbookRecoveryCron,
    execute: recordedRun(QUICKBOOK_RECOVERY, () => Effect.flatMap(QuickbookBookRecovery, (r) => r.recover())),
    skipIfOlderThan: "10 minutes"
  }).pipe(Layer.provide(QuickbookBookRecovery.Default))
