import { Config } from "effect"

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
