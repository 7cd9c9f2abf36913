/** The Quickbook (desk sales) API v1 contract. Its OpenAPI document is generated from these definitions. */
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import {
  QbBadRequest,
  QbConflict,
  QbForbidden,
  QbGone,
  QbNotFound,
  QbRateLimited,
  QbUnauthorized,
  QbUnavailable,
  QbUnprocessable
} from "./errors.js"
import { DateString, IsoDate, IsoLocalTime, LocalTime } from "../domain/dates.js"
import { isEmailAddress } from "../email/rules.js"
import { BookFailureReason, PHONE_PATTERN } from "./book/rules.js"
import { DESK_DAYS_AHEAD } from "./sales/rules.js"
import { SaleStatus } from "./tickets/saleStatus.js"
import { TicketLanguage } from "./tickets/ticket.js"
import { BodyTooLarge, UnsupportedMediaType } from "../http/requestBody.js"
import { Budget, QuickbookAuth } from "./security.js"

export const QUICKBOOK_PREFIX = "/api/quickbook/v1"

/** A day or time in an answer. */
const Day = DateString.annotations({ description: "A local calendar day YYYY-MM-DD in the tour's time zone." })
const Time = LocalTime.annotations({ description: "Local HH:MM (24 hour)." })
/**
 * A day or time in a request: the partner API's schemas (a real calendar day; 00:00 to 23:59), else
 * 400 `invalid_request`. The service also keeps days to the desk's window (`deskDayProblem`).
 */
const DAY_WINDOW = `From yesterday to ${DESK_DAYS_AHEAD} days ahead; another day, or one that is not a real calendar day ` +
  "(e.g. 2026-02-30), answers 400 `invalid_request`."
const DayParam = IsoDate.annotations({ description: `A local calendar day YYYY-MM-DD in the tour's time zone. ${DAY_WINDOW}` })
const TimeParam = IsoLocalTime.annotations({ description: "Local HH:MM (24 hour, 00:00 to 23:59); else 400 `invalid_request`." })
/** Every step after the quote: test and live never cross (docs/decisions.md "Quickbook: test and live sales never cross"). */
const OTHER_MODE = "A sale quoted with a key of the other mode (a test sale with a live key, a live sale with a test key) " +
  "answers 403 `tour_not_sellable_here`, its clerk message saying which; nothing is read, held, booked or charged."
const Uuid = Schema.String.pipe(Schema.pattern(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i))

export const GuestTypeInfo = Schema.Struct({
  type: Schema.String.annotations({ description: "Guest type key (e.g. `adult`); send it in a quote's guests." }),
  label: Schema.String.annotations({ description: "What the clerk and the receipt show (the operator's pricing category)." }),
  isDefault: Schema.Boolean.annotations({ description: "The tour's main (adult) guest type." }),
  minAge: Schema.NullOr(Schema.Int),
  maxAge: Schema.NullOr(Schema.Int)
}).annotations({ identifier: "DeskGuestType" })

export const DeskTour = Schema.Struct({
  activityId: Schema.String.annotations({ description: "Tour id (UUID); pass it to slots and quote." }),
  operatorName: Schema.String.annotations({ description: "The operator that runs the tour (another one when resold)." }),
  tourName: Schema.String,
  timeZone: Schema.String.annotations({ description: "IANA zone of the tour's days and start times." }),
  currency: Schema.String.annotations({ description: "ISO 4217 currency of its prices." }),
  durationMinutes: Schema.NullOr(Schema.Int),
  departureTimes: Schema.Array(Schema.String).annotations({
    description: "Usual local start times (HH:MM); the slots of a day are authoritative."
  }),
  guestTypes: Schema.Array(GuestTypeInfo).annotations({ description: "The guest types the tour sells, in display order." }),
  date: Day.annotations({ description: "The day this entry is about: `date` of the query, else today in the tour's zone." }),
  available: Schema.NullOr(Schema.Boolean).annotations({
    description: "true: the day has a start time with seats and prices; false: none; null: the booking system did not " +
      "answer in time (the slots endpoint then answers 503 `provider_unavailable`)."
  })
}).annotations({ identifier: "DeskTour" })

export const DeskTourList = Schema.Struct({
  terminal: Schema.Struct({ id: Schema.String, name: Schema.String, operatorName: Schema.String }),
  tours: Schema.Array(DeskTour)
}).annotations({ identifier: "DeskTourList" })

