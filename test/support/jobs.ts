/**
 * One instance's scheduled jobs, as the service runs them: its own cluster runner on
 * `clusterPort`, on `databaseUrl`, with settings `env`. No booking-system account is linked in
 * these tests, so the booking system is never called.
 */
import { Effect, Layer } from "effect"
import { JobsLive } from "../../src/jobs/index.js"
import { BookingSystem } from "../../src/ports/BookingSystem.js"
import { BookingSystemAccounts } from "../../src/services/BookingSystemAccounts.js"
import { IdempotencyStore } from "../../src/services/IdempotencyStore.js"
import { Mirror } from "../../src/services/Mirror.js"
import { outboxOn } from "./outbox.js"

const unusedBookingSystem = Layer.succeed(
  BookingSystem,
  new Proxy({} as BookingSystem["Type"], { get: () => () => Effect.dieMessage("no account is linked in this test") })
)

export const jobsInstance = (databaseUrl: string, clusterPort: number, env: Record<string, string>) =>
  JobsLive.pipe(
    Layer.provide(Mirror.Default),
    Layer.provide(IdempotencyStore.Default),
    Layer.provide(BookingSystemAccounts.Default),
    Layer.provide(unusedBookingSystem),
    // The outbox layer brings the database and sets the configuration for every layer built on it.
    Layer.provide(outboxOn(databaseUrl, {
      CLUSTER_PORT: String(clusterPort),
      CLUSTER_POLL_SECONDS: "0.5",
      LOG_LEVEL: "Warning",
      ...env
    }))
  )
