import { Config } from "effect"
import { cronSetting } from "../lib/settings.js"

/** Payouts and chargebacks from the provider's settlement reports (src/settlements/, src/jobs/settlementImport.ts). */
export const SettlementConfig = Config.all({
  /** When the `settlement-import` job runs (UTC): daily by default, after the provider's morning settlement. */
  importCron: cronSetting("SETTLEMENT_IMPORT_CRON", "30 6 * * *"),
  /** The Surfboard partner of merchants whose `settlement_merchants` row names none (the report path needs it). */
  partnerId: Config.option(Config.string("SURFBOARD_PARTNER_ID")),
  /** How far back the first import of a merchant reads (days of settlement). */
  firstImportDays: Config.integer("SETTLEMENT_IMPORT_FIRST_DAYS").pipe(
    Config.withDefault(400),
    Config.validate({ message: "must be at least 1", validation: (n) => n >= 1 })
  )
})

export type SettlementConfig = Config.Config.Success<typeof SettlementConfig>
