/** The `reschedules` group of the Partner API: where a booking can move, and the move (a write). */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { DateString, IsoDate, LocalTime } from "../../domain/dates.js"
import { InvalidRequest, NotFound, Unavailable } from "../../domain/errors.js"
import { IdPath } from "../../http/params.js"
import { PartnerAuth, RequiredScope } from "../auth/security.js"
import { writeOnId } from "../writes/writeEndpoint.js"

export const RescheduleOptionsParams = Schema.Struct({
  date: Schema.propertySignature(IsoDate).annotations({
    description: "The day to look at (the tour's local day, YYYY-MM-DD). Required.",
    missingMessage: () => "is required: the day to look at, YYYY-MM-DD"
  })
})

export const RescheduleOption = Schema.Struct({
  start_time_id: Schema.String.annotations({
    description: "Pass as `start_time_id` to POST /bookings/{id}/reschedule."
  }),
  rate_id: Schema.NullOr(Schema.String).annotations({ description: "Pass as `rate_id` with this option." }),
  start_time: Schema.NullOr(LocalTime).annotations({ description: "Local HH:MM in the booking's `timezone`." }),
  label: Schema.NullOr(Schema.String),
  remaining: Schema.Int.annotations({ description: "Seats left on the departure (9999: no seat limit)." })
}).annotations({ identifier: "RescheduleOption" })

export const RescheduleOptions = Schema.Struct({
  id: Schema.String.annotations({ description: "The booking id." }),
  date: DateString.annotations({ description: "The day asked about." }),
  current_date: Schema.NullOr(DateString).annotations({ description: "The booking's departure day now." }),
  reschedulable: Schema.Boolean.annotations({
    description: "false when the booking cannot move at all; `detail` says why."
  }),
  available: Schema.Boolean.annotations({ description: "true when the booking can move to `date`." }),
  price_differs: Schema.Boolean.annotations({
    description: "true when the day has room only at a different price; then no options are listed."
  }),
  detail: Schema.NullOr(Schema.String),
  options: Schema.Array(RescheduleOption).annotations({
    description: "Departures and rates at the same price with room for the party."
  })
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
    description:
      "true when the booking was on that departure already: nothing changed, not counted against the daily limit."
  })
}).annotations({ identifier: "RescheduleResult" })

export class ReschedulesGroup extends HttpApiGroup.make("reschedules")
  .annotate(OpenApi.Title, "Reschedule")
  .annotate(
    OpenApi.Description,
    "Where a booking can move on one day at the same price, and the move itself. A write: `Idempotency-Key`, daily limit, audited."
  )
  .add(
    HttpApiEndpoint.get("options", "/bookings/:id/reschedule-options")
      .setPath(IdPath)
      .setUrlParams(RescheduleOptionsParams)
      .addSuccess(RescheduleOptions)
      .addError(InvalidRequest)
      .addError(NotFound)
      .addError(Unavailable)
      .annotateContext(OpenApi.annotations({
        identifier: "listRescheduleOptions",
        summary: "Where a booking can move on one day, at the same price",
        description:
          "Scope `bookings.reschedule:write`. Read only: one availability read of the booking system for `date`. " +
          "`reschedulable` false (with `detail`) for a cancelled booking, one not linked to a booking system, a tour " +
          "that has started, or an unpaid pay-later booking within 24 hours of its charge. Options are departures of " +
          "`date` with room for the party at the same price. 404 when the booking is not one of the key's operators'; " +
          "503 when the booking system does not answer."
      }))
  )
  .add(
    writeOnId("reschedule", "/bookings/:id/reschedule")
      .setPayload(RescheduleRequest)
      .addSuccess(RescheduleResult)
      .annotateContext(OpenApi.annotations({
        identifier: "rescheduleBooking",
        summary: "Move a booking to another departure at the same price",
        description:
          "Scope `bookings.reschedule:write`; header `Idempotency-Key` required. Moves the booking in the booking system " +
          "and in the service; payment is never touched; guest and team are emailed. 422 `not-possible` when the " +
          "booking is cancelled, not linked to a booking system, the tour has started, an unpaid pay-later booking is " +
          "within 24 hours of its charge, the date has no such departure or not enough seats, or the price differs. " +
          "The departure the booking is on already answers 200 with `already_on_date` true and does not count " +
          "against the daily `reschedules` limit. 503 when the booking system does not answer (nothing changed; retry " +
          "with the same key). One change of a booking at a time: 409 while another cancel or reschedule of it is " +
          "being applied, or when one was applied while this request was being checked (nothing changed, not " +
          "counted; a retry with the same key is decided on the booking as it is then)."
      }))
  )
  .annotate(RequiredScope, "bookings.reschedule:write")
  .middleware(PartnerAuth)
  .prefix("/api/v1")
{}
