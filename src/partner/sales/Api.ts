/** The `sales` group of the Partner API: the sales summary (spec §2 "Sales summary", §4). */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { DateString, DateTimeString, IsoDate } from "../../domain/dates.js"
import { InvalidRequest, NotFound } from "../../domain/errors.js"
import { oneOf, PartnerId } from "../../http/params.js"
import { PartnerAuth, RequiredScope } from "../auth/security.js"
import { Partner } from "../bookings/booking.js"
import { SALES_CURRENCIES, SALES_MAX_DAYS, UNAVAILABLE_REASONS } from "./rules.js"

export const SalesParams = Schema.Struct({
  from: Schema.propertySignature(IsoDate).annotations({
    description: "First UTC day of booking creation (YYYY-MM-DD), inclusive. Required.",
    missingMessage: () => "is required: the first UTC day YYYY-MM-DD"
  }),
  to: Schema.propertySignature(IsoDate).annotations({
    description: `Last UTC day of booking creation, inclusive; not before \`from\`, at most ${SALES_MAX_DAYS} days ` +
      "counting both ends. Required.",
    missingMessage: () => "is required: the last UTC day YYYY-MM-DD"
  }),
  currency: Schema.optional(oneOf(SALES_CURRENCIES)).annotations({
    description: "Currency of the other-channel figures: EUR or NOK (default NOK). Own sales stay in booking currency."
  }),
  partner_id: Schema.optional(PartnerId)
})

const Minor = Schema.Int.annotations({ description: "Integer minor units." })
const Count = Schema.NonNegativeInt

export const OwnSalesDay = Schema.Struct({
  date: DateString,
  revenue_minor: Minor,
  bookings: Count,
  currency: Schema.String.annotations({ description: "ISO 4217 booking currency." }),
  partner: Partner
}).annotations({ identifier: "OwnSalesDay" })

export const OwnSalesTotal = Schema.Struct({
  currency: Schema.String,
  partner: Partner,
  revenue_minor: Minor,
  bookings: Count
}).annotations({ identifier: "OwnSalesTotal" })

export const ChannelDay = Schema.Struct({ date: DateString, revenue_minor: Minor, bookings: Count }).annotations({
  identifier: "OtherChannelsDay"
})

export const ChannelTotal = Schema.Struct({
  label: Schema.String.annotations({ description: "The channel's title in the booking system (Viator, a reseller…)." }),
  revenue_minor: Minor,
  bookings: Count,
  participants: Count
}).annotations({ identifier: "OtherChannel" })

export const Unavailable = Schema.Struct({
  partners: Schema.Array(Partner).annotations({
    description: "The operators of the booking-system account concerned."
  }),
  reason: Schema.Literal(...UNAVAILABLE_REASONS),
  detail: Schema.String
}).annotations({
  identifier: "OtherChannelsUnavailable",
  description: "Why other-channel figures are not given: `refresh_failed` (the last read of the booking system " +
    "failed), `not_read_yet` (the account's sales were never read completely), `not_covered` (the range starts " +
    "before the earliest day read), `stale` (the range reaches days not read recently enough), `rate_missing` (no " +
    "exchange rate for a day)."
})

export const SalesSummary = Schema.Struct({
  from: DateString,
  to: DateString,
  panion: Schema.Struct({
    days: Schema.Array(OwnSalesDay).annotations({
      description: "One row per UTC day, booking currency and operator that has sales, oldest first."
    }),
    totals: Schema.Array(OwnSalesTotal).annotations({
      description: "Per currency and operator: the sums of `days`."
    })
  }).annotations({
    description: "Sales through this service: its checkout and its desks (live bookings by UTC creation day)."
  }),
  other_channels: Schema.Struct({
    currency: Schema.Literal(...SALES_CURRENCIES),
    partners: Schema.Array(Partner).annotations({
      description: "Operators whose booking-system sales are covered (those with a booking system)."
    }),
    available: Schema.Boolean.annotations({
      description: "false when some figures could not be read: then `days` and `channels` are empty, `totals` zero " +
        "and `unavailable` says why. Never a partial figure."
    }),
    as_of: Schema.NullOr(DateTimeString).annotations({
      description:
        "Sales created up to this instant are in the figures (the oldest of the accounts' last complete reads)."
    }),
    days: Schema.Array(ChannelDay).annotations({ description: "One row per UTC day with sales, oldest first." }),
    channels: Schema.Array(ChannelTotal).annotations({ description: "Per channel, largest revenue first." }),
    totals: Schema.Struct({ revenue_minor: Minor, bookings: Count, participants: Count }),
    unavailable: Schema.Array(Unavailable)
  }).annotations({
    description: "Sales of every other channel of the operators' booking systems (travel agencies, resellers, " +
      "direct), converted to `currency` at each booking day's rate. Accounts shared by operators count once."
  })
}).annotations({
  identifier: "SalesSummary",
  examples: [{
    from: "2026-11-01",
    to: "2026-11-02",
    panion: {
      days: [{
        date: "2026-11-01",
        revenue_minor: 259000,
        bookings: 3,
        currency: "NOK",
        partner: { id: "0b7c4f8e-1d1a-4a59-9a43-6c2f0f3b2a11", name: "Fjord Explorer AS" }
      }],
      totals: [{
        currency: "NOK",
        partner: { id: "0b7c4f8e-1d1a-4a59-9a43-6c2f0f3b2a11", name: "Fjord Explorer AS" },
        revenue_minor: 259000,
        bookings: 3
      }]
    },
    other_channels: {
      currency: "NOK",
      partners: [{ id: "0b7c4f8e-1d1a-4a59-9a43-6c2f0f3b2a11", name: "Fjord Explorer AS" }],
      available: true,
      as_of: "2026-11-26T08:55:00.000Z",
      days: [{ date: "2026-11-01", revenue_minor: 412000, bookings: 4 }],
      channels: [{ label: "Viator", revenue_minor: 412000, bookings: 4, participants: 9 }],
      totals: { revenue_minor: 412000, bookings: 4, participants: 9 },
      unavailable: []
    }
  }]
})
export type SalesSummary = typeof SalesSummary.Type

export class SalesGroup extends HttpApiGroup.make("sales")
  .annotate(OpenApi.Title, "Sales")
  .annotate(OpenApi.Description, "Sales and commission of the key's operators over a date range, by channel.")
  .add(
    HttpApiEndpoint.get("summary", "/sales")
      .setUrlParams(SalesParams)
      .addSuccess(SalesSummary)
      .addError(InvalidRequest)
      .addError(NotFound)
      .annotateContext(OpenApi.annotations({
        identifier: "getSalesSummary",
        summary: "Sales summary: own sales and other channels by booking day",
        description:
          "Scope `finance:read`. Days are UTC days of the booking's creation, `from` and `to` included (at most " +
          `${SALES_MAX_DAYS} days). A booking counts while it is live and leaves the figures when it is cancelled or ` +
          "refunded (net sales as of now); holds and abandoned checkouts never count. `panion`: this service's own " +
          "sales in booking currency per operator. `other_channels`: every other channel of the booking systems, " +
          "without what this service sold, converted to `currency` at the rate of the booking day (or the latest " +
          "earlier banking day). Figures come from rollups refreshed every minute. 404 when `partner_id` is not one " +
          "of the key's operators. See docs/api/sales.md."
      }))
  )
  .annotate(RequiredScope, "finance:read")
  .middleware(PartnerAuth)
  .prefix("/api/v1")
{}
