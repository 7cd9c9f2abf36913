/**
 * The OpenAPI examples of the tour catalogue reads (docs only), in the story of the other examples
 * (src/partner/examples.ts): Fjord Explorer AS's Fjord Safari from Bergen.
 */
import type { OperationExamples } from "../../http/openapiExamples.js"
import { EXAMPLE_TOUR } from "../finance/examples.js"

export const EXAMPLE_TOUR_ID = "7c9e6679-7425-40de-944b-e07fc1f90ae7"
const TZ = "Europe/Oslo"

const OPERATOR = {
  name: "Fjord Explorer",
  legal_name: "Fjord Explorer AS",
  org_number: "912345678",
  is_seller: true,
  is_host: true
}

const SUMMARY = {
  id: EXAMPLE_TOUR_ID,
  slug: "fjord-safari",
  title: EXAMPLE_TOUR,
  excerpt: "Two hours by RIB boat into the Osterfjord: waterfalls, seals and mountain farms.",
  photos: ["https://media.example.com/tours/fjord-safari/cover.jpg"],
  duration_minutes: 120,
  priced_per_booking: false,
  languages: ["en", "nb", "de"],
  from_price: { amount_minor: 45000, currency: "NOK" },
  season: { known: true, next_available_date: "2026-10-14" },
  rating: { average: 4.8, count: 312 },
  operator: OPERATOR,
  seller: { name: OPERATOR.name, legal_name: OPERATOR.legal_name, org_number: OPERATOR.org_number },
  locale: "en"
}

export const TOUR_EXAMPLES: Readonly<Record<string, OperationExamples>> = {
  listTours: {
    response: { summary: "The last page: one tour", value: { data: [SUMMARY], next_cursor: null } }
  },
  getTour: {
    response: {
      summary: "The Fjord Safari",
      value: {
        ...SUMMARY,
        timezone: TZ,
        description_html: "<p>Board our RIB boat at Bryggen and ride into the Osterfjord.</p>",
        included_html: "<ul><li>Flotation suit, gloves and goggles</li></ul>",
        excluded_html: "<ul><li>Food and drinks</li></ul>",
        inclusions: ["Flotation suit, gloves and goggles", "Guide"],
        exclusions: ["Food and drinks"],
        highlights: ["Waterfalls close up", "Seals on the skerries"],
        know_before: ["Dress warmly: it is cold at speed"],
        meeting_point: { name: "Bryggen pier", address: "Bryggen 1, 5003 Bergen", lat: 60.3975, lng: 5.3237 },
        cancellation: { title: "Free cancellation up to 24 hours before departure", free_hours: 24 },
        min_age: 6,
        difficulty: "easy",
        departure_times: ["10:00", "14:00"],
        pricing_categories: [
          { id: "pc_adult", is_default: true, title: "Adult", min_age: 16, max_age: null },
          { id: "pc_child", is_default: false, title: "Child", min_age: 6, max_age: 15 }
        ],
        rates: [{ id: "rate_standard", title: "Standard", description: null }],
        linked_products: [{ label: "Auf Deutsch", language: "de", tour_id: null }],
        checkout: { activity_id: EXAMPLE_TOUR_ID }
      }
    }
  },
  getTourAvailability: {
    response: {
      summary: "Two days for a party of three: 14 October has seats",
      value: {
        tour_id: EXAMPLE_TOUR_ID,
        timezone: TZ,
        currency: "NOK",
        from: "2026-10-14",
        to: "2026-10-15",
        pax: 3,
        known: true,
        days: [
          { date: "2026-10-14", available: true, from_price_minor: 45000 },
          { date: "2026-10-15", available: false, from_price_minor: null }
        ],
        departures: [{
          date: "2026-10-14",
          start_time: "10:00",
          start_time_id: "st_1000_fjord_safari",
          remaining: 8,
          fits_party: true,
          rates: [{
            rate_id: "rate_standard",
            prices: [
              { pricing_category_id: "pc_adult", amount_minor: 45000 },
              { pricing_category_id: "pc_child", amount_minor: 30000 }
            ]
          }]
        }]
      }
    }
  }
}
