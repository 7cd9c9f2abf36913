/** Sandbox rows to Bókun JSON (the `Encoded` side of the adapter's dialect schemas). */
import type * as Dialect from "../../adapters/bokun/dialect.js"
import { fromMinor } from "../../adapters/bokun/money.js"
import { dayMillis, minutesBefore } from "./time.js"

export interface BookingRow {
  readonly id: number
  readonly confirmation_code: string
  readonly external_reference: string | null
  readonly status: string
  readonly currency: string
  readonly first_name: string | null
  readonly last_name: string | null
  readonly email: string | null
  readonly phone: string | null
  readonly paid_minor: number
  readonly payment_status: string | null
  readonly created_at: Date
  readonly updated_at: Date
  readonly channel_id: number | null
  readonly channel_title: string | null
}

export interface PaxEntry {
  readonly pricingCategoryId: number
  readonly title: string
  readonly quantity: number
}

export interface LineRow {
  readonly id: number
  readonly booking_id: number
  readonly status: string
  readonly product_id: number
  readonly product_title: string
  readonly date: string
  readonly start_time_id: number | null
  readonly start_time: string | null
  readonly start_millis: number | null
  readonly rate_id: number | null
  readonly rate_title: string | null
  readonly participants: number
  readonly pax: ReadonlyArray<PaxEntry>
  readonly total_minor: number
  readonly pickup_id: number | null
  readonly pickup_title: string | null
  readonly minutes_before: number | null
  readonly code_prefix: string
}

const isLive = (status: string) => status !== "CANCELLED" && status !== "ABORTED" && status !== "TIMEOUT"

const paymentStatus = (b: BookingRow, total: number) => {
  if (b.payment_status) return b.payment_status
  if (total === 0) return b.paid_minor > 0 ? "REFUND_DUE" : "PAID"
  if (b.paid_minor <= 0) return "NOT_PAID"
  return b.paid_minor >= total ? "PAID" : "PARTIALLY_PAID"
}

const renderLine = (l: LineRow, currency: string): typeof Dialect.ProductBooking.Encoded => ({
  id: l.id,
  productConfirmationCode: `${l.code_prefix}-T${l.id}`,
  status: l.status,
  product: { id: l.product_id, title: l.product_title },
  startDate: dayMillis(l.date),
  startDateTime: l.start_millis,
  startTime: l.start_time,
  startTimeId: l.start_time_id,
  rateId: l.rate_id,
  rateTitle: l.rate_title,
  totalParticipants: l.participants,
  totalPrice: fromMinor(l.total_minor, currency),
  fields: {
    priceCategoryBookings: l.pax.map((p) => ({
      pricingCategoryId: p.pricingCategoryId,
      pricingCategory: { id: p.pricingCategoryId, title: p.title },
      quantity: p.quantity
    })),
    pickup: l.pickup_id !== null,
    pickupPlace: l.pickup_id === null ? null : { id: l.pickup_id, title: l.pickup_title },
    pickupTime: l.pickup_id === null || l.start_time === null
      ? null
      : minutesBefore(l.start_time, l.minutes_before ?? 0)
  }
})

export const renderBooking = (b: BookingRow, lines: ReadonlyArray<LineRow>): typeof Dialect.Booking.Encoded => {
  const total = lines.filter((l) => isLive(l.status)).reduce((sum, l) => sum + l.total_minor, 0)
  return {
    id: b.id,
    confirmationCode: b.confirmation_code,
    externalBookingReference: b.external_reference,
    status: b.status,
    creationDate: b.created_at.getTime(),
    lastModifiedDate: b.updated_at.getTime(),
    currency: b.currency,
    totalPrice: fromMinor(total, b.currency),
    totalPaid: fromMinor(b.paid_minor, b.currency),
    totalDue: fromMinor(Math.max(0, total - b.paid_minor), b.currency),
    paymentStatus: paymentStatus(b, total),
    customer: { firstName: b.first_name, lastName: b.last_name, email: b.email, phoneNumber: b.phone },
    channel: b.channel_id === null ? null : { id: b.channel_id, title: b.channel_title },
    productBookings: lines.map((l) => renderLine(l, b.currency))
  }
}
