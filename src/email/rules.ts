/** Email addresses, Message-IDs and the outbox's retry policy (pure; no I/O). */
import { Either } from "effect"

/** The languages emails are written in: English and Norwegian bokmål. */
export const LOCALES = ["en", "nb"] as const
export type Locale = (typeof LOCALES)[number]

/**
 * The email locale for a language tag from anywhere (a guest's browser, an operator's setting):
 * Norwegian (`nb`, `no`, `nn`, `nb-NO` …) is written in bokmål, anything else, or nothing, in English.
 */
export const emailLocale = (tag: string | null | undefined): Locale => {
  const language = (tag ?? "").trim().toLowerCase().split(/[-_]/)[0]
  return language === "nb" || language === "no" || language === "nn" ? "nb" : "en"
}

const ADDRESS = /^[^\s@<>()[\],;:"\\]+@[^\s@<>()[\],;:"\\]+\.[^\s@<>()[\],;:"\\.]+$|^[^\s@<>()[\],;:"\\]+@localhost$/i

/**
 * A plain address `local@domain` fit for an SMTP envelope: no display name, no spaces, no
 * characters that would need quoting, at most 254 characters. Deliberately stricter than RFC
 * 5322: an address that fails here is one we would rather not send to than send wrongly.
 */
export const isEmailAddress = (value: string): boolean =>
  value.length <= 254 && !/[\u0000-\u001f\u007f]/.test(value) && ADDRESS.test(value)

export interface Mailbox {
  readonly name: string | null
  readonly address: string
}

/** `Name <address>` or a bare `address` (as MAIL_FROM is written). */
export const parseMailbox = (value: string): Either.Either<Mailbox, string> => {
  const trimmed = value.trim()
  const named = /^(.*?)\s*<([^<>]+)>$/.exec(trimmed)
  const name = named ? named[1]!.trim().replace(/^"(.*)"$/, "$1").trim() : ""
  const address = named ? named[2]!.trim() : trimmed
  if (!isEmailAddress(address)) return Either.left(`not an email address: ${address}`)
  if (/[\u0000-\u001f\u007f]/.test(name)) return Either.left("the display name has control characters")
  return Either.right({ name: name === "" ? null : name, address })
}

/** `Name <address>` for headers and listings (the name quoted when it needs it). */
export const formatMailbox = (m: Mailbox): string =>
  m.name === null ? m.address : `${/^[\w .'-]*$/u.test(m.name) ? m.name : JSON.stringify(m.name)} <${m.address}>`

/** The Message-ID of an outbox message: fixed at enqueue, the same on every attempt. */
export const messageIdFor = (outboxId: string, from: Mailbox): string =>
  `<${outboxId}@${from.address.slice(from.address.lastIndexOf("@") + 1).toLowerCase()}>`

export interface RetryPolicy {
  /** Delay before the second attempt. */
  readonly baseMillis: number
  /** Upper bound of any delay. */
  readonly maxMillis: number
}

/**
 * How long to wait after the `attempt`-th failed attempt (1 for the first): exponential from the
 * base, capped, with "equal jitter" (between half and all of it) so that messages that failed
 * together do not all come back at the same instant. `random` is a number in [0, 1).
 */
export const retryDelayMillis = (attempt: number, policy: RetryPolicy, random: number): number => {
  const exponential = Math.min(policy.maxMillis, policy.baseMillis * 2 ** Math.min(Math.max(attempt, 1) - 1, 40))
  return Math.round(exponential / 2 + (exponential / 2) * Math.min(Math.max(random, 0), 1))
}

/**
 * The language of emails to an operator's team, from the operator's time zone until operators
 * have a language setting: bokmål for Norway, English elsewhere.
 */
export const teamLocale = (operatorTimeZone: string | null | undefined): Locale =>
  operatorTimeZone === "Europe/Oslo" || operatorTimeZone === "Arctic/Longyearbyen" ? "nb" : "en"

/**
 * Dedupe keys of the outbox, one per email that must go out once (docs/email.md). A write that
 * can happen several times to one booking (a reschedule, a payment link sent again) names the
 * occurrence with an id its own progress record keeps, so that a retry or a recovery job after a
 * crash enqueues under the same key, and a new occurrence under a new one.
 */
export const outboxKeys = {
  cancelled: (bookingId: string, audience: "guest" | "team") => `booking:${bookingId}:cancelled:${audience}`,
  rescheduled: (bookingId: string, occurrence: string, audience: "guest" | "team") =>
    `booking:${bookingId}:rescheduled:${occurrence}:${audience}`,
  paymentLink: (bookingId: string, occurrence: string) => `booking:${bookingId}:payment_link:${occurrence}:guest`
} as const
