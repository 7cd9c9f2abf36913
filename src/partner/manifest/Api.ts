/** The `manifest` group of the Partner API: the manifest of one departure day. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { IsoDate } from "../../domain/dates.js"
import { NotFound } from "../../domain/errors.js"
import { PartnerId } from "../../http/params.js"
import { PartnerAuth, RequiredScope } from "../auth/security.js"
import { Manifest } from "./schemas.js"

export const ManifestParams = Schema.Struct({
  date: Schema.propertySignature(IsoDate).annotations({
    description: "Local departure day in each operator's time zone (YYYY-MM-DD). Required.",
    missingMessage: () => "is required: the local departure day YYYY-MM-DD"
  }),
  partner_id: Schema.optional(PartnerId)
})

export class ManifestGroup extends HttpApiGroup.make("manifest")
  .annotate(OpenApi.Title, "Manifest")
  .annotate(
    OpenApi.Description,
    "The passengers of one departure day, grouped into departures, with their check-in state."
  )
  .add(
    HttpApiEndpoint.get("day", "/manifest")
      .setUrlParams(ManifestParams)
      .addSuccess(Manifest)
      .addError(NotFound)
      .annotateContext(OpenApi.annotations({
        identifier: "getManifest",
        summary: "The manifest of one departure day",
        description:
          "Scope `manifest:read`. Passengers of every sales channel departing on `date` (the local day in each " +
          "operator's time zone), read from the mirror of the booking system (see `synced_at`). Live rows " +
          "(CONFIRMED, RESERVED) are grouped into departures by local start time, product and rate; CANCELLED rows " +
          "are listed in `cancelled` only and counted nowhere. Counts are passengers. Rows of a booking-system account " +
          "shared by several operators appear once. Guest `email` and `phone` keys are present only with " +
          "`guests.contact:read`. 404 when `partner_id` is not one of the key's operators."
      }))
  )
  .annotate(RequiredScope, "manifest:read")
  .middleware(PartnerAuth)
  .prefix("/api/v1")
{}
