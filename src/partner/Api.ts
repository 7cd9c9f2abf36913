/** The Partner API v1 contract. The OpenAPI document is generated from these definitions. */
import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { BookingDetail, BookingPage, BookingStatus, Partner } from "./bookings/booking.js"
import { DateString, DateTimeString, IsoDate, IsoDateTimeWithOffset, LocalTime } from "../domain/dates.js"
import { InvalidRequest, NotFound, NotPossible, Unavailable } from "../domain/errors.js"
import { Manifest } from "./manifest/schemas.js"
import { PaymentLinkKind } from "./paymentLinks/rules.js"
import { Scope } from "./auth/scopes.js"
import { LocaleParam, TOUR_LIST_DEFAULT, TOUR_LIST_MAX, TourDetail, TourPage } from "./tours/tour.js"
import {
  AVAILABILITY_MAX_DAYS,
  AVAILABILITY_PAX_MAX,
  DEPARTURES_MAX_DAYS,
  TourAvailability
} from "../catalogue/availability.js"
import { Cursor, intParam, oneOf, PartnerId, UuidPath } from "../http/params.js"
import { CatalogueAuth, eitherKey, PartnerAuth, RequiredScope } from "./auth/security.js"
import { idempotentWrite } from "./writes/writeEndpoint.js"
import { CANCEL_REASON_MAX, CANCEL_REASON_MIN } from "./cancels/rules.js"

export const Me = Schema.Struct({
  key: Schema.Struct({
    id: Schema.String.annotations({ description: "Public key id: the part after the `svc_live_` prefix." }),
    name: Schema.String,
    scopes: Schema.Array(Scope),
    created_at: DateTimeString,
    expires_at: DateTimeString
  }),
  partner: Partner.annotations({ description: "First of `partners` by name (kept for single-operator clients)." }),
  partners: Schema.Array(Partner).annotations({ description: "Every operator the key acts for right now." })
}).annotations({ identifier: "Me" })

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

export class MeGroup extends HttpApiGroup.make("me")
  .add(
    HttpApiEndpoint.get("me", "/me")
      .addSuccess(Me)
      .annotate(OpenApi.Summary, "The key and the operators it acts for")
      .annotate(OpenApi.Description, "Any valid key. `partners` lists the operators the key acts for right now.")
  )
  .middleware(PartnerAuth)
  .prefix("/api/v1")
{}

export class BookingsGroup extends HttpApiGroup.make("bookings")
  .add(
    HttpApiEndpoint.get("list", "/bookings")
      .setUrlParams(BookingListParams)
      .addSuccess(BookingPage)
      .addError(InvalidRequest)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "List bookings, newest first")
      .annotate(
        OpenApi.Description,
        "Scope `bookings:read`. Newest first by creation; keyset pages with `next_cursor`. Holds and abandoned " +
          "checkouts never appear. Guest `email` and `phone` keys are present only with `guests.contact:read`."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/bookings/:id")
      .setPath(Schema.Struct({ id: UuidPath }))
      .setUrlParams(Schema.Struct({ partner_id: Schema.optional(PartnerId) }))
      .addSuccess(BookingDetail)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "One booking")
      .annotate(
        OpenApi.Description,
        "Scope `bookings:read`. 404 when the booking's tour belongs to none of the key's operators (or not to `partner_id`)."
      )
  )
  .annotate(RequiredScope, "bookings:read")
  .middleware(PartnerAuth)
  .prefix("/api/v1")
{}

export const ManifestParams = Schema.Struct({
  date: Schema.propertySignature(IsoDate).annotations({
    description: "Local departure day in each operator's time zone (YYYY-MM-DD). Required.",
    missingMessage: () => "is required: the local departure day YYYY-MM-DD"
  }),
  partner_id: Schema.optional(PartnerId)
})

