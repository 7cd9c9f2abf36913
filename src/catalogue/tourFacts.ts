/**
 * The booking system's facts of a linked tour, as the catalogue stores them (migration 0012):
 * rating, duration, priced per booking, usual departure times, pricing categories and rates, taken
 * from the port's `Product` and made to fit the tables' checks. Anything the tables would refuse
 * becomes "unknown" (null) or is left out, never a failed refresh.
 */
import type { Product } from "../ports/BookingSystem.js"

export interface TourFacts {
  readonly rating: { readonly average: number; readonly count: number } | null
  readonly durationMinutes: number | null
  readonly pricedPerBooking: boolean
  /** Local HH:MM, sorted, each once. */
  readonly departureTimes: ReadonlyArray<string>
  /** In the booking system's order; at most one default (the first it marks). */
  readonly pricingCategories: ReadonlyArray<{
    readonly id: string
    readonly title: string
    readonly isDefault: boolean
    readonly minAge: number | null
    readonly maxAge: number | null
  }>
  /** In the booking system's order. */
  readonly rates: ReadonlyArray<{ readonly id: string; readonly title: string; readonly description: string | null }>
}

const HH_MM = /^([01][0-9]|2[0-3]):[0-5][0-9]$/

const age = (n: number | null): number | null => n !== null && Number.isInteger(n) && n >= 0 && n <= 120 ? n : null

/** Ids as the tables take them (1 to 100 characters), each once: the first occurrence wins. */
const uniqueById = <A extends { readonly id: string }>(items: ReadonlyArray<A>): Array<A> => {
  const seen = new Set<string>()
  return items.filter((i) => {
    if (i.id.length < 1 || i.id.length > 100 || seen.has(i.id)) return false
    seen.add(i.id)
    return true
  })
}

export const tourFactsOf = (p: Product): TourFacts => {
  const r = p.rating
  const rating = r !== null && Number.isFinite(r.average) && r.average >= 0 && r.average <= 5 &&
      Number.isInteger(r.count) && r.count >= 0
    ? { average: Math.round(r.average * 100) / 100, count: r.count }
    : null
  const d = p.durationMinutes
  let defaultSeen = false
  const pricingCategories = uniqueById(p.pricingCategories).map((c) => {
    const isDefault = c.isDefault && !defaultSeen
    if (isDefault) defaultSeen = true
    const minAge = age(c.minAge)
    const maxAge = age(c.maxAge)
    // An inverted range says nothing reliable about either end.
    const inverted = minAge !== null && maxAge !== null && minAge > maxAge
    return { id: c.id, title: c.title, isDefault, minAge: inverted ? null : minAge, maxAge: inverted ? null : maxAge }
  })
  return {
    rating,
    durationMinutes: d !== null && Number.isFinite(d) && d >= 1 ? Math.round(d) : null,
    pricedPerBooking: p.pricedPerBooking,
    departureTimes: [...new Set(p.startTimes.map((s) => s.time).filter((t) => HH_MM.test(t)))].sort(),
    pricingCategories,
    rates: uniqueById(p.rates).map((x) => ({ id: x.id, title: x.title, description: x.description }))
  }
}
