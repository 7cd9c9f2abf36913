/** Settings of the sales figures and the other-channel sales ledger. */
import { Config } from "effect"
import { cronSetting } from "../lib/settings.js"

/** The sales figures (src/sales/, GET /api/v1/sales). */
export const SalesConfig = Config.all({
  /**
   * A rollup run re-reads changes this far before its last run's start, so a transaction that began
   * before that run and committed after it is still taken in (rebuilding a group twice is harmless).
   */
  rollupOverlapSeconds: Config.integer("SALES_ROLLUP_OVERLAP_SECONDS").pipe(Config.withDefault(300)),
  /**
   * Other-channel figures of a range that reaches the present are `available: false` when an
   * account's sales ledger was last complete longer ago than this.
   */
  ledgerStaleAfterMinutes: Config.integer("SALES_LEDGER_STALE_AFTER_MINUTES").pipe(Config.withDefault(30))
})

export type SalesConfig = Config.Config.Success<typeof SalesConfig>

/** The other-channel sales ledger and its jobs (src/sales/SalesLedger.ts, src/jobs/salesLedger.ts). */
export const SalesLedgerConfig = Config.all({
  /** When the recent refresh runs: bookings created yesterday and today (UTC cron). */
  recentCron: cronSetting("SALES_LEDGER_RECENT_CRON", "*/5 * * * *"),
  /** When the nightly refresh runs: bookings created over the last SALES_LEDGER_NIGHTLY_DAYS days (UTC cron). */
  nightlyCron: cronSetting("SALES_LEDGER_NIGHTLY_CRON", "45 1 * * *"),
  /** When accounts not yet covered back SALES_LEDGER_BACKFILL_DAYS days are walked further back (UTC cron). */
  backfillCron: cronSetting("SALES_LEDGER_BACKFILL_CRON", "2-59/5 * * * *"),
  nightlyDays: Config.integer("SALES_LEDGER_NIGHTLY_DAYS").pipe(Config.withDefault(30)),
  /** How far back (days before today, UTC) every account's ledger is filled. */
  backfillDays: Config.integer("SALES_LEDGER_BACKFILL_DAYS").pipe(Config.withDefault(400)),
  /** Creation days read per backfill step; the progress is saved after each. */
  backfillChunkDays: Config.integer("SALES_LEDGER_BACKFILL_CHUNK_DAYS").pipe(
    Config.withDefault(14),
    Config.validate({ message: "must be at least 1", validation: (n) => n >= 1 })
  ),
  /** Pause between two booking-search pages of one account, so a booking system is not hammered. */
  pagePauseMs: Config.integer("SALES_LEDGER_PAGE_PAUSE_MS").pipe(Config.withDefault(250)),
  /** Accounts refreshed at the same time. */
  concurrency: Config.integer("SALES_LEDGER_CONCURRENCY").pipe(Config.withDefault(2)),
  /** Attempts per page after the first when the booking system does not answer, with jittered backoff. */
  retries: Config.integer("SALES_LEDGER_RETRIES").pipe(Config.withDefault(2)),
  retryBaseMillis: Config.integer("SALES_LEDGER_RETRY_BASE_MS").pipe(Config.withDefault(2000))
})

export type SalesLedgerConfig = Config.Config.Success<typeof SalesLedgerConfig>
