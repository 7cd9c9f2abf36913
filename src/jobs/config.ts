import { Config } from "effect"
import { cronSetting } from "../lib/settings.js"

/** Scheduled jobs and the cluster that runs each of them once across instances (src/jobs). */
export const JobsConfig = Config.all({
  /** `false` runs no scheduled job in this instance (an API-only replica). */
  enabled: Config.boolean("JOBS").pipe(Config.withDefault(true)),
  /** Address other instances reach this one's cluster runner on, and the port it listens on. */
  clusterHost: Config.string("CLUSTER_HOST").pipe(Config.withDefault("127.0.0.1")),
  /**
   * Unset: a free port picked by the system when the runner starts (its address is registered in
   * the cluster's storage, so other instances find it). Set it only when peers must reach a fixed
   * port (say, through a firewall); a port in use then stops the start with an error naming it.
   */
  clusterPort: Config.option(Config.port("CLUSTER_PORT")),
  /** How often the cluster polls its message storage for due runs. */
  clusterPollSeconds: Config.number("CLUSTER_POLL_SECONDS").pipe(Config.withDefault(10)),
  /**
   * Connections of the cluster's own pool for its runner and message storage (one stays reserved
   * for the shard locks), on top of DB_POOL_SIZE.
   */
  clusterDbPoolSize: Config.integer("CLUSTER_DB_POOL_SIZE").pipe(Config.withDefault(3)),
  /** Cron expressions (UTC; a 6-field form with seconds is accepted). */
  mirrorNearTermCron: cronSetting("MIRROR_NEAR_TERM_CRON", "0 */2 * * *"),
  mirrorNightlyCron: cronSetting("MIRROR_NIGHTLY_CRON", "15 1 * * *"),
  idempotencyCleanupCron: cronSetting("IDEMPOTENCY_CLEANUP_CRON", "40 * * * *"),
  /** How often the outbox sender looks for due emails (every 10 seconds by default). */
  outboxCron: cronSetting("OUTBOX_CRON", "*/10 * * * * *"),
  /** How often booking changes left half-done by a crash are finished (every 5 minutes by default). */
  bookingChangeRecoveryCron: cronSetting("BOOKING_CHANGE_RECOVERY_CRON", "*/5 * * * *"),
  /**
   * How often open balance payment links that are due are checked at the provider, and unfinished
   * ones settled (every 5 minutes by default; each link backs off on its own).
   */
  paymentLinkWatchCron: cronSetting("PAYMENT_LINK_WATCH_CRON", "*/5 * * * *"),
  /**
   * How often every published, linked tour's `from_price` and `season` are computed again from its
   * booking system (every 30 minutes by default, off the hour the mirror runs on).
   */
  tourSeasonCron: cronSetting("TOUR_SEASON_CRON", "5,35 * * * *"),
  /**
   * How often desk-sale payments a crash left half-done are finished (booked or refunded) and their
   * refunds still open are asked again (every minute by default).
   */
  quickbookRecoveryCron: cronSetting("QUICKBOOK_RECOVERY_CRON", "* * * * *"),
  /**
   * How often Quickbook quotes past their validity are expired and lapsed seat holds released
   * (every minute by default).
   */
  quickbookExpiryCron: cronSetting("QUICKBOOK_EXPIRY_CRON", "* * * * *"),
  /** How often the per-day sales rollups take in what changed (every minute by default). */
  salesRollupCron: cronSetting("SALES_ROLLUP_CRON", "* * * * *")
})

export type JobsConfig = Config.Config.Success<typeof JobsConfig>
