/** The emails of a rescheduled booking: to the guest, and to the operator's team (pure; no I/O). */
import { Schema } from "effect"
import type { Locale } from "../rules.js"
import { type Composed, details, p } from "./blocks.js"
import { Count, Departure, GuestBooking, Text } from "./data.js"
import { formatDeparture } from "./format.js"
import { WORDS } from "./words.js"

export const BookingRescheduledGuest = Schema.Struct({
  ...GuestBooking.fields,
  previous: Departure,
  next: Departure,
  participants: Schema.NullOr(Count)
})

export const BookingRescheduledTeam = Schema.Struct({
  operatorName: Text,
  tourName: Text,
  bookingReference: Text,
  previous: Departure,
  next: Departure,
  participants: Schema.NullOr(Count),
  guestName: Schema.NullOr(Schema.String),
  /** Who moved it, e.g. `Partner API key "Booking sync"`. */
  rescheduledBy: Text
})

export const bookingRescheduledGuest = (locale: Locale, d: typeof BookingRescheduledGuest.Type): Composed => {
  const w = WORDS[locale]
  const next = formatDeparture(locale, d.next, "short")
  return {
    subject: locale === "nb"
      ? `Bestillingen din ${d.bookingReference} er flyttet til ${next}`
      : `Your booking ${d.bookingReference} has been moved to ${next}`,
    blocks: [
      p(w.hello(d.guestName)),
      p(
        locale === "nb"
          ? `${d.operatorName} har flyttet bestillingen din av ${d.tourName} til ${formatDeparture(locale, d.next)}.`
          : `${d.operatorName} has moved your booking for ${d.tourName} to ${formatDeparture(locale, d.next)}.`
      ),
      details([
        [w.reference, d.bookingReference],
        [w.tour, d.tourName],
        [locale === "nb" ? "Ny tid" : "New time", formatDeparture(locale, d.next)],
        d.next.rateTitle ? [w.rate, d.next.rateTitle] : null,
        [locale === "nb" ? "Tidligere tid" : "Previous time", formatDeparture(locale, d.previous)],
        d.participants === null ? null : [w.participants, String(d.participants)]
      ]),
      p(
        locale === "nb"
          ? "Prisen er den samme, og betalingen din er uendret."
          : "The price is the same and your payment is unchanged."
      ),
      p(w.newTimeDoesNotSuit(d.operatorName, d.operatorContact)),
      p(w.regards(d.operatorName))
    ]
  }
}

export const bookingRescheduledTeam = (locale: Locale, d: typeof BookingRescheduledTeam.Type): Composed => {
  const w = WORDS[locale]
  const arrow = `${formatDeparture(locale, d.previous, "short")} → ${formatDeparture(locale, d.next, "short")}`
  return {
    subject: locale === "nb"
      ? `Flyttet: ${d.tourName} (${d.bookingReference}), ${arrow}`
      : `Rescheduled: ${d.tourName} (${d.bookingReference}), ${arrow}`,
    blocks: [
      p(
        locale === "nb"
          ? `Bestilling ${d.bookingReference} av ${d.tourName} er flyttet av ${d.rescheduledBy}.`
          : `Booking ${d.bookingReference} for ${d.tourName} has been moved by ${d.rescheduledBy}.`
      ),
      details([
        [w.reference, d.bookingReference],
        [w.tour, d.tourName],
        [locale === "nb" ? "Fra" : "From", formatDeparture(locale, d.previous)],
        d.previous.rateTitle ? [w.rate, d.previous.rateTitle] : null,
        [locale === "nb" ? "Til" : "To", formatDeparture(locale, d.next)],
        d.next.rateTitle ? [w.rate, d.next.rateTitle] : null,
        d.participants === null ? null : [w.participants, String(d.participants)],
        d.guestName && d.guestName.trim() ? [w.guest, d.guestName.trim()] : null
      ]),
      p(locale === "nb" ? "Pris og betaling er uendret." : "The price and the payment are unchanged."),
      p(w.automatic)
    ]
  }
}
