import { Config, ConfigError, Cron, Duration, Either, LogLevel, Option, Redacted } from "effect"
import { parseSmtpUrl } from "./adapters/smtp/url.js"
import { parseMailbox } from "./email/rules.js"
import { PUBLISHABLE_REQUESTS_PER_MINUTE } from "./partner/auth/publishableKey.js"
import { IDEMPOTENCY_LEASE_SECONDS } from "./partner/writes/rules.js"

const LOG_LEVELS: Record<string, LogLevel.LogLevel> = {
  all: LogLevel.All,
  trace: LogLevel.Trace,
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warn: LogLevel.Warning,
  warning: LogLevel.Warning,
  error: LogLevel.Error,
  fatal: LogLevel.Fatal,
  none: LogLevel.None,
  off: LogLevel.None
}

/** A secret that may be unset: set but blank (`NAME=` in an env file) is unset too. */
const optionalSecret = (name: string) =>
  Config.option(Config.redacted(name)).pipe(
    Config.map(Option.filter((value) => Redacted.value(value).trim() !== ""))
  )

/** Every setting of the service, read once through effect/Config. */
export const AppConfig = Config.all({
  host: Config.string("HOST").pipe(Config.withDefault("127.0.0.1")),
  port: Config.port("PORT").pipe(Config.withDefault(3000)),
  /** Public base URL used in printed hints and docs; defaults to http://HOST:PORT. */
  publicUrl: Config.option(Config.string("PUBLIC_URL")),
  /** A PostgreSQL server; when unset the embedded database under DATA_DIR is used. */
  databaseUrl: optionalSecret("DATABASE_URL"),
  dataDir: Config.string("DATA_DIR").pipe(Config.withDefault(".data")),
  embeddedPgPort: Config.port("EMBEDDED_PG_PORT").pipe(Config.withDefault(54329)),
  /**
   * Seed the demo dataset when the database holds no operators. Default: on with the embedded
   * database, off with DATABASE_URL (a real server never gets demo keys unless asked).
   */
  demoData: Config.option(Config.boolean("DEMO_DATA")),
  /** Port of the sandbox booking system the demo starts in-process (0: any free port). */
  sandboxPort: Config.integer("SANDBOX_PORT").pipe(Config.withDefault(3100)),
  /** Requests per minute per partner key (spec: 300). Raised only for benchmarks. */
  rateLimitPerMinute: Config.integer("RATE_LIMIT_PER_MINUTE").pipe(Config.withDefault(300)),
  /** Uncached requests per minute per publishable key (spec §8: 1200). Raised only for benchmarks. */
  publishableRateLimitPerMinute: Config.integer("PUBLISHABLE_RATE_LIMIT_PER_MINUTE").pipe(
    Config.withDefault(PUBLISHABLE_REQUESTS_PER_MINUTE)
  ),
  /** Seconds a running write holds its Idempotency-Key without renewing it (default 30). Lowered only in tests. */
  idempotencyLeaseSeconds: Config.integer("IDEMPOTENCY_LEASE_SECONDS").pipe(
    Config.withDefault(IDEMPOTENCY_LEASE_SECONDS)
  ),
  dbPoolSize: Config.integer("DB_POOL_SIZE").pipe(Config.withDefault(10)),
  otlpEndpoint: Config.option(Config.string("OTEL_EXPORTER_OTLP_ENDPOINT")),
  // --- observability (docs/observability.md) ---
  /** Share of new traces kept when tracing is on (parent-based: a request follows its caller's flag). */
  traceSampleRatio: Config.number("OTEL_TRACES_SAMPLER_ARG").pipe(
    Config.validate({ message: "a ratio from 0 to 1", validation: (n) => n >= 0 && n <= 1 }),
    Config.withDefault(1)
  ),
  /** Milliseconds between metric exports (and reads of the gauges that need SQL). */
  metricExportIntervalMs: Config.integer("OTEL_METRIC_EXPORT_INTERVAL").pipe(Config.withDefault(60_000)),
  /** Milliseconds between span and log batches sent. */
  spanExportIntervalMs: Config.integer("OTEL_BSP_SCHEDULE_DELAY").pipe(Config.withDefault(5_000)),
  // --- end observability ---
  logFormat: Config.literal("pretty", "json", "logfmt")("LOG_FORMAT").pipe(Config.withDefault("pretty" as const)),
  logLevel: Config.string("LOG_LEVEL").pipe(
    Config.mapOrFail((name) => {
      const level = LOG_LEVELS[name.toLowerCase()]
      return level ? Either.right(level) : Either.left(ConfigError.InvalidData([], `unknown log level ${name}`))
    }),
    Config.withDefault(LogLevel.Info)
  )
})

