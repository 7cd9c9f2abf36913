/** Bókun JSON (dialect.ts) to the port's types. Pure functions, no I/O. */
import type {
  Balance,
  BookingLine,
  BookingSystemAccount,
  DepartureAvailability,
  PaxLine,
  Product,
  SalesChannel
} from "../../ports/BookingSystem.js"
import type * as Dialect from "./dialect.js"
import { ABANDONED_STATUSES, DEAD_STATUSES } from "./dialect.js"
import { toMinor } from "./money.js"

const str = (id: string | number) => String(id)
const orNull = <A>(a: A | null | undefined): A | null => (a === undefined ? null : a)

/** The UTC calendar day of an epoch-millisecond Bókun date (Bókun writes local days at 00:00 UTC). */
export const dayOf = (epochMillis: number): string => new Date(epochMillis).toISOString().slice(0, 10)

/** `HH:mm` from Bókun's `startTime` ("9:05", "09:05" or "09:05:00"). */
export const hhmm = (value: string | null | undefined): string | null => {
  if (!value) return null
  const m = /^(\d{1,2}):(\d{2})/.exec(value)
  return m ? `${m[1]!.padStart(2, "0")}:${m[2]}` : null
}

const OTAS: ReadonlyArray<readonly [RegExp, string]> = [
  [/viator/i, "viator"],
  [/get\s*your\s*guide|\bgyg\b/i, "getyourguide"],
  [/expedia/i, "expedia"],
  [/trip\s*advisor/i, "tripadvisor"],
  [/klook/i, "klook"],
  [/musement/i, "musement"],
  [/airbnb/i, "airbnb"],
  [/headout/i, "headout"],
  [/civitatis/i, "civitatis"],
  [/booking\.com/i, "booking.com"]
]
const DIRECT = /^(direct|walk[\s-]?in|back[\s-]?office|phone|e-?mail|box office|front desk|own website|website)/i

const slug = (title: string) => title.trim().toLowerCase().replace(/[^a-z0-9.]+/g, "-").replace(/^-|-$/g, "")

/**
 * Where a booking was sold. The account's own API channel (the one its keys book through: the
 * service's checkout) is `service`; known online travel agencies are `ota`; back-office, walk-in
 * and phone sales are `direct`; any other channel is a `reseller`.
 */
export const channelOf = (
  channel: Dialect.Booking["channel"],
  account: Pick<BookingSystemAccount, "serviceChannelId">
): SalesChannel => {
  if (!channel) return { class: null, source: null, title: null }
  const title = orNull(channel.title)
  if (account.serviceChannelId != null && str(channel.id) === account.serviceChannelId) {
    return { class: "service", source: "checkout", title }
  }
  const ota = title ? OTAS.find(([re]) => re.test(title)) : undefined
  if (ota) return { class: "ota", source: ota[1], title }
  if (title && DIRECT.test(title)) return { class: "direct", source: slug(title), title }
  return { class: "reseller", source: title ? slug(title) : str(channel.id), title }
}

/** A product booking's status in the port's terms, or null for holds that never became bookings. */
export const lineStatus = (status: string): BookingLine["status"] | null => {
  const s = status.toUpperCase()
  if ((ABANDONED_STATUSES as ReadonlyArray<string>).includes(s)) return null
  if ((DEAD_STATUSES as ReadonlyArray<string>).includes(s)) return "CANCELLED"
  if (s === "RESERVED") return "RESERVED"
  return "CONFIRMED"
}

const paymentStatusOf = (booking: Dialect.Booking): string | null => {
  if (booking.paymentStatus) return booking.paymentStatus
  if (booking.totalPaid == null) return null
  if (booking.totalPaid <= 0) return "NOT_PAID"
  return (booking.totalDue ?? 0) > 0 ? "PARTIALLY_PAID" : "PAID"
}

const fullName = (c: Dialect.Booking["customer"]) => {
  const name = [c?.firstName, c?.lastName].filter((p) => p && p.trim() !== "").join(" ")
  return name === "" ? null : name
}

const paxOf = (pb: Dialect.ProductBooking): ReadonlyArray<PaxLine> => {
  const byCategory = new Map<string, { title: string; quantity: number }>()
  for (const p of pb.fields?.priceCategoryBookings ?? []) {
    const id = str(p.pricingCategoryId)
    const seen = byCategory.get(id)
    if (seen) seen.quantity += p.quantity
    else byCategory.set(id, { title: p.pricingCategory?.title ?? id, quantity: p.quantity })
  }
  return [...byCategory].map(([pricingCategoryId, v]) => ({ pricingCategoryId, title: v.title, quantity: v.quantity }))
}

