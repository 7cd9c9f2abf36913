import { Config } from "effect"

/** Calls to booking systems (the Bókun adapter). Read by `BookingSystemLive`. */
export const BookingSystemConfig = Config.all({
  /** Time allowed for one attempt of one call, answer included. */
  timeoutMs: Config.integer("BOKUN_TIMEOUT_MS").pipe(Config.withDefault(10_000)),
  /** Retries of safe calls (reads) after the first attempt; writes are never retried. */
  retries: Config.integer("BOKUN_RETRIES").pipe(Config.withDefault(2)),
  /** Bookings per booking-search page. */
  searchPageSize: Config.integer("BOKUN_SEARCH_PAGE_SIZE").pipe(Config.withDefault(100))
})
