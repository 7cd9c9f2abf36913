/** The `payouts` group of the Partner API: GET /api/v1/finance/payouts (spec §2 "Finance records", §4). */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { DateString } from "../../../domain/dates.js"
import { InvalidRequest, NotFound } from "../../../domain/errors.js"
import { Cursor, PartnerId } from "../../../http/params.js"
import { PartnerAuth, RequiredScope } from "../../auth/security.js"
import { Partner } from "../../bookings/booking.js"
import { FINANCE_MAX_DAYS, financeDayRange, financeLimit, financePage } from "../params.js"

export const PayoutListParams = Schema.Struct({
  ...financeDayRange("settlement day"),
  limit: financeLimit(50),
  cursor: Schema.optional(Cursor),
  partner_id: Schema.optional(PartnerId)
})

const Minor = (description: string) => Schema.Int.annotations({ description })
const Day = (description: string) => Schema.NullOr(DateString).annotations({ description })

export const PayoutAdjustment = Schema.Struct({
  type: Schema.String.annotations({
    description: "What the provider charged or credited, lower snake case: `service_provider_fee`, `chargeback`, " +
      "`chargeback_fee`, `partner_fee`, `previous_pending_liability` (a negative earlier payout carried over), or " +
      "another type the provider reports.",
    examples: ["chargeback", "chargeback_fee", "service_provider_fee", "partner_fee", "previous_pending_liability"]
  }),
  description: Schema.String.annotations({ description: "The provider's text for the line." }),
  date: Day("The line's day (YYYY-MM-DD), when the provider gives one."),
  debit_minor: Minor("Taken from the payout (zero or positive)."),
  credit_minor: Minor("Added to the payout (zero or positive)."),
  net_minor: Minor("credit_minor − debit_minor: the line's effect on the payout.")
}).annotations({ identifier: "PayoutAdjustment" })

export const Payout = Schema.Struct({
  partners: Schema.Array(Partner).annotations({
    description: "Every operator paid through this payout account (the legal entity): operators that share an " +
      "account see the same payouts."
  }),
  payout_id: Schema.String.annotations({ description: "The payment provider's id of the payout." }),
  settlement_date: Day("The day the provider settled (paid out), YYYY-MM-DD."),
  transactions_from: Day("First day of the transactions the payout covers."),
  transactions_to: Day("Last day of the transactions the payout covers."),
  report_type: Schema.NullOr(Schema.Literal("DAILY", "WEEKLY", "MONTHLY")).annotations({
    description: "The account's settlement frequency for this report."
  }),
  currency: Schema.String.annotations({ description: "ISO 4217; payouts are NOK as the provider reports them." }),
  sales_minor: Minor("Card sales settled."),
  refunds_minor: Minor("Refunds settled (negative)."),
  fees_minor: Minor("The provider's transaction fees, VAT excluded."),
  fee_vat_minor: Minor("VAT on the fees."),
  payout_minor: Minor(
    "What was paid out, as the provider reports it. Not always sales + refunds − fees: fee VAT and the " +
      "adjustments count too, and a negative payout (the charges exceeded the sales) is carried into the next " +
      "payout as a `previous_pending_liability` adjustment."
  ),
  adjustments: Schema.Array(PayoutAdjustment).annotations({
    description: "The report's itemised charges and credits, in the provider's order."
  })
}).annotations({
  identifier: "Payout",
  examples: [{
    partners: [
      { id: "0b7c4f8e-1d1a-4a59-9a43-6c2f0f3b2a11", name: "Fjord Explorer AS" },
      { id: "5d1e2c3b-7a8f-4e6d-9c0b-1a2b3c4d5e6f", name: "Arctic Whale Safari AS" }
    ],
    payout_id: "po_3f9a1c2b7d8e4f5a6b7c",
    settlement_date: "2026-11-24",
    transactions_from: "2026-11-23",
    transactions_to: "2026-11-23",
    report_type: "DAILY",
    currency: "NOK",
    sales_minor: 1259000,
    refunds_minor: -99800,
    fees_minor: 18885,
    fee_vat_minor: 4721,
    payout_minor: 1030794,
    adjustments: [
      {
        type: "chargeback",
        description: "Chargeback",
        date: "2026-11-24",
        debit_minor: 99800,
        credit_minor: 0,
        net_minor: -99800
      },
      {
        type: "chargeback_fee",
        description: "Chargeback fee",
        date: "2026-11-24",
        debit_minor: 5000,
        credit_minor: 0,
        net_minor: -5000
      }
    ]
  }]
})
export type Payout = typeof Payout.Type

export const PayoutPage = Schema.Struct(financePage(Payout)).annotations({ identifier: "PayoutPage" })
export type PayoutPage = typeof PayoutPage.Type

export class PayoutsGroup extends HttpApiGroup.make("payouts")
  .add(
    HttpApiEndpoint.get("list", "/finance/payouts")
      .setUrlParams(PayoutListParams)
      .addSuccess(PayoutPage)
      .addError(InvalidRequest)
      .addError(NotFound)
      .annotateContext(OpenApi.annotations({
        summary: "Payouts from the payment provider, newest settlement day first",
        description:
          "Scope `finance:read`. The payment provider's payouts (settlement reports) to the payout accounts of the " +
          "key's operators (or `partner_id`'s), imported daily. A payout belongs to the legal entity whose account " +
          "it went to: operators sharing an account each see it, with every one of them in `partners`. `from` and " +
          `\`to\` bound the settlement day (UTC; with both at most ${FINANCE_MAX_DAYS} days). Newest settlement day ` +
          "first; keyset pages with `next_cursor` (bound to the filters). Amounts are NOK minor units as the " +
          "provider reports them. 404 when `partner_id` is not one of the key's operators. See docs/api/payouts.md."
      }))
  )
  .annotate(RequiredScope, "finance:read")
  .middleware(PartnerAuth)
  .prefix("/api/v1")
{}
