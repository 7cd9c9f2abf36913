/**
 * Desk sales (Quickbook spec §2, §4 POST /quote, §8): guest types, slots and the cart line, as pure
 * functions. The services read tours and departures and store sales; these decide.
 *
 * Choices the spec leaves open (docs/decisions.md "Quickbook: tours, slots, quote"):
 * - a guest type's key is its pricing category's title as a slug (`Adult` → `adult`), or `cat_<id>`
 *   when the slug is empty or taken by another category of the tour;
 * - the desk sells the tour's first rate (by position) that prices the departure;
 * - a quote stands for `QUOTE_VALIDITY_MINUTES`;
 * - VAT: every desk sale is a Norwegian passenger transport / experience at `DESK_VAT_PERCENT` (12%),
 *   VAT included in the price; the tax line is the VAT part of the total.
 */
import { randomInt } from "node:crypto"
import { addDays } from "../../domain/localDay.js"
import { hasStarted } from "../../partner/reschedules/rules.js"
import type { DepartureAvailability } from "../../ports/BookingSystem.js"

export const QUOTE_MAX_ENTRIES = 10
export const QUOTE_MAX_GUESTS = 50
export const QUOTE_VALIDITY_MINUTES = 15
export const DESK_VAT_PERCENT = 12
export const ORDER_LINE_MAX = 40
export const REFERENCE_PREFIX = "SVC-"
/** How far ahead a desk reads tours and slots and quotes: a year (366 days) after today. */
export const DESK_DAYS_AHEAD = 366

/**
 * The days a desk may ask about (query `date` of tours and slots, `start.date` of a quote): from
 * yesterday to `DESK_DAYS_AHEAD` days after today, counted from the UTC day at `now` and widened by
 * one day on each side so that every tour's local day is inside (zones run from UTC-12 to UTC+14).
 * Anything else is a bad request (issue 11 item 9): a day that cannot be sold, and years the
 * booking system and the date arithmetic cannot take (e.g. 9999-12-31). Undefined when allowed,
 * else the rule, to follow the parameter's name.
 */
export const deskDayProblem = (day: string, now: Date): string | undefined => {
  const today = now.toISOString().slice(0, 10)
  const first = addDays(today, -1)
  const last = addDays(today, DESK_DAYS_AHEAD + 1)
  return day >= first && day <= last ? undefined : `must be a day from ${first} to ${last} (yesterday to a year ahead)`
}

const REFERENCE_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
export const REFERENCE_PATTERN = /^SVC-[A-Z0-9]{10}$/

export const newReference = () => {
  let s = REFERENCE_PREFIX
  for (let i = 0; i < 10; i++) s += REFERENCE_ALPHABET[randomInt(REFERENCE_ALPHABET.length)]
  return s
}

export interface Category {
  readonly id: string
  readonly title: string
  readonly isDefault: boolean
  readonly minAge: number | null
  readonly maxAge: number | null
}

export interface GuestType {
  readonly type: string
  readonly label: string
  readonly categoryId: string
  readonly isDefault: boolean
  readonly minAge: number | null
  readonly maxAge: number | null
}

const slug = (title: string) =>
  title.toLowerCase().normalize("NFKD").replace(/[\u0300-\u036f]/g, "").replace(/[^a-z0-9]+/g, "_").replace(
    /^_+|_+$/g,
    ""
  )

/** The guest types of a tour from its pricing categories, in their order; keys unique. */
export const guestTypesOf = (categories: ReadonlyArray<Category>): Array<GuestType> => {
  const counts = new Map<string, number>()
  for (const c of categories) counts.set(slug(c.title), (counts.get(slug(c.title)) ?? 0) + 1)
  return categories.map((c) => {
    const s = slug(c.title)
    return {
      type: s !== "" && counts.get(s) === 1 && !s.startsWith("cat_") ? s : `cat_${c.id}`,
      label: c.title,
      categoryId: c.id,
      isDefault: c.isDefault,
      minAge: c.minAge,
      maxAge: c.maxAge
    }
  })
}

export interface SlotPrice {
  readonly type: string
  readonly label: string
  readonly unitMinor: number
}

export interface Slot {
  readonly time: string
  readonly startTimeId: string
  readonly rateId: string | null
  /** null: no seat limit. */
  readonly seatsLeft: number | null
  readonly soldOut: boolean
  readonly guests: ReadonlyArray<SlotPrice>
}

/**
 * The day's slots: departures of `date` with a start time that have not started, by time; the
 * prices are those of the first of `rateIds` that prices the departure, in the tour's currency.
 */
export const slotsOf = (
  departures: ReadonlyArray<DepartureAvailability>,
  ctx: {
    readonly date: string
    readonly timeZone: string
    readonly currency: string
    readonly rateIds: ReadonlyArray<string>
    readonly guestTypes: ReadonlyArray<GuestType>
    readonly now: Date
  }
): Array<Slot> =>
  departures
    .filter((d) =>
      d.date === ctx.date && d.startTime !== null && !hasStarted(d.date, d.startTime, ctx.timeZone, ctx.now)
    )
    .sort((a, b) => a.startTime!.localeCompare(b.startTime!) || a.startTimeId.localeCompare(b.startTimeId))
    .map((d) => {
      const ordered = [...d.rates].sort((a, b) => rank(ctx.rateIds, a.rateId) - rank(ctx.rateIds, b.rateId))
      const rate = ordered.find((r) => r.prices.some((p) => p.currency === ctx.currency))
      const guests: Array<SlotPrice> = []
      for (const g of ctx.guestTypes) {
        const price = rate?.prices.find((p) => p.pricingCategoryId === g.categoryId && p.currency === ctx.currency)
        if (price) guests.push({ type: g.type, label: g.label, unitMinor: price.amountMinor })
      }
      const soldOut = d.soldOut || (d.seatsLeft !== null && d.seatsLeft <= 0)
      return {
        time: d.startTime!,
        startTimeId: d.startTimeId,
        rateId: rate?.rateId ?? null,
        seatsLeft: d.soldOut ? 0 : d.seatsLeft,
        soldOut,
        guests
      }
    })

const rank = (ids: ReadonlyArray<string>, id: string) => {
  const i = ids.indexOf(id)
  return i === -1 ? ids.length : i
}

/** VAT included in `totalMinor` at `percent`, rounded to the minor unit. */
export const vatIncluded = (totalMinor: number, percent = DESK_VAT_PERCENT) =>
  Math.round((totalMinor * percent) / (100 + percent))

/** Receipt label: tour name, date and time, at most 40 characters (the name is shortened). */
export const orderLineText = (tourName: string, date: string, time: string) => {
  const tail = ` ${date} ${time}`
  const room = ORDER_LINE_MAX - tail.length
  const name = tourName.trim().replace(/\s+/g, " ")
  const short = name.length <= room ? name : name.slice(0, room).trimEnd()
  return `${short}${tail}`
}