export type AppConfig = Config.Config.Success<typeof AppConfig>

export const baseUrlOf = (config: Pick<AppConfig, "host" | "port" | "publicUrl">, port = config.port) =>
  Option.getOrElse(config.publicUrl, () => `http://${config.host === "0.0.0.0" ? "127.0.0.1" : config.host}:${port}`)

const cronSetting = (name: string, fallback: string) =>
  Config.string(name).pipe(
    Config.withDefault(fallback),
    Config.mapOrFail((expr) =>
      Either.mapLeft(Cron.parse(expr, "UTC"), (e) =>
        ConfigError.InvalidData([name], `not a cron expression: ${e.message}`))
    )
  )

/** Scheduled jobs and the cluster that runs each of them once across instances (src/jobs). */
/** Cancels and reschedules: the lease of a booking change (src/partner/bookingChanges/BookingChangesRepo.ts). */
export const BookingChangeConfig = Config.all({
  /**
   * Seconds a running cancel or reschedule owns its progress record; past it a crash is assumed
   * and the recovery job (or a retry) finishes it. Lowered only in tests.
   */
  leaseSeconds: Config.integer("BOOKING_CHANGE_LEASE_SECONDS").pipe(Config.withDefault(120))
})

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

/** The booking-system mirror (src/mirror/Mirror.ts). */
export const MirrorConfig = Config.all({
  /** Near-term refresh: today and this many days ahead. */
  nearTermDays: Config.integer("MIRROR_NEAR_TERM_DAYS").pipe(Config.withDefault(3)),
  /** Nightly refresh: today and this many days ahead. */
  nightlyDays: Config.integer("MIRROR_NIGHTLY_DAYS").pipe(Config.withDefault(90)),
  /** Accounts refreshed at the same time. */
  concurrency: Config.integer("MIRROR_CONCURRENCY").pipe(Config.withDefault(4)),
  /** Attempts per account after the first when the booking system does not answer. */
  retries: Config.integer("MIRROR_RETRIES").pipe(Config.withDefault(2)),
  retryBaseMillis: Config.integer("MIRROR_RETRY_BASE_MS").pipe(Config.withDefault(2000))
})

export type MirrorConfig = Config.Config.Success<typeof MirrorConfig>
/** Live availability and the season cache of the tour catalogue (src/catalogue/TourSeason.ts, src/partner/tours/TourAvailability.ts). */
export const TourAvailabilityConfig = Config.all({
  /** Time one tour's 12 months of availability may take (every chunk, retries included); past it: not known. */
  seasonTimeoutMs: Config.integer("TOUR_SEASON_TIMEOUT_MS").pipe(Config.withDefault(10_000)),
  /** Booking-system accounts whose tours are refreshed at the same time (one tour at a time per account). */
  seasonConcurrency: Config.integer("TOUR_SEASON_CONCURRENCY").pipe(Config.withDefault(4)),
  /** Hours a computed `from_price` is still shown while the booking system does not answer. */
  seasonPriceKeepHours: Config.integer("TOUR_SEASON_PRICE_KEEP_HOURS").pipe(Config.withDefault(24)),
  /** Time GET /tours/{id}/availability waits for the booking system before answering `known: false`. */
  availabilityTimeoutMs: Config.integer("TOUR_AVAILABILITY_TIMEOUT_MS").pipe(Config.withDefault(5_000))
})

export type TourAvailabilityConfig = Config.Config.Success<typeof TourAvailabilityConfig>

