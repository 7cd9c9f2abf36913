/**
 * Every minute by default (PAY_LATER_CHARGER_CRON): charges the pay-later balances that are due
 * (src/payLater/PayLaterCharger.ts; docs/api/pay-later.md), once across all instances, recorded in
 * `job_runs` with its counts (claimed, collected, retrying, failed, told, unknown, errors). One
 * charge's failure is logged and counted, never the run's.
 */
import { ClusterCron } from "@effect/cluster"
import { Effect, Layer } from "effect"
import { PayLaterConfig } from "../payLater/config.js"
import { PayLaterCharger } from "../payLater/PayLaterCharger.js"
import { recordedRun } from "./runs.js"

export const PAY_LATER_CHARGER = "pay-later-charger"

export const payLaterChargerJob = Layer.unwrapEffect(
  Effect.map(PayLaterConfig, (config) =>
    ClusterCron.make({
      name: PAY_LATER_CHARGER,
      cron: config.chargerCron,
      execute: recordedRun(PAY_LATER_CHARGER, () => Effect.flatMap(PayLaterCharger, (c) => c.run())),
      // A missed run is not worth catching up: the next one takes whatever is due.
      skipIfOlderThan: "10 minutes"
    }).pipe(Layer.provide(PayLaterCharger.Default)))
)
