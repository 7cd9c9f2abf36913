/**
 * The desk ticket of a confirmed Quickbook sale (spec §2 Ticket, §8 line widths), as pure
 * functions of the sale row's data. `ticketOf` is what GET /sales/{reference}, GET
 * /sales/{reference}/ticket and the POST /book answer return; the links (booking page for the QR,
 * signed PDF link) are made by src/quickbook/tickets/QuickbookTicketLinks.ts and passed in.
 *
 * Layout, the same at both widths: operator, tour, local date, local time with the IANA zone, one
 * line per guest type (`2 x Adult` and the line total at the right; the unit price below when more
 * than one), the total with its currency, booking code, sale reference, guest name. A tour priced
 * per booking (the cart line's `booking` entry) shows its guest types without amounts (they are 0)
 * and the booking price on a line of its own, so the amounts shown add up to the total.
 *
 * Width: text is normalised to NFC (a decomposed `å` is one character) and control characters
 * become spaces; a line's width is its length in UTF-16 code units, so a line is within the width
 * however a client counts (code units, code points or graphemes): æ ø å Æ Ø Å count one each.
 * Words wrap to the width and are never cut; a word longer than the width is broken.
 */
import { Schema } from "effect"
import { BOOKING_LINE_TYPE } from "../sales/rules.js"

export const TICKET_LANGUAGES = ["en", "nb"] as const
export const TicketLanguage = Schema.Literal(...TICKET_LANGUAGES)
export type TicketLanguage = typeof TicketLanguage.Type

/** The widths of spec §8: `lines32` and `lines48`. */
export const TICKET_WIDTHS = [32, 48] as const

/** The cart line fields a ticket shows, as stored in `quickbook_sales.cart_line`. */
export const TicketCartLine = Schema.Struct({
  operatorName: Schema.String,
  tourName: Schema.String,
  start: Schema.Struct({ date: Schema.String, time: Schema.String, timeZone: Schema.String }),
  guests: Schema.Array(Schema.Struct({
    /** A guest type, or `booking` (BOOKING_LINE_TYPE): the booking price of a tour priced per booking. */
    type: Schema.optional(Schema.String),
    label: Schema.String,
    count: Schema.Int,
    unitMinor: Schema.Int,
    lineMinor: Schema.Int
  })),
  totalMinor: Schema.Int,
  currency: Schema.String
})
export type TicketCartLine = typeof TicketCartLine.Type

/** The cart line's booking price entry (a tour priced per booking), if any. */
export const bookingLineOf = (line: Pick<TicketCartLine, "guests">) =>
  line.guests.find((g) => g.type === BOOKING_LINE_TYPE)

/** The guest as stored in `quickbook_sales.customer` (POST /book). */
export const SaleCustomer = Schema.Struct({
  firstName: Schema.String,
  lastName: Schema.String,
  email: Schema.String,
  phone: Schema.optional(Schema.NullOr(Schema.String))
})
export type SaleCustomer = typeof SaleCustomer.Type

/** What a ticket is made of: a confirmed sale's reference, booking code, guest and cart line. */
export interface TicketSale {
  readonly reference: string
  readonly bookingCode: string
  readonly customer: Pick<SaleCustomer, "firstName" | "lastName">
  readonly cartLine: TicketCartLine
}

export interface TicketLinks {
  /** The guest's booking page; printed as the QR code. */
  readonly bookingPageUrl: string
  /** The signed PDF link, or null when there is none. */
  readonly pdfUrl: string | null
}

/** Spec §2 Ticket. */
export interface Ticket {
  readonly lines32: ReadonlyArray<string>
  readonly lines48: ReadonlyArray<string>
  readonly qrPayload: string
  readonly pdfUrl: string | null
  readonly bookingCode: string
}

// ---------------------------------------------------------------------------------------------
// Text and width

/** NFC, control and line-separator characters as spaces, runs of white space as one space, trimmed. */
export const cleanText = (value: string): string =>
  value.normalize("NFC")
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, " ")
    .replace(/[\s\u00a0\u202f]+/g, " ")
    .trim()

/** The width of a cleaned text: UTF-16 code units (never less than code points or graphemes). Widths are at least 2. */
export const textWidth = (value: string): number => value.length

/** A word longer than the width, in pieces of at most the width (never splitting a surrogate pair). */
const breakWord = (word: string, width: number): Array<string> => {
  const pieces: Array<string> = []
  let piece = ""
  for (const ch of word) {
    if (piece.length + ch.length > width && piece !== "") {
      pieces.push(piece)
      piece = ""
    }
    piece += ch
  }
  if (piece !== "") pieces.push(piece)
  return pieces
}

/** The text in lines of at most `width`: words wrapped, not cut; a longer word broken. */
export const wrapText = (text: string, width: number): Array<string> => {
  const lines: Array<string> = []
  let line = ""
  for (const word of cleanText(text).split(" ")) {
    if (word === "") continue
    if (textWidth(word) > width) {
      if (line !== "") lines.push(line)
      const pieces = breakWord(word, width)
      line = pieces.pop()!
      lines.push(...pieces)
    } else if (line === "") {
      line = word
    } else if (textWidth(line) + 1 + textWidth(word) <= width) {
      line = `${line} ${word}`
    } else {
      lines.push(line)
      line = word
    }
  }
  if (line !== "") lines.push(line)
  return lines
}

/**
 * `left` wrapped, with `right` (an amount, kept whole) at the right end of its last line, or
 * right-aligned on a line of its own when it does not fit there.
 */
