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
import {
  EXAMPLE_BALANCE_MINOR,
  EXAMPLE_BOOKING,
  EXAMPLE_LATER_BOOKING,
  EXAMPLE_PARTNER,
  EXAMPLE_TOUR
} from "../examples.js"
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
/** A timestamp field: description and example on the property (DateTimeString's own JSON Schema keeps neither). */
const At = (description: string, example: string) =>
  Schema.propertySignature(DateTimeString).annotations({ description, examples: [example] })
const AtOrNull = (description: string, example: string) =>
  Schema.NullOr(DateTimeString).annotations({ description, examples: [example] })

/** FJX-7K2M9Q's NOK 900.00 balance, collected on 7 October 2026 (examples.ts). */
const EXAMPLE_COLLECTED = {
  id: "8a2b4c6d-1e3f-4a5b-9c7d-0e1f2a3b4c5d",
  partner: EXAMPLE_PARTNER,
  booking: EXAMPLE_BOOKING,
  tour: EXAMPLE_TOUR,
  amount_minor: EXAMPLE_BALANCE_MINOR,
  currency: "NOK",
  charge_at: "2026-10-07T09:00:00.000Z",
  state: "collected" as const,
  retrying: false,
  refunded: false,
  attempts: 1,
  last_attempt_at: "2026-10-07T09:00:04.000Z",
  next_attempt_at: null,
  failure_message: null,
  final_deadline_at: "2026-10-10T09:00:00.000Z",
  collected_at: "2026-10-07T09:00:04.000Z"
}
/** FJX-4R6N2D's balance: the card was declined and the charge is tried again. */
const EXAMPLE_FAILED = {
  id: "6f1d3c2a-8b7e-4d5f-9a1b-2c3d4e5f6a7b",
  partner: EXAMPLE_PARTNER,
  booking: EXAMPLE_LATER_BOOKING,
  tour: EXAMPLE_TOUR,
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

const State = Schema.Literal(...PAY_LATER_STATES).annotations({
  description: "upcoming: not charged yet; failed: the charge failed (`retrying` says whether it is tried again); " +
    "collected: charged; cancelled: will not be charged because the booking was cancelled, or refunded after it " +
    "was charged (`refunded`)."
})

export const PayLaterCharge = Schema.Struct({
  id: Schema.UUID.annotations({ description: "The charge's id.", examples: [EXAMPLE_FAILED.id] }),
  partner: Partner,
  booking: FinanceBooking,
  tour: Schema.NullOr(Schema.String).annotations({
    description: "The tour's name as booked.",
    examples: [EXAMPLE_TOUR]
  }),
  amount_minor: Minor.annotations({
    description: "The balance charged (or to be charged), integer minor units.",
    examples: [EXAMPLE_FAILED.amount_minor]
  }),
  currency: Schema.String.annotations({ description: "ISO 4217 currency of the balance.", examples: ["NOK"] }),
  charge_at: At("When the balance is (or was) due to be charged.", EXAMPLE_FAILED.charge_at),
  state: State.annotations({ examples: [EXAMPLE_FAILED.state] }),
  retrying: Schema.Boolean.annotations({
    description: "true when the charge failed and the service tries again at `next_attempt_at`.",
    examples: [EXAMPLE_FAILED.retrying]
  }),
  refunded: Schema.Boolean.annotations({
    description: "true when the balance was collected and then refunded.",
    examples: [EXAMPLE_FAILED.refunded]
  }),
  attempts: Schema.NonNegativeInt.annotations({
    description: "Charge attempts made at the payment provider.",
    examples: [EXAMPLE_FAILED.attempts]
  }),
  last_attempt_at: AtOrNull("When the last attempt was made.", EXAMPLE_FAILED.last_attempt_at),
  next_attempt_at: AtOrNull(
    "When the next attempt is made (only while retrying); never after `final_deadline_at`.",
    EXAMPLE_FAILED.next_attempt_at
  ),
  failure_message: Schema.NullOr(Schema.String).annotations({
    description: "Why the last attempt failed, in plain words (no card data); null unless failed.",
    examples: [EXAMPLE_FAILED.failure_message]
  }),
  final_deadline_at: At(
    "Last moment the balance can be charged before the booking is at risk: charge_at + 72 hours, " +
      "but no later than 24 hours before the tour's day starts (and never before charge_at).",
    EXAMPLE_FAILED.final_deadline_at
  ),
  collected_at: AtOrNull("When the balance was collected.", EXAMPLE_COLLECTED.collected_at)
}).annotations({
  identifier: "PayLaterCharge",
  description: "A pay-later booking's balance charge. No guest details and no card data.",
  examples: [EXAMPLE_FAILED, EXAMPLE_COLLECTED]
})

const EXAMPLE_TOTALS = [
  { state: "failed" as const, currency: "NOK", charges: 1, amount_minor: EXAMPLE_FAILED.amount_minor },
  { state: "collected" as const, currency: "NOK", charges: 1, amount_minor: EXAMPLE_COLLECTED.amount_minor }
]

export const PayLaterTotal = Schema.Struct({
  state: State.annotations({ examples: [EXAMPLE_TOTALS[0]!.state] }),
  currency: Schema.String.annotations({ examples: ["NOK"] }),
  charges: Schema.NonNegativeInt.annotations({
    description: "Matching charges in this state and currency.",
    examples: [EXAMPLE_TOTALS[0]!.charges]
  }),
  amount_minor: Minor.annotations({
    description: "Their balances summed.",
    examples: [EXAMPLE_TOTALS[0]!.amount_minor]
  })
}).annotations({ identifier: "PayLaterTotal", examples: [EXAMPLE_TOTALS[0]!] })

export const PayLaterPage = Schema.Struct({
  totals: Schema.Array(PayLaterTotal).annotations({
    description: "Per state and currency, over every charge matching the filters (not only this page).",
    examples: [EXAMPLE_TOTALS]
  }),
  ...financePage(PayLaterCharge)
}).annotations({
  identifier: "PayLaterPage",
  examples: [{ totals: EXAMPLE_TOTALS, data: [EXAMPLE_COLLECTED, EXAMPLE_FAILED], next_cursor: null }]
})

export class PayLaterGroup extends HttpApiGroup.make("payLater")
  .annotate(OpenApi.Title, "Pay-later charges")
  .annotate(
    OpenApi.Description,
    "Charges of the pay-later bookings: upcoming, failed, collected and cancelled, with totals."
  )
  .add(
    HttpApiEndpoint.get("list", "/finance/pay-later")
      .setUrlParams(PayLaterParams)
      .addSuccess(PayLaterPage)
      .addError(InvalidRequest)
      .addError(NotFound)
      .annotateContext(OpenApi.annotations({
        identifier: "listPayLaterCharges",
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