/** Calls to booking systems (the Bókun adapter). Read by `BookingSystemLive`. */
export const BookingSystemConfig = Config.all({
  /** Time allowed for one attempt of one call, answer included. */
  timeoutMs: Config.integer("BOKUN_TIMEOUT_MS").pipe(Config.withDefault(10_000)),
  /** Retries of safe calls (reads) after the first attempt; writes are never retried. */
  retries: Config.integer("BOKUN_RETRIES").pipe(Config.withDefault(2)),
  /** Bookings per booking-search page. */
  searchPageSize: Config.integer("BOKUN_SEARCH_PAGE_SIZE").pipe(Config.withDefault(100))
})

/**
 * The payment provider (Surfboard Payments): where its API is, the partner credentials, the
 * merchant calls are made for by default, and how calls are timed and retried. Read by
 * `PaymentProviderLive` (timeouts, retries) and `livePaymentAccount` (the account). Without
 * SURFBOARD_BASE_URL, SURFBOARD_API_KEY, SURFBOARD_API_SECRET and SURFBOARD_MERCHANT_ID there is no
 * live account: only the sandbox (test keys, tests, the demo) moves money.
 */
export const PaymentProviderConfig = Config.all({
  /** The API base URL Surfboard gives at onboarding (its reference writes YOUR_API_URL). */
  baseUrl: Config.option(Config.string("SURFBOARD_BASE_URL")),
  apiKey: Config.option(Config.redacted("SURFBOARD_API_KEY")),
  apiSecret: Config.option(Config.redacted("SURFBOARD_API_SECRET")),
  merchantId: Config.option(Config.string("SURFBOARD_MERCHANT_ID")),
  /** The merchant's online (PaymentPage) terminal, where payment links are made. */
  paymentPageTerminalId: Config.option(Config.string("SURFBOARD_PAYMENT_PAGE_TERMINAL_ID")),
  /** Time allowed for one attempt of one call, answer included. */
  timeoutMs: Config.integer("SURFBOARD_TIMEOUT_MS").pipe(Config.withDefault(15_000)),
  /** Retries of reads after the first attempt; calls that move money are never retried by the adapter. */
  retries: Config.integer("SURFBOARD_RETRIES").pipe(Config.withDefault(2))
})

export type PaymentProviderConfig = Config.Config.Success<typeof PaymentProviderConfig>

/** Email: where messages go and how the outbox sends them (src/email/Outbox.ts, docs/email.md). */
export const MailConfig = Config.all({
  /**
   * `smtp://user:password@host:587` (STARTTLS when offered) or `smtps://…:465`. Unset: messages go
   * to the local mailbox in the database (`npm run cli -- mail list`).
   */
  smtp: optionalSecret("SMTP_URL").pipe(
    Config.mapOrFail((url) =>
      Option.match(url, {
        onNone: () => Either.right(Option.none()),
        onSome: (u) =>
          Either.map(
            Either.mapLeft(parseSmtpUrl(u), (message) => ConfigError.InvalidData(["SMTP_URL"], message)),
            Option.some
          )
      })
    )
  ),
  /** The sender of every email: `Name <address>` or an address. Its domain also names Message-IDs. */
  from: Config.string("MAIL_FROM").pipe(
    Config.withDefault("Tour Partner <no-reply@localhost>"),
    Config.mapOrFail((value) =>
      Either.mapLeft(parseMailbox(value), (message) => ConfigError.InvalidData(["MAIL_FROM"], message))
    )
  ),
  /** SMTP: time allowed to connect, for the greeting, and between any two packets; a whole send gets 4 times this. */
  smtpTimeoutMs: Config.integer("SMTP_TIMEOUT_MS").pipe(Config.withDefault(10_000)),
  /** Messages one sender claims at a time, and how many of them it sends at once. */
  batchSize: Config.integer("OUTBOX_BATCH_SIZE").pipe(Config.withDefault(10)),
  concurrency: Config.integer("OUTBOX_CONCURRENCY").pipe(Config.withDefault(2)),
  /** Attempts before a message is given up (status failed, logged as an error). */
  maxAttempts: Config.integer("OUTBOX_MAX_ATTEMPTS").pipe(Config.withDefault(10)),
  /** Backoff after a failed attempt: doubles from the base, capped, with jitter. */
  retryBaseMs: Config.integer("OUTBOX_RETRY_BASE_MS").pipe(Config.withDefault(30_000)),
  retryMaxMs: Config.integer("OUTBOX_RETRY_MAX_MS").pipe(Config.withDefault(3_600_000))
})

