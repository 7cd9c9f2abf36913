/** The `chargebacks` group of the Partner API: GET /api/v1/finance/chargebacks (spec §2 "Finance records", §4). */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { DateString, DateTimeString } from "../../../domain/dates.js"
import { InvalidRequest, NotFound } from "../../../domain/errors.js"
import { Cursor, PartnerId } from "../../../http/params.js"
import { PartnerAuth, RequiredScope } from "../../auth/security.js"
import { Partner } from "../../bookings/booking.js"
import { FINANCE_MAX_DAYS, FinanceBooking, financeDayRange, financeLimit, financePage } from "../params.js"

export const ChargebackListParams = Schema.Struct({
  ...financeDayRange("day the service recorded the chargeback"),
  limit: financeLimit(50),
  cursor: Schema.optional(Cursor),
  partner_id: Schema.optional(PartnerId)
})

const MinorOrNull = (description: string) => Schema.NullOr(Schema.Int).annotations({ description })
const Day = (description: string) => Schema.NullOr(DateString).annotations({ description })

export const Chargeback = Schema.Struct({
  id: Schema.UUID.annotations({ description: "The service's id of the chargeback." }),
  partner: Partner.annotations({ description: "The operator of the booking's tour." }),
  booking: FinanceBooking.annotations({ description: "The disputed booking (no guest details)." }),
  amount_minor: MinorOrNull("The disputed amount in `currency`, when known."),
  currency: Schema.NullOr(Schema.String).annotations({ description: "ISO 4217 of the disputed amount." }),
  fee_minor: MinorOrNull("The chargeback fee in `currency`, when known."),
  settled: Schema.NullOr(
    Schema.Struct({
      currency: Schema.String.annotations({ description: "NOK: the payout's currency." }),
      amount_minor: MinorOrNull("What the payout lost to the chargeback."),
      fee_minor: MinorOrNull("The chargeback fee taken from the payout.")
    }).annotations({ identifier: "ChargebackSettlement" })
  ).annotations({
    description: "How the chargeback showed in a payout (settlement report); null when no payout shows it yet."
  }),
  dispute_reference: Schema.NullOr(Schema.String).annotations({ description: "The dispute desk's reference." }),
  dispute_status: Schema.NullOr(Schema.String).annotations({
    description: "The dispute desk's status: `triage`, `evidence_requested`, `responded`, `won`, `lost` or " +
      "`accepted`; null when only the settlement report knows of it.",
    examples: ["triage", "won", "lost"]
  }),
  reason: Schema.NullOr(Schema.String).annotations({
    description: "The card holder's reason, as the desk records it."
  }),
  transaction_date: Day("Day of the disputed card transaction."),
  registered_at: Day("Day the dispute was registered with the card scheme."),
  respond_by: Day("Last day to answer the dispute."),
  settled_on: Day("Day of the payout that took the chargeback."),
  first_seen_at: DateTimeString.annotations({ description: "When the service first learnt of the chargeback." })
}).annotations({
  identifier: "Chargeback",
  examples: [{
    id: "7c9e6679-7425-40de-944b-e07fc1f90ae7",
    partner: { id: "0b7c4f8e-1d1a-4a59-9a43-6c2f0f3b2a11", name: "Fjord Explorer AS" },
    booking: {
      id: "3fa85f64-5717-4562-b3fc-2c963f66afa6",
      confirmation_code: "FJX-7KQ2M9",
      experience_date: "2026-10-14",
      status: "CONFIRMED"
    },
    amount_minor: 129000,
    currency: "NOK",
    fee_minor: 15000,
    settled: { currency: "NOK", amount_minor: 129000, fee_minor: 15000 },
    dispute_reference: "DSP-2026-0412",
    dispute_status: "triage",
    reason: "Card holder does not recognise the transaction",
    transaction_date: "2026-10-02",
    registered_at: "2026-11-02",
    respond_by: "2026-11-30",
    settled_on: "2026-11-05",
    first_seen_at: "2026-11-05T06:30:12.000Z"
  }]
})
export type Chargeback = typeof Chargeback.Type

export const ChargebackPage = Schema.Struct(financePage(Chargeback)).annotations({ identifier: "ChargebackPage" })

export class ChargebacksGroup extends HttpApiGroup.make("chargebacks")
  .add(
    HttpApiEndpoint.get("list", "/finance/chargebacks")
      .setUrlParams(ChargebackListParams)
      .addSuccess(ChargebackPage)
      .addError(InvalidRequest)
      .addError(NotFound)
      .annotateContext(OpenApi.annotations({
        summary: "Chargebacks on the operators' bookings, newest first",
        description:
          "Scope `finance:read`. Disputed card payments of bookings of the key's operators' tours (or `partner_id`'s), " +
          "as the payment provider's settlement reports show them, with the dispute desk's facts. `from` and `to` " +
          "bound the UTC day the service first learnt of the chargeback (`first_seen_at`; with both at most " +
          `${FINANCE_MAX_DAYS} days). Newest first; keyset pages with \`next_cursor\` (bound to the filters). A ` +
          "dispute that matches none of the operators' bookings is never listed. Changes nothing. 404 when " +
          "`partner_id` is not one of the key's operators. See docs/api/chargebacks.md."
      }))
  )
  .annotate(RequiredScope, "finance:read")
  .middleware(PartnerAuth)
  .prefix("/api/v1")
{}
