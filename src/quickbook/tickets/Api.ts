/** The `tickets` and `ticketPdf` groups of the Quickbook API: a sale's status, its ticket, the signed PDF link. */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { BookFailureReason } from "../book/rules.js"
import { QbBadRequest, QbNotFound, QbRateLimited } from "../errors.js"
import { OTHER_MODE, QUICKBOOK_PREFIX } from "../schemas.js"
import { Budget, QuickbookAuth } from "../security.js"
import { SaleStatus } from "./saleStatus.js"
import { TicketLanguage } from "./ticket.js"

export const TicketSchema = Schema.Struct({
  lines32: Schema.Array(Schema.String).annotations({
    description:
      "The ticket for a 32-character printer: each line at most 32 characters (NFC; Norwegian letters count " +
      "one). Operator, tour, local date, time and zone, one line per guest type with count and amount, total, booking " +
      "code, sale reference, guest name; words wrap, a word longer than the line is broken."
  }),
  lines48: Schema.Array(Schema.String).annotations({ description: "The same for a 48-character printer." }),
  qrPayload: Schema.String.annotations({
    description: "The guest's booking page (`<guest base URL>/b/<bookingCode>`); print it as a QR code."
  }),
  pdfUrl: Schema.NullOr(Schema.String).annotations({
    description: "The ticket as a PDF with the QR code: an absolute, signed link that opens without the key, valid " +
      "until the end of the day after the departure (tour's zone). In the ticket's language."
  }),
  bookingCode: Schema.String.annotations({ description: "The operator's booking code; what the guest shows." })
}).annotations({ identifier: "Ticket" })

export const SaleStatusResponse = Schema.Struct({
  reference: Schema.String,
  status: SaleStatus.annotations({
    description: "`quoted`, `held`, `expired` (the quote ran out and nothing is held: quote again), `booking` (POST " +
      "/book is running: check again in a few seconds, do not take another payment), `confirmed`, `failed`."
  }),
  clerkMessage: Schema.String.annotations({
    description:
      "What to tell the clerk about this status (Accept-Language). For `failed`: why, and that the payment " +
      "goes back."
  }),
  validUntil: Schema.optional(Schema.String).annotations({
    description: "quoted, held, expired: ISO 8601 end of the quote's validity (a hold extends it)."
  }),
  holdExpiresAt: Schema.optional(Schema.String).annotations({ description: "held: ISO 8601 end of the seat hold." }),
  confirmedAt: Schema.optional(Schema.String).annotations({ description: "confirmed: ISO 8601." }),
  ticket: Schema.optional(TicketSchema).annotations({
    description: "confirmed only: the ticket, in the language of the sale (POST /book `language`)."
  }),
  failedAt: Schema.optional(Schema.String).annotations({ description: "failed: ISO 8601." }),
  reason: Schema.optional(BookFailureReason).annotations({
    description: "failed: the Book failure `reason` (spec §2) POST /book answered."
  }),
  moneyReturned: Schema.optional(Schema.Boolean).annotations({
    description:
      "failed: true once the payment was voided or refunded; false while the service is still returning it " +
      "(it keeps trying; nothing for the clerk to do)."
  })
}).annotations({ identifier: "SaleStatus" })

/** Paths take any text: a malformed reference is an unknown one (404), not a bad request. */
const ReferencePath = Schema.Struct({ reference: Schema.String })

export class TicketsGroup extends HttpApiGroup.make("tickets")
  .annotate(OpenApi.Title, "Tickets")
  .annotate(OpenApi.Description, "A sale's state and its ticket (with a signed link to the PDF).")
  .add(
    HttpApiEndpoint.get("status", "/sales/:reference")
      .setPath(ReferencePath)
      .addSuccess(SaleStatusResponse)
      .addError(QbNotFound)
      .annotateContext(OpenApi.annotations({
        identifier: "getSale",
        summary: "A sale's status (and its ticket once confirmed)",
        description:
          "Reads budget. Call it after a timeout before calling POST /book again. `status` per spec §3; a quote or hold " +
          "that ran out reads `expired`. `ticket` only when `confirmed`. 404 `not_found` for a reference that is " +
          "unknown, malformed or of another terminal. " + OTHER_MODE
      }))
  )
  .add(
    HttpApiEndpoint.get("ticket", "/sales/:reference/ticket")
      .setPath(ReferencePath)
      .setUrlParams(Schema.Struct({
        lang: Schema.optional(TicketLanguage).annotations({ description: "en (default) or nb; another value is 400." })
      }))
      .addSuccess(TicketSchema)
      .addError(QbNotFound)
      .annotateContext(OpenApi.annotations({
        identifier: "getTicket",
        summary: "Reprint a confirmed sale's ticket",
        description:
          "Reads budget. Query `lang` en (default) or nb. 404 `not_found` for a reference that is unknown, malformed or " +
          "of another terminal, and for a sale not confirmed (no ticket yet; the clerk message says so). " + OTHER_MODE
      }))
  )
  .annotate(Budget, "reads")
  .middleware(QuickbookAuth)
  .prefix(QUICKBOOK_PREFIX)
{}

/** The signed PDF link: no key, no terminal header (the signature is the authority). */
export class TicketPdfGroup extends HttpApiGroup.make("ticketPdf")
  .annotate(OpenApi.Title, "Ticket PDF")
  .annotate(OpenApi.Description, "The ticket PDF behind a signed, expiring link: no key.")
  .add(
    HttpApiEndpoint.get("pdf", "/tickets/:file")
      .setPath(Schema.Struct({
        file: Schema.String.annotations({ description: "`<reference>.pdf`, e.g. `SVC-7K2M9Q4XTB.pdf`." })
      }))
      .setUrlParams(Schema.Struct({
        lang: Schema.optional(TicketLanguage).annotations({ description: "en (default) or nb." }),
        exp: Schema.String.annotations({ description: "Unix seconds; the link opens nothing after it." }),
        sig: Schema.String.annotations({ description: "The link's signature." })
      }))
      .addSuccess(HttpApiSchema.Uint8Array({ contentType: "application/pdf" }))
      .addError(QbBadRequest)
      .addError(QbNotFound)
      .addError(QbRateLimited)
      .annotateContext(OpenApi.annotations({
        identifier: "getTicketPdf",
        summary: "A ticket as PDF, by its signed link",
        description:
          "Open the `pdfUrl` of a Ticket as given; it needs no key. 404 `not_found` when the signature does not verify, " +
          "the link has lapsed (ask for the ticket again for a fresh link) or the sale is not confirmed. Counts " +
          "against the reads budget of the sale's terminal."
      }))
  )
  .prefix(QUICKBOOK_PREFIX)
{}
