/** Settings of Quickbook desk sales and their tickets. */
import { Config, ConfigError, Either, Option, Redacted } from "effect"
import { optionalSecret } from "../lib/settings.js"

/** Quickbook desk sales (src/quickbook/sales/QuickbookTours.ts). */
export const QuickbookConfig = Config.all({
  /** The service's id at the payment provider for its fee split; unset: no `serviceProviders` entry. */
  serviceProviderId: Config.option(Config.string("QUICKBOOK_SERVICE_PROVIDER_ID")),
  /** The service's share of each desk sale, percent (with QUICKBOOK_SERVICE_PROVIDER_ID). */
  serviceFeePercent: Config.number("QUICKBOOK_SERVICE_FEE_PERCENT").pipe(Config.withDefault(5)),
  /**
   * Seconds a POST /book owns its payment's progress record; past it a crash is assumed and the
   * quickbook-recovery job (or a retry of the same payment) finishes it. Lowered only in tests.
   */
  bookLeaseSeconds: Config.integer("QUICKBOOK_BOOK_LEASE_SECONDS").pipe(Config.withDefault(120)),
  /** How long a repeat of a book still being processed waits for it before answering 503. */
  bookWaitMs: Config.integer("QUICKBOOK_BOOK_WAIT_MS").pipe(Config.withDefault(8_000)),
  /** Attempts to book at the booking system when it does not answer (same external reference each time). */
  bookAttempts: Config.integer("QUICKBOOK_BOOK_ATTEMPTS").pipe(Config.withDefault(3)),
  /**
   * Seconds a payment that does not match its sale waits to be presented for the sale it pays;
   * past it (or once that sale is confirmed or failed) the quickbook-recovery job returns it.
   */
  mismatchReturnAfterSeconds: Config.integer("QUICKBOOK_MISMATCH_RETURN_AFTER_SECONDS").pipe(Config.withDefault(3_600))
})

/**
 * Quickbook tickets (src/quickbook/tickets/QuickbookTicketLinks.ts). The ticket's PDF link is made on
 * PUBLIC_URL (unset: http://HOST:<the port this instance listens on>).
 */
export const QuickbookTicketConfig = Config.all({
  /**
   * Where guests open their booking: the ticket's QR code and the confirmation email link to
   * `<GUEST_BOOKING_BASE_URL>/b/<booking code>`. Unset: PUBLIC_URL.
   */
  guestBookingBaseUrl: Config.option(Config.string("GUEST_BOOKING_BASE_URL")),
  /**
   * Secret that signs the ticket PDF links (at least 32 characters; every instance needs the same
   * one; changing it breaks the links already given out). Unset: derived from the shared secret in
   * the database (service_secrets), so that instances agree without configuration.
   */
  ticketLinkSecret: optionalSecret("QUICKBOOK_TICKET_LINK_SECRET").pipe(
    Config.mapOrFail((secret) =>
      Option.isSome(secret) && Redacted.value(secret.value).length < 32
        ? Either.left(ConfigError.InvalidData(["QUICKBOOK_TICKET_LINK_SECRET"], "must be at least 32 characters"))
        : Either.right(secret)
    )
  )
})

export type QuickbookTicketConfig = Config.Config.Success<typeof QuickbookTicketConfig>
