/**
 * Reschedule rules (spec §2 "Reschedule options", §3, §4): whether a booking can move at all, which
 * departures of a day it can move to at the same price, and what a reschedule request decides.
 * Pure code, no I/O: the service reads the booking, the booking system's line and one day's
 * availability, and these functions decide. See docs/decisions.md ("Reschedule: ...").
 */
import { Either } from "effect"
import { localMinuteAt } from "../../domain/localDay.js"
import type { BookingLine, DepartureAvailability, DepartureRate } from "../../ports/BookingSystem.js"

/**
 * An unpaid pay-later booking cannot move once its charge is this close (or past): the charge job
 * may be running, and moving it then would race the charge of the old departure.
 */
export const PAY_LATER_MARGIN_HOURS = 24

/** `remaining` for a departure without a seat limit (the spec's field is an integer). */
export const UNLIMITED_REMAINING = 9999

/** The service's booking, as far as rescheduling cares. */
export interface BookingFacts {
  /** Stored status: RESERVED, CONFIRMED, CANCELLED, REFUNDED. */
  readonly status: string
  readonly experienceDate: string | null
  readonly startTime: string | null
  readonly timezone: string
  /** Set only when the booking, its tour's product and its operator's account are all known. */
  readonly linked: boolean
  readonly paymentStrategy: "pay_now" | "pay_later"
  readonly payLaterChargeAt: Date | null
  readonly payLaterPaidAt: Date | null
}

/** Why a booking cannot move at all (the `detail` of options and of the 422). */
export const NOT_RESCHEDULABLE = {
  cancelled: "the booking is cancelled",
  notLinked: "the booking is not linked to a booking system (no booking reference, product or account)",
  started: "the tour has already started",
  payLater:
    `the pay-later balance is charged within ${PAY_LATER_MARGIN_HOURS} hours (or is overdue); it cannot move now`
} as const

/** Why a booking cannot move to one day / departure. */
export const NOT_AVAILABLE = {
  noDeparture: (date: string) => `date unavailable: no departure on ${date}`,
  noStartTime: (date: string, id: string) => `date unavailable: no departure with start_time_id ${id} on ${date}`,
  noRate: (id: string) => `date unavailable: the departure has no rate ${id}`,
  departed: (date: string) => `date unavailable: the departure on ${date} has already left`,
  soldOut: (date: string, needed: number) => `date unavailable: not enough seats on ${date} for ${needed} participants`,
  priceDiffers: "price differs: the new departure costs a different amount; only moves at the same price are possible"
} as const

export { localMinuteAt }

/** A departure has started when the local time has reached its start (00:00 when it has none). */
export const hasStarted = (date: string, startTime: string | null, timeZone: string, now: Date): boolean =>
  `${date}T${startTime ?? "00:00"}` <= localMinuteAt(timeZone, now)

/** Whether the booking can move at all; Left is the reason it cannot. */
export const checkReschedulable = (b: BookingFacts, now: Date): Either.Either<void, string> => {
  if (b.status === "CANCELLED" || b.status === "REFUNDED") return Either.left(NOT_RESCHEDULABLE.cancelled)
  if (!b.linked || b.experienceDate === null) return Either.left(NOT_RESCHEDULABLE.notLinked)
  if (hasStarted(b.experienceDate, b.startTime, b.timezone, now)) return Either.left(NOT_RESCHEDULABLE.started)
  if (
    b.paymentStrategy === "pay_later" && b.payLaterPaidAt === null && b.payLaterChargeAt !== null &&
    b.payLaterChargeAt.getTime() - now.getTime() <= PAY_LATER_MARGIN_HOURS * 3_600_000
  ) return Either.left(NOT_RESCHEDULABLE.payLater)
  return Either.right(undefined)
}

/**
 * The party's price at a rate of a departure, from the booking system's prices (before any checkout
 * discount): per guest, each pricing category's unit price times its guests (adults, children …);
 * a rate priced per booking costs its `pricePerBooking` whatever the party's size. null when a
 * category of the party is not sold on the rate, or a price is in another currency than `currency`.
 */
