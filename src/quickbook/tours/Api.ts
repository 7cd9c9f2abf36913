/** The `tours` group of the Quickbook API: the tours a terminal can sell on a day, and a tour's slots. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { QbUnavailable } from "../errors.js"
import { DESK_DAYS_AHEAD } from "../sales/rules.js"
import { Day, DayParam, QUICKBOOK_PREFIX, Time, Uuid } from "../schemas.js"
import { Budget, QuickbookAuth } from "../security.js"

export const GuestTypeInfo = Schema.Struct({
  type: Schema.String.annotations({ description: "Guest type key (e.g. `adult`); send it in a quote's guests." }),
  label: Schema.String.annotations({
    description: "What the clerk and the receipt show (the operator's pricing category)."
  }),
  isDefault: Schema.Boolean.annotations({ description: "The tour's main (adult) guest type." }),
  minAge: Schema.NullOr(Schema.Int),
  maxAge: Schema.NullOr(Schema.Int)
}).annotations({ identifier: "DeskGuestType" })

export const DeskTour = Schema.Struct({
  activityId: Schema.String.annotations({ description: "Tour id (UUID); pass it to slots and quote." }),
  operatorName: Schema.String.annotations({
    description: "The operator that runs the tour (another one when resold)."
  }),
  tourName: Schema.String,
  timeZone: Schema.String.annotations({ description: "IANA zone of the tour's days and start times." }),
  currency: Schema.String.annotations({ description: "ISO 4217 currency of its prices." }),
  durationMinutes: Schema.NullOr(Schema.Int),
  departureTimes: Schema.Array(Schema.String).annotations({
    description: "Usual local start times (HH:MM); the slots of a day are authoritative."
  }),
  guestTypes: Schema.Array(GuestTypeInfo).annotations({
    description: "The guest types the tour sells, in display order."
  }),
  date: Day.annotations({
    description: "The day this entry is about: `date` of the query, else today in the tour's zone."
  }),
  available: Schema.NullOr(Schema.Boolean).annotations({
    description:
      "true: the day has a start time with seats and prices; false: none; null: the booking system did not " +
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
    unitMinor: Schema.Int.annotations({
      description: "Price per guest of this type, VAT included, minor units; 0 when the tour is priced per booking."
    })
  })).annotations({ description: "Guest prices of this start time; a guest type missing here cannot be sold on it." }),
  bookingPriceMinor: Schema.NullOr(Schema.Int).annotations({
    description:
      "Set when the tour is priced per booking (a private tour): what any party costs, VAT included, minor units; " +
      "guest prices are then 0 and a quote's cart line carries this price as its `booking` entry. null: priced per guest."
  })
}).annotations({ identifier: "DeskSlot" })

export const DeskSlots = Schema.Struct({
  activityId: Schema.String,
  date: Day,
  timeZone: Schema.String,
  currency: Schema.String,
  slots: Schema.Array(DeskSlot).annotations({
    description: "The day's start times not yet started, by time, sold-out ones included."
  })
}).annotations({ identifier: "DeskSlots" })

export class ToursGroup extends HttpApiGroup.make("tours")
  .annotate(OpenApi.Title, "Tours")
  .annotate(OpenApi.Description, "The tours the terminal sells and their departures (slots) of one day.")
  .add(
    HttpApiEndpoint.get("list", "/tours")
      .setUrlParams(Schema.Struct({ date: Schema.optional(DayParam) }))
      .addSuccess(DeskTourList)
      .annotateContext(OpenApi.annotations({
        identifier: "listTours",
        summary: "Tours this terminal can sell on a day",
        description:
          "Reads budget. Query `date` (YYYY-MM-DD, the tour's local day; default today in each tour's zone; from yesterday to " +
          `${DESK_DAYS_AHEAD} days ahead, else 400 \`invalid_request\`, as for a day that is not a real calendar day). The published ` +
          "tours, linked to a booking system, on the sites of the terminal's selling operator: its own and those it " +
          "resells, by name, each with its guest types and whether the day has seats. A test key lists only tours whose " +
          "booking system and merchant are sandboxes, a live key only those where neither is. Start times with seats and " +
          "guest prices come from the slots endpoint."
      }))
  )
  .add(
    HttpApiEndpoint.get("slots", "/tours/:activityId/slots")
      .setPath(Schema.Struct({ activityId: Uuid }))
      .setUrlParams(Schema.Struct({ date: Schema.optional(DayParam) }))
      .addSuccess(DeskSlots)
      .addError(QbUnavailable)
      .annotateContext(OpenApi.annotations({
        identifier: "listSlots",
        summary: "Start times, seats and guest prices of a tour on a day",
        description: "Reads budget. Query `date` (YYYY-MM-DD, default today in the tour's zone; from yesterday to " +
          `${DESK_DAYS_AHEAD} days ahead, else 400 \`invalid_request\`). Read live from the operator's booking ` +
          "system; 503 `provider_unavailable` when it does not answer in time; 403 `tour_not_sellable_here` for a tour " +
          "this terminal may not sell."
      }))
  )
  .annotate(Budget, "reads")
  .middleware(QuickbookAuth)
  .prefix(QUICKBOOK_PREFIX)
{}
