/**
 * The systems we do not own, as the running service (and the test server) reach them: the
 * booking-system and payment-provider adapters over one HTTP client, configured from the
 * environment (BOOKING_SYSTEM_*, SURFBOARD_*), and the email outbox (SMTP_URL or the local mailbox).
 * The exchange-rate sources (EXCHANGE_RATES_*) are a layer of their own, `ExchangeRatesSourcesLive`:
 * in demo mode without their URLs it starts the rates sandbox, which the CLI's commands do not need.
 */
import { NodeHttpClient } from "@effect/platform-node"
import { Layer } from "effect"
import { Outbox } from "../email/Outbox.js"
import { BookingSystemLive } from "./BookingSystemLive.js"
import { ExchangeRatesLive } from "./ExchangeRatesLive.js"
import { MailerLive } from "./MailerLive.js"
import { PaymentProviderLive } from "./PaymentProviderLive.js"

export const ExternalSystemsLive = Layer.mergeAll(BookingSystemLive, PaymentProviderLive).pipe(
  Layer.provide(NodeHttpClient.layerUndici)
)

/** The email outbox, sending through SMTP (SMTP_URL) or into the local mailbox. Needs the SqlClient. */
export const OutboxLive = Outbox.Default.pipe(Layer.provide(MailerLive))

/** The ExchangeRates port (Norges Bank, the ECB as fallback) over its own HTTP client. */
export const ExchangeRatesSourcesLive = ExchangeRatesLive.pipe(Layer.provide(NodeHttpClient.layerUndici))