export const partyPrice = (
  pax: BookingLine["pax"],
  rate: Pick<DepartureRate, "prices" | "pricePerBooking">,
  currency: string
): number | null => {
  let perGuest = 0
  for (const p of pax) {
    if (p.quantity <= 0) continue
    const price = rate.prices.find((x) => x.pricingCategoryId === p.pricingCategoryId)
    // A rate priced per booking may list no per-guest prices at all: then every category is sold.
    if (price === undefined) {
      if (rate.pricePerBooking != null && rate.prices.length === 0) continue
      return null
    }
    if (price.currency !== currency) return null
    perGuest += price.amountMinor * p.quantity
  }
  if (rate.pricePerBooking != null) {
    return rate.pricePerBooking.currency === currency ? rate.pricePerBooking.amountMinor : null
  }
  return perGuest
}

/**
 * "Same price": the party's price at the new departure and rate equals the booking system's own
 * total for the line (what the line costs in the booking system, before our checkout discounts),
 * in the line's currency.
 */
export const samePrice = (line: BookingLine, rate: Pick<DepartureRate, "prices" | "pricePerBooking">) =>
  partyPrice(line.pax, rate, line.currency) === line.totalMinor

export interface RescheduleOption {
  readonly start_time_id: string
  readonly rate_id: string | null
  readonly start_time: string | null
  readonly label: string | null
  readonly remaining: number
}

export interface DayOptions {
  readonly available: boolean
  readonly price_differs: boolean
  readonly detail: string | null
  readonly options: ReadonlyArray<RescheduleOption>
}

const isCurrent = (line: BookingLine, d: DepartureAvailability) =>
  d.date === line.date && d.startTimeId === line.startTimeId

const seatsFor = (line: BookingLine, d: DepartureAvailability) => (isCurrent(line, d) ? 0 : line.participants)

const hasRoom = (line: BookingLine, d: DepartureAvailability) => {
  const needed = seatsFor(line, d)
  if (needed === 0) return true
  return !d.soldOut && (d.seatsLeft === null || d.seatsLeft >= needed)
}

const labelOf = (startTime: string | null, rateTitle: string | null) =>
  [startTime, rateTitle].filter((x) => x !== null && x !== "").join(" · ") || null

/**
 * The departures of `date` the line can move to: room for the party, not yet left, same price.
 * `price_differs` when some departure has room but none at the same price.
 */
export const dayOptions = (
  line: BookingLine,
  date: string,
  departures: ReadonlyArray<DepartureAvailability>,
  timeZone: string,
  now: Date
): DayOptions => {
  const day = departures.filter((d) => d.date === date && !hasStarted(d.date, d.startTime, timeZone, now))
  const withRoom = day.filter((d) => hasRoom(line, d))
  const options: Array<RescheduleOption> = []
  for (const d of withRoom) {
    for (const rate of d.rates) {
      if (!samePrice(line, rate)) continue
      options.push({
        start_time_id: d.startTimeId,
        rate_id: rate.rateId,
        start_time: d.startTime,
        label: labelOf(d.startTime, rate.title),
        remaining: d.seatsLeft ?? UNLIMITED_REMAINING
      })
    }
  }
  options.sort((a, b) =>
    (a.start_time ?? "99:99").localeCompare(b.start_time ?? "99:99") ||
    a.start_time_id.localeCompare(b.start_time_id) ||
    (a.rate_id ?? "").localeCompare(b.rate_id ?? "")
  )
  if (options.length > 0) return { available: true, price_differs: false, detail: null, options }
  if (withRoom.length > 0) {
    return { available: false, price_differs: true, detail: NOT_AVAILABLE.priceDiffers, options: [] }
  }
  if (day.length === 0) {
    const any = departures.some((d) => d.date === date)
    return {
      available: false,
      price_differs: false,
      detail: any ? NOT_AVAILABLE.departed(date) : NOT_AVAILABLE.noDeparture(date),
      options: []
    }
  }
  return { available: false, price_differs: false, detail: NOT_AVAILABLE.soldOut(date, line.participants), options: [] }
}