export const DeskSlot = Schema.Struct({
  time: Time.annotations({ description: "Local start time HH:MM; send it as a quote's `start.time`." }),
  seatsLeft: Schema.NullOr(Schema.Int).annotations({ description: "Seats left now (null: no seat limit)." }),
  soldOut: Schema.Boolean,
  guests: Schema.Array(Schema.Struct({
    type: Schema.String,
    label: Schema.String,
    unitMinor: Schema.Int.annotations({ description: "Price per guest of this type, VAT included, minor units." })
  })).annotations({ description: "Guest prices of this start time; a guest type missing here cannot be sold on it." })
}).annotations({ identifier: "DeskSlot" })

export const DeskSlots = Schema.Struct({
  activityId: Schema.String,
  date: Day,
  timeZone: Schema.String,
  currency: Schema.String,
  slots: Schema.Array(DeskSlot).annotations({ description: "The day's start times not yet started, by time, sold-out ones included." })
}).annotations({ identifier: "DeskSlots" })

export const QuoteBody = Schema.Struct({
  activityId: Uuid.annotations({ description: "A tour's `activityId` from GET /tours." }),
  start: Schema.Struct({ date: DayParam, time: TimeParam }),
  guests: Schema.Array(Schema.Struct({
    type: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(100)),
    count: Schema.Int.pipe(Schema.between(1, 50))
  })).pipe(Schema.minItems(1)).annotations({
    description: "At most 10 entries and 50 guests in all (else 400 `invalid_request`); a type the tour does not sell " +
      "answers 409 `price_changed`."
  })
}).annotations({ identifier: "QuoteRequest" })

export const CartLine = Schema.Struct({
  operatorName: Schema.String,
  tourName: Schema.String,
  start: Schema.Struct({ date: Day, time: Time, timeZone: Schema.String }),
  guests: Schema.Array(Schema.Struct({
    type: Schema.String,
    label: Schema.String,
    count: Schema.Int,
    unitMinor: Schema.Int,
    lineMinor: Schema.Int.annotations({ description: "unitMinor times count." })
  })),
  totalMinor: Schema.Int.annotations({ description: "Amount to charge, VAT included." }),
  currency: Schema.String,
  requiresPhone: Schema.Boolean,
  orderLineText: Schema.String.annotations({ description: "Receipt label: tour name, date and time, at most 40 characters." }),
  payment: Schema.Struct({
    provider: Schema.Literal("payprovider"),
    merchantId: Schema.String.annotations({ description: "Create the order on this merchant for `totalMinor`, `referenceId` = the sale reference." }),
    taxLines: Schema.Array(Schema.Struct({ amount: Schema.Int, percentage: Schema.Number, type: Schema.Literal("VAT") })).annotations({
      description: "Pass unchanged as the order's tax array. Desk sales carry 12% VAT (Norwegian passenger transport and " +
        "experiences), included in the price."
    }),
    serviceProviders: Schema.Array(Schema.Struct({
      serviceProviderId: Schema.String,
      amount: Schema.Struct({ percentage: Schema.Number })
    })).annotations({ description: "Pass unchanged in the order's `controlFunctions.serviceProviders`." })
  })
}).annotations({ identifier: "CartLine" })

export const QuoteResponse = Schema.Struct({
  reference: Schema.String.annotations({ description: "Sale reference `SVC-` + 10 uppercase letters or digits; the payment's reference." }),
  validUntil: Schema.String.annotations({ description: "ISO 8601; the quoted price stands for 15 minutes. Nothing is held." }),
  cartLine: CartLine
}).annotations({ identifier: "QuoteResponse" })

const SaleReference = Schema.String.pipe(Schema.pattern(/^SVC-[A-Z0-9]{10}$/)).annotations({
  description: "Sale reference `SVC-` + 10 uppercase letters or digits."
})

export const ReserveBody = Schema.Struct({
  reference: SaleReference,
  idempotencyKey: Schema.String.pipe(
    Schema.pattern(/^[\x21-\x7e]{1,100}$/, { message: () => "must be 1 to 100 visible ASCII characters, e.g. a UUID" })
  ).annotations({
    description: "A new UUID per hold (1 to 100 visible ASCII characters, else 400 `invalid_request`: it is passed on " +
      "to the booking system); a retry with the same value returns the same hold. The hold belongs to the " +
      "sale: while it is held, any key answers the sale's hold."
  })
}).annotations({ identifier: "ReserveRequest" })

