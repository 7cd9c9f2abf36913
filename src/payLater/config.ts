import { Config } from "effect"
import { cronSetting } from "../lib/settings.js"

/** Pay-later charging (src/payLater/PayLaterCharger.ts, src/jobs/payLaterCharger.ts; docs/api/pay-later.md). */
export const PayLaterConfig = Config.all({
  /** When the `pay-later-charger` job looks for due charges (UTC cron). */
  chargerCron: cronSetting("PAY_LATER_CHARGER_CRON", "* * * * *"),
  /** Charges claimed per run (the rest wait for the next run). */
  batchSize: Config.integer("PAY_LATER_CHARGER_BATCH").pipe(
    Config.withDefault(100),
    Config.validate({ message: "must be from 1 to 10000", validation: (n) => n >= 1 && n <= 10_000 })
  ),
  /** Charges worked on at the same time within a run. */
  concurrency: Config.integer("PAY_LATER_CHARGER_CONCURRENCY").pipe(
    Config.withDefault(4),
    Config.validate({ message: "must be from 1 to 64", validation: (n) => n >= 1 && n <= 64 })
  ),
  /** How long a claimed charge is kept from other instances (seconds); an instance that died frees it then. */
  leaseSeconds: Config.integer("PAY_LATER_CHARGER_LEASE_SECONDS").pipe(Config.withDefault(300))
})

export type PayLaterConfig = Config.Config.Success<typeof PayLaterConfig>
