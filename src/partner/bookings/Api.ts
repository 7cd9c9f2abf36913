/** The `bookings` group of the Partner API: list and get. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { IsoDate, IsoDateTimeWithOffset } from "../../domain/dates.js"
import { InvalidRequest, NotFound } from "../../domain/errors.js"
import { Cursor, IdPath, intParam, oneOf, PartnerId } from "../../http/params.js"
import { PartnerAuth, RequiredScope } from "../auth/security.js"
import { BookingDetail, BookingPage, BookingStatus } from "./booking.js"

export const BookingListParams = Schema.Struct({
  date_from: Schema.optional(IsoDate).annotations({ description: "Experience date from (inclusive)." }),
  date_to: Schema.optional(IsoDate).annotations({ description: "Experience date to (inclusive)." }),
  updated_since: Schema.optional(IsoDateTimeWithOffset).annotations({
    description: "Bookings created or changed at or after this instant (with Z or an offset)."
  }),
  status: Schema.optional(oneOf(BookingStatus.literals)),
  cursor: Schema.optional(Cursor),
  limit: Schema.optional(intParam(1, 100)).annotations({ description: "1 to 100, default 50." }),
  partner_id: Schema.optional(PartnerId)
})

export class BookingsGroup extends HttpApiGroup.make("bookings")
  .annotate(OpenApi.Title, "Bookings")
  .annotate(
    OpenApi.Description,
    "The bookings of the key's operators: a page newest first, or one booking with its payment and commission."
  )
  .add(
    HttpApiEndpoint.get("list", "/bookings")
      .setUrlParams(BookingListParams)
      .addSuccess(BookingPage)
      .addError(InvalidRequest)
      .addError(NotFound)
      .annotateContext(OpenApi.annotations({
        identifier: "listBookings",
        summary: "List bookings, newest first",
        description:
          "Scope `bookings:read`. Newest first by creation; keyset pages with `next_cursor`. Holds and abandoned " +
          "checkouts never appear. Guest `email` and `phone` keys are present only with `guests.contact:read`."
      }))
  )
  .add(
    HttpApiEndpoint.get("get", "/bookings/:id")
      .setPath(IdPath)
      .setUrlParams(Schema.Struct({ partner_id: Schema.optional(PartnerId) }))
      .addSuccess(BookingDetail)
      .addError(NotFound)
      .annotateContext(OpenApi.annotations({
        identifier: "getBooking",
        summary: "One booking",
        description:
          "Scope `bookings:read`. 404 when the booking's tour belongs to none of the key's operators (or not to `partner_id`)."
      }))
  )
  .annotate(RequiredScope, "bookings:read")
  .middleware(PartnerAuth)
  .prefix("/api/v1")
{}