export const ReserveResponse = Schema.Struct({
  holdRef: Schema.String.annotations({ description: "Equals the sale reference; pass it to DELETE /reserve and POST /book." }),
  expiresAt: Schema.String.annotations({
    description: "ISO 8601; the seats are released then (10 minutes after the hold). The quote stands at least until then."
  }),
  cartLine: CartLine
}).annotations({ identifier: "ReserveResponse" })

export const ReleaseResponse = Schema.Struct({
  holdRef: Schema.String,
  released: Schema.Literal(true)
}).annotations({ identifier: "ReleaseResponse" })

export class ToursGroup extends HttpApiGroup.make("tours")
  .add(
    HttpApiEndpoint.get("list", "/tours")
        .setUrlParams(Schema.Struct({ date: Schema.optional(DayParam) }))
        .addSuccess(DeskTourList)
        .addError(QbBadRequest)
        .addError(QbUnauthorized)
        .addError(QbForbidden)
        .addError(QbRateLimited)
        .annotate(OpenApi.Summary, "Tours this terminal can sell on a day")
        .annotate(
          OpenApi.Description,
          "Reads budget. Query `date` (YYYY-MM-DD, the tour's local day; default today in each tour's zone; from yesterday to " +
            `${DESK_DAYS_AHEAD} days ahead, else 400 \`invalid_request\`, as for a day that is not a real calendar day). The published ` +
            "tours, linked to a booking system, on the sites of the terminal's selling operator: its own and those it " +
            "resells, by name, each with its guest types and whether the day has seats. A test key lists only tours whose " +
            "booking system and merchant are sandboxes, a live key only those where neither is. Start times with seats and " +
            "guest prices come from the slots endpoint."
        )
  )
  .add(
    HttpApiEndpoint.get("slots", "/tours/:activityId/slots")
        .setPath(Schema.Struct({ activityId: Uuid }))
        .setUrlParams(Schema.Struct({ date: Schema.optional(DayParam) }))
        .addSuccess(DeskSlots)
        .addError(QbBadRequest)
        .addError(QbUnauthorized)
        .addError(QbForbidden)
        .addError(QbRateLimited)
        .addError(QbUnavailable)
        .annotate(OpenApi.Summary, "Start times, seats and guest prices of a tour on a day")
        .annotate(
          OpenApi.Description,
          "Reads budget. Query `date` (YYYY-MM-DD, default today in the tour's zone; from yesterday to " +
            `${DESK_DAYS_AHEAD} days ahead, else 400 \`invalid_request\`). Read live from the operator's booking ` +
            "system; 503 `provider_unavailable` when it does not answer in time; 403 `tour_not_sellable_here` for a tour " +
            "this terminal may not sell."
        )
  )
  .annotate(Budget, "reads")
  .middleware(QuickbookAuth)
  .prefix(QUICKBOOK_PREFIX)
{}

