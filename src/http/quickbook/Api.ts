/** The Quickbook (desk sales) API v1 contract. Its OpenAPI document is generated from these definitions. */
import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { QbBadRequest, QbForbidden, QbRateLimited, QbUnauthorized } from "../../domain/quickbookErrors.js"
import { Budget, QuickbookAuth } from "./security.js"

export const QUICKBOOK_PREFIX = "/api/quickbook/v1"

export const DeskTour = Schema.Struct({
  activityId: Schema.String.annotations({ description: "Tour id (UUID); pass it to slots and quote." }),
  operatorName: Schema.String,
  tourName: Schema.String,
  timeZone: Schema.String.annotations({ description: "IANA zone of the tour's start times." }),
  currency: Schema.String.annotations({ description: "ISO 4217 currency of its prices." }),
  durationMinutes: Schema.NullOr(Schema.Int),
  departureTimes: Schema.Array(Schema.String).annotations({
    description: "Usual local start times (HH:MM); the slots of a day are authoritative."
  })
}).annotations({ identifier: "DeskTour" })

export const DeskTourList = Schema.Struct({
  terminal: Schema.Struct({ id: Schema.String, name: Schema.String, operatorName: Schema.String }),
  tours: Schema.Array(DeskTour)
}).annotations({ identifier: "DeskTourList" })

export class ToursGroup extends HttpApiGroup.make("tours")
  .add(
    HttpApiEndpoint.get("list", "/tours")
        .addSuccess(DeskTourList)
        .addError(QbBadRequest)
        .addError(QbUnauthorized)
        .addError(QbForbidden)
        .addError(QbRateLimited)
        .annotate(OpenApi.Summary, "Tours this terminal can sell")
        .annotate(
          OpenApi.Description,
          "Reads budget. The published tours of the terminal's selling operator, by name. Start times with seats " +
            "and guest prices for a day come from the slots endpoint."
        )
  )
  .annotate(Budget, "reads")
  .middleware(QuickbookAuth)
  .prefix(QUICKBOOK_PREFIX)
{}

export class QuickbookApi extends HttpApi.make("quickbook")
  .add(ToursGroup)
  .annotate(OpenApi.Title, "Quickbook API")
  .annotate(OpenApi.Version, "1.0.0")
  .annotate(
    OpenApi.Description,
    "Desk sales for approved integration clients. Every call sends `Authorization: Bearer svcqb_live_...` (or " +
      "`svcqb_test_...`) and `Quickbook-Terminal: <terminal id>`. Errors are `{error: {code, clerkMessage, reference?}}`; " +
      "branch on `code`, show `clerkMessage`. The clerk message is in Norwegian (bokmål) when `Accept-Language` ranks " +
      "`nb`, `no` or `nn` above English, otherwise in English. Every response carries `X-Request-Id` and " +
      "`Cache-Control: no-store`. Per-terminal limits a minute: writes (quote, reserve, release) 60, books 60, " +
      "reads (tours, slots, sales, ticket) 300; past one, 429 `rate_limited` with `Retry-After`."
  )
{}
