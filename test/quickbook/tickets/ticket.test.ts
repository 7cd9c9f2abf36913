/**
 * The desk ticket layout (spec §2 Ticket, §8): exact lines in both languages, every line within
 * 32/48 for random and long text (Norwegian letters, decomposed input, emoji, long words), words
 * wrapped and never cut, amounts per language; the signed PDF link; the sale status read.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { failedClerkMessage } from "../../../src/quickbook/book/rules.js"
import { CLERK_MESSAGES, MONEY_BACK_MESSAGES } from "../../../src/quickbook/clerkMessages.js"
import { saleClerkMessage, statusAt } from "../../../src/quickbook/tickets/saleStatus.js"
import {
  cleanText,
  formatTicketAmount,
  rowText,
  type TicketCartLine,
  ticketLines,
  ticketOf,
  type TicketSale,
  wrapText
} from "../../../src/quickbook/tickets/ticket.js"
import { checkTicketLink, signTicketLink } from "../../../src/quickbook/tickets/ticketLinkSignature.js"

const cartLine = (over: Partial<TicketCartLine> = {}): TicketCartLine => ({
  operatorName: "Fjord Explorer AS",
  tourName: "Geirangerfjord Cruise",
  start: { date: "2026-11-21", time: "10:15", timeZone: "Europe/Oslo" },
  guests: [
    { label: "Adult", count: 2, unitMinor: 49900, lineMinor: 99800 },
    { label: "Child", count: 1, unitMinor: 24950, lineMinor: 24950 }
  ],
  totalMinor: 124750,
  currency: "NOK",
  ...over
})

const sale = (over: Partial<TicketSale> = {}): TicketSale => ({
  reference: "SVC-7K2M9Q4XTB",
  bookingCode: "FJX-4821",
  customer: { firstName: "Kari", lastName: "Nordmann" },
  cartLine: cartLine(),
  ...over
})

const within = (lines: ReadonlyArray<string>, width: number) => {
  for (const line of lines) {
    expect(line.length, JSON.stringify(line)).toBeLessThanOrEqual(width)
    expect([...line].length).toBeLessThanOrEqual(width)
    expect(line).toBe(line.normalize("NFC"))
    expect(line).not.toMatch(/[\u0000-\u001f]/)
  }
}

/** The words of a text, without the spaces wrapping adds or removes. */
const words = (text: string) => cleanText(text).split(" ").filter(Boolean)

