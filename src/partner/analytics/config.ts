import { Config } from "effect"

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
