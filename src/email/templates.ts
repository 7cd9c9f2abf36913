/**
 * The transactional emails, in English and Norwegian bokmål (pure; no I/O).
 *
 * Each template has a Schema for its data; `renderEmail` checks the data, then builds the subject,
 * a plain-text part (always) and an HTML part from one list of blocks, so that both parts say the
 * same thing and every value passes through one escaping function on its way into HTML.
 *
 * Values are shown as given: dates are local calendar days (`YYYY-MM-DD`) and times local wall-clock
 * times (`HH:MM`) of the tour's time zone, money is integer minor units with an ISO 4217 code.
 */
import { Either, ParseResult, Schema } from "effect"
import type { Locale } from "./rules.js"

// ---------------------------------------------------------------------------------------------
// Data

const isCalendarDay = (s: string) => {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s)
  if (!m) return false
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])))
  return d.toISOString().slice(0, 10) === s
}

const Day = Schema.String.pipe(Schema.filter(isCalendarDay, { message: () => "a calendar day YYYY-MM-DD" }))
const Time = Schema.String.pipe(Schema.pattern(/^([01]\d|2[0-3]):[0-5]\d$/, { message: () => "a time HH:MM" }))
const Text = Schema.String.pipe(Schema.filter((s) => s.trim().length > 0, { message: () => "a non-empty text" }))
const Count = Schema.Int.pipe(Schema.nonNegative())
const Url = Schema.String.pipe(Schema.filter((s) => {
  try {
    const url = new URL(s)
    return url.protocol === "https:" || url.protocol === "http:"
  } catch {
    return false
  }
}, { message: () => "an http(s) URL" }))

export const Money = Schema.Struct({
  amountMinor: Count,
  currency: Schema.String.pipe(Schema.pattern(/^[A-Z]{3}$/, { message: () => "an ISO 4217 currency code" }))
})
export type Money = typeof Money.Type

/** A departure as the guest knows it: local day, local start time (if the tour has one), rate. */
export const Departure = Schema.Struct({
  date: Day,
  startTime: Schema.NullOr(Time),
  rateTitle: Schema.optional(Schema.NullOr(Schema.String))
})
export type Departure = typeof Departure.Type

/**
 * What happened to the money when a booking was cancelled: `refunded` (the payment provider
 * confirmed the refund), `processing` (a refund still pending, or a void still settling) or `none`
 * (nothing had been paid).
 */
export const Refund = Schema.Union(
  Schema.Struct({ outcome: Schema.Literal("refunded", "processing"), amount: Money }),
  Schema.Struct({ outcome: Schema.Literal("none") })
)
export type Refund = typeof Refund.Type

/** How guests reach the operator (an email address or phone number), shown as given. */
const OperatorContact = Schema.optional(Schema.NullOr(Schema.String))

