/** Settings of site-event collection and the analytics rollups. */
import { Config, Option } from "effect"
import { cronSetting } from "../lib/settings.js"

/**
 * Site analytics collection (POST /api/v1/collect; src/analytics/, src/jobs/analyticsSalts.ts,
 * docs/api/collect.md, docs/api/privacy.md).
 */
export const AnalyticsCollectConfig = Config.all({
  /** Events written per INSERT (one transaction); a full buffer is written at once. */
  batchSize: Config.integer("ANALYTICS_BATCH_SIZE").pipe(
    Config.withDefault(500),
    Config.validate({ message: "must be from 1 to 5000", validation: (n) => n >= 1 && n <= 5000 })
  ),
  /** Longest an event waits in memory before it is written (milliseconds). */
  flushIntervalMs: Config.integer("ANALYTICS_FLUSH_INTERVAL_MS").pipe(Config.withDefault(1000)),
  /** Events accepted per minute from one IP address for one site (429 past it). */
  perIpPerMinute: Config.integer("ANALYTICS_COLLECT_PER_MINUTE").pipe(Config.withDefault(120)),
  /**
   * A header a trusted proxy in front of the service sets to the client's country (ISO 3166-1
   * alpha-2, e.g. `CF-IPCountry`). Unset (default): no header is trusted.
   */
  countryHeader: Config.option(Config.string("ANALYTICS_COUNTRY_HEADER")).pipe(
    Config.map(Option.filter((h) => h.trim() !== "")),
    Config.map(Option.map((h) => h.trim().toLowerCase()))
  ),
  /** An offline country database (MaxMind .mmdb, e.g. GeoLite2-Country) read when no header is set. Unset: no country. */
  geoipDatabase: Config.option(Config.string("ANALYTICS_GEOIP_DATABASE")).pipe(
    Config.map(Option.filter((p) => p.trim() !== ""))
  ),
  /**
   * A header a trusted proxy sets to the client's address (e.g. `X-Forwarded-For`: its last entry is
   * taken). Unset (default): the connection's peer address.
   */
  clientIpHeader: Config.option(Config.string("ANALYTICS_CLIENT_IP_HEADER")).pipe(
    Config.map(Option.filter((h) => h.trim() !== "")),
    Config.map(Option.map((h) => h.trim().toLowerCase()))
  ),
  /** When the salt job runs (UTC): makes tomorrow's salt and next month's partition, deletes old ones. */
  saltsCron: cronSetting("ANALYTICS_SALTS_CRON", "7 * * * *"),
  /** Days raw events are kept: a month's partition is dropped once its last day is this old. */
  eventsKeepDays: Config.integer("ANALYTICS_EVENTS_KEEP_DAYS").pipe(Config.withDefault(35))
})

export type AnalyticsCollectConfig = Config.Config.Success<typeof AnalyticsCollectConfig>

/** The site analytics rollups (src/analytics/AnalyticsRollups.ts, src/jobs/analyticsRollups.ts). */
export const AnalyticsRollupsConfig = Config.all({
  /** When the rollups take in the new events (UTC cron): every five minutes. */
  cron: cronSetting("ANALYTICS_ROLLUP_CRON", "*/5 * * * *"),
  /** Events taken in per transaction (each batch moves the watermark with its counters). */
  batchSize: Config.integer("ANALYTICS_ROLLUP_BATCH_SIZE").pipe(
    Config.withDefault(50_000),
    Config.validate({ message: "must be at least 1", validation: (n) => n >= 1 })
  ),
  /**
   * How long a run waits for the event writers in flight to commit (the safe window's lock); past
   * it the run takes in nothing new and the next run tries again.
   */
  lockTimeoutMs: Config.integer("ANALYTICS_ROLLUP_LOCK_TIMEOUT_MS").pipe(Config.withDefault(5_000)),
  /**
   * Bookings changed this far before the attributions' last look are looked at again (a booking
   * transaction that began before it and committed after it is not missed).
   */
  bookingOverlapSeconds: Config.integer("ANALYTICS_ROLLUP_BOOKING_OVERLAP_SECONDS").pipe(Config.withDefault(300))
})

export type AnalyticsRollupsConfig = Config.Config.Success<typeof AnalyticsRollupsConfig>
