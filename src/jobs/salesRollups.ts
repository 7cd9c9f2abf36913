/**
 * Every minute: the per-day sales rollups take in the bookings, desk sales and ledger lines that
 * changed since their last run (src/sales/SalesRollups.ts), so GET /api/v1/sales is at most about a
 * minute behind the bookings and the sales ledger.
 */
import { ClusterCron } from "@effect/cluster"
import { Effect, Layer } from "effect"
import { SalesRollups } from "../sales/SalesRollups.js"
import type { JobsConfig } from "./config.js"
import { recordedRun } from "./runs.js"

export const SALES_ROLLUPS = "sales-rollups"

export const salesRollupsJob = (config: Pick<JobsConfig, "salesRollupCron">) =>
  ClusterCron.make({
    name: SALES_ROLLUPS,
    cron: config.salesRollupCron,
    execute: recordedRun(SALES_ROLLUPS, () => Effect.flatMap(SalesRollups, (r) => r.refresh())),
    // A missed minute needs no catching up: the next run takes in everything since the last one.
    skipIfOlderThan: "5 minutes"
  }).pipe(Layer.provide(SalesRollups.Default))
