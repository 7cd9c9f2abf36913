/**
 * The `settlement-import` job (issue 15 part A; src/settlements/SettlementImport.ts): daily
 * (SETTLEMENT_IMPORT_CRON, default 06:30 UTC), once across all instances, recorded in `job_runs`
 * with per-merchant outcomes. Each merchant of `operator_payment_accounts` is read from its last
 * imported settlement day; a failing merchant is recorded and the others go on (the run itself
 * ends `ok` with `failed` counted).
 */
import { ClusterCron } from "@effect/cluster"
import { Effect, Layer } from "effect"
import { SettlementConfig } from "../settlements/config.js"
import { SettlementImport } from "../settlements/SettlementImport.js"
import { recordedRun } from "./runs.js"

export const SETTLEMENT_IMPORT = "settlement-import"

/** One run over every merchant; the summary keeps each merchant's outcome. */
export const runSettlementImport = recordedRun(
  SETTLEMENT_IMPORT,
  () => Effect.flatMap(SettlementImport, (importer) => importer.run())
)

export const settlementImportJobLive = Layer.unwrapEffect(
  Effect.map(SettlementConfig, (config) =>
    ClusterCron.make({
      name: SETTLEMENT_IMPORT,
      cron: config.importCron,
      execute: runSettlementImport,
      // Reports stay at the provider: a missed day is read by the next run (incremental).
      skipIfOlderThan: "12 hours"
    }))
).pipe(Layer.provide(SettlementImport.Default))