export class SalesGroup extends HttpApiGroup.make("sales")
  .add(
    HttpApiEndpoint.post("quote", "/quote")
        .setPayload(QuoteBody)
        .addSuccess(QuoteResponse)
        .addError(QbBadRequest)
        .addError(BodyTooLarge)
        .addError(UnsupportedMediaType)
        .addError(QbUnauthorized)
        .addError(QbForbidden)
        .addError(QbConflict)
        .addError(QbRateLimited)
        .addError(QbUnavailable)
        .annotate(OpenApi.Summary, "Quote a sale (holds nothing)")
        .annotate(
          OpenApi.Description,
          "Writes budget. Checks the tour is sellable here (403 `tour_not_sellable_here` also when the terminal has no " +
            "card terminal or its operator no merchant), the guest types and the seats now; stores the sale as " +
            "`quoted` and returns its reference, `validUntil` (15 minutes) and the cart line with payment instructions."
        )
  )
  .add(
    HttpApiEndpoint.post("reserve", "/reserve")
        .setPayload(ReserveBody)
        .addSuccess(ReserveResponse)
        .addError(QbBadRequest)
        .addError(BodyTooLarge)
        .addError(UnsupportedMediaType)
        .addError(QbUnauthorized)
        .addError(QbForbidden)
        .addError(QbNotFound)
        .addError(QbConflict)
        .addError(QbGone)
        .addError(QbUnprocessable)
        .addError(QbRateLimited)
        .addError(QbUnavailable)
        .annotate(OpenApi.Summary, "Hold the seats of a quoted sale (optional)")
        .annotate(
          OpenApi.Description,
          "Writes budget. Checks the departure again (409 `sold_out`; 409 `price_changed` for a guest type no longer " +
            "priced; the quoted prices stand while the quote is valid) and holds the seats for 10 minutes; the sale " +
            "becomes `held`. A sale already held answers its hold, whatever the idempotencyKey. 410 `hold_expired` for a " +
            "quote past `validUntil` or a hold that ran out (make a new quote); 422 `hold_not_supported` when the tour's " +
            "booking system cannot hold (continue without a hold); 404 `not_found` for a reference not of this terminal; " +
            "503 `provider_unavailable` when the booking system does not answer (nothing held; retry with the same " +
            "idempotencyKey). " + OTHER_MODE
        )
  )
  .add(
    HttpApiEndpoint.del("release", "/reserve/:holdRef")
        .setPath(Schema.Struct({ holdRef: SaleReference }))
        .addSuccess(ReleaseResponse)
        .addError(QbBadRequest)
        .addError(QbUnauthorized)
        .addError(QbForbidden)
        .addError(QbNotFound)
        .addError(QbRateLimited)
        .addError(QbUnavailable)
        .annotate(OpenApi.Summary, "Release a hold")
        .annotate(
          OpenApi.Description,
          "Writes budget. Releases the seats; the sale is `quoted` again (or `expired` past `validUntil`). Idempotent: " +
            "a hold released before, run out, or never made answers the same 200. " + OTHER_MODE
        )
  )
  .annotate(Budget, "writes")
  .middleware(QuickbookAuth)
  .prefix(QUICKBOOK_PREFIX)
{}

export const TicketSchema = Schema.Struct({
  lines32: Schema.Array(Schema.String).annotations({
    description: "The ticket for a 32-character printer: each line at most 32 characters (NFC; Norwegian letters count " +
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
    description: "What to tell the clerk about this status (Accept-Language). For `failed`: why, and that the payment " +
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
    description: "failed: true once the payment was voided or refunded; false while the service is still returning it " +
      "(it keeps trying; nothing for the clerk to do)."
  })
}).annotations({ identifier: "SaleStatus" })

const ProviderId = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200), Schema.pattern(/^[\x21-\x7e]+$/))
/** Control characters (C0, DEL, C1, line and paragraph separators) and UTF-16 halves without their other half. */
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/
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
    description: "The hold from POST /reserve: it equals the sale's reference; another value answers 400 `invalid_request` " +
      "(nothing is verified, recorded or booked)."
  })),
  payment: Schema.Struct({
    provider: Schema.Literal("payprovider").annotations({ description: "The payment provider (only `payprovider` today)." }),
    orderId: ProviderId.annotations({ description: "The paid order at the provider." }),
    paymentId: ProviderId.annotations({ description: "The payment at the provider; a repeat with the same paymentId gets the stored result." })
  }),
  customer: Schema.Struct({
    firstName: PersonName,
    lastName: PersonName,
    email: Schema.String.pipe(
      Schema.filter(isEmailAddress, { message: () => "must be an email address local@domain (no spaces, quotes or brackets)" })
    ).annotations({
      description: "The guest's email, where the ticket is sent: an address the outbox can send to (the same rule), " +
        "at most 254 characters; else 400 `invalid_request`.",
      jsonSchema: { type: "string", format: "email", maxLength: 254 }
    }),
    phone: Schema.optional(Schema.String.pipe(Schema.pattern(PHONE_PATTERN)).annotations({
      description: "International format: `+`, country code and number, digits only (e.g. `+4791234567`). Required when the " +
        "cart line's `requiresPhone` is true."
    }))
  }),
  language: Schema.optional(Schema.Literal("en", "nb")).annotations({ description: "Language of the guest email and ticket; default `en`." })
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
  .add(
    HttpApiEndpoint.post("book", "/book")
        .setPayload(BookBody)
        .addSuccess(Schema.Union(BookConfirmed, BookFailed))
        .addError(QbBadRequest)
        .addError(BodyTooLarge)
        .addError(UnsupportedMediaType)
        .addError(QbUnauthorized)
        .addError(QbForbidden)
        .addError(QbNotFound)
        .addError(QbConflict)
        .addError(QbUnprocessable)
        .addError(QbRateLimited)
        .addError(QbUnavailable)
        .annotate(OpenApi.Summary, "Book a paid sale")
        .annotate(
          OpenApi.Description,
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
            "Before the payment is read: a `holdRef` other than the sale's reference is 400 `invalid_request`; " + OTHER_MODE
        )
  )
  .annotate(Budget, "books")
  .middleware(QuickbookAuth)
  .prefix(QUICKBOOK_PREFIX)
{}

