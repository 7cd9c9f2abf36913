/**
 * The transactional emails in English and bokmål: every template renders every field it is
 * given, in both parts; HTML is escaped; subjects stay on one line; bad data is refused.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import fc from "fast-check"
import { type Locale, LOCALES } from "../../src/email/rules.js"
import {
  type EmailContent,
  escapeHtml,
  formatDay,
  formatMoney,
  renderEmail,
  TEMPLATE_NAMES,
  type TemplateName
} from "../../src/email/templates.js"

const nov21 = { date: "2026-11-21", startTime: "10:15" }
const nov28 = { date: "2026-11-28", startTime: "14:45", rateTitle: "With lunch" }
const refunded = { outcome: "refunded", amount: { amountMinor: 123450, currency: "NOK" } } as const

/** Sample data for each template, with values distinct enough to find in the output. */
const SAMPLES: { readonly [K in TemplateName]: Extract<EmailContent, { template: K }>["data"] } = {
  booking_cancelled_guest: {
    guestName: "Kari Nordmann",
    operatorName: "Fjord Explorer AS",
    operatorContact: "post@fjordexplorer.no",
    tourName: "Geirangerfjord Cruise",
    bookingReference: "FJX-4821",
    departure: nov21,
    participants: 3,
    refund: refunded
  },
  booking_cancelled_team: {
    operatorName: "Fjord Explorer AS",
    tourName: "Geirangerfjord Cruise",
    bookingReference: "FJX-4821",
    departure: nov21,
    participants: 3,
    guestName: "Kari Nordmann",
    reason: "Storm warning for the whole fjord",
    cancelledBy: "Partner API key \"Booking sync\"",
    refund: refunded
  },
  booking_rescheduled_guest: {
    guestName: "Kari Nordmann",
    operatorName: "Fjord Explorer AS",
    operatorContact: "+47 912 34 567",
    tourName: "Geirangerfjord Cruise",
    bookingReference: "FJX-4821",
    previous: nov21,
    next: nov28,
    participants: 3
  },
  booking_rescheduled_team: {
    operatorName: "Fjord Explorer AS",
    tourName: "Geirangerfjord Cruise",
    bookingReference: "FJX-4821",
    previous: nov21,
    next: nov28,
    participants: 3,
    guestName: "Kari Nordmann",
    rescheduledBy: "Partner API key \"Booking sync\""
  },
  balance_payment_link_guest: {
    guestName: "Kari Nordmann",
    operatorName: "Fjord Explorer AS",
    operatorContact: "post@fjordexplorer.no",
    tourName: "Geirangerfjord Cruise",
    bookingReference: "FJX-4821",
    departure: nov21,
    amount: { amountMinor: 99900, currency: "NOK" },
    paymentUrl: "https://pay.example.com/l/abc123?lang=nb&x=1",
    payBy: "2026-11-19"
  },
  quickbook_sale_confirmed_guest: {
    guestName: "Kari Nordmann",
    operatorName: "Fjord Explorer AS",
    tourName: "Geirangerfjord Cruise",
    departure: nov21,
    guests: [
      { label: "Adult", count: 2, amount: { amountMinor: 99800, currency: "NOK" } },
      { label: "Child", count: 1, amount: { amountMinor: 24950, currency: "NOK" } }
    ],
    total: { amountMinor: 124750, currency: "NOK" },
    bookingCode: "FJX-4821",
    saleReference: "SVC-7K2M9Q4XTB",
    bookingPageUrl: "https://guests.example.com/b/FJX-4821",
    ticketPdfUrl: "https://api.example.com/api/quickbook/v1/tickets/SVC-7K2M9Q4XTB.pdf?lang=nb&exp=1&sig=ab"
  },
  quickbook_sale_failed_guest: {
    guestName: "Kari Nordmann",
    operatorName: "Fjord Explorer AS",
    tourName: "Geirangerfjord Cruise",
    departure: nov21,
    total: { amountMinor: 124750, currency: "NOK" },
    saleReference: "SVC-7K2M9Q4XTB",
    moneyReturned: false
  },
  balance_refunded_team: {
    operatorName: "Fjord Explorer AS",
    tourName: "Geirangerfjord Cruise",
    bookingReference: "FJX-4821",
    departure: nov21,
    guestName: "Kari Nordmann",
    amount: { amountMinor: 79840, currency: "NOK" }
  },
  pay_later_failed_team: {
    operatorName: "Fjord Explorer AS",
    tourName: "Geirangerfjord Cruise",
    bookingReference: "FJX-4821",
    departure: nov21,
    guestName: "Kari Nordmann",
    amount: { amountMinor: 64900, currency: "NOK" },
    failure: "the card was declined",
    guestEmailed: true,
    deadline: "2026-11-19"
  }
}