export type MailConfig = Config.Config.Success<typeof MailConfig>

/** Quickbook desk sales (src/quickbook/sales/QuickbookTours.ts). */
export const QuickbookConfig = Config.all({
  /** The service's id at the payment provider for its fee split; unset: no `serviceProviders` entry. */
  serviceProviderId: Config.option(Config.string("QUICKBOOK_SERVICE_PROVIDER_ID")),
  /** The service's share of each desk sale, percent (with QUICKBOOK_SERVICE_PROVIDER_ID). */
  serviceFeePercent: Config.number("QUICKBOOK_SERVICE_FEE_PERCENT").pipe(Config.withDefault(5)),
  /**
   * Seconds a POST /book owns its payment's progress record; past it a crash is assumed and the
   * quickbook-recovery job (or a retry of the same payment) finishes it. Lowered only in tests.
   */
  bookLeaseSeconds: Config.integer("QUICKBOOK_BOOK_LEASE_SECONDS").pipe(Config.withDefault(120)),
  /** How long a repeat of a book still being processed waits for it before answering 503. */
  bookWaitMs: Config.integer("QUICKBOOK_BOOK_WAIT_MS").pipe(Config.withDefault(8_000)),
  /** Attempts to book at the booking system when it does not answer (same external reference each time). */
  bookAttempts: Config.integer("QUICKBOOK_BOOK_ATTEMPTS").pipe(Config.withDefault(3)),
  /**
   * Seconds a payment that does not match its sale waits to be presented for the sale it pays;
   * past it (or once that sale is confirmed or failed) the quickbook-recovery job returns it.
   */
  mismatchReturnAfterSeconds: Config.integer("QUICKBOOK_MISMATCH_RETURN_AFTER_SECONDS").pipe(Config.withDefault(3_600))
})

/**
 * Quickbook tickets (src/quickbook/tickets/QuickbookTicketLinks.ts). The ticket's PDF link is made on
 * PUBLIC_URL (unset: http://HOST:<the port this instance listens on>).
 */
export const QuickbookTicketConfig = Config.all({
  /**
   * Where guests open their booking: the ticket's QR code and the confirmation email link to
   * `<GUEST_BOOKING_BASE_URL>/b/<booking code>`. Unset: PUBLIC_URL.
   */
  guestBookingBaseUrl: Config.option(Config.string("GUEST_BOOKING_BASE_URL")),
  /**
   * Secret that signs the ticket PDF links (at least 32 characters; every instance needs the same
   * one; changing it breaks the links already given out). Unset: derived from the shared secret in
   * the database (service_secrets), so that instances agree without configuration.
   */
  ticketLinkSecret: optionalSecret("QUICKBOOK_TICKET_LINK_SECRET").pipe(
    Config.mapOrFail((secret) =>
      Option.isSome(secret) && Redacted.value(secret.value).length < 32
        ? Either.left(ConfigError.InvalidData(["QUICKBOOK_TICKET_LINK_SECRET"], "must be at least 32 characters"))
        : Either.right(secret)
    )
  )
})

export type QuickbookTicketConfig = Config.Config.Success<typeof QuickbookTicketConfig>

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
/**
 * Exchange rates (src/adapters/norgesBank/, src/rates/, src/jobs/exchangeRates.ts, docs/exchange-rates.md):
 * where Norges Bank's and the ECB's data APIs are, how calls are timed, and when rates are fetched.
 */