export class ManifestGroup extends HttpApiGroup.make("manifest")
  .add(
    HttpApiEndpoint.get("day", "/manifest")
      .setUrlParams(ManifestParams)
      .addSuccess(Manifest)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "The manifest of one departure day")
      .annotate(
        OpenApi.Description,
        "Scope `manifest:read`. Passengers of every sales channel departing on `date` (the local day in each " +
          "operator's time zone), read from the mirror of the booking system (see `synced_at`). Live rows " +
          "(CONFIRMED, RESERVED) are grouped into departures by local start time, product and rate; CANCELLED rows " +
          "are listed in `cancelled` only and counted nowhere. Counts are passengers. Rows of a booking-system account " +
          "shared by several operators appear once. Guest `email` and `phone` keys are present only with " +
          "`guests.contact:read`. 404 when `partner_id` is not one of the key's operators."
      )
  )
  .annotate(RequiredScope, "manifest:read")
  .middleware(PartnerAuth)
  .prefix("/api/v1")
{}

export const Health = Schema.Struct({ status: Schema.Literal("ok") })

export class HealthGroup extends HttpApiGroup.make("health")
  .add(HttpApiEndpoint.get("healthz", "/healthz").addSuccess(Health))
  .add(HttpApiEndpoint.get("readyz", "/readyz").addSuccess(Health))
  .annotate(OpenApi.Exclude, true)
{}

const CheckinStatusParam = oneOf(["checked_in", "no_show", "clear"] as const)

const CheckinBody = Schema.Struct({
  status: CheckinStatusParam.annotations({ description: "`checked_in`, `no_show`, or `clear` (back to not seen)." }),
  present: Schema.optional(Schema.NullOr(
    Schema.Int.pipe(Schema.greaterThanOrEqualTo(0)).annotations({
      message: () => ({ message: "must be a whole number from 0 to the row's participants", override: true })
    })
  )).annotations({
    description: "With `checked_in` only: how many of the party turned up, 0 to the row's participants. Omit (or null) for everyone."
  })
}).annotations({ message: () => "must be a JSON object with `status`" }).pipe(
  Schema.filter((body) =>
    body.present == null || body.status === "checked_in" ? undefined : { path: ["present"], message: "only with status checked_in" }
  )
)

/** The check-in body; `present: null` is the same request as no `present`. */
export const CheckinRequest = CheckinBody.pipe(
  Schema.transform(
    Schema.Struct({ status: Schema.typeSchema(CheckinStatusParam), present: Schema.optional(Schema.Int) }),
    {
      strict: true,
      decode: ({ present, status }) => (present == null ? { status } : { status, present }),
      encode: (body) => body
    }
  )
).annotations({ identifier: "CheckinRequest" })

export const CheckinResult = Schema.Struct({
  id: Schema.UUID.annotations({ description: "The manifest row id." }),
  check_in: Schema.Struct({
    status: Schema.NullOr(Schema.Literal("checked_in", "no_show")).annotations({ description: "null: not seen." }),
    present: Schema.NullOr(Schema.Int).annotations({ description: "null: everyone (or no check-in)." })
  })
}).annotations({ identifier: "CheckinResult" })

export class CheckinsGroup extends HttpApiGroup.make("checkins")
  .add(
    idempotentWrite(
      HttpApiEndpoint.post("checkin", "/manifest/:id/checkin")
        .setPath(Schema.Struct({ id: UuidPath }))
        .setPayload(CheckinRequest)
        .addSuccess(CheckinResult)
        .addError(NotFound)
        .addError(NotPossible)
    )
      .annotate(OpenApi.Summary, "Check a manifest row in, mark it no-show, or clear it")
      .annotate(
        OpenApi.Description,
        "Scope `checkins:write`; header `Idempotency-Key` required. Stores only the check-in: the booking, " +
          "guests and money never change and the booking system is not told. 404 when the row belongs to none " +
          "of the key's operators; 422 for a cancelled row (only `clear` is accepted). Setting the state the row " +
          "already has answers 200 and does not count against the daily `checkins` limit."
      )
  )
  .annotate(RequiredScope, "checkins:write")
  .middleware(PartnerAuth)
  .prefix("/api/v1")
{}

export const RescheduleOptionsParams = Schema.Struct({
  date: Schema.propertySignature(IsoDate).annotations({
    description: "The day to look at (the tour's local day, YYYY-MM-DD). Required.",
    missingMessage: () => "is required: the day to look at, YYYY-MM-DD"
  })
})

