/**
 * The team's email when a guest paid the balance payment link of a booking that exists only in the
 * booking system after that booking was cancelled: the service returns the payment by itself
 * (pure; no I/O).
 */
import { Schema } from "effect"
import type { Locale } from "../rules.js"
import { type Composed, details, p } from "./blocks.js"
import { Departure, Money, Text } from "./data.js"
import { formatDeparture, formatMoney } from "./format.js"
import { departureRows, WORDS } from "./words.js"

export const BalanceRefundedTeam = Schema.Struct({
  operatorName: Text,
  tourName: Text,
  bookingReference: Text,
  departure: Departure,
  guestName: Schema.NullOr(Schema.String),
  amount: Money
})

export const balanceRefundedTeam = (locale: Locale, d: typeof BalanceRefundedTeam.Type): Composed => {
  const w = WORDS[locale]
  const amount = formatMoney(locale, d.amount)
  return {
    subject: locale === "nb"
      ? `Betales tilbake: saldo betalt etter kansellering, ${d.tourName}, ${
        formatDeparture(locale, d.departure, "short")
      } (${d.bookingReference})`
      : `Refunding: balance paid after cancellation, ${d.tourName}, ${
        formatDeparture(locale, d.departure, "short")
      } (${d.bookingReference})`,
    blocks: [
      p(
        locale === "nb"
          ? `Gjesten betalte betalingslenken for saldoen på bestilling ${d.bookingReference} av ${d.tourName} på ${
            formatDeparture(locale, d.departure)
          } (${amount}) etter at bestillingen var kansellert i bookingsystemet deres.`
          : `The guest paid the balance payment link of booking ${d.bookingReference} for ${d.tourName} on ${
            formatDeparture(locale, d.departure)
          } (${amount}) after the booking had been cancelled in your booking system.`
      ),
      p(
        locale === "nb"
          ? `Betalingen betales automatisk tilbake til kortet gjesten betalte med. Dere trenger ikke gjøre noe.`
          : `The payment is being returned automatically to the card the guest paid with. You do not need to do anything.`
      ),
      details([
        [w.reference, d.bookingReference],
        [w.tour, d.tourName],
        ...departureRows(locale, d.departure),
        d.guestName && d.guestName.trim() ? [w.guest, d.guestName.trim()] : null,
        [w.refund, amount]
      ]),
      p(w.automatic)
    ]
  }
}
