/** The `book` group of the Quickbook API: book a sale paid at the card terminal. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { isEmailAddress } from "../../email/rules.js"
import { BodyTooLarge, UnsupportedMediaType } from "../../http/requestBody.js"
import { QbConflict, QbNotFound, QbUnavailable, QbUnprocessable } from "../errors.js"
import { OTHER_MODE, QUICKBOOK_PREFIX, SaleReference } from "../schemas.js"
import { Budget, QuickbookAuth } from "../security.js"
import { TicketSchema } from "../tickets/Api.js"
import { BookFailureReason, PHONE_PATTERN } from "./rules.js"

const ProviderId = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200), Schema.pattern(/^[\x21-\x7e]+$/))
/** Control characters (C0, DEL, C1, line and paragraph separators) and UTF-16 halves without their other half. */
const UNPRINTABLE =
  /[\u0000-\u001f\u007f-\u009f\u2028\u2029]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/
/**
 * A guest's name as the ticket, the booking system and the email carry it: 1 to 100 characters, no
 * leading or trailing space, nothing unprintable (a NUL or a broken character answered 500 before:
 * the database refuses them).
 */
const PersonName = Schema.String.pipe(
  Schema.pattern(/^\S(.*\S)?$/, { message: () => "must be 1 to 100 characters without leading or trailing spaces" }),
  Schema.maxLength(100, { message: () => "must be 1 to 100 characters without leading or trailing spaces" }),
  Schema.filter((s) => !UNPRINTABLE.test(s), { message: () => "must not contain control characters" })
)

export const BookBody = Schema.Struct({
  reference: SaleReference,
  holdRef: Schema.optional(SaleReference.annotations({
    description:
      "The hold from POST /reserve: it equals the sale's reference; another value answers 400 `invalid_request` " +
      "(nothing is verified, recorded or booked)."
  })),
  payment: Schema.Struct({
    provider: Schema.Literal("payprovider").annotations({
      description: "The payment provider (only `payprovider` today)."
    }),
    orderId: ProviderId.annotations({ description: "The paid order at the provider." }),
    paymentId: ProviderId.annotations({
      description: "The payment at the provider; a repeat with the same paymentId gets the stored result."
    })
  }),
  customer: Schema.Struct({
    firstName: PersonName,
    lastName: PersonName,
    email: Schema.String.pipe(
      Schema.filter(isEmailAddress, {
        message: () => "must be an email address local@domain (no spaces, quotes or brackets)"
      })
    ).annotations({
      description: "The guest's email, where the ticket is sent: an address the outbox can send to (the same rule), " +
        "at most 254 characters; else 400 `invalid_request`.",
      jsonSchema: { type: "string", format: "email", maxLength: 254 }
    }),
    phone: Schema.optional(
      Schema.String.pipe(Schema.pattern(PHONE_PATTERN)).annotations({
        jsonSchema: { pattern: PHONE_PATTERN.source, maxLength: 16 },
        description:
          "International format: `+`, country code and number, digits only (e.g. `+4791234567`). Required when the " +
          "cart line's `requiresPhone` is true."
      })
    )
  }),
  language: Schema.optional(Schema.Literal("en", "nb")).annotations({
    description: "Language of the guest email and ticket; default `en`."
  })
}).annotations({ identifier: "BookRequest" })

export const BookConfirmed = Schema.Struct({
  status: Schema.Literal("confirmed"),
  ticket: TicketSchema
}).annotations({ identifier: "BookConfirmed" })

export const BookFailed = Schema.Struct({
  status: Schema.Literal("failed"),
  reason: BookFailureReason.annotations({ description: "What went wrong after the payment was verified." }),
  moneyReturned: Schema.Boolean.annotations({
    description: "true: the payment was voided or refunded; false: the service is still returning it (nothing to do)."
  }),
  clerkMessage: Schema.String.annotations({ description: "Show this to the clerk (Accept-Language as for errors)." })
}).annotations({ identifier: "BookFailed" })

export class BookGroup extends HttpApiGroup.make("book")
  .annotate(OpenApi.Title, "Booking")
  .annotate(OpenApi.Description, "Book a held sale once the card payment has completed on the terminal.")
  .add(
    HttpApiEndpoint.post("book", "/book")
      .setPayload(BookBody)
      .addSuccess(Schema.Union(BookConfirmed, BookFailed))
      .addError(BodyTooLarge)
      .addError(UnsupportedMediaType)
      .addError(QbNotFound)
      .addError(QbConflict)
      .addError(QbUnprocessable)
      .addError(QbUnavailable)
      .annotateContext(OpenApi.annotations({
        identifier: "bookSale",
        summary: "Book a paid sale",
        description:
          "Books budget. Call after the payment at the terminal, with its `orderId` and `paymentId`. The service reads the " +
          "payment at the provider and checks it is completed and paid in full for the sale's amount and currency, on the " +
          "sale's merchant, with the sale reference as its reference, taken on this desk's card terminal; then it books " +
          "with the operator (confirming `holdRef` when given, else booking the seats directly).\n\n" +
          "Rules: (1) idempotent on `payment.provider` + `payment.paymentId`: a repeat answers the stored result and never " +
          "books or refunds twice (a repeat while the first call is still running waits for it, else 503); (2) a second, " +
          "different payment for the same sale is refunded: 200 `failed` with reason `duplicate_payment`, the sale stands; " +
          "(3) after a timeout, read GET /sales/{reference} before calling book again; (4) a refusal before the payment is " +
          "verified answers an error body: nothing was booked or refunded; (5) a failure after the payment was verified " +
          "answers 200 `{status: failed, reason, moneyReturned, clerkMessage}` and the payment is returned automatically " +
          "(voided the same day before 23:00 UTC, else refunded): `sold_out`, `price_changed` (the quote is past " +
          "`validUntil` and the live price differs), `provider_unavailable`, `hold_expired`, `hold_not_supported`, " +
          "`terminal_not_registered`, `tour_not_sellable_here`, `phone_required`, `phone_rejected`, `duplicate_payment`, " +
          "`provider_refused`; (6) `payment_mismatch`: nothing is booked, nothing is refunded, the service is alerted. " +
          "Before the payment is read: a `holdRef` other than the sale's reference is 400 `invalid_request`; " +
          OTHER_MODE
      }))
  )
  .annotate(Budget, "books")
  .middleware(QuickbookAuth)
  .prefix(QUICKBOOK_PREFIX)
{}
