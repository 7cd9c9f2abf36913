/**
 * The OpenAPI request and response examples of the quickbook operations (docs only), keyed by
 * operation id. The story of the partner examples (src/partner/examples.ts) seen from a desk: the
 * tourist information at Bergen sells Fjord Explorer's Fjord Safari for 14 October 2026 at 10:00 to
 * Ingrid Hansen, 2 adults and 1 child, NOK 1 200.00 (12 % VAT included), paid on the desk terminal.
 */
import type { OperationExamples } from "../http/openapiExamples.js"
import { EXAMPLE_SALE_REFERENCE } from "./errorExamples.js"

const ACTIVITY_ID = "7c9e6679-7425-40de-944b-e07fc1f90ae7"
const TZ = "Europe/Oslo"
const OPERATOR = "Fjord Explorer"
const TOUR = "Fjord Safari"
const DATE = "2026-10-14"
const GUESTS = [
  { type: "ADULT", label: "Adult", count: 2, unitMinor: 45000, lineMinor: 90000 },
  { type: "CHILD", label: "Child", count: 1, unitMinor: 30000, lineMinor: 30000 }
]
const TOTAL_MINOR = 120000
const CART_LINE = {
  operatorName: OPERATOR,
  tourName: TOUR,
  start: { date: DATE, time: "10:00", timeZone: TZ },
  guests: GUESTS,
  totalMinor: TOTAL_MINOR,
  currency: "NOK",
  requiresPhone: false,
  orderLineText: `${TOUR} 14.10.2026 10:00, 2 Adult, 1 Child`,
  payment: {
    provider: "payprovider",
    merchantId: "M-48213",
    taxLines: [{ amount: 12857, percentage: 12, type: "VAT" }],
    serviceProviders: [{ serviceProviderId: "SP-fjord-explorer", amount: { percentage: 100 } }]
  }
}
const HOLD_REF = EXAMPLE_SALE_REFERENCE
const BOOKING_CODE = "FJX-7K2M9Q"
const TICKET = {
  lines32: [
    "FJORD EXPLORER",
    "Fjord Safari",
    "14.10.2026 10:00",
    "2 Adult, 1 Child",
    "NOK 1200.00",
    `Code ${BOOKING_CODE}`
  ],
  lines48: [
    "FJORD EXPLORER - Fjord Safari",
    "Wednesday 14 October 2026 at 10:00",
    "2 Adult, 1 Child                 NOK 1200.00",
    `Booking code ${BOOKING_CODE}`
  ],
  qrPayload: `https://book.example.com/b/${BOOKING_CODE}`,
  pdfUrl: `https://book.example.com/api/quickbook/v1/tickets/${EXAMPLE_SALE_REFERENCE}.pdf?exp=1791972000&sig=0c5e`,
  bookingCode: BOOKING_CODE
}

export const QUICKBOOK_EXAMPLES: Readonly<Record<string, OperationExamples>> = {
  listTours: {
    response: {
      summary: "What the Bergen desk sells on 14 October",
      value: {
        terminal: {
          id: "d2f1e0c9-8b7a-4d6c-9e5f-4a3b2c1d0e9f",
          name: "Bergen tourist information, desk 2",
          operatorName: OPERATOR
        },
        tours: [{
          activityId: ACTIVITY_ID,
          operatorName: OPERATOR,
          tourName: TOUR,
          timeZone: TZ,
          currency: "NOK",
          durationMinutes: 120,
          departureTimes: ["10:00", "14:00"],
          guestTypes: [
            { type: "ADULT", label: "Adult", isDefault: true, minAge: 16, maxAge: null },
            { type: "CHILD", label: "Child", isDefault: false, minAge: 6, maxAge: 15 }
          ],
          date: DATE,
          available: true
        }]
      }
    }
  },
  listSlots: {
    response: {
      summary: "Two departures; 14:00 is sold out",
      value: {
        activityId: ACTIVITY_ID,
        date: DATE,
        timeZone: TZ,
        currency: "NOK",
        slots: [
          {
            time: "10:00",
            seatsLeft: 8,
            soldOut: false,
            guests: [{ type: "ADULT", label: "Adult", unitMinor: 45000 }, {
              type: "CHILD",
              label: "Child",
              unitMinor: 30000
            }],
            bookingPriceMinor: null
          },
          { time: "14:00", seatsLeft: 0, soldOut: true, guests: [], bookingPriceMinor: null }
        ]
      }
    }
  },
  quoteSale: {
    request: {
      summary: "2 adults and 1 child at 10:00",
      value: {
        activityId: ACTIVITY_ID,
        start: { date: DATE, time: "10:00" },
        guests: [{ type: "ADULT", count: 2 }, { type: "CHILD", count: 1 }]
      }
    },
    response: {
      summary: "NOK 1 200.00, valid 15 minutes",
      value: { reference: EXAMPLE_SALE_REFERENCE, validUntil: "2026-10-14T07:45:00.000Z", cartLine: CART_LINE }
    }
  },
  reserveSeats: {
    request: {
      summary: "Hold the seats while the guest pays",
      value: { reference: EXAMPLE_SALE_REFERENCE, idempotencyKey: "desk2-2026-10-14-0001" }
    },
    response: {
      summary: "Held for 10 minutes",
      value: { holdRef: HOLD_REF, expiresAt: "2026-10-14T07:40:00.000Z", cartLine: CART_LINE }
    }
  },
  releaseHold: {
    response: { summary: "The guest changed their mind", value: { holdRef: HOLD_REF, released: true } }
  },
  bookSale: {
    request: {
      summary: "Paid on the terminal: book it",
      value: {
        reference: EXAMPLE_SALE_REFERENCE,
        holdRef: HOLD_REF,
        payment: { provider: "payprovider", orderId: "ord_8f2k4m6p", paymentId: "pay_3n5q7s9u" },
        customer: { firstName: "Ingrid", lastName: "Hansen", email: "ingrid.hansen@example.no", phone: "+4791234567" },
        language: "en"
      }
    },
    response: { summary: "Confirmed: print the ticket", value: { status: "confirmed", ticket: TICKET } }
  },
  getSale: {
    response: {
      summary: "The sale, confirmed",
      value: {
        reference: EXAMPLE_SALE_REFERENCE,
        status: "confirmed",
        clerkMessage: "Booked. Print the ticket for the guest.",
        confirmedAt: "2026-10-14T07:32:41.000Z",
        ticket: TICKET
      }
    }
  },
  getTicket: { response: { summary: "The ticket to print again", value: TICKET } }
}