export const ExchangeRatesConfig = Config.all({
  /**
   * Norges Bank's open data API (default https://data.norges-bank.no). Unset in demo mode: the
   * rates sandbox the demo starts.
   */
  norgesBankUrl: Config.option(Config.string("EXCHANGE_RATES_NORGES_BANK_URL")).pipe(
    Config.map(Option.filter((url) => url.trim() !== ""))
  ),
  /** The ECB data API, the fallback (default https://data-api.ecb.europa.eu); as above in demo mode. */
  ecbUrl: Config.option(Config.string("EXCHANGE_RATES_ECB_URL")).pipe(
    Config.map(Option.filter((url) => url.trim() !== ""))
  ),
  /** Time allowed for one attempt of one call, answer included. */
  timeoutMs: Config.integer("EXCHANGE_RATES_TIMEOUT_MS").pipe(Config.withDefault(10_000)),
  /** Retries per source after the first attempt, before the fallback (or the failure). */
  retries: Config.integer("EXCHANGE_RATES_RETRIES").pipe(Config.withDefault(2)),
  /**
   * When the rates of the last EXCHANGE_RATES_REFRESH_DAYS days are fetched (UTC): after Norges
   * Bank publishes (~16:00 Oslo) and again later for a late rate; weekdays.
   */
  cron: cronSetting("EXCHANGE_RATES_CRON", "30 15,17 * * 1-5"),
  /** Days each scheduled run fetches again, today included. */
  refreshDays: Config.integer("EXCHANGE_RATES_REFRESH_DAYS").pipe(Config.withDefault(10)),
  /** Days fetched when the table is empty (a first start). */
  backfillDays: Config.integer("EXCHANGE_RATES_BACKFILL_DAYS").pipe(Config.withDefault(400)),
  /** Currencies fetched (NOK needs none). */
  currencies: Config.array(Config.string(), "EXCHANGE_RATES_CURRENCIES").pipe(
    Config.withDefault(["EUR", "USD", "SEK", "DKK", "GBP"]),
    Config.map((list) => list.map((c) => c.trim().toUpperCase()).filter((c) => /^[A-Z]{3}$/.test(c) && c !== "NOK"))
  )
})

export type ExchangeRatesConfig = Config.Config.Success<typeof ExchangeRatesConfig>
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

/** The analytics reads (src/partner/analytics/, GET /api/v1/analytics/*; docs/api/analytics.md "Limits"). */
export const AnalyticsReadsConfig = Config.all({
  /** Analytics requests one key may have running at a time, across every instance (spec §8: 2). */
  concurrencyPerKey: Config.integer("ANALYTICS_CONCURRENCY_PER_KEY").pipe(
    Config.withDefault(2),
    Config.validate({ message: "must be at least 1", validation: (n) => n >= 1 })
  ),
  /**
   * Time one analytics request's database work may take (spec §8: 20 s); past it the statement is
   * cancelled by PostgreSQL and the request answers 503. Lowered only in tests.
   */
  timeoutMs: Config.integer("ANALYTICS_TIMEOUT_MS").pipe(
    Config.withDefault(20_000),
    Config.validate({ message: "must be at least 1", validation: (n) => n >= 1 })
  )
})

export type AnalyticsReadsConfig = Config.Config.Success<typeof AnalyticsReadsConfig>

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

/**
 * Commission invoices and credit notes (src/invoices/, docs/api/invoices.md): the seller (the
 * marketplace) as printed on every document, stored with each document at issue, and the
 * commission-close job's schedule.
 */
export const InvoiceConfig = Config.all({
  sellerName: Config.string("INVOICE_SELLER_NAME").pipe(Config.withDefault("Tour Partner AS")),
  /** The seller's organisation number (9 digits); printed as `NO 999 999 999 MVA`. */
  sellerOrgNumber: Config.string("INVOICE_SELLER_ORG_NUMBER").pipe(
    Config.withDefault("999999999"),
    Config.validate({ message: "must be 9 digits", validation: (s) => /^\d{9}$/.test(s.replaceAll(" ", "")) }),
    Config.map((s) => s.replaceAll(" ", ""))
  ),
  /** The seller's postal address, one line (commas separate the printed lines). */
  sellerAddress: Config.string("INVOICE_SELLER_ADDRESS").pipe(
    Config.withDefault("Karl Johans gate 1, 0154 Oslo, Norway")
  ),
  sellerEmail: Config.option(Config.string("INVOICE_SELLER_EMAIL")),
  /** The account an amount still payable is paid to. */
  sellerBankAccount: Config.option(Config.string("INVOICE_SELLER_BANK_ACCOUNT")),
  /** VAT (MVA) on the marketplace's commission, percent. */
  vatPercent: Config.number("INVOICE_VAT_PERCENT").pipe(
    Config.withDefault(25),
    Config.validate({ message: "must be between 0 and 100", validation: (n) => n >= 0 && n <= 100 })
  ),
  /** Days from the issue date to the due date. */
  dueDays: Config.integer("INVOICE_DUE_DAYS").pipe(
    Config.withDefault(14),
    Config.validate({ message: "must be at least 0", validation: (n) => n >= 0 })
  ),
  /** When the commission-close job issues the previous month's documents (UTC; default the 2nd at 03:00). */
  closeCron: cronSetting("COMMISSION_CLOSE_CRON", "0 3 2 * *")
})