export const RescheduleOption = Schema.Struct({
  start_time_id: Schema.String.annotations({ description: "Pass as `start_time_id` to POST /bookings/{id}/reschedule." }),
  rate_id: Schema.NullOr(Schema.String).annotations({ description: "Pass as `rate_id` with this option." }),
  start_time: Schema.NullOr(LocalTime).annotations({ description: "Local HH:MM in the booking's `timezone`." }),
  label: Schema.NullOr(Schema.String),
  remaining: Schema.Int.annotations({ description: "Seats left on the departure (9999: no seat limit)." })
}).annotations({ identifier: "RescheduleOption" })

export const RescheduleOptions = Schema.Struct({
  id: Schema.String.annotations({ description: "The booking id." }),
  date: DateString.annotations({ description: "The day asked about." }),
  current_date: Schema.NullOr(DateString).annotations({ description: "The booking's departure day now." }),
  reschedulable: Schema.Boolean.annotations({ description: "false when the booking cannot move at all; `detail` says why." }),
  available: Schema.Boolean.annotations({ description: "true when the booking can move to `date`." }),
  price_differs: Schema.Boolean.annotations({
    description: "true when the day has room only at a different price; then no options are listed."
  }),
  detail: Schema.NullOr(Schema.String),
  options: Schema.Array(RescheduleOption).annotations({ description: "Departures and rates at the same price with room for the party." })
}).annotations({ identifier: "RescheduleOptions" })

export const RescheduleRequest = Schema.Struct({
  date: IsoDate.annotations({ description: "The new departure day (the tour's local day)." }),
  start_time_id: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(100))).annotations({
    description: "From GET /bookings/{id}/reschedule-options; omit to keep the time of day."
  }),
  rate_id: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(100))).annotations({
    description: "The `rate_id` of the same option, when it has one; omit to keep the rate."
  })
}).annotations({ identifier: "RescheduleRequest", message: () => "must be a JSON object with `date`" })

export const RescheduleResult = Schema.Struct({
  id: Schema.String.annotations({ description: "The booking id." }),
  status: Schema.String.annotations({ description: "The booking's status (unchanged by a reschedule)." }),
  date: DateString.annotations({ description: "The departure day now." }),
  start_time: Schema.NullOr(LocalTime),
  previous_date: Schema.NullOr(DateString).annotations({ description: "null when nothing moved (`already_on_date`)." }),
  previous_start_time: Schema.NullOr(LocalTime),
  already_on_date: Schema.Boolean.annotations({
    description: "true when the booking was on that departure already: nothing changed, not counted against the daily limit."
  })
}).annotations({ identifier: "RescheduleResult" })

export class ReschedulesGroup extends HttpApiGroup.make("reschedules")
  .add(
    HttpApiEndpoint.get("options", "/bookings/:id/reschedule-options")
      .setPath(Schema.Struct({ id: UuidPath }))
      .setUrlParams(RescheduleOptionsParams)
      .addSuccess(RescheduleOptions)
      .addError(InvalidRequest)
      .addError(NotFound)
      .addError(Unavailable)
      .annotate(OpenApi.Summary, "Where a booking can move on one day, at the same price")
      .annotate(
        OpenApi.Description,
        "Scope `bookings.reschedule:write`. Read only: one availability read of the booking system for `date`. " +
          "`reschedulable` false (with `detail`) for a cancelled booking, one not linked to a booking system, a tour " +
          "that has started, or an unpaid pay-later booking within 24 hours of its charge. Options are departures of " +
          "`date` with room for the party at the same price. 404 when the booking is not one of the key's operators'; " +
          "503 when the booking system does not answer."
      )
  )
  .add(
    idempotentWrite(
      HttpApiEndpoint.post("reschedule", "/bookings/:id/reschedule")
        .setPath(Schema.Struct({ id: UuidPath }))
        .setPayload(RescheduleRequest)
        .addSuccess(RescheduleResult)
        .addError(NotFound)
        .addError(NotPossible)
    )
      .annotate(OpenApi.Summary, "Move a booking to another departure at the same price")
      .annotate(
        OpenApi.Description,
        "Scope `bookings.reschedule:write`; header `Idempotency-Key` required. Moves the booking in the booking system " +
          "and in the service; payment is never touched; guest and team are emailed. 422 `not-possible` when the " +
          "booking is cancelled, not linked to a booking system, the tour has started, an unpaid pay-later booking is " +
          "within 24 hours of its charge, the date has no such departure or not enough seats, or the price differs. " +
          "The departure the booking is on already answers 200 with `already_on_date` true and does not count " +
          "against the daily `reschedules` limit. 503 when the booking system does not answer (nothing changed; retry " +
          "with the same key). One change of a booking at a time: 409 while another cancel or reschedule of it is " +
          "being applied, or when one was applied while this request was being checked (nothing changed, not " +
          "counted; a retry with the same key is decided on the booking as it is then)."
      )
  )
  .annotate(RequiredScope, "bookings.reschedule:write")
  .middleware(PartnerAuth)
  .prefix("/api/v1")
{}