/** Paths take any text: a malformed reference is an unknown one (404), not a bad request. */
const ReferencePath = Schema.Struct({ reference: Schema.String })

export class TicketsGroup extends HttpApiGroup.make("tickets")
  .add(
    HttpApiEndpoint.get("status", "/sales/:reference")
        .setPath(ReferencePath)
        .addSuccess(SaleStatusResponse)
        .addError(QbBadRequest)
        .addError(QbUnauthorized)
        .addError(QbForbidden)
        .addError(QbNotFound)
        .addError(QbRateLimited)
        .annotate(OpenApi.Summary, "A sale's status (and its ticket once confirmed)")
        .annotate(
          OpenApi.Description,
          "Reads budget. Call it after a timeout before calling POST /book again. `status` per spec §3; a quote or hold " +
            "that ran out reads `expired`. `ticket` only when `confirmed`. 404 `not_found` for a reference that is " +
            "unknown, malformed or of another terminal. " + OTHER_MODE
        )
  )
  .add(
    HttpApiEndpoint.get("ticket", "/sales/:reference/ticket")
        .setPath(ReferencePath)
        .setUrlParams(Schema.Struct({
          lang: Schema.optional(TicketLanguage).annotations({ description: "en (default) or nb; another value is 400." })
        }))
        .addSuccess(TicketSchema)
        .addError(QbBadRequest)
        .addError(QbUnauthorized)
        .addError(QbForbidden)
        .addError(QbNotFound)
        .addError(QbRateLimited)
        .annotate(OpenApi.Summary, "Reprint a confirmed sale's ticket")
        .annotate(
          OpenApi.Description,
          "Reads budget. Query `lang` en (default) or nb. 404 `not_found` for a reference that is unknown, malformed or " +
            "of another terminal, and for a sale not confirmed (no ticket yet; the clerk message says so). " + OTHER_MODE
        )
  )
  .annotate(Budget, "reads")
  .middleware(QuickbookAuth)
  .prefix(QUICKBOOK_PREFIX)
{}

/** The signed PDF link: no key, no terminal header (the signature is the authority). */
export class TicketPdfGroup extends HttpApiGroup.make("ticketPdf")
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
        .annotate(OpenApi.Summary, "A ticket as PDF, by its signed link")
        .annotate(
          OpenApi.Description,
          "Open the `pdfUrl` of a Ticket as given; it needs no key. 404 `not_found` when the signature does not verify, " +
            "the link has lapsed (ask for the ticket again for a fresh link) or the sale is not confirmed. Counts " +
            "against the reads budget of the sale's terminal."
        )
  )
  .prefix(QUICKBOOK_PREFIX)
{}

export class QuickbookApi extends HttpApi.make("quickbook")
  .add(ToursGroup)
  .add(SalesGroup)
  .add(BookGroup)
  .add(TicketsGroup)
  .add(TicketPdfGroup)
  .annotate(OpenApi.Title, "Quickbook API")
  .annotate(OpenApi.Version, "1.0.0")
  .annotate(
    OpenApi.Description,
    "Desk sales for approved integration clients. Every call sends `Authorization: Bearer svcqb_live_...` (or " +
      "`svcqb_test_...`) and `Quickbook-Terminal: <terminal id>`. Errors are `{error: {code, clerkMessage, reference?}}`; " +
      "branch on `code`, show `clerkMessage`. The clerk message is in Norwegian (bokmål) when `Accept-Language` ranks " +
      "`nb`, `no` or `nn` above English, otherwise in English. Every response carries `X-Request-Id` and " +
      "`Cache-Control: no-store`. Request bodies are JSON (`Content-Type: application/json`, else 415), at most 64 KiB (else " +
      "413); both answer `invalid_request`, like a body that does not parse (400). Per-terminal limits a minute: writes (quote, reserve, release) 60, books 60, " +
      "reads (tours, slots, sales, ticket) 300; past one, 429 `rate_limited` with `Retry-After`."
  )
{}
