import { Config } from "effect"

/** Cancels and reschedules: the lease of a booking change (src/partner/bookingChanges/BookingChangesRepo.ts). */
export const BookingChangeConfig = Config.all({
  /**
   * Seconds a running cancel or reschedule owns its progress record; past it a crash is assumed
   * and the recovery job (or a retry) finishes it. Lowered only in tests.
   */
  leaseSeconds: Config.integer("BOOKING_CHANGE_LEASE_SECONDS").pipe(Config.withDefault(120))
})
