/**
 * Bodies of Bókun checkout calls: a direct booking request reserved for external payment, the
 * confirmation of a reservation with the payment taken outside Bókun, a customer update.
 */
import type { BookingPayment, Guest, SeatRequest } from "../../ports/BookingSystem.js"
import { fromMinor } from "./money.js"

const splitName = (name: string) => {
  const trimmed = name.trim()
  const at = trimmed.lastIndexOf(" ")
  return at < 0
    ? { firstName: trimmed, lastName: "" }
    : { firstName: trimmed.slice(0, at), lastName: trimmed.slice(at + 1) }
}

export const contactAnswers = (guest: Guest) => {
  const { firstName, lastName } = splitName(guest.name)
  return [
    { questionId: "firstName", values: [firstName] },
    { questionId: "lastName", values: [lastName] },
    ...(guest.email ? [{ questionId: "email", values: [guest.email] }] : []),
    ...(guest.phone ? [{ questionId: "phoneNumber", values: [guest.phone] }] : [])
  ]
}

const activityBooking = (seats: SeatRequest) => ({
  activityId: seats.productId,
  rateId: seats.rateId,
  date: seats.date,
  startTimeId: seats.startTimeId,
  pricingCategoryBookings: seats.pax.flatMap((p) =>
    Array.from({ length: p.quantity }, () => ({ pricingCategoryId: p.pricingCategoryId }))
  )
})

/**
 * How a checkout is paid: `RESERVE_FOR_EXTERNAL_PAYMENT` reserves (confirmed later, or a hold);
 * `INVOICE` books at once, confirmed, for a sale already paid to the seller outside Bókun (a desk
 * sale of a product that does not allow reservations; see docs/booking-system.md).
 */
export type CheckoutPayment = "RESERVE_FOR_EXTERNAL_PAYMENT" | "INVOICE"

/** `yyyy-MM-dd HH:mm:ss` in UTC, the form Bókun's transaction dates take. */
const transactionDate = (at: Date) => at.toISOString().slice(0, 19).replace("T", " ")

/**
 * What was paid outside Bókun, as a booking carries it (docs/booking-system.md, "What was paid"):
 * the amount in major units, its currency and the transaction (our provider's payment id and when
 * it was paid). Bókun records it as the booking's payment, so the booking reads PAID.
 */
export const paymentFields = (payment: BookingPayment) => ({
  amount: fromMinor(payment.amountMinor, payment.currency),
  currency: payment.currency,
  transactionDetails: { transactionId: payment.reference, transactionDate: transactionDate(payment.paidAt) }
})

export const reserveBody = (
  seats: SeatRequest,
  guest: Guest | null,
  externalReference: string | null,
  paymentMethod: CheckoutPayment = "RESERVE_FOR_EXTERNAL_PAYMENT",
  payment: BookingPayment | null = null
) => ({
  checkoutOption: "CUSTOMER_FULL_PAYMENT",
  paymentMethod,
  source: "DIRECT_REQUEST",
  sendNotificationToMainContact: false,
  // A booking confirmed in this one checkout (INVOICE) carries what was paid here; a reservation gets it on confirmation.
  ...(payment !== null ? paymentFields(payment) : {}),
  directBooking: {
    externalBookingReference: externalReference,
    mainContactDetails: guest ? contactAnswers(guest) : [],
    activityBookings: [activityBooking(seats)]
  }
})

/** POST /checkout.json/confirm-reserved/{confirmationCode}: the reservation confirmed, with what was paid. */
export const confirmBody = (externalReference: string, payment: BookingPayment) => ({
  externalBookingReference: externalReference,
  sendNotificationToMainContact: false,
  ...paymentFields(payment)
})

/** POST /booking.json/update-customer/{confirmationCode} */
export const customerBody = (guest: Guest) => {
  const { firstName, lastName } = splitName(guest.name)
  return { firstName, lastName, email: guest.email, phoneNumber: guest.phone }
}
