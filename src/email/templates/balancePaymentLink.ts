/** The guest's email with a link to pay the balance of a booking (pure; no I/O). */
import { Schema } from "effect"
import type { Locale } from "../rules.js"
import { type Composed, details, p } from "./blocks.js"
import { Day, Departure, GuestBooking, Money, Url } from "./data.js"
import { formatDay, formatDeparture, formatMoney } from "./format.js"
import { departureRows, WORDS } from "./words.js"

export const BalancePaymentLinkGuest = Schema.Struct({
  ...GuestBooking.fields,
  departure: Departure,
  amount: Money,
  /** The payment page (share only with the guest). */
  paymentUrl: Url,
  /** The last local day to pay, when there is one. */
  payBy: Schema.NullOr(Day)
})

export const balancePaymentLinkGuest = (locale: Locale, d: typeof BalancePaymentLinkGuest.Type): Composed => {
  const w = WORDS[locale]
  const amount = formatMoney(locale, d.amount)
  const when = formatDeparture(locale, d.departure)
  return {
    subject: locale === "nb"
      ? `Betaling for bestillingen din ${d.bookingReference}`
      : `Payment due for your booking ${d.bookingReference}`,
    blocks: [
      p(w.hello(d.guestName)),
      p(
        locale === "nb"
          ? `Det gjenstår ${amount} å betale for bestillingen din av ${d.tourName} på ${when}.`
          : `There is ${amount} left to pay for your booking for ${d.tourName} on ${when}.`
      ),
      ...(d.payBy === null ? [] : [p(
        locale === "nb"
          ? `Betal innen ${formatDay(locale, d.payBy)}.`
          : `Please pay by ${formatDay(locale, d.payBy)}.`
      )]),
      {
        kind: "link",
        label: locale === "nb" ? `Betal ${amount}` : `Pay ${amount}`,
        fallback: locale === "nb" ? "Betal her" : "Pay here",
        url: d.paymentUrl
      },
      p(
        locale === "nb"
          ? "Lenken er personlig. Ikke del den med andre."
          : "The link is personal. Please do not share it."
      ),
      details([
        [w.reference, d.bookingReference],
        [w.tour, d.tourName],
        ...departureRows(locale, d.departure)
      ]),
      p(w.contact(d.operatorName, d.operatorContact)),
      p(w.regards(d.operatorName))
    ]
  }
}