export type InvoiceConfig = Config.Config.Success<typeof InvoiceConfig>

/** The assistant-facing MCP server and its authorization server (src/assistant/, docs/assistant.md). */
export const AssistantConfig = Config.all({
  /** The MCP endpoint's public URL (the OAuth resource); default `{base_url}/mcp`. */
  mcpPublicUrl: Config.option(Config.string("MCP_PUBLIC_URL")),
  /**
   * Browser origins (comma-separated hostnames or origins, e.g. `app.example.com`) allowed to call the
   * MCP endpoint besides the service's own host; any other `Origin` is refused (403, DNS rebinding).
   */
  mcpAllowedOrigins: Config.array(Config.string(), "MCP_ALLOWED_ORIGINS").pipe(Config.withDefault([])),
  /** The OAuth issuer; default the base URL (PUBLIC_URL, else http://HOST:PORT). */
  oauthIssuer: Config.option(Config.string("OAUTH_ISSUER"))
})
export type AssistantConfig = Config.Config.Success<typeof AssistantConfig>

/** The HTTP server's timeouts and its shutdown (src/http/lifecycle/, docs/operations.md). */
export const HttpServerConfig = Config.all({
  /** Time a client has to send a request's headers (node's `headersTimeout`; 408 past it). */
  headersTimeoutMs: Config.integer("HTTP_HEADERS_TIMEOUT_MS").pipe(Config.withDefault(20_000)),
  /** Time a client has to send a whole request, body included (node's `requestTimeout`; 408 past it). */
  requestTimeoutMs: Config.integer("HTTP_REQUEST_TIMEOUT_MS").pipe(Config.withDefault(60_000)),
  /**
   * How long an idle keep-alive connection stays open. Above a load balancer's idle timeout (60 s
   * for most), so that the balancer, not the service, closes idle connections.
   */
  keepAliveTimeoutMs: Config.integer("HTTP_KEEP_ALIVE_TIMEOUT_MS").pipe(Config.withDefault(65_000))
}).pipe(
  Config.validate({
    message: "HTTP_HEADERS_TIMEOUT_MS must not exceed HTTP_REQUEST_TIMEOUT_MS",
    validation: (c) => c.requestTimeoutMs === 0 || c.headersTimeoutMs <= c.requestTimeoutMs
  })
)

/**
 * The longest a shutdown (SIGTERM, SIGINT) may take: draining HTTP, stopping the jobs and the
 * cluster runner, closing the pool. Past it the process exits anyway (code 1). A number is seconds;
 * `"500 millis"`, `"1 minute"` … are read as durations.
 */
export const ShutdownConfig = Config.all({
  timeout: Config.string("SHUTDOWN_TIMEOUT").pipe(
    Config.withDefault("25"),
    Config.mapOrFail((text) => {
      const seconds = Number(text)
      const duration = text.trim() !== "" && Number.isFinite(seconds)
        ? Option.some(Duration.seconds(seconds))
        : Duration.decodeUnknown(text)
      return Option.match(Option.filter(duration, (d) => Duration.toMillis(d) > 0), {
        onNone: () => Either.left(ConfigError.InvalidData(["SHUTDOWN_TIMEOUT"], `not a positive duration: ${text}`)),
        onSome: Either.right
      })
    })
  )
})