export interface RescheduleRequest {
  readonly date: string
  readonly start_time_id?: string | undefined
  readonly rate_id?: string | undefined
}

/** Where the line goes (`rateId` is the rate it will have; `changeRate` when that is not its rate now). */
export interface MoveTarget {
  readonly date: string
  readonly startTimeId: string
  readonly startTime: string | null
  readonly rateId: string | null
  readonly rateTitle: string | null
  readonly changeRate: boolean
}

/** A request for the departure the line is on already (same date and start time, rate kept). */
export const isAlreadyOn = (line: BookingLine, request: RescheduleRequest) =>
  request.date === line.date &&
  (request.start_time_id === undefined || request.start_time_id === line.startTimeId) &&
  (request.rate_id === undefined || request.rate_id === line.rateId)

/**
 * Picks and checks the departure a request moves the line to. Without `start_time_id` the line
 * keeps its time of day (the departure of `date` at the same local start time, else the same start
 * time id); without `rate_id` it keeps its rate. Left: the 422 detail.
 */
export const decideMove = (
  line: BookingLine,
  request: RescheduleRequest,
  departures: ReadonlyArray<DepartureAvailability>,
  timeZone: string,
  now: Date
): Either.Either<MoveTarget, string> => {
  const day = departures.filter((d) => d.date === request.date)
  if (day.length === 0) return Either.left(NOT_AVAILABLE.noDeparture(request.date))
  const departure = request.start_time_id !== undefined
    ? day.find((d) => d.startTimeId === request.start_time_id)
    : (day.find((d) => line.startTime !== null && d.startTime === line.startTime) ??
      day.find((d) => d.startTimeId === line.startTimeId))
  if (departure === undefined) {
    return Either.left(
      request.start_time_id !== undefined
        ? NOT_AVAILABLE.noStartTime(request.date, request.start_time_id)
        : `date unavailable: no departure at ${
          line.startTime ?? "the booking's start time"
        } on ${request.date}; pick a start_time_id`
    )
  }
  if (hasStarted(departure.date, departure.startTime, timeZone, now)) {
    return Either.left(NOT_AVAILABLE.departed(request.date))
  }
  const rateId = request.rate_id ?? line.rateId
  const rate = rateId === null ? departure.rates[0] : departure.rates.find((r) => r.rateId === rateId)
  if (rate === undefined) return Either.left(NOT_AVAILABLE.noRate(rateId ?? "(none)"))
  if (!hasRoom(line, departure)) return Either.left(NOT_AVAILABLE.soldOut(request.date, line.participants))
  if (!samePrice(line, rate)) return Either.left(NOT_AVAILABLE.priceDiffers)
  return Either.right({
    date: departure.date,
    startTimeId: departure.startTimeId,
    startTime: departure.startTime,
    rateId: rate.rateId,
    rateTitle: rate.title,
    // Only an asked-for rate changes it (a line without a rate keeps having none).
    changeRate: request.rate_id !== undefined && rate.rateId !== line.rateId
  })
}

/** Whether the booking system's line is on the target departure (a move happened). */
export const isOnTarget = (
  line: Pick<BookingLine, "date" | "startTimeId" | "rateId">,
  target: { readonly date: string; readonly startTimeId: string; readonly rateId: string | null }
) =>
  line.date === target.date && line.startTimeId === target.startTimeId &&
  (target.rateId === null || line.rateId === target.rateId)

/** The line of our booking in the booking system: the live line of the tour's product. */
export const lineOf = (lines: ReadonlyArray<BookingLine>, productId: string): BookingLine | undefined =>
  lines.find((l) => l.productId === productId && l.status !== "CANCELLED")
