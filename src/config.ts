/** The service's core settings (listening, database, limits, observability, logging); each feature's own settings are in its folder's `config.ts`. */
import { Config, ConfigError, Either, LogLevel, Option } from "effect"
import { optionalSecret } from "./lib/settings.js"
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