/**
 * A JSON object; its members, if any, are ignored (decoded as `{}`, so they do not make two
 * requests differ). `Schema.Struct({})` would take any value but null, an array or a number too.
 */
export const PaymentLinkRequest = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
  message: () => "must be a JSON object (`{}`)"
}).pipe(
  Schema.transform(Schema.Struct({}), { strict: true, decode: () => ({}), encode: (body) => body })
).annotations({
  identifier: "PaymentLinkRequest",
  description: "No fields: the service decides the amount."
})

export const PaymentLinkResult = Schema.Struct({
  id: Schema.UUID.annotations({ description: "The id sent: a booking id or a manifest row id." }),
  kind: PaymentLinkKind.annotations({
    description: "`deferred_balance`: the balance of a pay-later booking; `provider_balance`: the balance the booking system says is due."
  }),
  url: Schema.String.annotations({ description: "The payment page. Share it only with the guest." }),
  amount_minor: Schema.Int,
  currency: Schema.String.annotations({ description: "ISO 4217" }),
  emailed: Schema.Boolean.annotations({
    description: "true when the guest has this link by email: sent by this call, or by a call for the same link in the last " +
      "10 minutes (not sent again); false when the link exists but the email did not go out."
  })
}).annotations({ identifier: "PaymentLinkResult" })

export class PaymentLinksGroup extends HttpApiGroup.make("paymentLinks")
  .add(
    idempotentWrite(
      HttpApiEndpoint.post("paymentLink", "/bookings/:id/payment-link")
        .setPath(Schema.Struct({ id: UuidPath }))
        .setPayload(PaymentLinkRequest)
        .addSuccess(PaymentLinkResult)
        .addError(NotFound)
        .addError(NotPossible)
    )
      .annotate(OpenApi.Summary, "Email the guest a link to pay the balance owed")
      .annotate(
        OpenApi.Description,
        "Scope `payment_links:write`; header `Idempotency-Key` required; body `{}`. `id` is a booking id from " +
          "GET /bookings, or a manifest row id of a booking that exists only in the booking system. The service " +
          "decides the amount: the pay-later balance of a pay-later booking (`deferred_balance`), else what the " +
          "booking system says is due (`provider_balance`), less what this service itself already collected for the " +
          "booking (a desk sale paid at the card terminal, a paid link, checkout payments) that the booking system may " +
          "not show. Calling again resends the same open link: one open link per booking and amount, whatever the " +
          "concurrency, and the guest is emailed a link at most once in 10 minutes (a call within 10 minutes of the " +
          "link's last email answers that email's outcome in `emailed` and sends nothing new). 404 when the " +
          "booking or row belongs to none of the key's operators; 422 for a cancelled booking, nothing owed (also " +
          "when this service was paid it, e.g. at the desk), or a pay-later balance already collected; 503 when the " +
          "payment provider or the booking system did not answer (nothing was emailed; retry with the same key). " +
          "Counts against the daily `payment_links` limit."
      )
  )
  .annotate(RequiredScope, "payment_links:write")
  .middleware(PartnerAuth)
  .prefix("/api/v1")
{}

