/**
 * The OpenAPI request and response examples of the Partner API's operations (docs only: nothing
 * here is read at run time), keyed by operation id. One story, the one the finance examples tell
 * (finance/examples.ts): Fjord Explorer AS runs the Fjord Safari from Bergen; booking FJX-7K2M9Q
 * (Ingrid Hansen, 2 adults and 1 child, 14 October 2026 at 10:00, NOK 1 200.00, 15 % commission)
 * was paid later: NOK 300.00 at booking, the balance on 7 October. The finance operations keep
 * the whole examples written on their schemas; openapi.ts shows those on the operation too.
 */
import {
  EXAMPLE_BALANCE_MINOR,
  EXAMPLE_BOOKING,
  EXAMPLE_COMMISSION_MINOR,
  EXAMPLE_COMMISSION_RATE,
  EXAMPLE_CURSOR,
  EXAMPLE_OTHER_PARTNER,
  EXAMPLE_PARTNER,
  EXAMPLE_PRICE_MINOR,
  EXAMPLE_TOUR
} from "./finance/examples.js"

import type { OperationExamples } from "../http/openapiExamples.js"
import { ANALYTICS_EXAMPLES } from "./analytics/examples.js"
import { SALES_EXAMPLES } from "./sales/examples.js"
import { EXAMPLE_TOUR_ID, TOUR_EXAMPLES } from "./tours/examples.js"

type Json = Record<string, unknown>

const TZ = "Europe/Oslo"
const START_TIME_ID = "st_1000_fjord_safari"
const RATE_ID = "rate_standard"
const GUEST = { name: "Ingrid Hansen", email: "ingrid.hansen@example.no", phone: "+4791234567" }
const PARTNER = EXAMPLE_PARTNER

/** FJX-7K2M9Q as the bookings list shows it. */
const BOOKING: Json = {
  ...EXAMPLE_BOOKING,
  partner: PARTNER,
  tour: { id: EXAMPLE_TOUR_ID, name: EXAMPLE_TOUR },
  start_time: "10:00",
  timezone: TZ,
  participants: 3,
  amount_minor: EXAMPLE_PRICE_MINOR,
  currency: "NOK",
  channel: "Website",
  guest: GUEST,
  booked_at: "2026-10-02T14:21:07.000Z",
  created_at: "2026-10-02T14:21:09.412Z",
  updated_at: "2026-10-07T06:00:12.088Z"
}

const MANIFEST_BOOKING: Json = {
  id: EXAMPLE_BOOKING.id,
  reference: "FJX-7K2M9Q-1",
  confirmation_code: EXAMPLE_BOOKING.confirmation_code,
  status: "CONFIRMED",
  partner: PARTNER,
  channel: { class: "direct", source: "website", title: "Website" },
  participants: 3,
  pax_breakdown: [{ title: "Adult", quantity: 2 }, { title: "Child", quantity: 1 }],
  guest: GUEST,
  pickup: { place: "Bryggen, Bergen", time: "09:40" },
  payment_status: "PAID",
  check_in: { status: null, present: null }
}

const DAY_SHOWN = "2026-10-14"

