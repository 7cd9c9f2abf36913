/** The `checkins` group of the Partner API: check a manifest row in (a write). */
import { HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { oneOf } from "../../http/params.js"
import { PartnerAuth, RequiredScope } from "../auth/security.js"
import { writeOnId } from "../writes/writeEndpoint.js"

const CheckinStatusParam = oneOf(["checked_in", "no_show", "clear"] as const)

/** The body's fields (the assistant's `check_in_guests` takes them as arguments, beside `id`). */
export const checkinBodyFields = {
  status: CheckinStatusParam.annotations({ description: "`checked_in`, `no_show`, or `clear` (back to not seen)." }),
  present: Schema.optional(Schema.NullOr(
    // The row's participants are a PostgreSQL integer: no party is larger than 2^31 - 1.
    Schema.Int.pipe(Schema.between(0, 2 ** 31 - 1)).annotations({
      message: () => ({ message: "must be a whole number from 0 to the row's participants", override: true }),
      jsonSchema: { type: "integer", minimum: 0, maximum: 2 ** 31 - 1 }
    })
  )).annotations({
    description:
      "With `checked_in` only: how many of the party turned up, 0 to the row's participants. Omit (or null) for everyone."
  })
}

/** `present` goes only with `checked_in` (a `Schema.filter` predicate). */
export const presentOnlyWhenCheckedIn = (
  body: { readonly status: string; readonly present?: number | null | undefined }
) =>
  body.present == null || body.status === "checked_in"
    ? undefined
    : { path: ["present"], message: "only with status checked_in" }

const CheckinBody = Schema.Struct(checkinBodyFields)
  .annotations({ message: () => "must be a JSON object with `status`" })
  .pipe(Schema.filter(presentOnlyWhenCheckedIn))

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
  .annotate(OpenApi.Title, "Check-in")
  .annotate(
    OpenApi.Description,
    "Set a manifest row's check-in state. A write: `Idempotency-Key`, daily limit, audited."
  )
  .add(
    writeOnId("checkin", "/manifest/:id/checkin")
      .setPayload(CheckinRequest)
      .addSuccess(CheckinResult)
      .annotateContext(OpenApi.annotations({
        identifier: "checkInGuests",
        summary: "Check a manifest row in, mark it no-show, or clear it",
        description:
          "Scope `checkins:write`; header `Idempotency-Key` required. Stores only the check-in: the booking, " +
          "guests and money never change and the booking system is not told. 404 when the row belongs to none " +
          "of the key's operators; 422 for a cancelled row (only `clear` is accepted). Setting the state the row " +
          "already has answers 200 and does not count against the daily `checkins` limit."
      }))
  )
  .annotate(RequiredScope, "checkins:write")
  .middleware(PartnerAuth)
  .prefix("/api/v1")
{}
