/**
 * The `statements` group of the Partner API: the monthly commission statement per operator (spec §2
 * "Finance records" Statement, §4 GET /finance/statements, §8). Read from the commission ledger
 * (`commission_entries`, written by triggers on bookings: migration 0032, src/commissions/).
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ENTRY_TYPES } from "../../../commissions/ledger.js"
import { DateString, DateTimeString } from "../../../domain/dates.js"
import { InvalidRequest, NotFound } from "../../../domain/errors.js"
import { PartnerId } from "../../../http/params.js"
import { PartnerAuth, RequiredScope } from "../../auth/security.js"
import { Partner } from "../../bookings/booking.js"
import {
  EXAMPLE_BOOKING,
  EXAMPLE_COMMISSION_MINOR,
  EXAMPLE_COMMISSION_RATE,
  EXAMPLE_DEPOSIT_MINOR,
  EXAMPLE_PARTNER,
  EXAMPLE_PRICE_MINOR,
  EXAMPLE_TOUR
} from "../examples.js"
import { FIRST_MONTH, LAST_MONTH, MONTH_PATTERN, STATEMENT_MAX_ENTRIES, STATEMENTS_MAX_OPERATORS } from "./rules.js"

export const Month = Schema.String.pipe(
  Schema.pattern(MONTH_PATTERN, { message: () => "must be a month YYYY-MM (UTC), e.g. 2026-10" })
).annotations({
  jsonSchema: { type: "string", pattern: "^[0-9]{4}-(0[1-9]|1[0-2])$", maxLength: 7, example: "2026-10" }
})

export const StatementsParams = Schema.Struct({
  month: Schema.optional(Month).annotations({
    description: `The UTC calendar month YYYY-MM, ${FIRST_MONTH} to ${LAST_MONTH}; default: the month before the ` +
      "current UTC month."
  }),
  partner_id: Schema.optional(PartnerId)
})

const Minor = (description: string, example: number) =>
  Schema.Int.annotations({ description: `${description} Integer minor units.`, examples: [example] })
const Count = (description: string, example: number) =>
  Schema.NonNegativeInt.annotations({ description, examples: [example] })
/** A timestamp field: description and example on the property (DateTimeString's own JSON Schema keeps neither). */
const At = (description: string, example: string) =>
  Schema.propertySignature(DateTimeString).annotations({ description, examples: [example] })

/**
 * October 2026 of Fjord Explorer AS (examples.ts): FJX-7K2M9Q sold (NOK 300.00 of its price paid at
 * booking, the balance later), and FJX-3P8T4W sold and cancelled (its commission given back).
 */
const EXAMPLE_ENTRIES = [
  {
    type: "sale" as const,
    occurred_at: "2026-10-02T09:12:00.000Z",
    confirmation_code: EXAMPLE_BOOKING.confirmation_code,
    tour: EXAMPLE_TOUR,
    experience_date: EXAMPLE_BOOKING.experience_date,
    gross_minor: EXAMPLE_PRICE_MINOR,
    commission_rate_percent: EXAMPLE_COMMISSION_RATE,
    commission_minor: EXAMPLE_COMMISSION_MINOR,
    reserve_fee_minor: EXAMPLE_DEPOSIT_MINOR
  },
  {
    type: "sale" as const,
    occurred_at: "2026-10-05T14:40:00.000Z",
    confirmation_code: "FJX-3P8T4W",
    tour: EXAMPLE_TOUR,
    experience_date: "2026-10-20",
    gross_minor: 60000,
    commission_rate_percent: EXAMPLE_COMMISSION_RATE,
    commission_minor: 9000,
    reserve_fee_minor: 0
  },
  {
    type: "cancellation" as const,
    occurred_at: "2026-10-06T08:00:00.000Z",
    confirmation_code: "FJX-3P8T4W",
    tour: EXAMPLE_TOUR,
    experience_date: "2026-10-20",
    gross_minor: -60000,
    commission_rate_percent: EXAMPLE_COMMISSION_RATE,
    commission_minor: -9000,
    reserve_fee_minor: 0
  }
]
const EXAMPLE_SECTION = {
  currency: "NOK",
  sales: 2,
  cancellations: 1,
  differences: 0,
  gross_minor: EXAMPLE_PRICE_MINOR,
  commission_minor: EXAMPLE_COMMISSION_MINOR,
  reserve_fee_minor: EXAMPLE_DEPOSIT_MINOR,
  entries_total: 3,
  entries: EXAMPLE_ENTRIES
}
const EXAMPLE_STATEMENT = {
  partner: EXAMPLE_PARTNER,
  number: "CS-202610-0001",
  draft: false,
  sections: [EXAMPLE_SECTION]
}
const EXAMPLE_ENTRY = EXAMPLE_ENTRIES[0]!

