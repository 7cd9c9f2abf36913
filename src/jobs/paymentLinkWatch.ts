/**
 * Every 5 minutes by default (PAYMENT_LINK_WATCH_CRON): asks the payment provider about the balance
 * payment links that are due (open ones back off from 5 minutes to an hour as they age), records
 * paid ones as the guest's payment, closes expired ones, and settles links a request left
 * unfinished. See src/partner/paymentLinks/LinkStatusChecks.ts and docs/api/writes.md "When the guest pays".
 */
import { ClusterCron } from "@effect/cluster"
import { Effect, Layer } from "effect"
import { LinkStatusChecks } from "../partner/paymentLinks/LinkStatusChecks.js"
import type { JobsConfig } from "./config.js"
import { recordedRun } from "./runs.js"

export const PAYMENT_LINK_WATCH = "payment-link-watch"

export const paymentLinkWatchJob = (config: Pick<JobsConfig, "paymentLinkWatchCron">) =>
  ClusterCron.make({
    name: PAYMENT_LINK_WATCH,
    cron: config.paymentLinkWatchCron,
    execute: recordedRun(PAYMENT_LINK_WATCH, () => Effect.flatMap(LinkStatusChecks, (w) => w.run())),
    skipIfOlderThan: "10 minutes"
  }).pipe(Layer.provide(LinkStatusChecks.Default))
