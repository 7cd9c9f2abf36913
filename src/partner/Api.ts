/**
 * The Partner API v1 contract: the groups of the feature folders (each `<feature>/Api.ts`), plus
 * `me` and the health probes. The OpenAPI document is generated from these definitions.
 */
import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { DateTimeString } from "../domain/dates.js"
import { AnalyticsGroup } from "./analytics/Api.js"
import type { AuthenticatedKey } from "./auth/KeyAuth.js"
import { Scope } from "./auth/scopes.js"
import { PartnerAuth } from "./auth/security.js"
import { BookingsGroup } from "./bookings/Api.js"
import { Partner } from "./bookings/booking.js"
import { CancelsGroup } from "./cancels/Api.js"
import { CheckinsGroup } from "./checkins/Api.js"
import { CollectGroup } from "./collect/Api.js"
import { ChargebacksGroup } from "./finance/chargebacks/Api.js"
import { InvoiceFilesGroup, InvoicesGroup } from "./finance/invoices/Api.js"
import { PayLaterGroup } from "./finance/payLater/Api.js"
import { PayoutsGroup } from "./finance/payouts/Api.js"
import { StatementsGroup } from "./finance/statements/Api.js"
import { ManifestGroup } from "./manifest/Api.js"
import { PaymentLinksGroup } from "./paymentLinks/Api.js"
import { ReschedulesGroup } from "./reschedules/Api.js"
import { SalesGroup } from "./sales/Api.js"
import { ToursGroup } from "./tours/Api.js"

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

/** The `GET /me` body for a key (also the assistant's `me` tool: src/assistant/tools/me.ts). */
export const meOf = (key: AuthenticatedKey): typeof Me.Type => ({
  key: {
    id: key.id,
    name: key.name,
    scopes: key.scopes,
    created_at: key.createdAt.toISOString(),
    expires_at: key.expiresAt.toISOString()
  },
  partner: key.partners[0]!,
  partners: key.partners
})

/** The guides the reference landing links (docs/api/<section>.md, served under /api/v1/docs/). */
const GUIDES = [
  ["Authentication", "authentication.md"],
  ["Pagination", "pagination.md"],
  ["Rate and daily limits", "rate-limits.md"],
  ["Errors", "errors.md"],
  ["Idempotency", "writes.md#idempotency-key"],
  ["Versioning", "versioning.md"],
  ["Changelog", "changelog.md"]
].map(([title, page]) => `- [${title}](/api/v1/docs/${page})`).join("\n")
const GUIDE_LIST = `Guides:\n\n${GUIDES}`

export class MeGroup extends HttpApiGroup.make("me")
  .annotate(OpenApi.Title, "Key")
  .annotate(OpenApi.Description, "The key you call with and the operators it acts for right now.")
  .add(
    HttpApiEndpoint.get("me", "/me")
      .addSuccess(Me)
      .annotate(OpenApi.Identifier, "getMe")
      .annotate(OpenApi.Summary, "The key and the operators it acts for")
      .annotate(OpenApi.Description, "Any valid key. `partners` lists the operators the key acts for right now.")
  )
  .middleware(PartnerAuth)
  .prefix("/api/v1")
{}

export const Health = Schema.Struct({ status: Schema.Literal("ok") })

export class HealthGroup extends HttpApiGroup.make("health")
  .add(HttpApiEndpoint.get("healthz", "/healthz").addSuccess(Health))
  .add(HttpApiEndpoint.get("readyz", "/readyz").addSuccess(Health))
  .annotate(OpenApi.Exclude, true)
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
  .add(SalesGroup)
  .add(CollectGroup)
  .add(AnalyticsGroup)
  .add(StatementsGroup)
  .add(PayLaterGroup)
  .add(PayoutsGroup)
  .add(ChargebacksGroup)
  .add(InvoicesGroup)
  .add(InvoiceFilesGroup)
  .annotate(OpenApi.Title, "Partner API")
  .annotate(OpenApi.Version, "1.0.0")
  .annotate(
    OpenApi.Description,
    "Read bookings, the daily manifest, sales, analytics, finance records and the tour catalogue of the operators on your key. Money is integer minor units with an ISO 4217 currency; " +
      "timestamps are ISO 8601; departure times are local HH:MM with an IANA time zone. Every error is " +
      "RFC 9457 problem details (application/problem+json) with a `request_id`.\n\n" +
      GUIDE_LIST
  )
{}