const content = (template: TemplateName, data: unknown = SAMPLES[template]) => ({ template, data }) as EmailContent

const render = (locale: Locale, c: EmailContent) => {
  const r = renderEmail(locale, c)
  if (Either.isLeft(r)) throw new Error(r.left.detail)
  return r.right
}

/** What each template must show, in the locale's own words for dates and money. */
const required = (template: TemplateName, locale: Locale): Array<string> => {
  const day = (d: string) => formatDay(locale, d)
  const money = (amountMinor: number) => formatMoney(locale, { amountMinor, currency: "NOK" })
  switch (template) {
    case "booking_cancelled_guest":
      return [
        "Kari Nordmann",
        "Fjord Explorer AS",
        "post@fjordexplorer.no",
        "Geirangerfjord Cruise",
        "FJX-4821",
        day("2026-11-21"),
        "10:15",
        "3",
        money(123450)
      ]
    case "booking_cancelled_team":
      return [
        "Kari Nordmann",
        "Geirangerfjord Cruise",
        "FJX-4821",
        day("2026-11-21"),
        "10:15",
        "3",
        money(123450),
        "Storm warning for the whole fjord",
        "Booking sync"
      ]
    case "booking_rescheduled_guest":
      return [
        "Kari Nordmann",
        "Fjord Explorer AS",
        "+47 912 34 567",
        "Geirangerfjord Cruise",
        "FJX-4821",
        day("2026-11-21"),
        "10:15",
        day("2026-11-28"),
        "14:45",
        "With lunch",
        "3"
      ]
    case "booking_rescheduled_team":
      return [
        "Kari Nordmann",
        "Geirangerfjord Cruise",
        "FJX-4821",
        day("2026-11-21"),
        "10:15",
        day("2026-11-28"),
        "14:45",
        "With lunch",
        "3",
        "Booking sync"
      ]
    case "balance_payment_link_guest":
      return [
        "Kari Nordmann",
        "Fjord Explorer AS",
        "post@fjordexplorer.no",
        "Geirangerfjord Cruise",
        "FJX-4821",
        day("2026-11-21"),
        "10:15",
        money(99900),
        "https://pay.example.com/l/abc123?lang=nb&x=1",
        day("2026-11-19")
      ]
    case "quickbook_sale_confirmed_guest":
      return [
        "Kari Nordmann",
        "Fjord Explorer AS",
        "Geirangerfjord Cruise",
        "FJX-4821",
        day("2026-11-21"),
        "10:15",
        "2 x Adult",
        money(99800),
        "1 x Child",
        money(24950),
        money(124750),
        "https://guests.example.com/b/FJX-4821",
        "https://api.example.com/api/quickbook/v1/tickets/SVC-7K2M9Q4XTB.pdf?lang=nb&exp=1&sig=ab"
      ]
    case "quickbook_sale_failed_guest":
      return [
        "Kari Nordmann",
        "Fjord Explorer AS",
        "Geirangerfjord Cruise",
        "SVC-7K2M9Q4XTB",
        day("2026-11-21"),
        "10:15",
        money(124750)
      ]
    case "balance_refunded_team":
      return ["Kari Nordmann", "Geirangerfjord Cruise", "FJX-4821", day("2026-11-21"), "10:15", money(79840)]
    case "pay_later_failed_team":
      return [
        "Kari Nordmann",
        "Geirangerfjord Cruise",
        "FJX-4821",
        day("2026-11-21"),
        "10:15",
        money(64900),
        "the card was declined",
        day("2026-11-19")
      ]
  }
}

