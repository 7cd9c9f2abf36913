/** The `payouts` group of the Partner API: GET /api/v1/finance/payouts (spec §2 "Finance records", §4). */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { DateString } from "../../../domain/dates.js"
import { InvalidRequest, NotFound } from "../../../domain/errors.js"
import { Cursor, PartnerId } from "../../../http/params.js"
import { PartnerAuth, RequiredScope } from "../../auth/security.js"
import { Partner } from "../../bookings/booking.js"
import { EXAMPLE_ACCOUNT_PARTNERS, EXAMPLE_BALANCE_MINOR, EXAMPLE_CHARGEBACK_FEE_MINOR } from "../examples.js"
import { FINANCE_MAX_DAYS, financeDayRange, financeLimit, financePage } from "../params.js"

export const PayoutListParams = Schema.Struct({
  ...financeDayRange("settlement day"),
  limit: financeLimit(50),
  cursor: Schema.optional(Cursor),
  partner_id: Schema.optional(PartnerId)
})

const Minor = (description: string, example: number) => Schema.Int.annotations({ description, examples: [example] })
const Day = (description: string, example: string) =>
  Schema.NullOr(DateString).annotations({ description, examples: [example] })

/** The payout of 5 November 2026 (examples.ts): it lost the disputed balance of FJX-7K2M9Q and its fee. */
const EXAMPLE_ADJUSTMENTS = [
  {
    type: "chargeback",
    description: "Chargeback",
    date: "2026-11-05",
    debit_minor: EXAMPLE_BALANCE_MINOR,
    credit_minor: 0,
    net_minor: -EXAMPLE_BALANCE_MINOR
  },
  {
    type: "chargeback_fee",
    description: "Chargeback fee",
    date: "2026-11-05",
    debit_minor: EXAMPLE_CHARGEBACK_FEE_MINOR,
    credit_minor: 0,
    net_minor: -EXAMPLE_CHARGEBACK_FEE_MINOR
  }
]
const EXAMPLE_PAYOUT = {
  partners: EXAMPLE_ACCOUNT_PARTNERS,
  payout_id: "po_3f9a1c2b7d8e4f5a6b7c",
  settlement_date: "2026-11-05",
  transactions_from: "2026-11-04",
  transactions_to: "2026-11-04",
  report_type: "DAILY" as const,
  currency: "NOK",
  sales_minor: 1259000,
  refunds_minor: -99800,
  fees_minor: 18885,
  fee_vat_minor: 4721,
  // 1 259 000 − 99 800 − 18 885 − 4 721 − 90 000 − 15 000
  payout_minor: 1030594,
  adjustments: EXAMPLE_ADJUSTMENTS
}

export const PayoutAdjustment = Schema.Struct({
  type: Schema.String.annotations({
    description: "What the provider charged or credited, lower snake case: `service_provider_fee`, `chargeback`, " +
      "`chargeback_fee`, `partner_fee`, `previous_pending_liability` (a negative earlier payout carried over), or " +
      "another type the provider reports.",
    examples: ["chargeback", "chargeback_fee", "service_provider_fee", "partner_fee", "previous_pending_liability"]
  }),
  description: Schema.String.annotations({
    description: "The provider's text for the line.",
    examples: ["Chargeback"]
  }),
  date: Day("The line's day (YYYY-MM-DD), when the provider gives one.", "2026-11-05"),
  debit_minor: Minor("Taken from the payout (zero or positive).", EXAMPLE_BALANCE_MINOR),
  credit_minor: Minor("Added to the payout (zero or positive).", 0),
  net_minor: Minor("credit_minor − debit_minor: the line's effect on the payout.", -EXAMPLE_BALANCE_MINOR)
}).annotations({ identifier: "PayoutAdjustment", examples: [EXAMPLE_ADJUSTMENTS[0]!] })

export const Payout = Schema.Struct({
  partners: Schema.Array(Partner).annotations({
    description: "Every operator paid through this payout account (the legal entity): operators that share an " +
      "account see the same payouts.",
    examples: [EXAMPLE_ACCOUNT_PARTNERS]
  }),
  payout_id: Schema.String.annotations({
    description: "The payment provider's id of the payout.",
    examples: [EXAMPLE_PAYOUT.payout_id]
  }),
  settlement_date: Day("The day the provider settled (paid out), YYYY-MM-DD.", EXAMPLE_PAYOUT.settlement_date),
  transactions_from: Day("First day of the transactions the payout covers.", EXAMPLE_PAYOUT.transactions_from),
  transactions_to: Day("Last day of the transactions the payout covers.", EXAMPLE_PAYOUT.transactions_to),
  report_type: Schema.NullOr(Schema.Literal("DAILY", "WEEKLY", "MONTHLY")).annotations({
    description: "The account's settlement frequency for this report.",
    examples: [EXAMPLE_PAYOUT.report_type]
  }),
  currency: Schema.String.annotations({
    description: "ISO 4217; payouts are NOK as the provider reports them.",
    examples: ["NOK"]
  }),
  sales_minor: Minor("Card sales settled.", EXAMPLE_PAYOUT.sales_minor),
  refunds_minor: Minor("Refunds settled (negative).", EXAMPLE_PAYOUT.refunds_minor),
  fees_minor: Minor("The provider's transaction fees, VAT excluded.", EXAMPLE_PAYOUT.fees_minor),
  fee_vat_minor: Minor("VAT on the fees.", EXAMPLE_PAYOUT.fee_vat_minor),
  payout_minor: Minor(
    "What was paid out, as the provider reports it. Not always sales + refunds − fees: fee VAT and the " +
      "adjustments count too, and a negative payout (the charges exceeded the sales) is carried into the next " +
      "payout as a `previous_pending_liability` adjustment.",
    EXAMPLE_PAYOUT.payout_minor
  ),
  adjustments: Schema.Array(PayoutAdjustment).annotations({
    description: "The report's itemised charges and credits, in the provider's order."
  })
}).annotations({ identifier: "Payout", examples: [EXAMPLE_PAYOUT] })
export type Payout = typeof Payout.Type

export const PayoutPage = Schema.Struct(financePage(Payout)).annotations({
  identifier: "PayoutPage",
  examples: [{ data: [EXAMPLE_PAYOUT], next_cursor: null }]
})
export type PayoutPage = typeof PayoutPage.Type

export class PayoutsGroup extends HttpApiGroup.make("payouts")
  .annotate(OpenApi.Title, "Payouts")
  .annotate(OpenApi.Description, "The payment provider's settlements to the operators' accounts, newest first.")
  .add(
    HttpApiEndpoint.get("list", "/finance/payouts")
      .setUrlParams(PayoutListParams)
      .addSuccess(PayoutPage)
      .addError(InvalidRequest)
      .addError(NotFound)
      .annotateContext(OpenApi.annotations({
        identifier: "listPayouts",
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
