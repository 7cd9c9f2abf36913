/** Bodies of Bókun checkout calls: a direct booking request reserved for external payment, a customer update. */
import type { Guest, SeatRequest } from "../../ports/BookingSystem.js"

const splitName = (name: string) => {
  const trimmed = name.trim()
  const at = trimmed.lastIndexOf(" ")
  return at < 0 ? { firstName: trimmed, lastName: "" } : { firstName: trimmed.slice(0, at), lastName: trimmed.slice(at + 1) }
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

export const reserveBody = (
  seats: SeatRequest,
  guest: Guest | null,
  externalReference: string | null,
  paymentMethod: CheckoutPayment = "RESERVE_FOR_EXTERNAL_PAYMENT"
) => ({
  checkoutOption: "CUSTOMER_FULL_PAYMENT",
  paymentMethod,
  source: "DIRECT_REQUEST",
  sendNotificationToMainContact: false,
  directBooking: {
    externalBookingReference: externalReference,
    mainContactDetails: guest ? contactAnswers(guest) : [],
    activityBookings: [activityBooking(seats)]
  }
})

/** POST /booking.json/update-customer/{confirmationCode} */
export const customerBody = (guest: Guest) => {
  const { firstName, lastName } = splitName(guest.name)
  return { firstName, lastName, email: guest.email, phoneNumber: guest.phone }
}
