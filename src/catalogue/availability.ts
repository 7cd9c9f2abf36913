/**
 * A tour's live availability and its season (spec §2 "Tour" `from_price`/`season`, "Availability",
 * §8): what the booking system's departures mean for a guest. Pure code, no I/O: the services read
 * the departures through the BookingSystem port (src/catalogue/readDepartures.ts) and these
 * functions decide. See docs/api/tours.md and docs/decisions.md ("Tour availability: …").
 *
 * Words used here:
 * - a departure is **bookable** when the booking system has it on sale (not sold out, seats left or
 *   no seat limit) and it has not started in the tour's time zone;
 * - the **adult price** of a departure is the lowest price of the tour's default pricing category
 *   over the departure's rates, in the tour's currency. The port gives the booking system's prices;
 *   the service's checkout discounts (date-based or otherwise) are never part of them.
 */
import { Schema } from "effect"
import { DateString, LocalTime } from "../domain/dates.js"
import { addDays, checkDayRange, dayCount, daysBetween, localDayAt } from "../domain/localDay.js"
import { hasStarted, UNLIMITED_REMAINING } from "../partner/reschedules/rules.js"
import type { DepartureAvailability } from "../ports/BookingSystem.js"

/** Longest range of `GET /tours/{id}/availability`, in days (both ends included). */
export const AVAILABILITY_MAX_DAYS = 366
/** Ranges up to this many days also list their departures. */
export const DEPARTURES_MAX_DAYS = 14
/** Largest `pax` (a party bigger than this is a group request, not a widget's). */
export const AVAILABILITY_PAX_MAX = 100
/** Days of one availability request to the booking system; longer ranges are read in chunks. */
export const CHUNK_DAYS = 31
/** `from_price` ignores departures on the first days of the season: today and the next 6. */
export const SEASON_PRICE_SKIP_DAYS = 7

// ---------------------------------------------------------------------------------------------
// Ranges

/** `[from, to]` cut into consecutive pieces of at most `size` days. */
export const chunksOf = (from: string, to: string, size = CHUNK_DAYS): Array<{ from: string; to: string }> => {
  const chunks: Array<{ from: string; to: string }> = []
  for (let start = from; start <= to; start = addDays(start, size)) {
    const end = addDays(start, size - 1)
    chunks.push({ from: start, to: end < to ? end : to })
  }
  return chunks
}

/** The range rule of the availability endpoint; Left names the parameter and the rule. */
export const checkRange = (from: string, to: string) => checkDayRange(from, to, AVAILABILITY_MAX_DAYS)

/**
 * The season of a tour on its local day `today`: the next 12 months, today included (up to the day
 * before the same date next year), and the part `from_price` looks at (from today + 7 days).
 */
export const seasonWindow = (today: string) => {
  const [y, m, d] = today.split("-").map(Number) as [number, number, number]
  // Feb 29 rolls to Mar 1 of the next year, so the window ends on Feb 28.
  const nextYear = new Date(Date.UTC(y + 1, m - 1, d)).toISOString().slice(0, 10)
  return { from: today, to: addDays(nextYear, -1), priceFrom: addDays(today, SEASON_PRICE_SKIP_DAYS) }
}

// ---------------------------------------------------------------------------------------------
// Departures

export interface PriceContext {
  /** IANA zone of the tour's days and start times. */
  readonly timeZone: string
  /** The tour's currency: prices in another currency are left out, never shown as this one. */
  readonly currency: string
  /** The tour's default (adult) pricing category: the booking system's id. null: prices unknown. */
  readonly defaultCategoryId: string | null
  readonly now: Date
}

export const isBookable = (d: DepartureAvailability, timeZone: string, now: Date) =>
  !d.soldOut && (d.seatsLeft === null || d.seatsLeft > 0) && !hasStarted(d.date, d.startTime, timeZone, now)

/** Lowest price of the default category over the departure's rates; null when it has none. */
export const adultPrice = (d: DepartureAvailability, ctx: Pick<PriceContext, "currency" | "defaultCategoryId">) => {
  if (ctx.defaultCategoryId === null) return null
  let lowest: number | null = null
  for (const rate of d.rates) {
    for (const p of rate.prices) {
      if (p.pricingCategoryId !== ctx.defaultCategoryId || p.currency !== ctx.currency) continue
      if (lowest === null || p.amountMinor < lowest) lowest = p.amountMinor
    }
  }
  return lowest
}

const lowest = (values: ReadonlyArray<number | null>) =>
  values.reduce<number | null>((min, v) => (v !== null && (min === null || v < min) ? v : min), null)

export interface SeasonFacts {
  /** Lowest adult price of the bookable departures from today + 7 days to the season's end. */
  readonly fromPriceMinor: number | null
  /** First day from today with a bookable departure within the season. */
  readonly nextAvailableDate: string | null
}

/** `from_price` and `season.next_available_date` from the departures of the season. */
export const seasonOf = (departures: ReadonlyArray<DepartureAvailability>, ctx: PriceContext): SeasonFacts => {
  const window = seasonWindow(localDayAt(ctx.timeZone, ctx.now))
  let next: string | null = null
  const prices: Array<number | null> = []
  for (const d of departures) {
    if (d.date < window.from || d.date > window.to || !isBookable(d, ctx.timeZone, ctx.now)) continue
    if (next === null || d.date < next) next = d.date
    if (d.date >= window.priceFrom) prices.push(adultPrice(d, ctx))
  }
  return { fromPriceMinor: lowest(prices), nextAvailableDate: next }
}

// ---------------------------------------------------------------------------------------------
// The availability answer

