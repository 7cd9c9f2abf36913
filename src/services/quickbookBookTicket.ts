/**
 * The ticket POST /book answers with (spec §2 "Ticket"), built from the confirmed sale. Kept to one
 * function, `ticketOf`, so that it can be pointed at the full ticket module (src/domain/
 * quickbookTicket.ts, built separately with GET /sales and the PDF) when the two meet: the lines
 * here are a plain receipt, `pdfUrl` is null, and `qrPayload` is the sale's link under the public
 * base URL (`/t/<reference>`; no guest page serves it yet).
 */
import { formatDeparture, formatMoney } from "../domain/emailTemplates.js"

export interface TicketSale {
  readonly reference: string
  readonly bookingCode: string
  readonly language: "en" | "nb"
  readonly customer: { readonly firstName: string; readonly lastName: string }
  readonly cartLine: {
    readonly operatorName: string
    readonly tourName: string
    readonly start: { readonly date: string; readonly time: string; readonly timeZone: string }
    readonly guests: ReadonlyArray<{ readonly label: string; readonly count: number }>
    readonly totalMinor: number
    readonly currency: string
  }
  /** The service's public base URL (PUBLIC_URL, or where it listens). */
  readonly baseUrl: string
}

export interface Ticket {
  readonly lines32: ReadonlyArray<string>
  readonly lines48: ReadonlyArray<string>
  readonly qrPayload: string
  readonly pdfUrl: string | null
  readonly bookingCode: string
}

const LABELS = {
  en: { booking: "Booking", guest: "Guest", total: "Total paid", sale: "Sale" },
  nb: { booking: "Booking", guest: "Gjest", total: "Betalt", sale: "Salg" }
} as const

/** Words wrapped to `width`; a word longer than the line is cut. */
const wrap = (text: string, width: number): Array<string> => {
  const lines: Array<string> = []
  let line = ""
  for (const word of text.trim().split(/\s+/)) {
    for (let w = word; w.length > 0; w = w.slice(width)) {
      const piece = w.slice(0, width)
      if (line === "") line = piece
      else if (line.length + 1 + piece.length <= width) line = `${line} ${piece}`
      else {
        lines.push(line)
        line = piece
      }
    }
  }
  if (line !== "") lines.push(line)
  return lines
}

const linesOf = (sale: TicketSale, width: number) => {
  const l = LABELS[sale.language]
  const c = sale.cartLine
  return [
    ...wrap(c.tourName, width),
    ...wrap(c.operatorName, width),
    ...wrap(formatDeparture(sale.language, { date: c.start.date, startTime: c.start.time }, "short"), width),
    ...c.guests.flatMap((g) => wrap(`${g.count} x ${g.label}`, width)),
    ...wrap(`${l.total}: ${formatMoney(sale.language, { amountMinor: c.totalMinor, currency: c.currency })}`, width),
    ...wrap(`${l.guest}: ${sale.customer.firstName} ${sale.customer.lastName}`, width),
    ...wrap(`${l.booking}: ${sale.bookingCode}`, width),
    ...wrap(`${l.sale}: ${sale.reference}`, width)
  ]
}

export const ticketOf = (sale: TicketSale): Ticket => ({
  lines32: linesOf(sale, 32),
  lines48: linesOf(sale, 48),
  qrPayload: `${sale.baseUrl.replace(/\/+$/, "")}/t/${sale.reference}`,
  pdfUrl: null,
  bookingCode: sale.bookingCode
})
