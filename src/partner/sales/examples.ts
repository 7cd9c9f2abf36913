/**
 * The OpenAPI example of the sales summary (docs only), in the story of the other examples
 * (src/partner/examples.ts): 2 October 2026, the day FJX-7K2M9Q was sold.
 */
import type { OperationExamples } from "../../http/openapiExamples.js"
import { EXAMPLE_BOOKING, EXAMPLE_PARTNER } from "../finance/examples.js"

const DAY = "2026-10-02"

export const SALES_EXAMPLES: Readonly<Record<string, OperationExamples>> = {
  getSalesSummary: {
    response: {
      summary: `2 October 2026: ${EXAMPLE_BOOKING.confirmation_code} among the day's sales`,
      value: {
        from: DAY,
        to: DAY,
        panion: {
          days: [{ date: DAY, revenue_minor: 480000, bookings: 4, currency: "NOK", partner: EXAMPLE_PARTNER }],
          totals: [{ currency: "NOK", partner: EXAMPLE_PARTNER, revenue_minor: 480000, bookings: 4 }]
        },
        other_channels: {
          currency: "NOK",
          partners: [EXAMPLE_PARTNER],
          available: true,
          as_of: "2026-10-03T04:00:00.000Z",
          days: [{ date: DAY, revenue_minor: 210000, bookings: 2 }],
          channels: [{ label: "GetYourGuide", revenue_minor: 210000, bookings: 2, participants: 5 }],
          totals: { revenue_minor: 210000, bookings: 2, participants: 5 },
          unavailable: []
        }
      }
    }
  }
}
