/**
 * The links a desk ticket carries (docs/decisions.md "Quickbook: sale status and tickets"):
 * - the guest's booking page `<GUEST_BOOKING_BASE_URL or PUBLIC_URL>/b/<booking code>`, printed
 *   as the QR code and sent in the confirmation email;
 * - the signed, expiring PDF link `<PUBLIC_URL>/api/quickbook/v1/tickets/<reference>.pdf?lang=&exp=&sig=`
 *   (src/quickbook/tickets/ticketLinkSignature.ts), valid until the end of the day after the departure (tour's zone).
 * Without PUBLIC_URL the base is `http://HOST:<port>` with the port this instance listens on when
 * there is an HTTP server, else PORT.
 */
import { HttpServer } from "@effect/platform"
import { Effect, Option, Redacted } from "effect"
import { AppConfig, baseUrlOf } from "../../config.js"
import { ServiceSecretsRepo } from "../../http/ServiceSecretsRepo.js"
import { QuickbookTicketConfig } from "../config.js"
import type { TicketLanguage, TicketLinks } from "./ticket.js"
import { checkTicketLink, deriveTicketLinkSecret, signTicketLink, type TicketLinkCheck } from "./ticketLinkSignature.js"

export const TICKET_PDF_PATH = "/api/quickbook/v1/tickets"

const withoutTrailingSlash = (url: string) => url.replace(/\/+$/, "")

export class QuickbookTicketLinks extends Effect.Service<QuickbookTicketLinks>()("Quickbook/TicketLinks", {
  effect: Effect.gen(function*() {
    const app = yield* AppConfig
    const config = yield* QuickbookTicketConfig
    const secrets = yield* ServiceSecretsRepo
    const server = yield* Effect.serviceOption(HttpServer.HttpServer)
    const port = Option.match(server, {
      onNone: () => app.port,
      onSome: (s) => (s.address._tag === "TcpAddress" ? s.address.port : app.port)
    })
    const apiBase = withoutTrailingSlash(baseUrlOf(app, port))
    const guestBase = withoutTrailingSlash(Option.getOrElse(config.guestBookingBaseUrl, () => apiBase))
    const secret: Uint8Array = yield* Option.match(config.ticketLinkSecret, {
      onSome: (s) => Effect.succeed(new Uint8Array(Buffer.from(Redacted.value(s), "utf8"))),
      onNone: () =>
        Effect.flatMap(
          secrets.cursorSecret(),
          Option.match({
            onSome: (row) => Effect.succeed(deriveTicketLinkSecret(row.value)),
            onNone: () => Effect.dieMessage("service_secrets has no shared secret; run the migrations")
          })
        )
    })

    /** The guest's booking page of a booking code (the QR payload). */
    const bookingPageUrl = (bookingCode: string) => `${guestBase}/b/${encodeURIComponent(bookingCode)}`

    /** The signed PDF link of a sale's ticket, valid until `expiresAt`. */
    const pdfUrl = (reference: string, lang: TicketLanguage, expiresAt: Date) => {
      const exp = Math.floor(expiresAt.getTime() / 1000)
      return `${apiBase}${TICKET_PDF_PATH}/${reference}.pdf?lang=${lang}&exp=${exp}&sig=${
        signTicketLink(secret, reference, exp)
      }`
    }

    const linksFor = (
      sale: { readonly reference: string; readonly bookingCode: string; readonly linkExpiresAt: Date },
      lang: TicketLanguage
    ): TicketLinks => ({
      bookingPageUrl: bookingPageUrl(sale.bookingCode),
      pdfUrl: pdfUrl(sale.reference, lang, sale.linkExpiresAt)
    })

    /** Whether a PDF link's `exp` and `sig` open `reference`'s ticket now. */
    const check = (reference: string, exp: string, sig: string, nowMillis: number): TicketLinkCheck =>
      checkTicketLink(secret, reference, exp, sig, nowMillis)

    return { bookingPageUrl, pdfUrl, linksFor, check } as const
  }),
  dependencies: [ServiceSecretsRepo.Default]
}) {}