const BOOKING_EXAMPLES: Readonly<Record<string, OperationExamples>> = {
  getMe: {
    response: {
      summary: "A key of Fjord Explorer AS that also acts for Arctic Whale Safari AS",
      value: {
        key: {
          id: "k7Qp2xR9",
          name: "Booking desk integration",
          scopes: ["bookings:read", "manifest:read", "checkins:write", "bookings.cancel:write"],
          created_at: "2026-09-01T08:00:00.000Z",
          expires_at: "2027-09-01T08:00:00.000Z"
        },
        partner: EXAMPLE_OTHER_PARTNER,
        partners: [EXAMPLE_OTHER_PARTNER, PARTNER]
      }
    }
  },
  listBookings: {
    response: {
      summary: "A page of one booking, with more to come",
      value: { data: [BOOKING], next_cursor: EXAMPLE_CURSOR }
    }
  },
  getBooking: {
    response: {
      summary: "FJX-7K2M9Q: paid later, balance collected",
      value: {
        ...BOOKING,
        provider_reference: "BKN-4471829",
        payment: {
          strategy: "pay_later",
          pay_later: {
            status: "PAID",
            amount_minor: EXAMPLE_BALANCE_MINOR,
            currency: "NOK",
            charge_at: "2026-10-07T06:00:00.000Z",
            paid_at: "2026-10-07T06:00:11.902Z"
          }
        },
        commission: {
          amount_minor: EXAMPLE_COMMISSION_MINOR,
          rate_percent: EXAMPLE_COMMISSION_RATE,
          currency: "NOK",
          status: "INVOICED"
        }
      }
    }
  },
  getManifest: {
    response: {
      summary: "14 October 2026: one departure, one booking of three guests",
      value: {
        date: DAY_SHOWN,
        timezone: TZ,
        synced_at: "2026-10-14T05:58:30.000Z",
        totals: { departures: 1, bookings: 1, passengers: 3, checked_in: 0, no_show: 0 },
        departures: [{
          start_time: "10:00",
          timezone: TZ,
          product_title: EXAMPLE_TOUR,
          rate_title: "Standard",
          passengers: 3,
          checked_in: 0,
          no_show: 0,
          bookings: [MANIFEST_BOOKING]
        }],
        cancelled: []
      }
    }
  },
  checkInGuests: {
    request: { summary: "All three guests came", value: { status: "checked_in", present: 3 } },
    response: {
      summary: "Checked in",
      value: { id: EXAMPLE_BOOKING.id, check_in: { status: "checked_in", present: 3 } }
    }
  },
  listRescheduleOptions: {
    response: {
      summary: "16 October has the 10:00 departure with 8 seats left",
      value: {
        id: EXAMPLE_BOOKING.id,
        date: "2026-10-16",
        current_date: EXAMPLE_BOOKING.experience_date,
        reschedulable: true,
        available: true,
        price_differs: false,
        detail: null,
        options: [{ start_time_id: START_TIME_ID, rate_id: RATE_ID, start_time: "10:00", label: "10:00", remaining: 8 }]
      }
    }
  },
  rescheduleBooking: {
    request: {
      summary: "Move to 16 October, 10:00",
      value: { date: "2026-10-16", start_time_id: START_TIME_ID, rate_id: RATE_ID }
    },
    response: {
      summary: "Moved",
      value: {
        id: EXAMPLE_BOOKING.id,
        status: "CONFIRMED",
        date: "2026-10-16",
        start_time: "10:00",
        previous_date: EXAMPLE_BOOKING.experience_date,
        previous_start_time: "10:00",
        already_on_date: false
      }
    }
  },
  createPaymentLink: {
    request: { summary: "No fields: the link is for the balance due", value: {} },
    response: {
      summary: "A link for the NOK 900.00 balance, e-mailed to the guest",
      value: {
        id: "6f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f",
        kind: "deferred_balance",
        url: "https://pay.example.com/l/6f1c2d3e4a5b",
        amount_minor: EXAMPLE_BALANCE_MINOR,
        currency: "NOK",
        emailed: true
      }
    }
  },
  cancelBooking: {
    request: { summary: "The guest asked to cancel", value: { reason: "Guest is ill and cannot travel" } },
    response: {
      summary: "Cancelled and refunded in full",
      value: {
        id: EXAMPLE_BOOKING.id,
        status: "REFUNDED",
        already_cancelled: false,
        refund: { outcome: "refunded", amount_minor: EXAMPLE_PRICE_MINOR, currency: "NOK" }
      }
    }
  }
}

/** Every operation's examples, by operation id (the finance reads show their schemas' examples). */
export const PARTNER_EXAMPLES: Readonly<Record<string, OperationExamples>> = {
  ...BOOKING_EXAMPLES,
  ...TOUR_EXAMPLES,
  ...ANALYTICS_EXAMPLES,
  ...SALES_EXAMPLES
}