export const StatementEntry = Schema.Struct({
  type: Schema.Literal(...ENTRY_TYPES).annotations({
    description: "`sale` (a booking became live: +price, +commission, +reserve fee), `cancellation` (the " +
      "booking was cancelled or refunded: its entries reversed, commission given back, negative), `difference` " +
      "(the booking's price, commission or reservation fee changed while live: the change, either sign).",
    examples: [EXAMPLE_ENTRY.type]
  }),
  occurred_at: At("When the booking event happened (UTC).", EXAMPLE_ENTRY.occurred_at),
  confirmation_code: Schema.String.annotations({
    description: "The booking's confirmation code.",
    examples: [EXAMPLE_ENTRY.confirmation_code]
  }),
  tour: Schema.String.annotations({ description: "The tour's name as booked.", examples: [EXAMPLE_ENTRY.tour] }),
  experience_date: Schema.NullOr(DateString).annotations({
    description: "The booking's departure day (local, as it is now: after a reschedule, the new day).",
    examples: [EXAMPLE_ENTRY.experience_date]
  }),
  gross_minor: Minor(
    "The booking's price moved by this entry (negative for a cancellation).",
    EXAMPLE_ENTRY.gross_minor
  ),
  commission_rate_percent: Schema.Number.annotations({
    description: "The booking's commission rate in percent (0 when the booking has only an amount).",
    examples: [EXAMPLE_ENTRY.commission_rate_percent]
  }),
  commission_minor: Minor(
    "Commission moved by this entry; negative when commission is given back.",
    EXAMPLE_ENTRY.commission_minor
  ),
  reserve_fee_minor: Minor(
    "Reservation fee moved by this entry: the part of a pay-later booking's price paid at booking (0 when paid in " +
      "full at booking); negative when given back.",
    EXAMPLE_ENTRY.reserve_fee_minor
  )
}).annotations({
  identifier: "StatementEntry",
  description: "One booking event of the commission ledger. No guest details.",
  examples: [EXAMPLE_ENTRY]
})

export const StatementSection = Schema.Struct({
  currency: Schema.String.annotations({
    description: "ISO 4217: the bookings' currency. One section per currency.",
    examples: [EXAMPLE_SECTION.currency]
  }),
  sales: Count("Number of `sale` entries of the month (all of them, not only those listed).", EXAMPLE_SECTION.sales),
  cancellations: Count("Number of `cancellation` entries.", EXAMPLE_SECTION.cancellations),
  differences: Count("Number of `difference` entries.", EXAMPLE_SECTION.differences),
  gross_minor: Minor("Sum of `gross_minor` over every entry of the section.", EXAMPLE_SECTION.gross_minor),
  commission_minor: Minor(
    "Sum of `commission_minor` over every entry of the section: the month's commission.",
    EXAMPLE_SECTION.commission_minor
  ),
  reserve_fee_minor: Minor(
    "Sum of `reserve_fee_minor` over every entry of the section.",
    EXAMPLE_SECTION.reserve_fee_minor
  ),
  entries_total: Count(
    "Number of entries in the section (sales + cancellations + differences).",
    EXAMPLE_SECTION.entries_total
  ),
  entries: Schema.Array(StatementEntry).annotations({
    description: `Oldest first (occurred_at, then a stable id); at most ${STATEMENT_MAX_ENTRIES}: the first ` +
      `${STATEMENT_MAX_ENTRIES} when \`entries_total\` is larger (the sums above still cover all).`,
    examples: [EXAMPLE_ENTRIES]
  })
}).annotations({ identifier: "StatementSection", examples: [EXAMPLE_SECTION] })

