/** The words every template shares, in English and bokmål (pure; no I/O). */
import type { Locale } from "../rules.js"
import type { Departure } from "./data.js"
import { formatDay } from "./format.js"

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

export const WORDS: Record<Locale, Words> = {
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
    newTimeDoesNotSuit: (operator, contact) =>
      `Passer ikke det nye tidspunktet, ta kontakt med ${reach(operator, contact)}.`
  }
}

/** Date, time and rate rows of a departure. */
export const departureRows = (locale: Locale, d: Departure): Array<readonly [string, string] | null> => {
  const w = WORDS[locale]
  return [
    [w.date, formatDay(locale, d.date)],
    d.startTime === null ? null : [w.time, d.startTime],
    d.rateTitle ? [w.rate, d.rateTitle] : null
  ]
}
