/** The `chargebacks` group of the Partner API: GET /api/v1/finance/chargebacks (spec §2 "Finance records", §4). */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { DateString, DateTimeString } from "../../../domain/dates.js"
import { InvalidRequest, NotFound } from "../../../domain/errors.js"
import { Cursor, PartnerId } from "../../../http/params.js"
import { PartnerAuth, RequiredScope } from "../../auth/security.js"
import { Partner } from "../../bookings/booking.js"
import { EXAMPLE_BALANCE_MINOR, EXAMPLE_BOOKING, EXAMPLE_CHARGEBACK_FEE_MINOR, EXAMPLE_PARTNER } from "../examples.js"
import { FINANCE_MAX_DAYS, FinanceBooking, financeDayRange, financeLimit, financePage } from "../params.js"

export const ChargebackListParams = Schema.Struct({
  ...financeDayRange("day the service recorded the chargeback"),
  limit: financeLimit(50),
  cursor: Schema.optional(Cursor),
  partner_id: Schema.optional(PartnerId)
})

const MinorOrNull = (description: string, example: number) =>
  Schema.NullOr(Schema.Int).annotations({ description, examples: [example] })
const Day = (description: string, example: string) =>
  Schema.NullOr(DateString).annotations({ description, examples: [example] })

/** FJX-7K2M9Q's balance charge of 7 October 2026, disputed; the payout of 5 November took it (examples.ts). */
const EXAMPLE_SETTLED = {
  currency: "NOK",
  amount_minor: EXAMPLE_BALANCE_MINOR,
  fee_minor: EXAMPLE_CHARGEBACK_FEE_MINOR
}
const EXAMPLE_CHARGEBACK = {
  id: "7c9e6679-7425-40de-944b-e07fc1f90ae7",
  partner: EXAMPLE_PARTNER,
  booking: EXAMPLE_BOOKING,
  amount_minor: EXAMPLE_BALANCE_MINOR,
  currency: "NOK",
  fee_minor: EXAMPLE_CHARGEBACK_FEE_MINOR,
  settled: EXAMPLE_SETTLED,
  dispute_reference: "DSP-2026-0412",
  dispute_status: "triage",
  reason: "Card holder does not recognise the transaction",
  transaction_date: "2026-10-07",
  registered_at: "2026-11-02",
  respond_by: "2026-11-30",
  settled_on: "2026-11-05",
  first_seen_at: "2026-11-05T06:30:12.000Z"
}

export const Chargeback = Schema.Struct({
  id: Schema.UUID.annotations({
    description: "The service's id of the chargeback.",
    examples: [EXAMPLE_CHARGEBACK.id]
  }),
  partner: Partner.annotations({ description: "The operator of the booking's tour.", examples: [EXAMPLE_PARTNER] }),
  booking: FinanceBooking.annotations({
    description: "The disputed booking (no guest details).",
    examples: [EXAMPLE_BOOKING]
  }),
  amount_minor: MinorOrNull("The disputed amount in `currency`, when known.", EXAMPLE_CHARGEBACK.amount_minor),
  currency: Schema.NullOr(Schema.String).annotations({
    description: "ISO 4217 of the disputed amount.",
    examples: ["NOK"]
  }),
  fee_minor: MinorOrNull("The chargeback fee in `currency`, when known.", EXAMPLE_CHARGEBACK.fee_minor),
  settled: Schema.NullOr(
    Schema.Struct({
      currency: Schema.String.annotations({ description: "NOK: the payout's currency.", examples: ["NOK"] }),
      amount_minor: MinorOrNull("What the payout lost to the chargeback.", EXAMPLE_SETTLED.amount_minor),
      fee_minor: MinorOrNull("The chargeback fee taken from the payout.", EXAMPLE_SETTLED.fee_minor)
    }).annotations({ identifier: "ChargebackSettlement", examples: [EXAMPLE_SETTLED] })
  ).annotations({
    description: "How the chargeback showed in a payout (settlement report); null when no payout shows it yet.",
    examples: [EXAMPLE_SETTLED]
  }),
  dispute_reference: Schema.NullOr(Schema.String).annotations({
    description: "The dispute desk's reference.",
    examples: [EXAMPLE_CHARGEBACK.dispute_reference]
  }),
  dispute_status: Schema.NullOr(Schema.String).annotations({
    description: "The dispute desk's status: `triage`, `evidence_requested`, `responded`, `won`, `lost` or " +
      "`accepted`; null when only the settlement report knows of it.",
    examples: ["triage", "won", "lost"]
  }),
  reason: Schema.NullOr(Schema.String).annotations({
    description: "The card holder's reason, as the desk records it.",
    examples: [EXAMPLE_CHARGEBACK.reason]
  }),
  transaction_date: Day("Day of the disputed card transaction.", EXAMPLE_CHARGEBACK.transaction_date),
  registered_at: Day("Day the dispute was registered with the card scheme.", EXAMPLE_CHARGEBACK.registered_at),
  respond_by: Day("Last day to answer the dispute.", EXAMPLE_CHARGEBACK.respond_by),
  settled_on: Day("Day of the payout that took the chargeback.", EXAMPLE_CHARGEBACK.settled_on),
  first_seen_at: Schema.propertySignature(DateTimeString).annotations({
    description: "When the service first learnt of the chargeback.",
    examples: [EXAMPLE_CHARGEBACK.first_seen_at]
  })
}).annotations({
  identifier: "Chargeback",
  examples: [EXAMPLE_CHARGEBACK]
})
export type Chargeback = typeof Chargeback.Type

export const ChargebackPage = Schema.Struct(financePage(Chargeback)).annotations({
  identifier: "ChargebackPage",
  examples: [{ data: [EXAMPLE_CHARGEBACK], next_cursor: null }]
})

export class ChargebacksGroup extends HttpApiGroup.make("chargebacks")
  .annotate(OpenApi.Title, "Chargebacks")
  .annotate(OpenApi.Description, "Card chargebacks recorded on the operators' payments, newest first.")
  .add(
    HttpApiEndpoint.get("list", "/finance/chargebacks")
      .setUrlParams(ChargebackListParams)
      .addSuccess(ChargebackPage)
      .addError(InvalidRequest)
      .addError(NotFound)
      .annotateContext(OpenApi.annotations({
        identifier: "listChargebacks",
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
