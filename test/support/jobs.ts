/**
 * One instance's scheduled jobs, as the service runs them: its own cluster runner on
 * `clusterPort` (undefined: CLUSTER_PORT unset, a free port), on `databaseUrl`, with settings `env`. Unless a test passes a booking system (and
 * links accounts), neither the booking system nor the payment provider is called.
 */
import { type Context, Effect, Layer } from "effect"
import { JobsLive } from "../../src/jobs/index.js"
import { Mirror } from "../../src/mirror/Mirror.js"
import { BookingSystemAccounts } from "../../src/operators/BookingSystemAccounts.js"
import { IdempotencyStore } from "../../src/partner/writes/IdempotencyStore.js"
import { BookingSystem } from "../../src/ports/BookingSystem.js"
import { ExchangeRates } from "../../src/ports/ExchangeRates.js"
import { PaymentProvider } from "../../src/ports/PaymentProvider.js"
import { DailyRates } from "../../src/rates/DailyRates.js"
import { SalesLedger } from "../../src/sales/SalesLedger.js"
import { outboxOn } from "./outbox.js"

const unused = <I, S extends object>(tag: Context.Tag<I, S>, why: string) =>
  Layer.succeed(tag, new Proxy({} as S, { get: () => () => Effect.dieMessage(why) }))

const unusedBookingSystem = unused(BookingSystem, "no account is linked in this test")
const unusedPaymentProvider = unused(PaymentProvider, "no payment is made in this test")
/** The exchange-rate job may fire (weekdays 15:30 and 17:30 UTC): by default its sources answer no rate. */
const noRateSources = Layer.succeed(ExchangeRates, { dailyRates: () => Effect.succeed([]) })

export const jobsInstance = (
  databaseUrl: string,
  clusterPort: number | undefined,
  env: Record<string, string>,
  bookingSystem: Layer.Layer<BookingSystem> = unusedBookingSystem,
  /** Where the exchange-rate job reads rates (default: sources that answer none). */
  exchangeRates: Layer.Layer<ExchangeRates> = noRateSources
) =>
  JobsLive.pipe(
    Layer.provide(Mirror.Default),
    Layer.provide(DailyRates.Default),
    Layer.provide(exchangeRates),
    Layer.provide(SalesLedger.Default),
    Layer.provide(IdempotencyStore.Default),
    Layer.provide(BookingSystemAccounts.Default),
    Layer.provide(bookingSystem),
    Layer.provide(unusedPaymentProvider),
    // The outbox layer brings the database and sets the configuration for every layer built on it.
    Layer.provide(outboxOn(databaseUrl, {
      ...(clusterPort === undefined ? {} : { CLUSTER_PORT: String(clusterPort) }),
      CLUSTER_POLL_SECONDS: "0.5",
      LOG_LEVEL: "Warning",
      ...env
    }))
  )