/** One line per product booking; lapsed and abandoned holds are left out. */
export const bookingLines = (
  booking: Dialect.Booking,
  account: Pick<BookingSystemAccount, "serviceChannelId">
): ReadonlyArray<BookingLine> => {
  const channel = channelOf(booking.channel, account)
  const guest = {
    name: fullName(booking.customer),
    email: orNull(booking.customer?.email) || null,
    phone: orNull(booking.customer?.phoneNumber) || null
  }
  const lines: Array<BookingLine> = []
  for (const pb of booking.productBookings) {
    const status = lineStatus(pb.status)
    if (status === null) continue
    const pickupPlace = orNull(pb.fields?.pickupPlace?.title)
    const pickupTime = hhmm(pb.fields?.pickupTime)
    lines.push({
      lineId: str(pb.id),
      bookingId: str(booking.id),
      bookingReference: booking.confirmationCode,
      externalReference: orNull(booking.externalBookingReference),
      status,
      productId: str(pb.product.id),
      productTitle: orNull(pb.product.title),
      rateId: pb.rateId == null ? null : str(pb.rateId),
      rateTitle: orNull(pb.rateTitle),
      startTimeId: pb.startTimeId == null ? null : str(pb.startTimeId),
      date: dayOf(pb.startDate),
      startTime: hhmm(pb.startTime),
      participants: pb.totalParticipants,
      pax: paxOf(pb),
      channel,
      guest,
      pickup: pickupPlace !== null || pickupTime !== null ? { place: pickupPlace, time: pickupTime } : null,
      paymentStatus: paymentStatusOf(booking),
      totalMinor: toMinor(pb.totalPrice ?? 0, booking.currency),
      currency: booking.currency,
      createdAt: new Date(booking.creationDate),
      updatedAt: booking.lastModifiedDate == null ? null : new Date(booking.lastModifiedDate)
    })
  }
  return lines
}

export const balanceOf = (booking: Dialect.Booking): Balance => {
  const total = toMinor(booking.totalPrice, booking.currency)
  const paid = toMinor(booking.totalPaid ?? 0, booking.currency)
  const due = booking.totalDue == null ? Math.max(0, total - paid) : toMinor(booking.totalDue, booking.currency)
  return {
    bookingReference: booking.confirmationCode,
    totalMinor: total,
    paidMinor: paid,
    dueMinor: due,
    currency: booking.currency
  }
}

export const departures = (items: typeof Dialect.Availabilities.Type): ReadonlyArray<DepartureAvailability> =>
  items.map((a) => {
    const titles = new Map((a.rates ?? []).map((r) => [str(r.id), orNull(r.title)]))
    const unlimited = a.unlimitedAvailability === true
    const seatsLeft = unlimited ? null : Math.max(0, a.availabilityCount ?? 0)
    return {
      date: dayOf(a.date),
      startTimeId: str(a.startTimeId),
      startTime: hhmm(a.startTime),
      seatsLeft,
      soldOut: a.soldOut === true || a.unavailable === true || seatsLeft === 0,
      rates: a.pricesByRate.map((r) => ({
        rateId: str(r.activityRateId),
        title: titles.get(str(r.activityRateId)) ?? null,
        prices: r.pricePerCategoryUnit.map((p) => ({
          pricingCategoryId: str(p.id),
          amountMinor: toMinor(p.amount.amount, p.amount.currency),
          currency: p.amount.currency
        })),
        // Bókun's price of a rate priced per booking (pricedPerPerson false): one price for the party.
        pricePerBooking: r.pricePerBooking == null
          ? null
          : {
            amountMinor: toMinor(r.pricePerBooking.amount, r.pricePerBooking.currency),
            currency: r.pricePerBooking.currency
          }
      }))
    }
  })

export const productOf = (
  activity: Dialect.Activity,
  pickupPlaces: typeof Dialect.PickupPlaces.Type
): Product => {
  const defaultId = activity.pricingCategories.find((c) => c.defaultCategory)?.id ??
    activity.pricingCategories.find((c) => c.ticketCategory === "ADULT")?.id ??
    activity.pricingCategories[0]?.id
  const pad = (n: number) => String(n).padStart(2, "0")
  return {
    id: str(activity.id),
    title: activity.title,
    timezone: activity.timeZone ?? activity.vendor.timeZone ?? "UTC",
    currency: activity.vendor.currencyCode,
    durationMinutes: orNull(activity.durationMinutes),
    pricedPerBooking: activity.rates.length > 0 && activity.rates.every((r) => r.pricedPerPerson === false),
    rates: activity.rates.map((r) => ({ id: str(r.id), title: r.title, description: orNull(r.description) })),
    pricingCategories: activity.pricingCategories.map((c) => ({
      id: str(c.id),
      title: c.title,
      isDefault: c.id === defaultId,
      minAge: orNull(c.minAge),
      maxAge: orNull(c.maxAge)
    })),
    startTimes: activity.startTimes.map((s) => ({ id: str(s.id), time: `${pad(s.hour)}:${pad(s.minute)}` })),
    pickupPlaces: pickupPlaces.pickupPlaces.map((p) => ({ id: str(p.id), title: p.title ?? str(p.id) })),
    rating: activity.reviewRating == null ? null : { average: activity.reviewRating, count: activity.reviewCount ?? 0 },
    supportsHolds: activity.reservationsAllowed !== false
  }
}
