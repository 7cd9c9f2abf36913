/**
 * The team's email when a pay-later balance could not be charged and the service stopped trying
 * (a hard decline, the card asking for the guest's authentication, the deadline, or no saved card):
 * the guest has been emailed the balance payment link (pure; no I/O).
 */
import { Schema } from "effect"
import type { Locale } from "../rules.js"
import { type Composed, details, p } from "./blocks.js"
import { Departure, Money, Text } from "./data.js"
import { formatDay, formatDeparture, formatMoney } from "./format.js"
import { departureRows, WORDS } from "./words.js"

export const PayLaterFailedTeam = Schema.Struct({
  operatorName: Text,
  tourName: Text,
  bookingReference: Text,
  departure: Departure,
  guestName: Schema.NullOr(Schema.String),
  amount: Money,
  /** Why the charge stopped, in plain words (e.g. "the card was declined"). */
  failure: Text,
  /** Whether the guest was emailed the balance payment link. */
  guestEmailed: Schema.Boolean,
  /** The last day (local) the balance could be charged; null when unknown. */
  deadline: Schema.NullOr(Schema.String)
})

export const payLaterFailedTeam = (locale: Locale, d: typeof PayLaterFailedTeam.Type): Composed => {
  const w = WORDS[locale]
  const amount = formatMoney(locale, d.amount)
  const nb = locale === "nb"
  return {
    subject: nb
      ? `Saldo ikke belastet: ${d.tourName}, ${formatDeparture(locale, d.departure, "short")} (${d.bookingReference})`
      : `Balance not charged: ${d.tourName}, ${formatDeparture(locale, d.departure, "short")} (${d.bookingReference})`,
    blocks: [
      p(
        nb
          ? `Vi kunne ikke belaste saldoen (${amount}) for bestilling ${d.bookingReference} av ${d.tourName}: ${d.failure}. Vi prøver ikke igjen.`
          : `We could not charge the balance (${amount}) of booking ${d.bookingReference} for ${d.tourName}: ${d.failure}. We will not try again.`
      ),
      p(
        d.guestEmailed
          ? (nb
            ? "Gjesten har fått en e-post med en betalingslenke for saldoen. Når gjesten betaler, registreres betalingen automatisk."
            : "The guest has been emailed a payment link for the balance. When the guest pays, the payment is recorded automatically.")
          : (nb
            ? "Gjesten har ingen e-postadresse hos oss: kontakt gjesten om betalingen."
            : "We have no email address for the guest: please contact the guest about the payment.")
      ),
      details([
        [w.reference, d.bookingReference],
        [w.tour, d.tourName],
        ...departureRows(locale, d.departure),
        d.guestName && d.guestName.trim() ? [w.guest, d.guestName.trim()] : null,
        [nb ? "Saldo" : "Balance", amount],
        d.deadline !== null ? [nb ? "Frist" : "Deadline", formatDay(locale, d.deadline)] : null
      ]),
      p(w.automatic)
    ]
  }
}
