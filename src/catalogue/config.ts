import { Config } from "effect"

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
