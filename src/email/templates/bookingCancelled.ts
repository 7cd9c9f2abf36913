/** The emails of a cancelled booking: to the guest, and to the operator's team (pure; no I/O). */
import { Schema } from "effect"
import type { Locale } from "../rules.js"
import { type Composed, details, p } from "./blocks.js"
import { Count, Departure, GuestBooking, Refund, Text } from "./data.js"
import { formatDeparture, formatMoney } from "./format.js"
import { departureRows, WORDS } from "./words.js"

export const BookingCancelledGuest = Schema.Struct({
  ...GuestBooking.fields,
  departure: Departure,
  participants: Schema.NullOr(Count),
  refund: Refund
})

export const BookingCancelledTeam = Schema.Struct({
  operatorName: Text,
  tourName: Text,
  bookingReference: Text,
  departure: Departure,
  participants: Schema.NullOr(Count),
  guestName: Schema.NullOr(Schema.String),
  /** The reason given with the cancel request (3 to 500 characters). */
  reason: Text,
  /** Who cancelled, e.g. `Partner API key "Booking sync"`. */
  cancelledBy: Text,
  refund: Refund
})

const guestRefundSentence = (locale: Locale, refund: Refund): string => {
  if (refund.outcome === "none") {
    return locale === "nb"
      ? "Du har ikke blitt belastet, så det er ingenting å betale tilbake."
      : "You have not been charged, so there is nothing to refund."
  }
  const amount = formatMoney(locale, refund.amount)
  if (refund.outcome === "refunded") {
    return locale === "nb"
      ? `Vi har betalt tilbake ${amount} til betalingsmåten du brukte. Det kan ta noen dager før pengene er tilbake på kontoen din.`
      : `We have refunded ${amount} to the payment method you used. It may take a few days before it shows on your statement.`
  }
  return locale === "nb"
    ? `Tilbakebetalingen av ${amount} er under behandling og går tilbake til betalingsmåten du brukte.`
    : `Your refund of ${amount} is being processed and will go back to the payment method you used.`
}

const teamRefundText = (locale: Locale, refund: Refund): string => {
  if (refund.outcome === "none") return locale === "nb" ? "ingenting å betale tilbake" : "nothing to refund"
  const amount = formatMoney(locale, refund.amount)
  if (refund.outcome === "refunded") return locale === "nb" ? `${amount} betalt tilbake` : `${amount} refunded`
  return locale === "nb"
    ? `${amount}, under behandling (ikke bekreftet av betalingsleverandøren ennå)`
    : `${amount}, in progress (not yet confirmed by the payment provider)`
}

export const bookingCancelledGuest = (locale: Locale, d: typeof BookingCancelledGuest.Type): Composed => {
  const w = WORDS[locale]
  const when = formatDeparture(locale, d.departure)
  return {
    subject: locale === "nb"
      ? `Bestillingen din ${d.bookingReference} er kansellert`
      : `Your booking ${d.bookingReference} has been cancelled`,
    blocks: [
      p(w.hello(d.guestName)),
      p(
        locale === "nb"
          ? `${d.operatorName} har kansellert bestillingen din av ${d.tourName} på ${when}.`
          : `${d.operatorName} has cancelled your booking for ${d.tourName} on ${when}.`
      ),
      p(guestRefundSentence(locale, d.refund)),
      details([
        [w.reference, d.bookingReference],
        [w.tour, d.tourName],
        ...departureRows(locale, d.departure),
        d.participants === null ? null : [w.participants, String(d.participants)]
      ]),
      p(w.contact(d.operatorName, d.operatorContact)),
      p(w.regards(d.operatorName))
    ]
  }
}

export const bookingCancelledTeam = (locale: Locale, d: typeof BookingCancelledTeam.Type): Composed => {
  const w = WORDS[locale]
  return {
    subject: locale === "nb"
      ? `Kansellert: ${d.tourName}, ${formatDeparture(locale, d.departure, "short")} (${d.bookingReference})`
      : `Cancelled: ${d.tourName}, ${formatDeparture(locale, d.departure, "short")} (${d.bookingReference})`,
    blocks: [
      p(
        locale === "nb"
          ? `Bestilling ${d.bookingReference} av ${d.tourName} på ${
            formatDeparture(locale, d.departure)
          } er kansellert av ${d.cancelledBy}.`
          : `Booking ${d.bookingReference} for ${d.tourName} on ${
            formatDeparture(locale, d.departure)
          } has been cancelled by ${d.cancelledBy}.`
      ),
      p(`${w.reason}: ${d.reason}`),
      details([
        [w.reference, d.bookingReference],
        [w.tour, d.tourName],
        ...departureRows(locale, d.departure),
        d.participants === null ? null : [w.participants, String(d.participants)],
        d.guestName && d.guestName.trim() ? [w.guest, d.guestName.trim()] : null,
        [w.refund, teamRefundText(locale, d.refund)]
      ]),
      p(w.automatic)
    ]
  }
}