describe("email templates", () => {
  it("there are the templates the writes and desk sales need", () => {
    expect([...TEMPLATE_NAMES].sort()).toEqual([
      "balance_payment_link_guest",
      "balance_refunded_team",
      "booking_cancelled_guest",
      "booking_cancelled_team",
      "booking_rescheduled_guest",
      "booking_rescheduled_team",
      "pay_later_failed_team",
      "quickbook_sale_confirmed_guest",
      "quickbook_sale_failed_guest"
    ])
  })

  for (const template of TEMPLATE_NAMES) {
    for (const locale of LOCALES) {
      it(`${template} (${locale}) shows every field in the text and the HTML part`, () => {
        const { subject, text, html } = render(locale, content(template))
        expect(subject).toMatch(template === "quickbook_sale_failed_guest" ? /SVC-7K2M9Q4XTB/ : /FJX-4821/)
        expect(html).toContain(`<html lang="${locale}">`)
        for (const value of required(template, locale)) {
          expect(text, `${value} in text`).toContain(value)
          expect(html, `${value} in html`).toContain(escapeHtml(value))
        }
        // Nothing left unfilled.
        expect(text + subject).not.toMatch(/undefined|null|NaN|\[object/)
      })
    }
  }

  it("writes bokmål in nb and English in en", () => {
    const nb = render("nb", content("booking_cancelled_guest"))
    const en = render("en", content("booking_cancelled_guest"))
    expect(nb.subject).toBe("Bestillingen din FJX-4821 er kansellert")
    expect(en.subject).toBe("Your booking FJX-4821 has been cancelled")
    expect(nb.text).toContain("Hei Kari Nordmann,")
    expect(nb.text).toContain("lørdag 21. november 2026 kl. 10:15")
    expect(nb.text).toContain("1\u00a0234,50\u00a0kr")
    expect(nb.text).toContain("Vennlig hilsen")
    expect(en.text).toContain("Hello Kari Nordmann,")
    expect(en.text).toMatch(/Saturday,? 21 November 2026 at 10:15/)
    expect(en.text).toContain("NOK\u00a01,234.50")
    const payNb = render("nb", content("balance_payment_link_guest"))
    expect(payNb.text).toContain("Betal her: https://pay.example.com/l/abc123?lang=nb&x=1")
    expect(payNb.text).toContain("Betal innen torsdag 19. november 2026.")
  })

  it("desk sales: the confirmation links the booking page and the PDF; a failure says the payment goes back", () => {
    const confirmed = render("nb", content("quickbook_sale_confirmed_guest"))
    expect(confirmed.subject).toBe("Bestillingen din FJX-4821: Geirangerfjord Cruise, 21. nov. 2026 kl. 10:15")
    expect(confirmed.text).toContain("Bookingkode: FJX-4821")
    expect(confirmed.text).toContain("2 x Adult: 998,00\u00a0kr")
    expect(confirmed.text).toContain("Totalt betalt: 1\u00a0247,50\u00a0kr")
    expect(confirmed.text).toContain("Bestillingen din: https://guests.example.com/b/FJX-4821")
    expect(confirmed.text).toContain(
      "Billett (PDF): https://api.example.com/api/quickbook/v1/tickets/SVC-7K2M9Q4XTB.pdf"
    )
    expect(confirmed.html).toContain(
      "href=\"https://api.example.com/api/quickbook/v1/tickets/SVC-7K2M9Q4XTB.pdf?lang=nb&amp;exp=1&amp;sig=ab\""
    )
    const failed = (locale: Locale, moneyReturned: boolean) =>
      render(locale, content("quickbook_sale_failed_guest", { ...SAMPLES.quickbook_sale_failed_guest, moneyReturned }))
    expect(failed("en", false).subject).toBe(
      "We could not book Geirangerfjord Cruise: your payment is being returned (SVC-7K2M9Q4XTB)"
    )
    expect(failed("en", false).text).toContain(
      "Your payment of NOK\u00a01,247.50 is being returned to the card you paid with."
    )
    expect(failed("en", true).text).toContain(
      "Your payment of NOK\u00a01,247.50 has been returned to the card you paid with."
    )
    expect(failed("nb", false).text).toContain(
      "Betalingen din på 1\u00a0247,50\u00a0kr betales tilbake til kortet du betalte med."
    )
    expect(failed("nb", true).subject).toBe(
      "Vi fikk ikke booket Geirangerfjord Cruise: betalingen din er betalt tilbake (SVC-7K2M9Q4XTB)"
    )
  })

  it("desk sale of a tour priced per booking: the guests included, the booking price on its own row, the total", () => {
    const data = {
      ...SAMPLES.quickbook_sale_confirmed_guest,
      guests: [{ label: "Adult", count: 3, amount: null }, { label: "Child", count: 1, amount: null }],
      bookingPrice: { amountMinor: 250000, currency: "NOK" },
      total: { amountMinor: 250000, currency: "NOK" }
    }
    const en = render("en", content("quickbook_sale_confirmed_guest", data))
    expect(en.text).toContain(
      "3 x Adult: included\n1 x Child: included\nPrivate booking (whole party): NOK\u00a02,500.00"
    )
    expect(en.text).toContain("Total paid: NOK\u00a02,500.00")
    expect(en.text).not.toMatch(/undefined|null|NaN/)
    const nb = render("nb", content("quickbook_sale_confirmed_guest", data))
    expect(nb.text).toContain("3 x Adult: inkludert")
    expect(nb.text).toContain("Privat bestilling (hele gruppen): 2\u00a0500,00\u00a0kr")
    expect(nb.html).toContain("Privat bestilling (hele gruppen)")
  })

  it("says what happened to the money on a cancellation", () => {
    const withRefund = (refund: unknown) =>
      content("booking_cancelled_guest", { ...SAMPLES.booking_cancelled_guest, refund })
    expect(render("en", withRefund(refunded)).text).toContain("We have refunded NOK\u00a01,234.50")
    expect(render("en", withRefund({ outcome: "processing", amount: { amountMinor: 5000, currency: "EUR" } })).text)
      .toContain("Your refund of €50.00 is being processed")
    expect(render("nb", withRefund({ outcome: "none" })).text).toContain("ingenting å betale tilbake")
    const team = (refund: unknown) => content("booking_cancelled_team", { ...SAMPLES.booking_cancelled_team, refund })
    expect(render("en", team({ outcome: "processing", amount: { amountMinor: 5000, currency: "EUR" } })).text)
      .toContain("Refund: €50.00, in progress (not yet confirmed by the payment provider)")
    expect(render("nb", team({ outcome: "none" })).text).toContain("Tilbakebetaling: ingenting å betale tilbake")
  })

  it("leaves out what is not known: no guest name, no start time, no participants, no pay-by day", () => {
    const { text, html } = render(
      "en",
      content("balance_payment_link_guest", {
        ...SAMPLES.balance_payment_link_guest,
        guestName: null,
        operatorContact: null,
        departure: { date: "2026-11-21", startTime: null },
        payBy: null
      })
    )
    expect(text.startsWith("Hello,\n")).toBe(true)
    expect(text).not.toContain("Time:")
    expect(text).not.toContain("Please pay by")
    expect(text).toContain("If you have any questions, contact Fjord Explorer AS.")
    expect(html).not.toContain(">Time<")
    const cancelled = render(
      "nb",
      content("booking_cancelled_guest", { ...SAMPLES.booking_cancelled_guest, participants: null })
    )
    expect(cancelled.text).not.toContain("Deltakere")
  })

  it("escapes every value in the HTML part and keeps it as is in the text part", () => {
    const evil = "<script>alert(\"x\")</script> & 'quoted'"
    for (const template of TEMPLATE_NAMES) {
      const data = JSON.parse(
        JSON.stringify(SAMPLES[template]),
        (key, value) =>
          typeof value === "string" &&
            [
              "guestName",
              "operatorName",
              "tourName",
              "bookingReference",
              "reason",
              "cancelledBy",
              "rescheduledBy",
              "operatorContact",
              "rateTitle",
              "bookingCode",
              "saleReference",
              "label"
            ].includes(key)
            ? `${value} ${evil}`
            : value
      )
      for (const locale of LOCALES) {
        const { text, html } = render(locale, content(template, data))
        expect(html, template).not.toContain("<script>")
        expect(html, template).not.toContain("'quoted'")
        expect(html, template).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quoted&#39;")
        expect(text, template).toContain(evil)
      }
    }
    // A URL that tries to leave its attribute stays inside it.
    const { html } = render(
      "en",
      content("balance_payment_link_guest", {
        ...SAMPLES.balance_payment_link_guest,
        paymentUrl: "https://pay.example.com/?q=\"><img src=x onerror=alert(1)>"
      })
    )
    expect(html).not.toContain("\"><img")
    expect(html).toContain("href=\"https://pay.example.com/?q=&quot;&gt;&lt;img src=x onerror=alert(1)&gt;\"")
  })

  it("escapeHtml leaves no markup character and loses nothing", () => {
    const unescape = (s: string) =>
      s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, "\"").replace(/&#39;/g, "'").replace(
        /&amp;/g,
        "&"
      )
    fc.assert(fc.property(fc.string({ unit: "binary" }), (s) => {
      const escaped = escapeHtml(s)
      expect(escaped).not.toMatch(/[<>"']/)
      expect(unescape(escaped)).toBe(s)
    }))
    fc.assert(fc.property(fc.string({ minLength: 1 }).filter((s) => s.trim() !== ""), (name) => {
      const { html } = render(
        "nb",
        content("booking_rescheduled_guest", { ...SAMPLES.booking_rescheduled_guest, guestName: name })
      )
      expect(html).toContain(escapeHtml(name.trim()).replace(/\r?\n/g, "<br>\n"))
    }))
  })

  it("keeps the subject on one line whatever the data holds", () => {
    const { subject } = render(
      "en",
      content("booking_cancelled_team", {
        ...SAMPLES.booking_cancelled_team,
        tourName: "Cruise\r\nBcc: someone@example.com"
      })
    )
    expect(subject).not.toMatch(/[\r\n]/)
    expect(subject).toContain("Cruise Bcc: someone@example.com")
  })

  it("formats money in the currency's own decimals", () => {
    expect(formatMoney("en", { amountMinor: 1500, currency: "JPY" })).toBe("JP¥1,500")
    expect(formatMoney("nb", { amountMinor: 1500, currency: "EUR" })).toBe("15,00\u00a0€")
    expect(formatMoney("en", { amountMinor: 0, currency: "NOK" })).toBe("NOK\u00a00.00")
  })

  it("refuses data that does not fit the template", () => {
    const bad: Array<[TemplateName, unknown]> = [
      ["booking_cancelled_guest", {
        ...SAMPLES.booking_cancelled_guest,
        departure: { date: "2026-02-30", startTime: null }
      }],
      ["booking_cancelled_guest", {
        ...SAMPLES.booking_cancelled_guest,
        departure: { date: "2026-11-21", startTime: "25:00" }
      }],
      ["booking_cancelled_guest", { ...SAMPLES.booking_cancelled_guest, refund: { outcome: "refunded" } }],
      ["booking_cancelled_team", { ...SAMPLES.booking_cancelled_team, reason: "  " }],
      ["booking_rescheduled_team", { ...SAMPLES.booking_rescheduled_team, next: undefined }],
      ["balance_payment_link_guest", { ...SAMPLES.balance_payment_link_guest, paymentUrl: "javascript:alert(1)" }],
      ["balance_payment_link_guest", {
        ...SAMPLES.balance_payment_link_guest,
        amount: { amountMinor: -1, currency: "NOK" }
      }],
      ["balance_payment_link_guest", {
        ...SAMPLES.balance_payment_link_guest,
        amount: { amountMinor: 1.5, currency: "NOK" }
      }],
      ["balance_payment_link_guest", {
        ...SAMPLES.balance_payment_link_guest,
        amount: { amountMinor: 100, currency: "nok" }
      }]
    ]
    for (const [template, data] of bad) {
      const r = renderEmail("en", content(template, data))
      expect(Either.isLeft(r), JSON.stringify(data)).toBe(true)
      if (Either.isLeft(r)) expect(r.left.template).toBe(template)
    }
  })
})