const CancelReason = Schema.Trim.pipe(
  Schema.minLength(CANCEL_REASON_MIN, { message: () => `must be ${CANCEL_REASON_MIN} to ${CANCEL_REASON_MAX} characters (not counting surrounding spaces)` }),
  Schema.maxLength(CANCEL_REASON_MAX, { message: () => `must be ${CANCEL_REASON_MIN} to ${CANCEL_REASON_MAX} characters` })
)

export const CancelRequest = Schema.Struct({
  reason: Schema.propertySignature(CancelReason).annotations({
    description: `Why the booking is cancelled, ${CANCEL_REASON_MIN} to ${CANCEL_REASON_MAX} characters; kept on the booking and shown to the operator's team.`,
    missingMessage: () => `is required: why the booking is cancelled, ${CANCEL_REASON_MIN} to ${CANCEL_REASON_MAX} characters`
  })
}).annotations({ identifier: "CancelRequest", message: () => "must be a JSON object with `reason`" })

export const CancelResult = Schema.Struct({
  id: Schema.String.annotations({ description: "The booking id." }),
  status: Schema.Literal("CONFIRMED", "CANCELLED", "REFUNDED").annotations({
    description: "REFUNDED: the provider confirmed the refund. CANCELLED: nothing needed returning, or a void is still " +
      "settling. CONFIRMED (with `refund.outcome` pending): seats were released but the refund did not complete; the " +
      "service is alerted and keeps finishing it."
  }),
  already_cancelled: Schema.Boolean.annotations({
    description: "true when the booking was cancelled before: nothing changed, not counted against the daily limit."
  }),
  refund: Schema.Struct({
    outcome: Schema.Literal("refunded", "none", "pending").annotations({
      description: "refunded: returned and confirmed; none: nothing had been paid; pending: a refund (or void) still on its way."
    }),
    amount_minor: Schema.Int.annotations({ description: "What the guest gets back (the whole price, or the reservation fee of an unpaid pay-later booking)." }),
    currency: Schema.String.annotations({ description: "ISO 4217" })
  })
}).annotations({ identifier: "CancelResult" })

export class CancelsGroup extends HttpApiGroup.make("cancels")
  .add(
    idempotentWrite(
      HttpApiEndpoint.post("cancel", "/bookings/:id/cancel")
        .setPath(Schema.Struct({ id: UuidPath }))
        .setPayload(CancelRequest)
        .addSuccess(CancelResult)
        .addError(NotFound)
        .addError(NotPossible)
    )
      .annotate(OpenApi.Summary, "Cancel a booking with a full refund")
      .annotate(
        OpenApi.Description,
        "Scope `bookings.cancel:write`; header `Idempotency-Key` required. Seats are released in the booking system " +
          "first (503 when it does not answer: nothing changed; retry with the same key), then every payment is " +
          "returned in full: voided the same UTC day before 23:00 UTC, refunded otherwise (an unpaid pay-later booking " +
          "returns its reservation fee). The booking is marked cancelled, its commission voided, guest and team " +
          "emailed. No free-cancellation window or departure check applies; no amount is taken; cannot be undone. " +
          "A booking cancelled before answers 200 with `already_cancelled` true and does not count against the daily " +
          "`cancels` limit. 404 when the booking is not one of the key's operators'; 422 when the service cannot " +
          "refund it (no payment on record for what was paid, no payment account) or the booking system refuses. " +
          "409 while another cancel or reschedule of the booking is being applied, or when one was applied while " +
          "this request was being checked (nothing changed; retry with the same key)."
      )
  )
  .annotate(RequiredScope, "bookings.cancel:write")
  .middleware(PartnerAuth)
  .prefix("/api/v1")
{}

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
    description: `Last day (the tour's local day), inclusive; not before \`from\`, at most ${AVAILABILITY_MAX_DAYS} days ` +
      "with `from`. Required.",
    missingMessage: () => "is required: the last day, YYYY-MM-DD"
  }),
  pax: Schema.optional(intParam(1, AVAILABILITY_PAX_MAX)).annotations({
    description: `Party size for \`fits_party\`: 1 to ${AVAILABILITY_PAX_MAX}, default 1.`
  }),
  partner_id: Schema.optional(PartnerId)
})

