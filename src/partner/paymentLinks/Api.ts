/** The `paymentLinks` group of the Partner API: email the guest a link to pay the balance (a write). */
import { HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { PartnerAuth, RequiredScope } from "../auth/security.js"
import { writeOnId } from "../writes/writeEndpoint.js"
import { PaymentLinkKind } from "./rules.js"

/**
 * An empty JSON object: the service decides the amount, so a member (`{"amount": 5}`) is refused,
 * 400 naming it, rather than silently ignored. `Schema.Struct({})` would take any value but null, an
 * array or a number too.
 */
export const PaymentLinkRequest = Schema.Record({
  key: Schema.String,
  value: Schema.Never.annotations({ message: () => "is not a field of this request: send `{}`" })
}).annotations({
  message: () => "must be a JSON object (`{}`)",
  jsonSchema: { type: "object", additionalProperties: false }
}).pipe(
  Schema.transform(Schema.Struct({}), { strict: true, decode: () => ({}), encode: (body) => body })
).annotations({
  identifier: "PaymentLinkRequest",
  description: "No fields: the service decides the amount."
})

export const PaymentLinkResult = Schema.Struct({
  id: Schema.UUID.annotations({ description: "The id sent: a booking id or a manifest row id." }),
  kind: PaymentLinkKind.annotations({
    description:
      "`deferred_balance`: the balance of a pay-later booking; `provider_balance`: the balance the booking system says is due."
  }),
  url: Schema.String.annotations({ description: "The payment page. Share it only with the guest." }),
  amount_minor: Schema.Int,
  currency: Schema.String.annotations({ description: "ISO 4217" }),
  emailed: Schema.Boolean.annotations({
    description:
      "true when the guest has this link by email: sent by this call, or by a call for the same link in the last " +
      "10 minutes (not sent again); false when the link exists but the email did not go out."
  })
}).annotations({ identifier: "PaymentLinkResult" })

export class PaymentLinksGroup extends HttpApiGroup.make("paymentLinks")
  .annotate(OpenApi.Title, "Payment links")
  .annotate(
    OpenApi.Description,
    "Email the guest a link to pay the balance a booking still owes. A write: `Idempotency-Key`, daily limit, audited."
  )
  .add(
    writeOnId("paymentLink", "/bookings/:id/payment-link")
      .setPayload(PaymentLinkRequest)
      .addSuccess(PaymentLinkResult)
      .annotateContext(OpenApi.annotations({
        identifier: "createPaymentLink",
        summary: "Email the guest a link to pay the balance owed",
        description:
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
      }))
  )
  .annotate(RequiredScope, "payment_links:write")
  .middleware(PartnerAuth)
  .prefix("/api/v1")
{}