describe("quickbook ticket layout", () => {
  it("lays out a ticket in English at 32 characters", () => {
    expect(ticketLines(sale(), "en", 32)).toEqual([
      "Fjord Explorer AS",
      "Geirangerfjord Cruise",
      "================================",
      "Date: Sat, 21 Nov 2026",
      "Time: 10:15 (Europe/Oslo)",
      "--------------------------------",
      "2 x Adult             NOK 998.00",
      "  at NOK 499.00 each",
      "1 x Child             NOK 249.50",
      "--------------------------------",
      "Total               NOK 1,247.50",
      "================================",
      "Booking code: FJX-4821",
      "Sale: SVC-7K2M9Q4XTB",
      "Guest: Kari Nordmann"
    ])
  })

  it("lays out a ticket in Norwegian at 48 characters", () => {
    expect(ticketLines(sale(), "nb", 48)).toEqual([
      "Fjord Explorer AS",
      "Geirangerfjord Cruise",
      "=".repeat(48),
      "Dato: lør. 21. nov. 2026",
      "Tid: 10:15 (Europe/Oslo)",
      "-".repeat(48),
      "2 x Adult" + " ".repeat(48 - 9 - 9) + "998,00 kr",
      "  à 499,00 kr",
      "1 x Child" + " ".repeat(48 - 9 - 9) + "249,50 kr",
      "-".repeat(48),
      "Totalt" + " ".repeat(48 - 6 - 11) + "1 247,50 kr",
      "=".repeat(48),
      "Bookingkode: FJX-4821",
      "Salg: SVC-7K2M9Q4XTB",
      "Gjest: Kari Nordmann"
    ])
  })

  // A private tour (priced per booking): the quote's cart line has the guests at 0 and a `booking` entry.
  const privateTour = cartLine({
    tourName: "Northern Lights Chase",
    guests: [
      { type: "adult", label: "Adult", count: 3, unitMinor: 0, lineMinor: 0 },
      { type: "child", label: "Child", count: 1, unitMinor: 0, lineMinor: 0 },
      { type: "booking", label: "Private booking (whole party)", count: 1, unitMinor: 250000, lineMinor: 250000 }
    ],
    totalMinor: 250000
  })

  it("a tour priced per booking: the guests without amounts, the booking price on its own line, the same total", () => {
    expect(ticketLines(sale({ cartLine: privateTour }), "en", 32)).toEqual([
      "Fjord Explorer AS",
      "Northern Lights Chase",
      "================================",
      "Date: Sat, 21 Nov 2026",
      "Time: 10:15 (Europe/Oslo)",
      "--------------------------------",
      "3 x Adult",
      "1 x Child",
      "Private booking (whole party)",
      "                    NOK 2,500.00",
      "--------------------------------",
      "Total               NOK 2,500.00",
      "================================",
      "Booking code: FJX-4821",
      "Sale: SVC-7K2M9Q4XTB",
      "Guest: Kari Nordmann"
    ])
    const nb = ticketLines(sale({ cartLine: privateTour }), "nb", 48)
    expect(nb.slice(6, 10)).toEqual([
      "3 x Adult",
      "1 x Child",
      "Privat bestilling (hele gruppen)" + " ".repeat(48 - 32 - 11) + "2 500,00 kr",
      "-".repeat(48)
    ])
    for (const lang of ["en", "nb"] as const) {
      for (const width of [32, 48]) within(ticketLines(sale({ cartLine: privateTour }), lang, width), width)
    }
  })

  it("formats amounts per language, with plain spaces", () => {
    expect(formatTicketAmount("nb", 149900, "NOK")).toBe("1 499,00 kr")
    expect(formatTicketAmount("en", 149900, "NOK")).toBe("NOK 1,499.00")
    expect(formatTicketAmount("en", 5000, "EUR")).toBe("EUR 50.00")
    expect(formatTicketAmount("nb", 0, "NOK")).toBe("0,00 kr")
    expect(formatTicketAmount("en", 1499, "JPY")).toBe("JPY 1,499")
    expect(formatTicketAmount("nb", 123456789, "NOK")).toBe("1 234 567,89 kr")
  })

  it("wraps words without cutting them and breaks only words longer than the line", () => {
    expect(wrapText("Nordlys og hvalsafari fra Tromsø med lunsj om bord", 20)).toEqual([
      "Nordlys og",
      "hvalsafari fra",
      "Tromsø med lunsj om",
      "bord"
    ])
    expect(wrapText("Supercalifragilisticexpialidocious tur", 10)).toEqual([
      "Supercalif",
      "ragilistic",
      "expialidoc",
      "ious tur"
    ])
    expect(wrapText("  many\t\tspaces\nand\r\nbreaks  ", 32)).toEqual(["many spaces and breaks"])
    expect(wrapText("", 32)).toEqual([])
    // An amount is kept whole: on the label's last line when it fits, else on its own line, right-aligned.
    expect(rowText("2 x Voksen med lunsj og kaffe", "1 998,00 kr", 20)).toEqual([
      "2 x Voksen med lunsj",
      "og kaffe 1 998,00 kr"
    ])
    expect(rowText("2 x Voksen med lunsj og kaffe!", "1 998,00 kr", 20)).toEqual([
      "2 x Voksen med lunsj",
      "og kaffe!",
      "         1 998,00 kr"
    ])
  })

  it("counts æ ø å Æ Ø Å as one character each, also when the input is decomposed", () => {
    const decomposed = "Ska\u030ala\u0308ndsk Bla\u030abærtur på Ørsta"
    expect(decomposed.length).toBe(cleanText(decomposed).length + 3)
    const name = "Åse Ærlig-Øvrebø"
    const lines = ticketLines(
      sale({
        customer: { firstName: "A\u030ase", lastName: "Ærlig-Øvrebø" },
        cartLine: cartLine({ tourName: decomposed })
      }),
      "nb",
      32
    )
    within(lines, 32)
    expect(lines).toContain(`Gjest: ${name}`)
    expect(lines.join(" ")).toContain("Skåländsk Blåbærtur på Ørsta")
    // 32 Norwegian letters fill a line exactly.
    expect(wrapText("æøåÆØÅ".repeat(6).slice(0, 32), 32)).toEqual(["æøåÆØÅ".repeat(6).slice(0, 32)])
    expect(wrapText("a\u030a".repeat(32), 32)).toEqual(["å".repeat(32)])
  })

  const text = fc.array(
    fc.oneof(
      fc.constantFrom("æ", "ø", "å", "Æ", "Ø", "Å", "a\u030a", "o\u0308", " ", "  ", "\t", "\n", "-", "😀", "é", "x"),
      fc.string({ minLength: 1, maxLength: 60 }),
      fc.constantFrom("Geirangerfjorden", "Hvalsafari", "Kjærlighetsstien", "Nordlysopplevelse")
    ),
    { maxLength: 30 }
  ).map((parts) => parts.join(""))

  it("keeps every line within 32 and 48 characters for random names, in both languages", () => {
    fc.assert(
      fc.property(
        text,
        text,
        text,
        fc.array(
          fc.record({
            label: text,
            count: fc.integer({ min: 1, max: 50 }),
            unitMinor: fc.integer({ min: 0, max: 10_000_000 })
          }),
          {
            minLength: 1,
            maxLength: 10
          }
        ),
        text,
        text,
        fc.constantFrom("Europe/Oslo", "America/Argentina/ComodRivadavia", "UTC"),
        fc.constantFrom("en" as const, "nb" as const),
        (operatorName, tourName, bookingCode, guests, firstName, lastName, timeZone, lang) => {
          const lines = guests.map((g) => ({ ...g, lineMinor: g.unitMinor * g.count }))
          const s = sale({
            bookingCode: bookingCode || "X",
            customer: { firstName, lastName },
            cartLine: cartLine({
              operatorName,
              tourName,
              start: { date: "2026-06-30", time: "23:59", timeZone },
              guests: lines,
              totalMinor: lines.reduce((n, g) => n + g.lineMinor, 0)
            })
          })
          const ticket = ticketOf(s, lang, { bookingPageUrl: "https://example.com/b/X", pdfUrl: null })
          within(ticket.lines32, 32)
          within(ticket.lines48, 48)
          // Nothing is lost: every word of the tour name is on the ticket (whole, or broken over lines).
          const joined = ticket.lines48.join("")
          for (const word of words(tourName)) expect(joined).toContain(word.length <= 48 ? word : word.slice(0, 47))
        }
      ),
      { numRuns: 300 }
    )
  })

  it("wrapText keeps the words in order and whole when they fit", () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 2, max: 60 }), (t, width) => {
        const lines = wrapText(t, width)
        within(lines, width)
        const fitting = words(t).every((w) => w.length <= width)
        if (fitting) expect(lines.flatMap(words)).toEqual(words(t))
        else expect(lines.join("").replace(/ /g, "")).toBe(words(t).join(""))
      }),
      { numRuns: 500 }
    )
  })

  it("ticketOf carries the links and the booking code", () => {
    const t = ticketOf(sale(), "en", {
      bookingPageUrl: "https://guests.example.com/b/FJX-4821",
      pdfUrl: "https://x/y.pdf"
    })
    expect(t.qrPayload).toBe("https://guests.example.com/b/FJX-4821")
    expect(t.pdfUrl).toBe("https://x/y.pdf")
    expect(t.bookingCode).toBe("FJX-4821")
    expect(t.lines32).toEqual(ticketLines(sale(), "en", 32))
  })
})