export const rowText = (left: string, right: string, width: number): Array<string> => {
  const lines = wrapText(left, width)
  const r = cleanText(right)
  if (r === "") return lines
  if (textWidth(r) > width) return [...lines, ...wrapText(r, width)]
  const last = lines.pop()
  if (last !== undefined && textWidth(last) + 1 + textWidth(r) <= width) {
    return [...lines, last + " ".repeat(width - textWidth(last) - textWidth(r)) + r]
  }
  return [...lines, ...(last === undefined ? [] : [last]), " ".repeat(width - textWidth(r)) + r]
}

// ---------------------------------------------------------------------------------------------
// Money, dates, words

const LOCALE_TAGS: Record<TicketLanguage, string> = { en: "en-GB", nb: "nb-NO" }

const moneyFormats = new Map<string, Intl.NumberFormat>()

/**
 * An amount in minor units for a ticket or receipt: `1 499,00 kr` in Norwegian, `NOK 1,499.00` in
 * English (the currency's code), with plain spaces (no non-breaking ones a printer may not have).
 */
export const formatTicketAmount = (lang: TicketLanguage, amountMinor: number, currency: string): string => {
  const key = `${lang}:${currency}`
  let format = moneyFormats.get(key)
  if (!format) {
    format = new Intl.NumberFormat(LOCALE_TAGS[lang], {
      style: "currency",
      currency,
      ...(lang === "en" ? { currencyDisplay: "code" } : {})
    })
    moneyFormats.set(key, format)
  }
  const digits = format.resolvedOptions().maximumFractionDigits ?? 2
  return format.format(amountMinor / 10 ** digits).replace(/[\u00a0\u202f]/g, " ").replace(/\u2212/g, "-")
}

/** Made once per language: building a formatter costs far more than formatting (each ticket read formats its day twice). */
const dayFormat = (tag: string) =>
  new Intl.DateTimeFormat(tag, { timeZone: "UTC", weekday: "short", day: "numeric", month: "short", year: "numeric" })
const dayFormats: Record<TicketLanguage, Intl.DateTimeFormat> = {
  en: dayFormat(LOCALE_TAGS.en),
  nb: dayFormat(LOCALE_TAGS.nb)
}

/** A local calendar day, short: `Sat, 21 Nov 2026`, `lør. 21. nov. 2026`. */
export const formatTicketDay = (lang: TicketLanguage, day: string): string => {
  const [y, m, d] = day.split("-").map(Number)
  return dayFormats[lang].format(new Date(Date.UTC(y!, m! - 1, d!))).replace(/[\u00a0\u202f]/g, " ")
}

interface TicketWords {
  readonly date: string
  readonly time: string
  readonly each: (unit: string) => string
  /** The booking price's line of a tour priced per booking. */
  readonly booking: string
  readonly total: string
  readonly bookingCode: string
  readonly sale: string
  readonly guest: string
}

const WORDS: Record<TicketLanguage, TicketWords> = {
  en: {
    date: "Date:",
    time: "Time:",
    each: (unit) => `at ${unit} each`,
    booking: "Private booking (whole party)",
    total: "Total",
    bookingCode: "Booking code:",
    sale: "Sale:",
    guest: "Guest:"
  },
  nb: {
    date: "Dato:",
    time: "Tid:",
    each: (unit) => `à ${unit}`,
    booking: "Privat bestilling (hele gruppen)",
    total: "Totalt",
    bookingCode: "Bookingkode:",
    sale: "Salg:",
    guest: "Gjest:"
  }
}

// ---------------------------------------------------------------------------------------------
// The ticket

/** The ticket's lines at a width (every line at most `width` wide, see the module comment). */
export const ticketLines = (sale: TicketSale, lang: TicketLanguage, width: number): Array<string> => {
  const w = WORDS[lang]
  const line = sale.cartLine
  const money = (minor: number) => formatTicketAmount(lang, minor, line.currency)
  const rule = (ch: string) => ch.repeat(width)
  const guestName = cleanText(`${sale.customer.firstName} ${sale.customer.lastName}`)
  // Priced per booking: the guests cost nothing each, the party its booking price (its own line).
  const perBooking = bookingLineOf(line) !== undefined
  return [
    ...wrapText(line.operatorName, width),
    ...wrapText(line.tourName, width),
    rule("="),
    ...wrapText(`${w.date} ${formatTicketDay(lang, line.start.date)}`, width),
    ...wrapText(`${w.time} ${line.start.time} (${line.start.timeZone})`, width),
    rule("-"),
    ...line.guests.flatMap((g) =>
      g.type === BOOKING_LINE_TYPE
        ? rowText(w.booking, money(g.lineMinor), width)
        : perBooking
        ? wrapText(`${g.count} x ${g.label}`, width)
        : [
          ...rowText(`${g.count} x ${g.label}`, money(g.lineMinor), width),
          ...(g.count > 1 ? wrapText(w.each(money(g.unitMinor)), Math.max(2, width - 2)).map((l) => `  ${l}`) : [])
        ]
    ),
    rule("-"),
    ...rowText(w.total, money(line.totalMinor), width),
    rule("="),
    ...wrapText(`${w.bookingCode} ${sale.bookingCode}`, width),
    ...wrapText(`${w.sale} ${sale.reference}`, width),
    ...(guestName === "" ? [] : wrapText(`${w.guest} ${guestName}`, width))
  ]
}

/** Spec §2 Ticket of a confirmed sale in a language, with its links. */
export const ticketOf = (sale: TicketSale, lang: TicketLanguage, links: TicketLinks): Ticket => ({
  lines32: ticketLines(sale, lang, 32),
  lines48: ticketLines(sale, lang, 48),
  qrPayload: links.bookingPageUrl,
  pdfUrl: links.pdfUrl,
  bookingCode: sale.bookingCode
})
