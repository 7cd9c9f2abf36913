/**
 * The `analytics` group of the Partner API: tour rows per surface and site analytics (spec §2
 * "Analytics tour row and surface", "Site analytics", §4, §8).
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { DateString, IsoDate } from "../../domain/dates.js"
import { InvalidRequest, NotFound, Unavailable } from "../../domain/errors.js"
import { oneOf, PartnerId } from "../../http/params.js"
import { PartnerAuth, RequiredScope } from "../auth/security.js"
import { Partner } from "../bookings/booking.js"
import { ANALYTICS_MAX_DAYS_AFTER, DIMENSIONS, GRANULARITIES, SOURCES_PER_DIMENSION } from "./rules.js"

const From = Schema.propertySignature(IsoDate).annotations({
  description: "First UTC day (YYYY-MM-DD), inclusive. Required.",
  missingMessage: () => "is required: the first UTC day YYYY-MM-DD"
})
const To = Schema.propertySignature(IsoDate).annotations({
  description: `Last UTC day, inclusive; not before \`from\`, at most ${ANALYTICS_MAX_DAYS_AFTER} days after it. ` +
    "Required.",
  missingMessage: () => "is required: the last UTC day YYYY-MM-DD"
})

export const ToursParams = Schema.Struct({
  from: From,
  to: To,
  granularity: Schema.optional(oneOf(GRANULARITIES)).annotations({
    description: "`day` (default): one row per tour, surface and UTC day; `total`: one row per tour and surface."
  }),
  tour_id: Schema.optional(Schema.UUID.annotations({ message: () => "must be a UUID" })).annotations({
    description: "Only this tour's rows."
  }),
  surface: Schema.optional(
    Schema.String.pipe(
      Schema.minLength(1, { message: () => "must not be empty" }),
      Schema.maxLength(200, { message: () => "must be at most 200 characters" })
    )
  ).annotations({
    description: "Only this surface: a site domain or a channel id, as in `surface.id` (at most 200 characters)."
  }),
  partner_id: Schema.optional(PartnerId)
})

export const SitesParams = Schema.Struct({
  from: From,
  to: To,
  site: Schema.optional(
    Schema.String.pipe(
      Schema.minLength(1, { message: () => "must not be empty" }),
      Schema.maxLength(253, { message: () => "must be at most 253 characters" })
    )
  ).annotations({
    description: "Only this site (its domain). A site the key's operators are not on answers 404."
  }),
  partner_id: Schema.optional(PartnerId)
})

const Minor = Schema.Int.annotations({ description: "EUR minor units (cents), at each day's rate." })
const Count = Schema.NonNegativeInt
const Ratio = Schema.NullOr(Schema.Number).annotations({
  description: "A ratio (0.25 = 25%), 4 decimals; null when the step before is zero."
})

export const Surface = Schema.Struct({
  type: Schema.Literal("site", "channel"),
  id: Schema.String.annotations({
    description: "A site's domain, or a channel id: the channel's label in lower case, accents dropped, other " +
      "characters as `-` (`Viator` → `viator`); never with a dot. Pass it back as `surface`."
  }),
  name: Schema.String.annotations({ description: "The site's name, or the channel's label in the booking system." })
}).annotations({ identifier: "AnalyticsSurface" })

export const TourFunnel = Schema.Struct({
  views: Count,
  availability_checks: Count,
  checkout_opens: Count,
  checkout_attempts: Count
}).annotations({ identifier: "AnalyticsFunnel", description: "Distinct sessions per step." })

export const Conversion = Schema.Struct({
  view_to_check: Ratio,
  check_to_open: Ratio,
  open_to_attempt: Ratio,
  attempt_to_booking: Ratio,
  view_to_booking: Ratio
}).annotations({ identifier: "AnalyticsConversion" })

export const TourRow = Schema.Struct({
  date: Schema.NullOr(DateString).annotations({ description: "UTC day; null when `granularity` is total." }),
  surface: Surface,
  tour: Schema.Struct({ id: Schema.NullOr(Schema.String), name: Schema.NullOr(Schema.String) }).annotations({
    description: "Both null when a sale is not matched to a tour."
  }),
  operator: Schema.NullOr(Partner).annotations({ description: "The tour's operator; null when not matched." }),
  basis: Schema.Literal("own_tour", "site_owner").annotations({
    description: "`own_tour`: a tour of the key's operators; `site_owner`: another operator's tour on a site " +
      "the key's operators own."
  }),
  funnel: Schema.NullOr(TourFunnel).annotations({ description: "null on a channel." }),
  bookings: Count,
  participants: Schema.NullOr(Count).annotations({ description: "Channels only; null on a site." }),
  revenue_minor: Minor,
  conversion: Schema.NullOr(Conversion).annotations({ description: "null on a channel." })
}).annotations({ identifier: "AnalyticsTourRow" })

export const SurfaceTotal = Schema.Struct({
  surface: Surface,
  funnel: Schema.NullOr(TourFunnel),
  bookings: Count,
  participants: Schema.NullOr(Count),
  revenue_minor: Minor,
  revenue_share: Schema.Number.annotations({
    description: "This surface's share of the revenue of all surfaces (0 to 1, 4 decimals; 0 when there is none)."
  }),
  conversion: Schema.NullOr(Conversion)
}).annotations({ identifier: "AnalyticsSurfaceTotal" })

const examplePartner = { id: "0b7c4f8e-1d1a-4a59-9a43-6c2f0f3b2a11", name: "Fjord Explorer AS" }
const exampleSite = { type: "site" as const, id: "fjordexplorer.example", name: "Fjord Explorer" }
const exampleChannel = { type: "channel" as const, id: "viator", name: "Viator" }
const exampleTour = { id: "5d0f8a53-4c1e-4f0e-9b7e-2a7f1c9d3e10", name: "Nærøyfjord RIB Safari" }
const exampleFunnel = { views: 120, availability_checks: 48, checkout_opens: 20, checkout_attempts: 10 }
const exampleConversion = {
  view_to_check: 0.4,
  check_to_open: 0.4167,
  open_to_attempt: 0.5,
  attempt_to_booking: 0.6,
  view_to_booking: 0.05
}

export const AnalyticsTours = Schema.Struct({
  from: DateString,
  to: DateString,
  granularity: Schema.Literal(...GRANULARITIES),
  currency: Schema.Literal("EUR"),
  partners: Schema.Array(Partner).annotations({ description: "The operators in view (the key's, or `partner_id`)." }),
  rows: Schema.Array(TourRow).annotations({
    description: "One row per tour, surface and UTC day (or per tour and surface), oldest day first, sites " +
      "before channels."
  }),
  surfaces: Schema.Array(SurfaceTotal).annotations({
    description: "`rows` summed per surface, largest revenue first."
  }),
  other_channels_available: Schema.Boolean.annotations({
    description: "false when other-channel sales could not be read (the booking system's sales ledger is not " +
      "complete or fresh for the range, or a rate is missing): channel rows are then left out, site rows are " +
      "still complete."
  })
}).annotations({
  identifier: "AnalyticsTours",
  examples: [{
    from: "2026-11-01",
    to: "2026-11-30",
    granularity: "total",
    currency: "EUR",
    partners: [examplePartner],
    rows: [
      {
        date: null,
        surface: exampleSite,
        tour: exampleTour,
        operator: examplePartner,
        basis: "own_tour",
        funnel: exampleFunnel,
        bookings: 6,
        participants: null,
        revenue_minor: 89400,
        conversion: exampleConversion
      },
      {
        date: null,
        surface: exampleChannel,
        tour: exampleTour,
        operator: examplePartner,
        basis: "own_tour",
        funnel: null,
        bookings: 4,
        participants: 9,
        revenue_minor: 59600,
        conversion: null
      }
    ],
    surfaces: [
      {
        surface: exampleSite,
        funnel: exampleFunnel,
        bookings: 6,
        participants: null,
        revenue_minor: 89400,
        revenue_share: 0.6,
        conversion: exampleConversion
      },
      {
        surface: exampleChannel,
        funnel: null,
        bookings: 4,
        participants: 9,
        revenue_minor: 59600,
        revenue_share: 0.4,
        conversion: null
      }
    ],
    other_channels_available: true
  }]
})
export type AnalyticsTours = typeof AnalyticsTours.Type

export const SiteItem = Schema.Struct({
  domain: Schema.String,
  name: Schema.String,
  role: Schema.Literal("owner", "added").annotations({
    description: "`owner`: one of the key's operators owns the site; `added`: they are only added to it."
  }),
  sales_scope: Schema.Literal("all_tours", "own_tours").annotations({
    description: "Which sales `days` and `sales` count: every tour sold on the site (owners) or the key's " +
      "operators' own tours (added)."
  }),
  traffic: Schema.Struct({
    visitors: Count,
    new_visitors: Count,
    sessions: Count,
    pageviews: Count,
    bounce_rate: Schema.NullOr(Schema.Number).annotations({
      description: "Sessions with one pageview over sessions (0 to 1); null without sessions."
    }),
    avg_session_seconds: Schema.Number
  }).annotations({
    description: "The whole site over the range: the sums of the days (visitors are daily unique visitors summed)."
  }),
  days: Schema.Array(Schema.Struct({
    date: DateString,
    visitors: Count,
    new_visitors: Count,
    pageviews: Count,
    bookings: Count,
    revenue_minor: Minor
  })).annotations({ description: "Days with traffic or sales, oldest first; sales within `sales_scope`." }),
  sources: Schema.Array(Schema.Struct({
    dimension: Schema.Literal(...DIMENSIONS),
    label: Schema.String.annotations({ description: "`(none)` where the event had no value." }),
    visitors: Count,
    conversions: Schema.NullOr(Count),
    revenue_minor: Schema.NullOr(Minor)
  })).annotations({
    description: `Top ${SOURCES_PER_DIMENSION} labels per dimension by visitors (dimensions in a fixed order). ` +
      "`conversions` and `revenue_minor` for owners only, otherwise null."
  }),
  funnel: Schema.NullOr(Schema.Array(Schema.Struct({
    step: Schema.String,
    unit: Schema.Literal("visitors", "bookings"),
    count: Count
  }))).annotations({
    description: "Owners only, otherwise null: `visitors`, then `tour_views`, `availability_checks`, " +
      "`checkout_opens`, `checkout_attempts` (distinct sessions, every tour on the site), then `bookings`."
  }),
  sales: Schema.Struct({ bookings: Count, revenue_minor: Minor }).annotations({
    description: "Checkout sales on the site within `sales_scope`, by UTC day of the booking."
  })
}).annotations({ identifier: "AnalyticsSite" })

export const AnalyticsSites = Schema.Struct({
  from: DateString,
  to: DateString,
  currency: Schema.Literal("EUR"),
  sites: Schema.Array(SiteItem).annotations({ description: "The sites the operators in view are on, by domain." })
}).annotations({
  identifier: "AnalyticsSites",
  examples: [{
    from: "2026-11-01",
    to: "2026-11-02",
    currency: "EUR",
    sites: [{
      domain: "fjordexplorer.example",
      name: "Fjord Explorer",
      role: "owner",
      sales_scope: "all_tours",
      traffic: {
        visitors: 410,
        new_visitors: 300,
        sessions: 520,
        pageviews: 1460,
        bounce_rate: 0.4231,
        avg_session_seconds: 96.5
      },
      days: [
        { date: "2026-11-01", visitors: 200, new_visitors: 150, pageviews: 700, bookings: 2, revenue_minor: 29800 },
        { date: "2026-11-02", visitors: 210, new_visitors: 150, pageviews: 760, bookings: 1, revenue_minor: 14900 }
      ],
      sources: [
        { dimension: "channel", label: "Organic Search", visitors: 230, conversions: 2, revenue_minor: 29800 },
        { dimension: "channel", label: "Direct", visitors: 180, conversions: 1, revenue_minor: 14900 }
      ],
      funnel: [
        { step: "visitors", unit: "visitors", count: 410 },
        { step: "tour_views", unit: "visitors", count: 240 },
        { step: "availability_checks", unit: "visitors", count: 96 },
        { step: "checkout_opens", unit: "visitors", count: 30 },
        { step: "checkout_attempts", unit: "visitors", count: 12 },
        { step: "bookings", unit: "bookings", count: 3 }
      ],
      sales: { bookings: 3, revenue_minor: 44700 }
    }]
  }]
})
export type AnalyticsSites = typeof AnalyticsSites.Type

const LIMITS = "At most 2 analytics requests at a time per key, across every instance (more answer 429 with " +
  "`Retry-After`); a request whose data does not load within 20 seconds answers 503 (retry, or shorten the range). " +
  "Figures come from daily rollups refreshed every five minutes, never from raw events."

export class AnalyticsGroup extends HttpApiGroup.make("analytics")
  .annotate(OpenApi.Title, "Analytics")
  .annotate(OpenApi.Description, "Views, conversion and sales per tour, surface and day, and the traffic of one site.")
  .add(
    HttpApiEndpoint.get("tours", "/analytics/tours")
      .setUrlParams(ToursParams)
      .addSuccess(AnalyticsTours)
      .addError(InvalidRequest)
      .addError(NotFound)
      .addError(Unavailable)
      .annotateContext(OpenApi.annotations({
        identifier: "getTourAnalytics",
        summary: "Tour funnel and sales per surface (sites and other channels)",
        description: "Scope `analytics:read`. Rows per tour, surface (a site powered by the service, or another " +
          "sales channel of the booking system) and UTC day, revenue in EUR at each day's rate. Visible: the " +
          "key's operators' own tours on every surface they are sold on (`basis: own_tour`), and other operators' " +
          "tours on a site the key's operators own (`basis: site_owner`). Sites carry the funnel (distinct " +
          "sessions per step) and checkout sales; channels carry sales and participants. `conversion` ratios are " +
          `computed at read time, null when the step before is zero. ${LIMITS} 404 when \`partner_id\` is not one ` +
          "of the key's operators. See docs/api/analytics.md."
      }))
  )
  .add(
    HttpApiEndpoint.get("sites", "/analytics/sites")
      .setUrlParams(SitesParams)
      .addSuccess(AnalyticsSites)
      .addError(InvalidRequest)
      .addError(NotFound)
      .addError(Unavailable)
      .annotateContext(OpenApi.annotations({
        identifier: "getSiteAnalytics",
        summary: "Site traffic, sources, funnel and sales",
        description: "Scope `analytics:read`. Every site the key's operators are on: whole-site traffic per day " +
          "and sources (top 25 per dimension). On a site they own (`role: owner`) sources also carry conversions " +
          "and revenue, the funnel is given and sales cover every tour (`sales_scope: all_tours`); on a site they " +
          "are only added to, sales cover their own tours (`own_tours`). A `site` the key's operators are not on " +
          `answers 404. ${LIMITS} See docs/api/analytics.md.`
      }))
  )
  .annotate(RequiredScope, "analytics:read")
  .middleware(PartnerAuth)
  .prefix("/api/v1")
{}
