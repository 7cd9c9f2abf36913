/** The `tours` group of the Partner API: the catalogue (secret or publishable key) and live availability. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import {
  AVAILABILITY_MAX_DAYS,
  AVAILABILITY_PAX_MAX,
  DEPARTURES_MAX_DAYS,
  TourAvailability
} from "../../catalogue/availability.js"
import { IsoDate } from "../../domain/dates.js"
import { InvalidRequest, NotFound } from "../../domain/errors.js"
import { Cursor, IdPath, intParam, PartnerId } from "../../http/params.js"
import { CatalogueAuth, eitherKey, RequiredScope } from "../auth/security.js"
import { LocaleParam, TOUR_LIST_DEFAULT, TOUR_LIST_MAX, TourDetail, TourPage } from "./tour.js"

export const TourListParams = Schema.Struct({
  locale: Schema.optional(LocaleParam),
  cursor: Schema.optional(Cursor),
  limit: Schema.optional(intParam(1, TOUR_LIST_MAX)).annotations({
    description: `1 to ${TOUR_LIST_MAX}, default ${TOUR_LIST_DEFAULT}.`
  }),
  partner_id: Schema.optional(PartnerId)
})

export const TourParams = Schema.Struct({
  locale: Schema.optional(LocaleParam),
  partner_id: Schema.optional(PartnerId)
})

export const TourAvailabilityParams = Schema.Struct({
  from: Schema.propertySignature(IsoDate).annotations({
    description: "First day (the tour's local day, YYYY-MM-DD), inclusive. Required.",
    missingMessage: () => "is required: the first day, YYYY-MM-DD"
  }),
  to: Schema.propertySignature(IsoDate).annotations({
    description:
      `Last day (the tour's local day), inclusive; not before \`from\`, at most ${AVAILABILITY_MAX_DAYS} days ` +
      "with `from`. Required.",
    missingMessage: () => "is required: the last day, YYYY-MM-DD"
  }),
  pax: Schema.optional(intParam(1, AVAILABILITY_PAX_MAX)).annotations({
    description: `Party size for \`fits_party\`: 1 to ${AVAILABILITY_PAX_MAX}, default 1.`
  }),
  partner_id: Schema.optional(PartnerId)
})

export class ToursGroup extends HttpApiGroup.make("tours")
  .annotate(OpenApi.Title, "Tours")
  .annotate(
    OpenApi.Description,
    "The tour catalogue of the key's sites with live availability; the list also answers a publishable key."
  )
  .add(
    HttpApiEndpoint.get("list", "/tours")
      .setUrlParams(TourListParams)
      .addSuccess(TourPage)
      .addError(InvalidRequest)
      .addError(NotFound)
      .annotateContext(OpenApi.annotations({
        identifier: "listTours",
        transform: eitherKey,
        summary: "The tour catalogue of the key's sites",
        description:
          "Scope `tours:read`. Published tours of every site of the key's operators (sites they own or were added " +
          "to; `partner_id` narrows to one operator's sites): each site's own tours and tours it resells for other " +
          "operators. Drafts and archived tours never appear; a tour on several of the sites appears once. Oldest " +
          "first by creation, then id; keyset pages with `next_cursor`. `from_price` and `season` come from a cache a " +
          "job fills from the booking system: until it has, `from_price` is null and `season.known` false (not closed)."
      }))
  )
  .add(
    HttpApiEndpoint.get("get", "/tours/:id")
      .setPath(IdPath)
      .setUrlParams(TourParams)
      .addSuccess(TourDetail)
      .addError(InvalidRequest)
      .addError(NotFound)
      .annotateContext(OpenApi.annotations({
        identifier: "getTour",
        transform: eitherKey,
        summary: "One tour with its detail fields",
        description:
          "Scope `tours:read`. Every list field plus the content (clean HTML, lists), meeting point, cancellation, " +
          "departure times, pricing categories, rates, linked products and the checkout `activity_id`. 404 when none " +
          "of the key's sites (or `partner_id`'s) sells the tour, or it is a draft or archived."
      }))
  )
  .add(
    HttpApiEndpoint.get("availability", "/tours/:id/availability")
      .setPath(IdPath)
      .setUrlParams(TourAvailabilityParams)
      .addSuccess(TourAvailability)
      .addError(InvalidRequest)
      .addError(NotFound)
      .annotateContext(OpenApi.annotations({
        identifier: "getTourAvailability",
        transform: eitherKey,
        summary: "A tour's live availability over a range of days",
        description:
          "Scope `tours:read`. Read live from the tour's booking system (a few seconds at most) and never reserves " +
          `anything. Every day from \`from\` to \`to\` (at most ${AVAILABILITY_MAX_DAYS} days) with \`available\` and the ` +
          `day's lowest regular adult price; ranges of up to ${DEPARTURES_MAX_DAYS} days also list \`departures\` with seats ` +
          "left, `fits_party` for `pax` and the booking system's prices per rate and pricing category before checkout " +
          "discounts. When the booking system does not answer in time, or the tour is not linked to one, the answer is " +
          "still 200 with `known` false and every day `available` true without a price: unknown is never sold out. 404 as for " +
          "GET /tours/{id}."
      }))
  )
  .annotate(RequiredScope, "tours:read")
  .middleware(CatalogueAuth)
  .prefix("/api/v1")
{}