export const BookingCancelledGuest = Schema.Struct({
  guestName: Schema.NullOr(Schema.String),
  operatorName: Text,
  operatorContact: OperatorContact,
  tourName: Text,
  bookingReference: Text,
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

export const BookingRescheduledGuest = Schema.Struct({
  guestName: Schema.NullOr(Schema.String),
  operatorName: Text,
  operatorContact: OperatorContact,
  tourName: Text,
  bookingReference: Text,
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

export const BalancePaymentLinkGuest = Schema.Struct({
  guestName: Schema.NullOr(Schema.String),
  operatorName: Text,
  operatorContact: OperatorContact,
  tourName: Text,
  bookingReference: Text,
  departure: Departure,
  amount: Money,
  /** The payment page (share only with the guest). */
  paymentUrl: Url,
  /** The last local day to pay, when there is one. */
  payBy: Schema.NullOr(Day)
})

/** A guest line of a desk sale: `2 x Adult` and what it costs. */
const SaleGuestLine = Schema.Struct({ label: Text, count: Count, amount: Money })

/** The guest's confirmation of a desk (Quickbook) sale: the booking, its page and the ticket PDF. */
export const QuickbookSaleConfirmedGuest = Schema.Struct({
  guestName: Schema.NullOr(Schema.String),
  operatorName: Text,
  tourName: Text,
  departure: Departure,
  guests: Schema.Array(SaleGuestLine),
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

/**
 * The operator's team: a guest paid the balance payment link of a booking that exists only in the
 * booking system after that booking was cancelled; the service returns the payment by itself.
 */
export const BalanceRefundedTeam = Schema.Struct({
  operatorName: Text,
  tourName: Text,
  bookingReference: Text,
  departure: Departure,
  guestName: Schema.NullOr(Schema.String),
  amount: Money
})

/** Every template, by name. */
export const TEMPLATES = {
  booking_cancelled_guest: BookingCancelledGuest,
  booking_cancelled_team: BookingCancelledTeam,
  booking_rescheduled_guest: BookingRescheduledGuest,
  booking_rescheduled_team: BookingRescheduledTeam,
  balance_payment_link_guest: BalancePaymentLinkGuest,
  quickbook_sale_confirmed_guest: QuickbookSaleConfirmedGuest,
  quickbook_sale_failed_guest: QuickbookSaleFailedGuest,
  balance_refunded_team: BalanceRefundedTeam
} as const

export type TemplateName = keyof typeof TEMPLATES
export const TEMPLATE_NAMES = Object.keys(TEMPLATES) as ReadonlyArray<TemplateName>
export type TemplateData<K extends TemplateName> = (typeof TEMPLATES)[K]["Type"]

/** A template and its data, checked together by the type system. */
export type EmailContent = { [K in TemplateName]: { readonly template: K; readonly data: TemplateData<K> } }[TemplateName]

export interface RenderedEmail {
  readonly subject: string
  readonly text: string
  readonly html: string
}

export class TemplateDataInvalid extends Schema.TaggedError<TemplateDataInvalid>()("TemplateDataInvalid", {
  template: Schema.String,
  detail: Schema.String
}) {}

// ---------------------------------------------------------------------------------------------
// Formatting

const TAGS: Record<Locale, string> = { en: "en-GB", nb: "nb-NO" }

const dayFormats = new Map<string, Intl.DateTimeFormat>()
const dayFormat = (locale: Locale, style: "long" | "short") => {
  const key = `${locale}:${style}`
  let f = dayFormats.get(key)
  if (!f) {
    f = new Intl.DateTimeFormat(TAGS[locale], style === "long"
      ? { timeZone: "UTC", weekday: "long", day: "numeric", month: "long", year: "numeric" }
      : { timeZone: "UTC", day: "numeric", month: "short", year: "numeric" })
    dayFormats.set(key, f)
  }
  return f
}

/** A local calendar day in words: "Saturday 21 November 2026", "lørdag 21. november 2026". */
export const formatDay = (locale: Locale, day: string, style: "long" | "short" = "long"): string => {
  const [y, m, d] = day.split("-").map(Number)
  return dayFormat(locale, style).format(new Date(Date.UTC(y!, m! - 1, d!)))
}

/** A departure: the day, and the start time when there is one ("… at 10:00", "… kl. 10:00"). */
export const formatDeparture = (locale: Locale, departure: Departure, style: "long" | "short" = "long"): string => {
  const day = formatDay(locale, departure.date, style)
  if (departure.startTime === null) return day
  return locale === "nb" ? `${day} kl. ${departure.startTime}` : `${day} at ${departure.startTime}`
}

/** Minor units in the currency's own number of decimals: "1 234,50 kr", "€1,234.50". */
export const formatMoney = (locale: Locale, money: Money): string => {
  const format = new Intl.NumberFormat(TAGS[locale], { style: "currency", currency: money.currency })
  const digits = format.resolvedOptions().maximumFractionDigits ?? 2
  return format.format(money.amountMinor / 10 ** digits)
}

/** Text made safe inside HTML elements and double- or single-quoted attribute values. */
export const escapeHtml = (value: string): string =>
  value.replace(/[&<>"']/g, (c) => (c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : c === "\"" ? "&quot;" : "&#39;"))

/** One line, no control characters: what a Subject header may hold. */
const oneLine = (value: string) => value.replace(/[\u0000-\u001f\u007f]+/g, " ").replace(/\s+/g, " ").trim()

// ---------------------------------------------------------------------------------------------
// Blocks: what a message says, rendered twice (text and HTML)

type Block =
  | { readonly kind: "p"; readonly text: string }
  | { readonly kind: "details"; readonly rows: ReadonlyArray<readonly [string, string]> }
  | { readonly kind: "link"; readonly label: string; readonly fallback: string; readonly url: string }

const p = (text: string): Block => ({ kind: "p", text })
const details = (rows: ReadonlyArray<readonly [string, string] | null>): Block => ({
  kind: "details",
  rows: rows.filter((r): r is readonly [string, string] => r !== null)
})

const toText = (blocks: ReadonlyArray<Block>): string =>
  blocks.map((b) => {
    switch (b.kind) {
      case "p":
        return b.text
      case "details": {
        return b.rows.map(([label, value]) => `${label}: ${value.replace(/\s*\n\s*/g, " ")}`).join("\n")
      }
      case "link":
        return `${b.fallback}: ${b.url}`
    }
  }).join("\n\n") + "\n"

const html = (value: string) => escapeHtml(value).replace(/\r?\n/g, "<br>\n")

const toHtml = (locale: Locale, subject: string, blocks: ReadonlyArray<Block>): string => {
  const body = blocks.map((b) => {
    switch (b.kind) {
      case "p":
        return `<p style="margin:0 0 16px">${html(b.text)}</p>`
      case "details":
        return `<table role="presentation" style="border-collapse:collapse;margin:0 0 16px">\n${
          b.rows.map(([label, value]) =>
            `<tr><td style="padding:4px 16px 4px 0;color:#555555;vertical-align:top">${html(label)}</td>` +
            `<td style="padding:4px 0;vertical-align:top"><strong>${html(value)}</strong></td></tr>`
          ).join("\n")
        }\n</table>`
      case "link":
        return `<p style="margin:24px 0"><a href="${escapeHtml(b.url)}" style="display:inline-block;padding:12px 20px;` +
          `background:#0b5fff;color:#ffffff;text-decoration:none;border-radius:4px">${html(b.label)}</a></p>\n` +
          `<p style="margin:0 0 16px;font-size:13px;color:#555555">${html(b.fallback)}: ` +
          `<a href="${escapeHtml(b.url)}">${html(b.url)}</a></p>`
    }
  }).join("\n")
  return `<!DOCTYPE html>
<html lang="${locale}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${html(subject)}</title></head>
<body style="margin:0;padding:24px;background:#f4f4f4;font-family:Arial,Helvetica,sans-serif;font-size:15px;line-height:1.5;color:#1a1a1a">
<div style="max-width:560px;margin:0 auto;padding:24px;background:#ffffff;border-radius:6px">
${body}
</div>
</body>
</html>
`
}

// ---------------------------------------------------------------------------------------------
// Words

interface Words {
  readonly hello: (name: string | null) => string
  readonly reference: string
  readonly tour: string
  readonly date: string
  readonly time: string
  readonly rate: string
  readonly participants: string
  readonly guest: string
  readonly refund: string
  readonly reason: string
  readonly automatic: string
  readonly regards: (operator: string) => string
  readonly contact: (operator: string, contact: string | null | undefined) => string
  readonly newTimeDoesNotSuit: (operator: string, contact: string | null | undefined) => string
}

const reach = (operator: string, contact: string | null | undefined) =>
  contact && contact.trim() ? `${operator}: ${contact.trim()}` : operator

const WORDS: Record<Locale, Words> = {
  en: {
    hello: (name) => (name && name.trim() ? `Hello ${name.trim()},` : "Hello,"),
    reference: "Booking reference",
    tour: "Tour",
    date: "Date",
    time: "Time",
    rate: "Option",
    participants: "Participants",
    guest: "Guest",
    refund: "Refund",
    reason: "Reason",
    automatic: "This is an automatic message.",
    regards: (operator) => `Kind regards,\n${operator}`,
    contact: (operator, contact) => `If you have any questions, contact ${reach(operator, contact)}.`,
    newTimeDoesNotSuit: (operator, contact) => `If the new time does not suit you, contact ${reach(operator, contact)}.`
  },
  nb: {
    hello: (name) => (name && name.trim() ? `Hei ${name.trim()},` : "Hei,"),
    reference: "Bestillingsnummer",
    tour: "Tur",
    date: "Dato",
    time: "Tid",
    rate: "Alternativ",
    participants: "Deltakere",
    guest: "Gjest",
    refund: "Tilbakebetaling",
    reason: "Årsak",
    automatic: "Dette er en automatisk melding.",
    regards: (operator) => `Vennlig hilsen\n${operator}`,
    contact: (operator, contact) => `Har du spørsmål, ta kontakt med ${reach(operator, contact)}.`,
    newTimeDoesNotSuit: (operator, contact) => `Passer ikke det nye tidspunktet, ta kontakt med ${reach(operator, contact)}.`
  }
}

/** Date, time and rate rows of a departure. */
const departureRows = (locale: Locale, d: Departure): Array<readonly [string, string] | null> => {
  const w = WORDS[locale]
  return [
    [w.date, formatDay(locale, d.date)],
    d.startTime === null ? null : [w.time, d.startTime],
    d.rateTitle ? [w.rate, d.rateTitle] : null
  ]
}

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

// ---------------------------------------------------------------------------------------------
// Templates

interface Composed {
  readonly subject: string
  readonly blocks: ReadonlyArray<Block>
}

type Composers = { readonly [K in TemplateName]: (locale: Locale, data: TemplateData<K>) => Composed }

const COMPOSERS: Composers = {
  booking_cancelled_guest: (locale, d) => {
    const w = WORDS[locale]
    const when = formatDeparture(locale, d.departure)
    return {
      subject: locale === "nb"
        ? `Bestillingen din ${d.bookingReference} er kansellert`
        : `Your booking ${d.bookingReference} has been cancelled`,
      blocks: [
        p(w.hello(d.guestName)),
        p(locale === "nb"
          ? `${d.operatorName} har kansellert bestillingen din av ${d.tourName} på ${when}.`
          : `${d.operatorName} has cancelled your booking for ${d.tourName} on ${when}.`),
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
  },

  booking_cancelled_team: (locale, d) => {
    const w = WORDS[locale]
    return {
      subject: locale === "nb"
        ? `Kansellert: ${d.tourName}, ${formatDeparture(locale, d.departure, "short")} (${d.bookingReference})`
        : `Cancelled: ${d.tourName}, ${formatDeparture(locale, d.departure, "short")} (${d.bookingReference})`,
      blocks: [
        p(locale === "nb"
          ? `Bestilling ${d.bookingReference} av ${d.tourName} på ${formatDeparture(locale, d.departure)} er kansellert av ${d.cancelledBy}.`
          : `Booking ${d.bookingReference} for ${d.tourName} on ${formatDeparture(locale, d.departure)} has been cancelled by ${d.cancelledBy}.`),
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
  },

  booking_rescheduled_guest: (locale, d) => {
    const w = WORDS[locale]
    const next = formatDeparture(locale, d.next, "short")
    return {
      subject: locale === "nb"
        ? `Bestillingen din ${d.bookingReference} er flyttet til ${next}`
        : `Your booking ${d.bookingReference} has been moved to ${next}`,
      blocks: [
        p(w.hello(d.guestName)),
        p(locale === "nb"
          ? `${d.operatorName} har flyttet bestillingen din av ${d.tourName} til ${formatDeparture(locale, d.next)}.`
          : `${d.operatorName} has moved your booking for ${d.tourName} to ${formatDeparture(locale, d.next)}.`),
        details([
          [w.reference, d.bookingReference],
          [w.tour, d.tourName],
          [locale === "nb" ? "Ny tid" : "New time", formatDeparture(locale, d.next)],
          d.next.rateTitle ? [w.rate, d.next.rateTitle] : null,
          [locale === "nb" ? "Tidligere tid" : "Previous time", formatDeparture(locale, d.previous)],
          d.participants === null ? null : [w.participants, String(d.participants)]
        ]),
        p(locale === "nb"
          ? "Prisen er den samme, og betalingen din er uendret."
          : "The price is the same and your payment is unchanged."),
        p(w.newTimeDoesNotSuit(d.operatorName, d.operatorContact)),
        p(w.regards(d.operatorName))
      ]
    }
  },

  booking_rescheduled_team: (locale, d) => {
    const w = WORDS[locale]
    const arrow = `${formatDeparture(locale, d.previous, "short")} → ${formatDeparture(locale, d.next, "short")}`
    return {
      subject: locale === "nb"
        ? `Flyttet: ${d.tourName} (${d.bookingReference}), ${arrow}`
        : `Rescheduled: ${d.tourName} (${d.bookingReference}), ${arrow}`,
      blocks: [
        p(locale === "nb"
          ? `Bestilling ${d.bookingReference} av ${d.tourName} er flyttet av ${d.rescheduledBy}.`
          : `Booking ${d.bookingReference} for ${d.tourName} has been moved by ${d.rescheduledBy}.`),
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
  },

  balance_payment_link_guest: (locale, d) => {
    const w = WORDS[locale]
    const amount = formatMoney(locale, d.amount)
    const when = formatDeparture(locale, d.departure)
    return {
      subject: locale === "nb"
        ? `Betaling for bestillingen din ${d.bookingReference}`
        : `Payment due for your booking ${d.bookingReference}`,
      blocks: [
        p(w.hello(d.guestName)),
        p(locale === "nb"
          ? `Det gjenstår ${amount} å betale for bestillingen din av ${d.tourName} på ${when}.`
          : `There is ${amount} left to pay for your booking for ${d.tourName} on ${when}.`),
        ...(d.payBy === null ? [] : [p(locale === "nb"
          ? `Betal innen ${formatDay(locale, d.payBy)}.`
          : `Please pay by ${formatDay(locale, d.payBy)}.`)]),
        {
          kind: "link",
          label: locale === "nb" ? `Betal ${amount}` : `Pay ${amount}`,
          fallback: locale === "nb" ? "Betal her" : "Pay here",
          url: d.paymentUrl
        },
        p(locale === "nb"
          ? "Lenken er personlig. Ikke del den med andre."
          : "The link is personal. Please do not share it."),
        details([
          [w.reference, d.bookingReference],
          [w.tour, d.tourName],
          ...departureRows(locale, d.departure)
        ]),
        p(w.contact(d.operatorName, d.operatorContact)),
        p(w.regards(d.operatorName))
      ]
    }
  },

  quickbook_sale_confirmed_guest: (locale, d) => {
    const w = WORDS[locale]
    const when = formatDeparture(locale, d.departure)
    return {
      subject: locale === "nb"
        ? `Bestillingen din ${d.bookingCode}: ${d.tourName}, ${formatDeparture(locale, d.departure, "short")}`
        : `Your booking ${d.bookingCode}: ${d.tourName}, ${formatDeparture(locale, d.departure, "short")}`,
      blocks: [
        p(w.hello(d.guestName)),
        p(locale === "nb"
          ? `Takk for bestillingen! Turen din med ${d.operatorName}, ${d.tourName} ${when}, er bekreftet.`
          : `Thank you for your booking! Your trip with ${d.operatorName}, ${d.tourName} on ${when}, is confirmed.`),
        details([
          [locale === "nb" ? "Bookingkode" : "Booking code", d.bookingCode],
          [w.tour, d.tourName],
          ...departureRows(locale, d.departure),
          ...d.guests.map((g) => [`${g.count} x ${g.label}`, formatMoney(locale, g.amount)] as const),
          [locale === "nb" ? "Totalt betalt" : "Total paid", formatMoney(locale, d.total)]
        ]),
        p(locale === "nb"
          ? "Vis bookingkoden eller QR-koden på billetten når du møter opp."
          : "Show the booking code or the QR code on your ticket when you arrive."),
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
  },

  quickbook_sale_failed_guest: (locale, d) => {
    const w = WORDS[locale]
    const when = formatDeparture(locale, d.departure)
    const total = formatMoney(locale, d.total)
    return {
      subject: locale === "nb"
        ? `Vi fikk ikke booket ${d.tourName}: betalingen din ${d.moneyReturned ? "er betalt tilbake" : "betales tilbake"} (${d.saleReference})`
        : `We could not book ${d.tourName}: your payment ${d.moneyReturned ? "has been returned" : "is being returned"} (${d.saleReference})`,
      blocks: [
        p(w.hello(d.guestName)),
        p(locale === "nb"
          ? `Beklager! Vi fikk ikke fullført bestillingen din av ${d.tourName} med ${d.operatorName} ${when}.`
          : `We are sorry: we could not complete your booking for ${d.tourName} with ${d.operatorName} on ${when}.`),
        p(d.moneyReturned
          ? locale === "nb"
            ? `Betalingen din på ${total} er betalt tilbake til kortet du betalte med. Det kan ta noen dager før pengene er tilbake på kontoen din.`
            : `Your payment of ${total} has been returned to the card you paid with. It may take a few days before it shows on your statement.`
          : locale === "nb"
          ? `Betalingen din på ${total} betales tilbake til kortet du betalte med. Du trenger ikke gjøre noe. Det kan ta noen dager før pengene er tilbake på kontoen din.`
          : `Your payment of ${total} is being returned to the card you paid with. You do not need to do anything. It may take a few days before it shows on your statement.`),
        details([
          [locale === "nb" ? "Salgsreferanse" : "Sale reference", d.saleReference],
          [w.tour, d.tourName],
          ...departureRows(locale, d.departure)
        ]),
        p(w.contact(d.operatorName, null)),
        p(w.regards(d.operatorName))
      ]
    }
  },

  balance_refunded_team: (locale, d) => {
    const w = WORDS[locale]
    const amount = formatMoney(locale, d.amount)
    return {
      subject: locale === "nb"
        ? `Betales tilbake: saldo betalt etter kansellering, ${d.tourName}, ${formatDeparture(locale, d.departure, "short")} (${d.bookingReference})`
        : `Refunding: balance paid after cancellation, ${d.tourName}, ${formatDeparture(locale, d.departure, "short")} (${d.bookingReference})`,
      blocks: [
        p(locale === "nb"
          ? `Gjesten betalte betalingslenken for saldoen på bestilling ${d.bookingReference} av ${d.tourName} på ${formatDeparture(locale, d.departure)} (${amount}) etter at bestillingen var kansellert i bookingsystemet deres.`
          : `The guest paid the balance payment link of booking ${d.bookingReference} for ${d.tourName} on ${formatDeparture(locale, d.departure)} (${amount}) after the booking had been cancelled in your booking system.`),
        p(locale === "nb"
          ? `Betalingen betales automatisk tilbake til kortet gjesten betalte med. Dere trenger ikke gjøre noe.`
          : `The payment is being returned automatically to the card the guest paid with. You do not need to do anything.`),
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
}

/**
 * Renders a template in a locale after checking its data against the template's schema (a
 * failure is a bug in the caller: the type system already asks for the same fields).
 */
export const renderEmail = (locale: Locale, content: EmailContent): Either.Either<RenderedEmail, TemplateDataInvalid> => {
  const schema = TEMPLATES[content.template] as unknown as Schema.Schema<unknown>
  return Schema.decodeUnknownEither(schema)(content.data).pipe(
    Either.mapLeft((e) =>
      new TemplateDataInvalid({ template: content.template, detail: ParseResult.TreeFormatter.formatErrorSync(e) })),
    Either.map((data) => {
      const compose = COMPOSERS[content.template] as (locale: Locale, data: unknown) => Composed
      const composed = compose(locale, data)
      const subject = oneLine(composed.subject)
      return { subject, text: toText(composed.blocks), html: toHtml(locale, subject, composed.blocks) }
    })
  )
}
