import { Config, ConfigError, Either, LogLevel, Option, Redacted } from "effect"

const LOG_LEVELS: Record<string, LogLevel.LogLevel> = {
  all: LogLevel.All, trace: LogLevel.Trace, debug: LogLevel.Debug, info: LogLevel.Info,
  warn: LogLevel.Warning, warning: LogLevel.Warning, error: LogLevel.Error, fatal: LogLevel.Fatal, none: LogLevel.None, off: LogLevel.None
}

/** Every setting of the service, read once through effect/Config. */
export const AppConfig = Config.all({
  host: Config.string("HOST").pipe(Config.withDefault("127.0.0.1")),
  port: Config.port("PORT").pipe(Config.withDefault(3000)),
  /** Public base URL used in printed hints and docs; defaults to http://HOST:PORT. */
  publicUrl: Config.option(Config.string("PUBLIC_URL")),
  /** A PostgreSQL server; when unset the embedded database under DATA_DIR is used. */
  databaseUrl: Config.option(Config.redacted("DATABASE_URL")).pipe(
    Config.map(Option.filter((url) => Redacted.value(url).trim() !== ""))
  ),
  dataDir: Config.string("DATA_DIR").pipe(Config.withDefault(".data")),
  embeddedPgPort: Config.port("EMBEDDED_PG_PORT").pipe(Config.withDefault(54329)),
  /**
   * Seed the demo dataset when the database holds no operators. Default: on with the embedded
   * database, off with DATABASE_URL (a real server never gets demo keys unless asked).
   */
  demoData: Config.option(Config.boolean("DEMO_DATA")),
  /** Requests per minute per partner key (spec: 300). Raised only for benchmarks. */
  rateLimitPerMinute: Config.integer("RATE_LIMIT_PER_MINUTE").pipe(Config.withDefault(300)),
  dbPoolSize: Config.integer("DB_POOL_SIZE").pipe(Config.withDefault(10)),
  otlpEndpoint: Config.option(Config.string("OTEL_EXPORTER_OTLP_ENDPOINT")),
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

/** Calls to booking systems (the Bókun adapter). Read by `BookingSystemLive`. */
export const BookingSystemConfig = Config.all({
  /** Time allowed for one attempt of one call, answer included. */
  timeoutMs: Config.integer("BOKUN_TIMEOUT_MS").pipe(Config.withDefault(10_000)),
  /** Retries of safe calls (reads) after the first attempt; writes are never retried. */
  retries: Config.integer("BOKUN_RETRIES").pipe(Config.withDefault(2)),
  /** Bookings per booking-search page. */
  searchPageSize: Config.integer("BOKUN_SEARCH_PAGE_SIZE").pipe(Config.withDefault(100))
})
