/**
 * Every minute by default (QUICKBOOK_EXPIRY_CRON): Quickbook quotes past their validity become
 * `expired`, and holds that lapsed are released at the booking system (best-effort) and settled.
 * See src/quickbook/sales/QuickbookExpiry.ts.
 */
import { ClusterCron } from "@effect/cluster"
import { Effect, Layer } from "effect"
import { QuickbookExpiry } from "../quickbook/sales/QuickbookExpiry.js"
import type { JobsConfig } from "./config.js"
import { recordedRun } from "./runs.js"

export const QUICKBOOK_EXPIRY = "quickbook-expiry"

export const quickbookExpiryJob = (config: Pick<JobsConfig, "quickbookExpiryCron">) =>
  ClusterCron.make({
    name: QUICKBOOK_EXPIRY,
    cron: config.quickbookExpiryCron,
    execute: recordedRun(QUICKBOOK_EXPIRY, () => Effect.flatMap(QuickbookExpiry, (e) => e.sweep())),
    skipIfOlderThan: "5 minutes"
  }).pipe(Layer.provide(QuickbookExpiry.Default))
