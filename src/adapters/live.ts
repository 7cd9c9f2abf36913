/**
 * The systems we do not own, as the running service (and the test server) reach them: the
 * booking-system and payment-provider adapters over one HTTP client, configured from the
 * environment (BOOKING_SYSTEM_*, SURFBOARD_*), and the email outbox (SMTP_URL or the local mailbox).
 */
import { NodeHttpClient } from "@effect/platform-node"
import { Layer } from "effect"
import { Outbox } from "../email/Outbox.js"
import { BookingSystemLive } from "./BookingSystemLive.js"
import { MailerLive } from "./MailerLive.js"
import { PaymentProviderLive } from "./PaymentProviderLive.js"

export const ExternalSystemsLive = Layer.mergeAll(BookingSystemLive, PaymentProviderLive).pipe(
  Layer.provide(NodeHttpClient.layerUndici)
)

/** The email outbox, sending through SMTP (SMTP_URL) or into the local mailbox. Needs the SqlClient. */
export const OutboxLive = Outbox.Default.pipe(Layer.provide(MailerLive))
