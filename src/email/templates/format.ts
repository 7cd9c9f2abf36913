/** Days, departures, money and text as the emails write them, in each locale (pure; no I/O). */
import type { Locale } from "../rules.js"
import type { Departure, Money } from "./data.js"

const TAGS: Record<Locale, string> = { en: "en-GB", nb: "nb-NO" }

const dayFormats = new Map<string, Intl.DateTimeFormat>()
const dayFormat = (locale: Locale, style: "long" | "short") => {
  const key = `${locale}:${style}`
  let f = dayFormats.get(key)
  if (!f) {
    f = new Intl.DateTimeFormat(
      TAGS[locale],
      style === "long"
        ? { timeZone: "UTC", weekday: "long", day: "numeric", month: "long", year: "numeric" }
        : { timeZone: "UTC", day: "numeric", month: "short", year: "numeric" }
    )
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
  value.replace(
    /[&<>"']/g,
    (c) => (c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : c === "\"" ? "&quot;" : "&#39;")
  )

/** One line, no control characters: what a Subject header may hold. */
export const oneLine = (value: string) => value.replace(/[\u0000-\u001f\u007f]+/g, " ").replace(/\s+/g, " ").trim()