export class ToursGroup extends HttpApiGroup.make("tours")
  .add(
    HttpApiEndpoint.get("list", "/tours")
      .setUrlParams(TourListParams)
      .addSuccess(TourPage)
      .addError(InvalidRequest)
      .addError(NotFound)
      .annotate(OpenApi.Transform, eitherKey)
      .annotate(OpenApi.Summary, "The tour catalogue of the key's sites")
      .annotate(
        OpenApi.Description,
        "Scope `tours:read`. Published tours of every site of the key's operators (sites they own or were added " +
          "to; `partner_id` narrows to one operator's sites): each site's own tours and tours it resells for other " +
          "operators. Drafts and archived tours never appear; a tour on several of the sites appears once. Oldest " +
          "first by creation, then id; keyset pages with `next_cursor`. `from_price` and `season` come from a cache a " +
          "job fills from the booking system: until it has, `from_price` is null and `season.known` false (not closed)."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/tours/:id")
      .setPath(Schema.Struct({ id: UuidPath }))
      .setUrlParams(TourParams)
      .addSuccess(TourDetail)
      .addError(InvalidRequest)
      .addError(NotFound)
      .annotate(OpenApi.Transform, eitherKey)
      .annotate(OpenApi.Summary, "One tour with its detail fields")
      .annotate(
        OpenApi.Description,
        "Scope `tours:read`. Every list field plus the content (clean HTML, lists), meeting point, cancellation, " +
          "departure times, pricing categories, rates, linked products and the checkout `activity_id`. 404 when none " +
          "of the key's sites (or `partner_id`'s) sells the tour, or it is a draft or archived."
      )
  )
  .add(
    HttpApiEndpoint.get("availability", "/tours/:id/availability")
      .setPath(Schema.Struct({ id: UuidPath }))
      .setUrlParams(TourAvailabilityParams)
      .addSuccess(TourAvailability)
      .addError(InvalidRequest)
      .addError(NotFound)
      .annotate(OpenApi.Transform, eitherKey)
      .annotate(OpenApi.Summary, "A tour's live availability over a range of days")
      .annotate(
        OpenApi.Description,
        "Scope `tours:read`. Read live from the tour's booking system (a few seconds at most) and never reserves " +
          `anything. Every day from \`from\` to \`to\` (at most ${AVAILABILITY_MAX_DAYS} days) with \`available\` and the ` +
          `day's lowest regular adult price; ranges of up to ${DEPARTURES_MAX_DAYS} days also list \`departures\` with seats ` +
          "left, `fits_party` for `pax` and the booking system's prices per rate and pricing category before checkout " +
          "discounts. When the booking system does not answer in time, or the tour is not linked to one, the answer is " +
          "still 200 with `known` false and every day `available` true without a price: unknown is never sold out. 404 as for " +
          "GET /tours/{id}."
      )
  )
  .annotate(RequiredScope, "tours:read")
  .middleware(CatalogueAuth)
  .prefix("/api/v1")
{}

export class PartnerApi extends HttpApi.make("partner")
  .add(MeGroup)
  .add(BookingsGroup)
  .add(ManifestGroup)
  .add(HealthGroup)
  .add(CheckinsGroup)
  .add(ReschedulesGroup)
  .add(PaymentLinksGroup)
  .add(CancelsGroup)
  .add(ToursGroup)
  .annotate(OpenApi.Title, "Partner API")
  .annotate(OpenApi.Version, "1.0.0")
  .annotate(
    OpenApi.Description,
    "Read bookings, the daily manifest and the tour catalogue of the operators on your key. Money is integer minor units with an ISO 4217 currency; " +
      "timestamps are ISO 8601; departure times are local HH:MM with an IANA time zone. Every error is " +
      "RFC 9457 problem details (application/problem+json) with a `request_id`."
  )
{}
