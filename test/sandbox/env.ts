/**
 * A Bókun sandbox on a fresh database plus the BookingSystem port pointed at it over real HTTP,
 * with short timeouts and backoff so fault tests stay quick.
 */
import { NodeHttpClient } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { bookingSystemLayer, type BookingSystemOptions } from "../../src/adapters/BookingSystemLive.js"
import { pgClientLayer } from "../../src/db/Database.js"
import { BokunSandboxLive } from "../../src/sandbox/bokun/index.js"
import { freshDatabase } from "../support/server.js"

export const TEST_ADAPTER: BookingSystemOptions = {
  timeout: "1 second",
  retries: 2,
  retryBase: "20 millis",
  searchPageSize: 7
}

export const sandboxEnv = (options: BookingSystemOptions = TEST_ADAPTER) =>
  Layer.unwrapEffect(
    Effect.map(freshDatabase, (url) =>
      Layer.mergeAll(BokunSandboxLive(), bookingSystemLayer(options)).pipe(
        Layer.provideMerge(NodeHttpClient.layer),
        Layer.provideMerge(pgClientLayer(url, 4))
      ))
  ).pipe(Layer.orDie)

/** A small vendor: one product with two start times, adult and child, two rates, a pickup. */
export const smallVendor = (
  title: string,
  overrides: {
    timezone?: string
    currency?: string
    capacity?: number | null
    supportsHolds?: boolean
    holdSeconds?: number
  } = {}
) => ({
  title,
  timezone: overrides.timezone ?? "Europe/Oslo",
  currency: overrides.currency ?? "NOK",
  ...(overrides.holdSeconds ? { holdSeconds: overrides.holdSeconds } : {}),
  products: [{
    title: "Harbour Cruise",
    startTimes: ["10:00", "14:30"],
    capacity: overrides.capacity === undefined ? 10 : overrides.capacity,
    durationMinutes: 90,
    supportsHolds: overrides.supportsHolds ?? true,
    pricingCategories: [{ title: "Adult", isDefault: true, minAge: 16 }, { title: "Child", minAge: 3, maxAge: 15 }],
    rates: [
      { title: "Standard", prices: { Adult: 49900, Child: 24950 } },
      { title: "With lunch", prices: { Adult: 64900, Child: 32450 } }
    ],
    pickupPlaces: [{ title: "Grand Hotel", minutesBefore: 20 }],
    rating: { average: 4.6, count: 210 }
  }]
})
