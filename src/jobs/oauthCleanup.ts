/**
 * Hourly (with the idempotency cleanup's cron): what the assistant's authorization server stored
 * and that expired more than a day ago (codes, tokens, sessions, interactions; src/assistant/oauth/)
 * is deleted. Reads already ignore expired entries; this keeps the table small.
 */
import { ClusterCron } from "@effect/cluster"
import { Effect, Layer } from "effect"
import { OAuthStoreRepo } from "../assistant/oauth/OAuthStoreRepo.js"
import type { JobsConfig } from "./config.js"
import { recordedRun } from "./runs.js"

export const OAUTH_CLEANUP = "oauth-cleanup"

export const oauthCleanupJob = (config: Pick<JobsConfig, "idempotencyCleanupCron">) =>
  ClusterCron.make({
    name: OAUTH_CLEANUP,
    cron: config.idempotencyCleanupCron,
    execute: recordedRun(OAUTH_CLEANUP, () =>
      Effect.flatMap(OAuthStoreRepo, (store) => Effect.map(store.deleteExpired(), (deleted) => ({ deleted })))),
    skipIfOlderThan: "1 hour"
  }).pipe(Layer.provide(OAuthStoreRepo.Default))
