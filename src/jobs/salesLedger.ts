/**
 * The other-channel sales ledger's schedule (src/sales/SalesLedger.ts), each run once across all
 * instances and recorded in `job_runs`: the recent refresh (bookings created yesterday and today,
 * every 5 minutes by default), the nightly one (the last 30 days) and the backfill (every few
 * minutes: accounts whose ledger does not reach back 400 days yet, a newly linked one included,
 * walked back step by step). The cron expressions, days, step and pace are settings
 * (SalesLedgerConfig).
 */
import { ClusterCron } from "@effect/cluster"
import { Effect, Layer } from "effect"
import { SalesLedgerConfig } from "../sales/config.js"
import { SalesLedger } from "../sales/SalesLedger.js"
import { recordedRun } from "./runs.js"

export const SALES_LEDGER_RECENT = "sales-ledger-recent"
export const SALES_LEDGER_NIGHTLY = "sales-ledger-nightly"
export const SALES_LEDGER_BACKFILL = "sales-ledger-backfill"

const run = (name: string, step: (ledger: SalesLedger) => ReturnType<SalesLedger["refreshRecent"]>) =>
  recordedRun(name, () =>
    Effect.gen(function*() {
      const { results: _, ...summary } = yield* step(yield* SalesLedger)
      return summary
    }))

export const salesLedgerJobs = Layer.unwrapEffect(
  Effect.map(SalesLedgerConfig, (config) =>
    Layer.mergeAll(
      ClusterCron.make({
        name: SALES_LEDGER_RECENT,
        cron: config.recentCron,
        execute: run(SALES_LEDGER_RECENT, (ledger) => ledger.refreshRecent()),
        // A missed run is not worth catching up: the next one reads the same days.
        skipIfOlderThan: "10 minutes"
      }),
      ClusterCron.make({
        name: SALES_LEDGER_NIGHTLY,
        cron: config.nightlyCron,
        execute: run(SALES_LEDGER_NIGHTLY, (ledger) => ledger.refreshNightly()),
        skipIfOlderThan: "12 hours"
      }),
      ClusterCron.make({
        name: SALES_LEDGER_BACKFILL,
        cron: config.backfillCron,
        execute: run(SALES_LEDGER_BACKFILL, (ledger) => ledger.backfill()),
        skipIfOlderThan: "10 minutes"
      })
    ))
)