describe("ticket PDF links", () => {
  const secret = new Uint8Array(32).fill(7)
  const exp = 1_900_000_000
  it("verify with the same secret, reference and exp until exp", () => {
    const sig = signTicketLink(secret, "SVC-7K2M9Q4XTB", exp)
    expect(sig).toMatch(/^[0-9a-f]{32}$/)
    expect(checkTicketLink(secret, "SVC-7K2M9Q4XTB", String(exp), sig, exp * 1000 - 1)).toBe("valid")
    expect(checkTicketLink(secret, "SVC-7K2M9Q4XTB", String(exp), sig, exp * 1000)).toBe("expired")
    expect(checkTicketLink(secret, "SVC-AAAAAAAAAA", String(exp), sig, 0)).toBe("bad_signature")
    expect(checkTicketLink(secret, "SVC-7K2M9Q4XTB", String(exp + 1), sig, 0)).toBe("bad_signature")
    expect(checkTicketLink(new Uint8Array(32).fill(8), "SVC-7K2M9Q4XTB", String(exp), sig, 0)).toBe("bad_signature")
    expect(checkTicketLink(secret, "SVC-7K2M9Q4XTB", String(exp), sig.toUpperCase(), 0)).toBe("bad_signature")
    expect(checkTicketLink(secret, "SVC-7K2M9Q4XTB", `0${exp}`, sig, 0)).toBe("bad_signature")
    expect(checkTicketLink(secret, "SVC-7K2M9Q4XTB", String(exp), sig.slice(0, 30), 0)).toBe("bad_signature")
  })
})

