/** The demo: three day tours per vendor, bookings around today, today and the next days full, in the vendor's time zone. */
import { Clock, Effect } from "effect"
import { generateBookings } from "./generate.js"
import type { Store } from "./store.js"
import { addDays, localDay } from "./time.js"
import { createVendor, type ProductSpec } from "./vendors.js"

const ADULT_PRICE: Readonly<Record<string, number>> = {
  NOK: 990,
  SEK: 990,
  DKK: 750,
  EUR: 89,
  USD: 99,
  GBP: 79,
  CHF: 95,
  ISK: 14900,
  JPY: 12000
}

/** Three day tours with start times, rates, adult/child prices and pickups, priced for the currency. */
export const demoProducts = (currency: string): ReadonlyArray<ProductSpec> => {
  const adult = ADULT_PRICE[currency] ?? 99
  const minor = (major: number) => Math.round(major * (currency === "ISK" || currency === "JPY" ? 1 : 100))
  const categories = [
    { title: "Adult", isDefault: true, minAge: 16 },
    { title: "Child", minAge: 4, maxAge: 15 }
  ]
  const prices = (factor: number) => ({ Adult: minor(adult * factor), Child: minor(adult * factor * 0.5) })
  return [
    {
      title: "Fjord & Waterfall Cruise",
      startTimes: ["09:00", "12:30", "16:00"],
      capacity: 40,
      durationMinutes: 180,
      pricingCategories: categories,
      rates: [{ title: "Standard", prices: prices(1) }, { title: "Lunch included", prices: prices(1.35) }],
      pickupPlaces: ["Harbour Hotel", "Central Station", "Old Town Square"],
      rating: { average: 4.7, count: 1284 }
    },
    {
      title: "Wildlife Safari by RIB",
      startTimes: ["10:00", "14:00"],
      capacity: 12,
      durationMinutes: 120,
      pricingCategories: categories,
      rates: [{ title: "Standard", prices: prices(1.6) }],
      rating: { average: 4.8, count: 532 }
    },
    {
      title: "Private Sunset Sail",
      startTimes: ["19:30"],
      capacity: 8,
      durationMinutes: 150,
      pricedPerBooking: true,
      supportsHolds: false,
      pricingCategories: [{ title: "Guest", isDefault: true }],
      rates: [{ title: "Whole boat", prices: { Guest: minor(adult * 9) } }],
      rating: null
    }
  ]
}

/** Days before today the demo's sales history starts (bookings CREATED from about then). */
export const SALES_HISTORY_DAYS = 400

/**
 * A vendor's sales history for the sales figures: bookings over the departure days from `days`
 * before `today` (local) to 8 days before it, sparser than the demo's coming weeks (fill 0.05), each
 * made 1 to 90 days before its departure, so bookings were CREATED on every day of the last `days`
 * days, over every channel of the vendor (our checkout, Viator, GetYourGuide, Expedia, direct, a
 * reseller), some cancelled. The demo's own days (a week back on) are generated apart.
 */
export const generateSalesHistory = (
  store: Store,
  spec: { readonly vendorId: number; readonly today: string; readonly seed: number; readonly days?: number }
) =>
  generateBookings(store, {
    vendorId: spec.vendorId,
    from: addDays(spec.today, -(spec.days ?? SALES_HISTORY_DAYS)),
    to: addDays(spec.today, -8),
    seed: spec.seed,
    fill: 0.05,
    maxLeadDays: 90
  })

export interface DemoSpec {
  readonly title: string
  readonly timezone: string
  readonly currency: string
  readonly seed?: number
  /** Days before today (local) with bookings. Default 7. */
  readonly daysBack?: number
  /** Days after today (local) with bookings. Default 30. */
  readonly daysAhead?: number
  /** Days from today (local) sold out. Default 4 (today and the next 3). */
  readonly fullDays?: number
  readonly accessKey?: string
  readonly secretKey?: string
}

/** A vendor with the demo products and bookings around today in its own time zone; today and the next days full. */
export const seedDemoVendor = (store: Store, spec: DemoSpec) =>
  Effect.gen(function*() {
    const vendor = yield* createVendor(store, {
      title: spec.title,
      timezone: spec.timezone,
      currency: spec.currency,
      ...(spec.accessKey ? { accessKey: spec.accessKey } : {}),
      ...(spec.secretKey ? { secretKey: spec.secretKey } : {}),
      products: demoProducts(spec.currency)
    })
    const today = localDay(yield* Clock.currentTimeMillis, spec.timezone)
    const full = Array.from({ length: spec.fullDays ?? 4 }, (_, i) => addDays(today, i))
    const generated = yield* generateBookings(store, {
      vendorId: vendor.id,
      from: addDays(today, -(spec.daysBack ?? 7)),
      to: addDays(today, spec.daysAhead ?? 30),
      seed: spec.seed ?? 42,
      fullDays: full
    })
    return { vendor, today, fullDays: full, ...generated }
  })
