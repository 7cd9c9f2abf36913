/** The `sales` group of the Quickbook API: quote a sale, hold its seats, release the hold. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { intValue } from "../../http/params.js"
import { BodyTooLarge, UnsupportedMediaType } from "../../http/requestBody.js"
import { QbConflict, QbGone, QbNotFound, QbUnavailable, QbUnprocessable } from "../errors.js"
import { Day, DayParam, OTHER_MODE, QUICKBOOK_PREFIX, SaleReference, Time, TimeParam, Uuid } from "../schemas.js"
import { Budget, QuickbookAuth } from "../security.js"
import { QUOTE_MAX_ENTRIES, QUOTE_MAX_GUESTS } from "./rules.js"

export const QuoteBody = Schema.Struct({
  activityId: Uuid.annotations({ description: "A tour's `activityId` from GET /tours." }),
  start: Schema.Struct({ date: DayParam, time: TimeParam }),
  guests: Schema.Array(Schema.Struct({
    type: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(100)),
    count: intValue(1, QUOTE_MAX_GUESTS)
  })).pipe(Schema.minItems(1)).annotations({
    // QuickbookTours.quote refuses more entries with its own clerk message (too_many_guest_entries).
    jsonSchema: { minItems: 1, maxItems: QUOTE_MAX_ENTRIES },
    description:
      "At most 10 entries and 50 guests in all (else 400 `invalid_request`); a type the tour does not sell " +
      "answers 409 `price_changed`."
  })
}).annotations({ identifier: "QuoteRequest" })

export const CartLine = Schema.Struct({
  operatorName: Schema.String,
  tourName: Schema.String,
  start: Schema.Struct({ date: Day, time: Time, timeZone: Schema.String }),
  guests: Schema.Array(Schema.Struct({
    type: Schema.String.annotations({
      description:
        "A guest type of the quote, or `booking`: the booking price of a tour priced per booking (a private tour), " +
        "count 1, for the whole party; the guest types' entries are then 0. `booking` is never a guest type."
    }),
    label: Schema.String,
    count: Schema.Int,
    unitMinor: Schema.Int,
    lineMinor: Schema.Int.annotations({ description: "unitMinor times count." })
  })).annotations({
    description:
      "One entry per guest type asked for, then, for a tour priced per booking, the `booking` entry; the entries' " +
      "`lineMinor` add up to `totalMinor`."
  }),
  totalMinor: Schema.Int.annotations({ description: "Amount to charge, VAT included." }),
  currency: Schema.String,
  requiresPhone: Schema.Boolean,
  orderLineText: Schema.String.annotations({
    description: "Receipt label: tour name, date and time, at most 40 characters."
  }),
  payment: Schema.Struct({
    provider: Schema.Literal("payprovider"),
    merchantId: Schema.String.annotations({
      description: "Create the order on this merchant for `totalMinor`, `referenceId` = the sale reference."
    }),
    taxLines: Schema.Array(
      Schema.Struct({ amount: Schema.Int, percentage: Schema.Number, type: Schema.Literal("VAT") })
    ).annotations({
      description:
        "Pass unchanged as the order's tax array. Desk sales carry 12% VAT (Norwegian passenger transport and " +
        "experiences), included in the price."
    }),
    serviceProviders: Schema.Array(Schema.Struct({
      serviceProviderId: Schema.String,
      amount: Schema.Struct({ percentage: Schema.Number })
    })).annotations({ description: "Pass unchanged in the order's `controlFunctions.serviceProviders`." })
  })
}).annotations({ identifier: "CartLine" })

export const QuoteResponse = Schema.Struct({
  reference: Schema.String.annotations({
    description: "Sale reference `SVC-` + 10 uppercase letters or digits; the payment's reference."
  }),
  validUntil: Schema.String.annotations({
    description: "ISO 8601; the quoted price stands for 15 minutes. Nothing is held."
  }),
  cartLine: CartLine
}).annotations({ identifier: "QuoteResponse" })

export const ReserveBody = Schema.Struct({
  reference: SaleReference,
  idempotencyKey: Schema.String.pipe(
    Schema.pattern(/^[\x21-\x7e]{1,100}$/, { message: () => "must be 1 to 100 visible ASCII characters, e.g. a UUID" })
  ).annotations({
    jsonSchema: { pattern: "^[\\x21-\\x7e]{1,100}$", maxLength: 100 },
    description:
      "A new UUID per hold (1 to 100 visible ASCII characters, else 400 `invalid_request`: it is passed on " +
      "to the booking system); a retry with the same value returns the same hold. The hold belongs to the " +
      "sale: while it is held, any key answers the sale's hold."
  })
}).annotations({ identifier: "ReserveRequest" })

export const ReserveResponse = Schema.Struct({
  holdRef: Schema.String.annotations({
    description: "Equals the sale reference; pass it to DELETE /reserve and POST /book."
  }),
  expiresAt: Schema.String.annotations({
    description:
      "ISO 8601; the seats are released then (10 minutes after the hold). The quote stands at least until then."
  }),
  cartLine: CartLine
}).annotations({ identifier: "ReserveResponse" })

export const ReleaseResponse = Schema.Struct({
  holdRef: Schema.String,
  released: Schema.Literal(true)
}).annotations({ identifier: "ReleaseResponse" })

export class SalesGroup extends HttpApiGroup.make("sales")
  .annotate(OpenApi.Title, "Sales")
  .annotate(OpenApi.Description, "Quote a sale, hold its seats, release the hold.")
  .add(
    HttpApiEndpoint.post("quote", "/quote")
      .setPayload(QuoteBody)
      .addSuccess(QuoteResponse)
      .addError(BodyTooLarge)
      .addError(UnsupportedMediaType)
      .addError(QbConflict)
      .addError(QbUnavailable)
      .annotateContext(OpenApi.annotations({
        identifier: "quoteSale",
        summary: "Quote a sale (holds nothing)",
        description:
          "Writes budget. Checks the tour is sellable here (403 `tour_not_sellable_here` also when the terminal has no " +
          "card terminal or its operator no merchant), the guest types and the seats now; stores the sale as " +
          "`quoted` and returns its reference, `validUntil` (15 minutes) and the cart line with payment instructions."
      }))
  )
  .add(
    HttpApiEndpoint.post("reserve", "/reserve")
      .setPayload(ReserveBody)
      .addSuccess(ReserveResponse)
      .addError(BodyTooLarge)
      .addError(UnsupportedMediaType)
      .addError(QbNotFound)
      .addError(QbConflict)
      .addError(QbGone)
      .addError(QbUnprocessable)
      .addError(QbUnavailable)
      .annotateContext(OpenApi.annotations({
        identifier: "reserveSeats",
        summary: "Hold the seats of a quoted sale (optional)",
        description:
          "Writes budget. Checks the departure again (409 `sold_out`; 409 `price_changed` for a guest type no longer " +
          "priced; the quoted prices stand while the quote is valid) and holds the seats for 10 minutes; the sale " +
          "becomes `held`. A sale already held answers its hold, whatever the idempotencyKey. 410 `hold_expired` for a " +
          "quote past `validUntil` or a hold that ran out (make a new quote); 422 `hold_not_supported` when the tour's " +
          "booking system cannot hold (continue without a hold); 404 `not_found` for a reference not of this terminal; " +
          "503 `provider_unavailable` when the booking system does not answer (nothing held; retry with the same " +
          "idempotencyKey). " + OTHER_MODE
      }))
  )
  .add(
    HttpApiEndpoint.del("release", "/reserve/:holdRef")
      .setPath(Schema.Struct({ holdRef: SaleReference }))
      .addSuccess(ReleaseResponse)
      .addError(QbNotFound)
      .addError(QbUnavailable)
      .annotateContext(OpenApi.annotations({
        identifier: "releaseHold",
        summary: "Release a hold",
        description:
          "Writes budget. Releases the seats; the sale is `quoted` again (or `expired` past `validUntil`). Idempotent: " +
          "a hold released before, run out, or never made answers the same 200. " + OTHER_MODE
      }))
  )
  .annotate(Budget, "writes")
  .middleware(QuickbookAuth)
  .prefix(QUICKBOOK_PREFIX)
{}
