/**
 * The `payLater` group of the Partner API: GET /api/v1/finance/pay-later (spec §2 "Pay-later
 * charge", §3, §4; docs/api/pay-later.md).
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { DateTimeString } from "../../../domain/dates.js"
import { InvalidRequest, NotFound } from "../../../domain/errors.js"
import { Cursor, oneOf, PartnerId } from "../../../http/params.js"
import { PartnerAuth, RequiredScope } from "../../auth/security.js"
import { Partner } from "../../bookings/booking.js"
import { FinanceBooking, financeDayRange, financeLimit, financePage } from "../params.js"
import { PAY_LATER_DEFAULT_LIMIT, PAY_LATER_STATES } from "./rules.js"

export const PayLaterParams = Schema.Struct({
  state: Schema.optional(oneOf(PAY_LATER_STATES)).annotations({
    description: "upcoming, failed, collected or cancelled; omit for every state."
  }),
  ...financeDayRange("charge day"),
  limit: financeLimit(PAY_LATER_DEFAULT_LIMIT),
  cursor: Schema.optional(Cursor),
  partner_id: Schema.optional(PartnerId)
})

const Minor = Schema.Int.annotations({ description: "Integer minor units." })
const State = Schema.Literal(...PAY_LATER_STATES).annotations({
  description: "upcoming: not charged yet; failed: the charge failed (`retrying` says whether it is tried again); " +
    "collected: charged; cancelled: will not be charged because the booking was cancelled, or refunded after it " +
    "was charged (`refunded`)."
})

export const PayLaterCharge = Schema.Struct({
  id: Schema.UUID.annotations({ description: "The charge's id." }),
  partner: Partner,
  booking: FinanceBooking,
  tour: Schema.NullOr(Schema.String).annotations({ description: "The tour's name as booked." }),
  amount_minor: Minor.annotations({ description: "The balance charged (or to be charged), integer minor units." }),
  currency: Schema.String.annotations({ description: "ISO 4217 currency of the balance." }),
  charge_at: DateTimeString.annotations({ description: "When the balance is (or was) due to be charged." }),
  state: State,
  retrying: Schema.Boolean.annotations({
    description: "true when the charge failed and the service tries again at `next_attempt_at`."
  }),
  refunded: Schema.Boolean.annotations({ description: "true when the balance was collected and then refunded." }),
  attempts: Schema.NonNegativeInt.annotations({ description: "Charge attempts made at the payment provider." }),
  last_attempt_at: Schema.NullOr(DateTimeString).annotations({ description: "When the last attempt was made." }),
  next_attempt_at: Schema.NullOr(DateTimeString).annotations({
    description: "When the next attempt is made (only while retrying); never after `final_deadline_at`."
  }),
  failure_message: Schema.NullOr(Schema.String).annotations({
    description: "Why the last attempt failed, in plain words (no card data); null unless failed."
  }),
  final_deadline_at: DateTimeString.annotations({
    description: "Last moment the balance can be charged before the booking is at risk: charge_at + 72 hours, " +
      "but no later than 24 hours before the tour's day starts (and never before charge_at)."
  }),
  collected_at: Schema.NullOr(DateTimeString).annotations({ description: "When the balance was collected." })
}).annotations({
  identifier: "PayLaterCharge",
  description: "A pay-later booking's balance charge. No guest details and no card data."
})

export const PayLaterTotal = Schema.Struct({
  state: State,
  currency: Schema.String,
  charges: Schema.NonNegativeInt.annotations({ description: "Matching charges in this state and currency." }),
  amount_minor: Minor.annotations({ description: "Their balances summed." })
}).annotations({ identifier: "PayLaterTotal" })

const EXAMPLE_CHARGE = {
  id: "6f1d3c2a-8b7e-4d5f-9a1b-2c3d4e5f6a7b",
  partner: { id: "0b7c4f8e-1d1a-4a59-9a43-6c2f0f3b2a11", name: "Fjord Explorer AS" },
  booking: {
    id: "3e9a1f0c-5b2d-4c8e-a7f6-1d2e3f4a5b6c",
    confirmation_code: "FJX-4821",
    experience_date: "2026-12-03",
    status: "CONFIRMED" as const
  },
  tour: "Geirangerfjord Cruise",
  amount_minor: 64900,
  currency: "NOK",
  charge_at: "2026-11-26T09:00:00.000Z",
  state: "failed" as const,
  retrying: true,
  refunded: false,
  attempts: 1,
  last_attempt_at: "2026-11-26T09:00:12.000Z",
  next_attempt_at: "2026-11-26T15:00:12.000Z",
  failure_message: "the card was declined for now (INSUFFICIENT_FUNDS); the charge is tried again",
  final_deadline_at: "2026-11-29T09:00:00.000Z",
  collected_at: null
}

export const PayLaterPage = Schema.Struct({
  totals: Schema.Array(PayLaterTotal).annotations({
    description: "Per state and currency, over every charge matching the filters (not only this page)."
  }),
  ...financePage(PayLaterCharge)
}).annotations({
  identifier: "PayLaterPage",
  examples: [{
    totals: [{ state: "failed", currency: "NOK", charges: 1, amount_minor: 64900 }],
    data: [EXAMPLE_CHARGE],
    next_cursor: null
  }]
})

export class PayLaterGroup extends HttpApiGroup.make("payLater")
  .add(
    HttpApiEndpoint.get("list", "/finance/pay-later")
      .setUrlParams(PayLaterParams)
      .addSuccess(PayLaterPage)
      .addError(InvalidRequest)
      .addError(NotFound)
      .annotateContext(OpenApi.annotations({
        summary: "Pay-later charges, by charge time",
        description: "Scope `finance:read`. The balance charges of the operators' pay-later bookings, ordered by " +
          "`charge_at` (then id), keyset pages with `next_cursor` (bound to the filters). `from`/`to` are UTC " +
          "charge days (inclusive; with both at most 366 days). `totals[]` sums every matching charge per state and " +
          "currency, not only the page. 404 when `partner_id` is not one of the key's operators. See " +
          "docs/api/pay-later.md for the states and transitions."
      }))
  )
  .annotate(RequiredScope, "finance:read")
  .middleware(PartnerAuth)
  .prefix("/api/v1")
{}
