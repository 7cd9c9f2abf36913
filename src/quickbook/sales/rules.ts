/**
 * Desk sales (Quickbook spec §2, §4 POST /quote, §8): guest types, slots and the cart line, as pure
 * functions. The services read tours and departures and store sales; these decide.
 *
 * Choices the spec leaves open (docs/decisions.md "Quickbook: tours, slots, quote"):
 * - a guest type's key is its pricing category's title as a slug (`Adult` → `adult`), or `cat_<id>`
 *   when the slug is empty, taken by another category of the tour, or the cart line's reserved
 *   `booking` (`BOOKING_LINE_TYPE`);
 * - the desk sells the tour's first rate (by position) that prices the departure;
 * - a rate priced per booking (a private tour) costs its one price whatever the party: the slot's
 *   `bookingPriceMinor`, guests at 0, and the cart line carries the booking price as an entry of its
 *   own (`partyLinesOf`, the one rule of quote and book);
 * - a quote stands for `QUOTE_VALIDITY_MINUTES`;
 * - VAT: every desk sale is a Norwegian passenger transport / experience at `DESK_VAT_PERCENT` (12%),
 *   VAT included in the price; the tax line is the VAT part of the total.
 */
import { Either } from "effect"
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

/**
 * The key of the cart line's entry for a booking price (`partyLinesOf`): never a guest type's key,
 * so it is never sold, held or booked as a pricing category.
 */
export const BOOKING_LINE_TYPE = "booking"
export const BOOKING_LINE_LABEL = "Private booking (whole party)"

/** The guest types of a tour from its pricing categories, in their order; keys unique and never `booking`. */
export const guestTypesOf = (categories: ReadonlyArray<Category>): Array<GuestType> => {
  const counts = new Map<string, number>()
  for (const c of categories) counts.set(slug(c.title), (counts.get(slug(c.title)) ?? 0) + 1)
  return categories.map((c) => {
    const s = slug(c.title)
    return {
      type: s !== "" && counts.get(s) === 1 && !s.startsWith("cat_") && s !== BOOKING_LINE_TYPE ? s : `cat_${c.id}`,
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
  /** Guest prices; 0 each when the rate is priced per booking. */
  readonly guests: ReadonlyArray<SlotPrice>
  /** What any party costs when the rate is priced per booking (a private tour); null: priced per guest. */
  readonly bookingPriceMinor: number | null
}

type Rate = DepartureAvailability["rates"][number]

/**
 * Whether a rate prices a departure in `currency`: a rate priced per booking by its booking price
 * (whatever its per-guest rows say), any other by a per-guest price in that currency.
 */
const pricesIn = (rate: Rate, currency: string) =>
  rate.pricePerBooking != null
    ? rate.pricePerBooking.currency === currency
    : rate.prices.some((p) => p.currency === currency)

/**
 * The guest prices of a rate for the tour's guest types. Per guest: each type with a price in
 * `currency`. Priced per booking (the partner API's `partyPrice` rule, docs/decisions.md "Priced per
 * booking"): a rate that lists no per-guest prices sells every type, one that lists some sells the
 * types it lists (in `currency`); each at 0, the party paying the booking price once.
 */
const guestPricesOf = (rate: Rate | undefined, currency: string, guestTypes: ReadonlyArray<GuestType>) => {
  const guests: Array<SlotPrice> = []
  if (rate === undefined) return guests
  const perBooking = rate.pricePerBooking != null
  for (const g of guestTypes) {
    const price = rate.prices.find((p) => p.pricingCategoryId === g.categoryId && p.currency === currency)
    if (perBooking && (price !== undefined || rate.prices.length === 0)) {
      guests.push({ type: g.type, label: g.label, unitMinor: 0 })
    } else if (!perBooking && price !== undefined) {
      guests.push({ type: g.type, label: g.label, unitMinor: price.amountMinor })
    }
  }
  return guests
}

/**
 * The day's slots: departures of `date` with a start time that have not started, by time; the
 * prices are those of the first of `rateIds` that prices the departure in the tour's currency
 * (per guest, or per booking: see `pricesIn`, `guestPricesOf`).
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
      const rate = ordered.find((r) => pricesIn(r, ctx.currency))
      const guests = guestPricesOf(rate, ctx.currency, ctx.guestTypes)
      const soldOut = d.soldOut || (d.seatsLeft !== null && d.seatsLeft <= 0)
      return {
        time: d.startTime!,
        startTimeId: d.startTimeId,
        rateId: rate?.rateId ?? null,
        seatsLeft: d.soldOut ? 0 : d.seatsLeft,
        soldOut,
        guests,
        bookingPriceMinor: rate?.pricePerBooking != null ? rate.pricePerBooking.amountMinor : null
      }
    })

/** An entry of the cart line's `guests`: `lineMinor` is `unitMinor` × `count`. */
export interface CartGuestLine {
  readonly type: string
  readonly label: string
  readonly count: number
  readonly unitMinor: number
  readonly lineMinor: number
}

/**
 * What a party costs at a slot's prices, as the cart line's `guests`: an entry per guest type of
 * the party (its count × the slot's unit price; 0 on a rate priced per booking) and, when the slot
 * has a booking price, one more entry for it (`BOOKING_LINE_TYPE`, count 1), so that the entries
 * always add up to the total (`cartTotal`). The one pricing rule of the quote and of the book's
 * live-price check. Left: a guest type of the party the slot has no price for.
 */
export const partyLinesOf = (
  party: ReadonlyArray<{ readonly type: string; readonly count: number }>,
  slot: Pick<Slot, "guests" | "bookingPriceMinor">
): Either.Either<Array<CartGuestLine>, string> => {
  const lines: Array<CartGuestLine> = []
  for (const g of party) {
    const price = slot.guests.find((p) => p.type === g.type)
    if (price === undefined) return Either.left(g.type)
    lines.push({
      type: g.type,
      label: price.label,
      count: g.count,
      unitMinor: price.unitMinor,
      lineMinor: price.unitMinor * g.count
    })
  }
  if (slot.bookingPriceMinor !== null) {
    const p = slot.bookingPriceMinor
    lines.push({ type: BOOKING_LINE_TYPE, label: BOOKING_LINE_LABEL, count: 1, unitMinor: p, lineMinor: p })
  }
  return Either.right(lines)
}

/** The cart line's total: its entries' `lineMinor` added up. */
export const cartTotal = (lines: ReadonlyArray<Pick<CartGuestLine, "lineMinor">>) =>
  lines.reduce((n, g) => n + g.lineMinor, 0)

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
