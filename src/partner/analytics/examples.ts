/**
 * The OpenAPI examples of the analytics reads and of the collection endpoint sites report to (docs
 * only), in the story of the other examples (src/partner/examples.ts): fjordexplorer.no sold the
 * Fjord Safari booking FJX-7K2M9Q on 2 October 2026.
 */
import type { OperationExamples } from "../../http/openapiExamples.js"
import { EXAMPLE_PARTNER, EXAMPLE_TOUR } from "../finance/examples.js"
import { EXAMPLE_TOUR_ID } from "../tours/examples.js"

const DAY = "2026-10-02"
const SITE = { type: "site", id: "fjordexplorer.no", name: "Fjord Explorer" }
const FUNNEL = { views: 412, availability_checks: 96, checkout_opens: 31, checkout_attempts: 9 }
const CONVERSION = {
  view_to_check: 0.233,
  check_to_open: 0.323,
  open_to_attempt: 0.29,
  attempt_to_booking: 0.778,
  view_to_booking: 0.017
}
/** EUR cents: the analytics figures are in EUR. */
const REVENUE_EUR_MINOR = 74200

export const ANALYTICS_EXAMPLES: Readonly<Record<string, OperationExamples>> = {
  collectEvent: {
    request: {
      summary: "A visitor opens the Fjord Safari's checkout",
      value: {
        key: "pk_widget_4f8Kq2Lm9Xr7Tz1Bv6Np3Wc5",
        kind: "checkout_open",
        url: "https://fjordexplorer.no/tours/fjord-safari",
        referrer: "https://www.google.com/",
        new_visitor: true,
        tour_id: EXAMPLE_TOUR_ID,
        booking_code: null
      }
    }
  },
  getTourAnalytics: {
    response: {
      summary: "2 October on fjordexplorer.no: 412 views, 7 bookings",
      value: {
        from: DAY,
        to: DAY,
        granularity: "total",
        currency: "EUR",
        partners: [EXAMPLE_PARTNER],
        rows: [{
          date: null,
          surface: SITE,
          tour: { id: EXAMPLE_TOUR_ID, name: EXAMPLE_TOUR },
          operator: EXAMPLE_PARTNER,
          basis: "own_tour",
          funnel: FUNNEL,
          bookings: 7,
          participants: 19,
          revenue_minor: REVENUE_EUR_MINOR,
          conversion: CONVERSION
        }],
        surfaces: [{
          surface: SITE,
          funnel: FUNNEL,
          bookings: 7,
          participants: 19,
          revenue_minor: REVENUE_EUR_MINOR,
          revenue_share: 1,
          conversion: CONVERSION
        }],
        other_channels_available: true
      }
    }
  },
  getSiteAnalytics: {
    response: {
      summary: "fjordexplorer.no on 2 October",
      value: {
        from: DAY,
        to: DAY,
        currency: "EUR",
        sites: [{
          domain: "fjordexplorer.no",
          name: "Fjord Explorer",
          role: "owner",
          sales_scope: "all_tours",
          traffic: {
            visitors: 388,
            new_visitors: 301,
            sessions: 455,
            pageviews: 1290,
            bounce_rate: 0.41,
            avg_session_seconds: 143.5
          },
          days: [{
            date: DAY,
            visitors: 388,
            new_visitors: 301,
            pageviews: 1290,
            bookings: 7,
            revenue_minor: REVENUE_EUR_MINOR
          }],
          sources: [
            { dimension: "referrer", label: "google.com", visitors: 214, conversions: 4, revenue_minor: 42400 }
          ],
          funnel: [
            { step: "Tour viewed", unit: "visitors", count: 412 },
            { step: "Booked", unit: "bookings", count: 7 }
          ],
          sales: { bookings: 7, revenue_minor: REVENUE_EUR_MINOR }
        }]
      }
    }
  }
}
