/** The guest's emails of a desk (Quickbook) sale: confirmed, or not booked and paid back (pure; no I/O). */
import { Schema } from "effect"
import type { Locale } from "../rules.js"
import { type Composed, details, p } from "./blocks.js"
import { Count, Departure, Money, Text, Url } from "./data.js"
import { formatDeparture, formatMoney } from "./format.js"
import { departureRows, WORDS } from "./words.js"

/**
 * A guest line of a desk sale: `2 x Adult` and what it costs; `amount` null when the tour is priced
 * per booking (the guests are included in `bookingPrice`).
 */
const SaleGuestLine = Schema.Struct({ label: Text, count: Count, amount: Schema.NullOr(Money) })

/** The guest's confirmation of a desk (Quickbook) sale: the booking, its page and the ticket PDF. */
export const QuickbookSaleConfirmedGuest = Schema.Struct({
  guestName: Schema.NullOr(Schema.String),
  operatorName: Text,
  tourName: Text,
  departure: Departure,
  guests: Schema.Array(SaleGuestLine),
  /** A tour priced per booking (a private tour): what the whole party paid for it. */
  bookingPrice: Schema.optional(Money),
  total: Money,
  bookingCode: Text,
  saleReference: Text,
  /** The guest's booking page (the ticket's QR code). */
  bookingPageUrl: Url,
  /** The ticket as PDF (signed link). */
  ticketPdfUrl: Url
})

/** The guest's notice that a paid desk sale could not be booked and the payment goes back. */
export const QuickbookSaleFailedGuest = Schema.Struct({
  guestName: Schema.NullOr(Schema.String),
  operatorName: Text,
  tourName: Text,
  departure: Departure,
  total: Money,
  saleReference: Text,
  /** true: the provider confirmed the refund (or void); false: it is on its way. */
  moneyReturned: Schema.Boolean
})

export const quickbookSaleConfirmedGuest = (locale: Locale, d: typeof QuickbookSaleConfirmedGuest.Type): Composed => {
  const w = WORDS[locale]
  const when = formatDeparture(locale, d.departure)
  return {
    subject: locale === "nb"
      ? `Bestillingen din ${d.bookingCode}: ${d.tourName}, ${formatDeparture(locale, d.departure, "short")}`
      : `Your booking ${d.bookingCode}: ${d.tourName}, ${formatDeparture(locale, d.departure, "short")}`,
    blocks: [
      p(w.hello(d.guestName)),
      p(
        locale === "nb"
          ? `Takk for bestillingen! Turen din med ${d.operatorName}, ${d.tourName} ${when}, er bekreftet.`
          : `Thank you for your booking! Your trip with ${d.operatorName}, ${d.tourName} on ${when}, is confirmed.`
      ),
      details([
        [locale === "nb" ? "Bookingkode" : "Booking code", d.bookingCode],
        [w.tour, d.tourName],
        ...departureRows(locale, d.departure),
        ...d.guests.map((g) =>
          [
            `${g.count} x ${g.label}`,
            g.amount === null ? (locale === "nb" ? "inkludert" : "included") : formatMoney(locale, g.amount)
          ] as const
        ),
        d.bookingPrice === undefined ? null : [
          locale === "nb" ? "Privat bestilling (hele gruppen)" : "Private booking (whole party)",
          formatMoney(locale, d.bookingPrice)
        ] as const,
        [locale === "nb" ? "Totalt betalt" : "Total paid", formatMoney(locale, d.total)]
      ]),
      p(
        locale === "nb"
          ? "Vis bookingkoden eller QR-koden på billetten når du møter opp."
          : "Show the booking code or the QR code on your ticket when you arrive."
      ),
      {
        kind: "link",
        label: locale === "nb" ? "Se bestillingen" : "View your booking",
        fallback: locale === "nb" ? "Bestillingen din" : "Your booking",
        url: d.bookingPageUrl
      },
      {
        kind: "link",
        label: locale === "nb" ? "Last ned billetten (PDF)" : "Download your ticket (PDF)",
        fallback: locale === "nb" ? "Billett (PDF)" : "Ticket (PDF)",
        url: d.ticketPdfUrl
      },
      p(w.contact(d.operatorName, null)),
      p(w.regards(d.operatorName))
    ]
  }
}

export const quickbookSaleFailedGuest = (locale: Locale, d: typeof QuickbookSaleFailedGuest.Type): Composed => {
  const w = WORDS[locale]
  const when = formatDeparture(locale, d.departure)
  const total = formatMoney(locale, d.total)
  return {
    subject: locale === "nb"
      ? `Vi fikk ikke booket ${d.tourName}: betalingen din ${
        d.moneyReturned ? "er betalt tilbake" : "betales tilbake"
      } (${d.saleReference})`
      : `We could not book ${d.tourName}: your payment ${
        d.moneyReturned ? "has been returned" : "is being returned"
      } (${d.saleReference})`,
    blocks: [
      p(w.hello(d.guestName)),
      p(
        locale === "nb"
          ? `Beklager! Vi fikk ikke fullført bestillingen din av ${d.tourName} med ${d.operatorName} ${when}.`
          : `We are sorry: we could not complete your booking for ${d.tourName} with ${d.operatorName} on ${when}.`
      ),
      p(
        d.moneyReturned
          ? locale === "nb"
            ? `Betalingen din på ${total} er betalt tilbake til kortet du betalte med. Det kan ta noen dager før pengene er tilbake på kontoen din.`
            : `Your payment of ${total} has been returned to the card you paid with. It may take a few days before it shows on your statement.`
          : locale === "nb"
          ? `Betalingen din på ${total} betales tilbake til kortet du betalte med. Du trenger ikke gjøre noe. Det kan ta noen dager før pengene er tilbake på kontoen din.`
          : `Your payment of ${total} is being returned to the card you paid with. You do not need to do anything. It may take a few days before it shows on your statement.`
      ),
      details([
        [locale === "nb" ? "Salgsreferanse" : "Sale reference", d.saleReference],
        [w.tour, d.tourName],
        ...departureRows(locale, d.departure)
      ]),
      p(w.contact(d.operatorName, null)),
      p(w.regards(d.operatorName))
    ]
  }
}
