/** The Partner API v1 contract. The OpenAPI document is generated from these definitions. */
import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { BookingDetail, BookingPage, BookingStatus, Partner } from "../../domain/booking.js"
import { DateTimeString, IsoDate, IsoDateTimeWithOffset } from "../../domain/dates.js"
import { InvalidRequest, NotFound, NotPossible } from "../../domain/errors.js"
import { Manifest } from "../../domain/manifest.js"
import { PaymentLinkKind } from "../../domain/paymentLink.js"
import { Scope } from "../../domain/scopes.js"
import { Cursor, intParam, oneOf, PartnerId, UuidPath } from "../params.js"
import { PartnerAuth, RequiredScope } from "./security.js"
import { idempotentWrite } from "./writeEndpoint.js"

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

export const PaymentLinkRequest = Schema.Struct({}).annotations({
  identifier: "PaymentLinkRequest",
  description: "No fields: the service decides the amount.",
  message: () => "must be a JSON object (`{}`)"
})

export const PaymentLinkResult = Schema.Struct({
  id: Schema.UUID.annotations({ description: "The id sent: a booking id or a manifest row id." }),
  kind: PaymentLinkKind.annotations({
    description: "`deferred_balance`: the balance of a pay-later booking; `provider_balance`: the balance the booking system says is due."
  }),
  url: Schema.String.annotations({ description: "The payment page. Share it only with the guest." }),
  amount_minor: Schema.Int,
  currency: Schema.String.annotations({ description: "ISO 4217" }),
  emailed: Schema.Boolean.annotations({ description: "false when the link exists but the email did not go out." })
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
          "booking system says is due (`provider_balance`). Calling again resends the same open link. 404 when the " +
          "booking or row belongs to none of the key's operators; 422 for a cancelled booking, nothing owed, or a " +
          "pay-later balance already collected; 503 when the payment provider or the booking system did not answer " +
          "(nothing was emailed; retry with the same key). Counts against the daily `payment_links` limit."
      )
  )
  .annotate(RequiredScope, "payment_links:write")
  .middleware(PartnerAuth)
  .prefix("/api/v1")
{}

export class PartnerApi extends HttpApi.make("partner")
  .add(MeGroup)
  .add(BookingsGroup)
  .add(ManifestGroup)
  .add(HealthGroup)
  .add(CheckinsGroup)
  .add(PaymentLinksGroup)
  .annotate(OpenApi.Title, "Partner API")
  .annotate(OpenApi.Version, "1.0.0")
  .annotate(
    OpenApi.Description,
    "Read bookings and the daily manifest of the operators on your key. Money is integer minor units with an ISO 4217 currency; " +
      "timestamps are ISO 8601; departure times are local HH:MM with an IANA time zone. Every error is " +
      "RFC 9457 problem details (application/problem+json) with a `request_id`."
  )
{}