export const Statement = Schema.Struct({
  partner: Partner,
  number: Schema.String.annotations({
    description: "The statement's number, `CS-YYYYMM-NNNN`: assigned once per operator and month when the " +
      "operator's first entry of the month is written, the same on every call; distinct per operator and month.",
    examples: [EXAMPLE_STATEMENT.number]
  }),
  draft: Schema.Boolean.annotations({
    description: "true while any entry of the month is pending (a pay-later balance not collected yet, a refund " +
      "not settled): its figures can still change. False once every entry is final.",
    examples: [EXAMPLE_STATEMENT.draft]
  }),
  sections: Schema.Array(StatementSection).annotations({
    description: "One per currency, by currency code.",
    examples: [EXAMPLE_STATEMENT.sections]
  })
}).annotations({ identifier: "Statement", examples: [EXAMPLE_STATEMENT] })

export const StatementsResponse = Schema.Struct({
  month: Schema.String.annotations({ description: "The month answered, YYYY-MM (UTC).", examples: ["2026-10"] }),
  period_start: At("First instant of the month, UTC (inclusive).", "2026-10-01T00:00:00.000Z"),
  period_end: At("First instant of the next month, UTC (exclusive).", "2026-11-01T00:00:00.000Z"),
  too_many: Schema.Boolean.annotations({
    description: `true when more than ${STATEMENTS_MAX_OPERATORS} operators are in view: \`statements\` is then ` +
      "empty; ask per operator with `partner_id`.",
    examples: [false]
  }),
  statements: Schema.Array(Statement).annotations({
    description: "One per operator in view with entries in the month, by operator name. An operator without any " +
      "entry that month has no statement.",
    examples: [[EXAMPLE_STATEMENT]]
  })
}).annotations({
  identifier: "StatementsResponse",
  examples: [{
    month: "2026-10",
    period_start: "2026-10-01T00:00:00.000Z",
    period_end: "2026-11-01T00:00:00.000Z",
    too_many: false,
    statements: [EXAMPLE_STATEMENT]
  }]
})
export type StatementsResponse = typeof StatementsResponse.Type

export class StatementsGroup extends HttpApiGroup.make("statements")
  .annotate(OpenApi.Title, "Commission statements")
  .annotate(OpenApi.Description, "One month's commission statement per operator, entry by entry.")
  .add(
    HttpApiEndpoint.get("statements", "/finance/statements")
      .setUrlParams(StatementsParams)
      .addSuccess(StatementsResponse)
      .addError(InvalidRequest)
      .addError(NotFound)
      .annotateContext(OpenApi.annotations({
        identifier: "listStatements",
        summary: "Monthly commission statements per operator",
        description: "Scope `finance:read`. The commission ledger of one UTC month per operator in view: every " +
          "sale, cancellation (commission given back) and party difference of the operators' bookings, written " +
          "when the booking event happened, in the booking's currency. Sections per currency with counts and sums " +
          `over all their entries, and at most ${STATEMENT_MAX_ENTRIES} entries oldest first. \`draft\` while any ` +
          `entry is pending. More than ${STATEMENTS_MAX_OPERATORS} operators in view: \`too_many\` true and no ` +
          "statements (narrow with `partner_id`). 400 for a malformed `month`; 404 when `partner_id` is not one " +
          "of the key's operators. See docs/api/statements.md."
      }))
  )
  .annotate(RequiredScope, "finance:read")
  .middleware(PartnerAuth)
  .prefix("/api/v1")
{}