describe("sale status read", () => {
  const now = new Date("2026-11-21T10:00:00Z")
  const later = new Date("2026-11-21T10:05:00Z")
  const earlier = new Date("2026-11-21T09:55:00Z")
  it("a quote or hold that ran out reads expired; a lapsed hold on a valid quote reads quoted", () => {
    expect(statusAt("quoted", later, null, now)).toBe("quoted")
    expect(statusAt("quoted", earlier, null, now)).toBe("expired")
    expect(statusAt("quoted", now, null, now)).toBe("expired")
    expect(statusAt("held", later, later, now)).toBe("held")
    expect(statusAt("held", earlier, earlier, now)).toBe("expired")
    expect(statusAt("held", later, earlier, now)).toBe("quoted")
    for (const s of ["expired", "booking", "confirmed", "failed"] as const) {
      expect(statusAt(s, earlier, earlier, now)).toBe(s)
    }
  })

  it("a failed sale's clerk message says why and that the money goes back", () => {
    // The same message POST /book answered for the failure.
    expect(saleClerkMessage("failed", "en", { reason: "sold_out" })).toBe(failedClerkMessage("sold_out", false, "en"))
    expect(saleClerkMessage("failed", "en", { reason: "sold_out" })).toMatch(/on its way back to the card/)
    expect(saleClerkMessage("failed", "nb", { reason: "provider_refused", moneyReturned: true }))
      .toBe(failedClerkMessage("provider_refused", true, "nb"))
    expect(saleClerkMessage("failed", "en", { reason: "payment_mismatch" })).toBe(CLERK_MESSAGES.payment_mismatch.en)
    expect(saleClerkMessage("failed", "en")).toBe(`The sale could not be booked. ${MONEY_BACK_MESSAGES.returning.en}`)
    expect(saleClerkMessage("booking", "en")).toMatch(/do not take another payment/)
    expect(saleClerkMessage("expired", "nb")).toMatch(/Lag et nytt tilbud/)
  })
})