export const AvailabilityDay = Schema.Struct({
  date: DateString,
  available: Schema.Boolean.annotations({
    description: "true when the day has a bookable departure (on sale, seats left, not started), whatever `pax`; " +
      "false when it has none. When `known` is false every day is true: unknown is never sold out (show the day as " +
      "open and let the checkout confirm)."
  }),
  from_price_minor: Schema.NullOr(Schema.Int).annotations({
    description:
      "The day's lowest regular adult price: the default pricing category's lowest price over the rates of " +
      "the day's bookable departures, before checkout discounts. null when the day has no bookable departure, no " +
      "adult price, or `known` is false."
  })
}).annotations({ identifier: "AvailabilityDay" })

export const DeparturePrice = Schema.Struct({
  pricing_category_id: Schema.String.annotations({ description: "A `pricing_categories[].id` of the tour." }),
  amount_minor: Schema.Int.annotations({ description: "Per person, or per booking for a tour priced per booking." })
}).annotations({ identifier: "DeparturePrice" })

export const DepartureRate = Schema.Struct({
  rate_id: Schema.String.annotations({ description: "A `rates[].id` of the tour." }),
  prices: Schema.Array(DeparturePrice)
}).annotations({ identifier: "DepartureRate" })

export const AvailabilityDeparture = Schema.Struct({
  date: DateString,
  start_time: Schema.NullOr(LocalTime).annotations({
    description: "Local HH:MM in `timezone`; null when the booking system gives none."
  }),
  start_time_id: Schema.String.annotations({ description: "The booking system's id of the departure's start time." }),
  remaining: Schema.Int.annotations({
    description: "Seats left (0: sold out or closed; 9999: no seat limit), as in reschedule options."
  }),
  fits_party: Schema.Boolean.annotations({ description: "true when `remaining` is at least `pax`." }),
  rates: Schema.Array(DepartureRate).annotations({
    description: "The booking system's prices per rate and pricing category, before checkout discounts."
  })
}).annotations({ identifier: "AvailabilityDeparture" })

export const TourAvailability = Schema.Struct({
  tour_id: Schema.String,
  timezone: Schema.String.annotations({ description: "IANA time zone of the dates and start times." }),
  currency: Schema.String.annotations({ description: "ISO 4217: the currency of every amount." }),
  from: DateString,
  to: DateString,
  pax: Schema.Int,
  known: Schema.Boolean.annotations({
    description: "false when the booking system did not answer in time (or the tour is not linked to one): every " +
      "day then has `available` true (unknown is never sold out) and `from_price_minor` null, and `departures` is null."
  }),
  days: Schema.Array(AvailabilityDay).annotations({ description: "Every day from `from` to `to`, in order." }),
  departures: Schema.NullOr(Schema.Array(AvailabilityDeparture)).annotations({
    description: `For ranges of up to ${DEPARTURES_MAX_DAYS} days: the departures that have not started, by date and ` +
      `start time, sold-out ones included. null for longer ranges and when \`known\` is false.`
  })
}).annotations({ identifier: "TourAvailability" })
export type TourAvailability = typeof TourAvailability.Type

export interface AvailabilityQuery {
  readonly from: string
  readonly to: string
  readonly pax: number
}

/** Every day of the range unknown: never "sold out", so each is open (`available` true) without a price. */
export const unknownDays = (q: Pick<AvailabilityQuery, "from" | "to">) =>
  ({
    known: false,
    days: daysBetween(q.from, q.to).map((date) => ({ date, available: true, from_price_minor: null })),
    departures: null
  }) as const

const remainingOf = (d: DepartureAvailability) => (d.soldOut ? 0 : d.seatsLeft ?? UNLIMITED_REMAINING)

/** The days (and, for short ranges, the departures) of a range from the booking system's departures. */
export const knownDays = (
  departures: ReadonlyArray<DepartureAvailability>,
  q: AvailabilityQuery,
  ctx: PriceContext
) => {
  const inRange = departures.filter((d) => d.date >= q.from && d.date <= q.to)
  const byDay = new Map<string, Array<DepartureAvailability>>()
  for (const d of inRange) {
    if (!isBookable(d, ctx.timeZone, ctx.now)) continue
    const list = byDay.get(d.date)
    if (list) list.push(d)
    else byDay.set(d.date, [d])
  }
  const days = daysBetween(q.from, q.to).map((date) => {
    const bookable = byDay.get(date) ?? []
    return { date, available: bookable.length > 0, from_price_minor: lowest(bookable.map((d) => adultPrice(d, ctx))) }
  })
  const listed = dayCount(q.from, q.to) <= DEPARTURES_MAX_DAYS
    ? inRange
      .filter((d) => !hasStarted(d.date, d.startTime, ctx.timeZone, ctx.now))
      .sort((a, b) =>
        a.date.localeCompare(b.date) || (a.startTime ?? "").localeCompare(b.startTime ?? "") ||
        a.startTimeId.localeCompare(b.startTimeId)
      )
      .map((d) => {
        const remaining = remainingOf(d)
        return {
          date: d.date,
          start_time: d.startTime,
          start_time_id: d.startTimeId,
          remaining,
          fits_party: remaining >= q.pax,
          rates: d.rates.map((r) => ({
            rate_id: r.rateId,
            prices: r.prices
              .filter((p) => p.currency === ctx.currency)
              .map((p) => ({ pricing_category_id: p.pricingCategoryId, amount_minor: p.amountMinor }))
          }))
        }
      })
    : null
  return { known: true, days, departures: listed } as const
}
