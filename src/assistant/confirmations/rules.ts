/**
 * The two-call write protocol's rules (issue 16; docs/assistant.md "Confirmations"): the confirm
 * token, what it is bound to, how long it lives, and the one refusal every broken binding answers.
 * Pure code, no I/O.
 */
import { Schema } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { DateTimeString } from "../../domain/dates.js"
import { InvalidRequest } from "../../domain/errors.js"
import { canonicalJson } from "../../partner/writes/rules.js"

/** A confirm token is valid this long after the first call (spec §1: 5 minutes). */
export const CONFIRMATION_TTL_MS = 5 * 60_000

/**
 * A second call that claimed a confirmation holds it this long without an answer before another
 * second call with the same token may take over (the first died mid-write; the write machinery's
 * idempotency key `mcp:<confirmation id>` then finishes or replays that attempt).
 */
export const CONFIRMATION_LEASE_SECONDS = 60

/** A confirmation (its token's hash and its write's answer) is deleted this long after it expired. */
export const CONFIRMATION_KEPT_HOURS = 24

/** How long a second call waits for a concurrent one carrying out the same confirmation. */
export const CONFIRMATION_WAIT_MS = 30_000

export const CONFIRM_TOKEN_PREFIX = "cfm_"

/** A new confirm token: 32 random bytes, base64url, with a recognisable prefix. */
export const newConfirmToken = (): string => CONFIRM_TOKEN_PREFIX + randomBytes(32).toString("base64url")

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")

/** The token is stored only as this hash. */
export const tokenHash = (token: string): string => sha256(token)

/** The exact arguments of a call (decoded, without `confirm_token`), bound to the tool. */
export const argumentsHash = (tool: string, args: unknown): string => sha256(canonicalJson({ tool, args }))

/** The state of the booking (or manifest row) the summary was made from. */
export const stateFingerprint = (state: unknown): string => sha256(canonicalJson(state))

/** Why a confirm token is refused; logged (never shown: every refusal answers the same). */
export type RefusalReason = "unknown" | "other_connection" | "other_arguments" | "expired" | "booking_changed"

/**
 * Every refused confirm token answers this one error (400 naming `confirm_token`), so an assistant
 * learns nothing but what to do next.
 */
export const confirmationRefused = () =>
  new InvalidRequest({
    field: "confirm_token",
    detail: "confirm_token is not valid for this call: it is unknown, expired (5 minutes), already used for " +
      "other arguments, from another connection, or the booking changed since the summary. Nothing was done. " +
      "Call the tool again without confirm_token, show the person the new summary and confirm with its token."
  })

export const ConfirmToken = Schema.String.pipe(
  Schema.minLength(1, { message: () => "must not be empty" }),
  Schema.maxLength(200, { message: () => "must be at most 200 characters" })
).annotations({
  description: "Omit on the first call. To carry out the write, the `confirm_token` of the first call's answer, " +
    "sent with exactly the same arguments within 5 minutes, after the person saw the `summary`."
})

/** The first call's answer: nothing was done; this is what would be. */
export const RequiresConfirmation = Schema.Struct({
  requires_confirmation: Schema.Literal(true),
  summary: Schema.String.annotations({
    description: "What the write will do, for the person to read: who, which booking, what happens, what money moves."
  }),
  confirm_token: Schema.String.annotations({
    description: "Send it back with the same arguments to carry the write out: single use, valid until `expires_at`."
  }),
  expires_at: DateTimeString
}).annotations({ identifier: "RequiresConfirmation" })
export type RequiresConfirmation = typeof RequiresConfirmation.Type

/** Decimals of a currency code (two for an unknown one), remembered: an Intl.NumberFormat is costly to make. */
const decimals = new Map<string, number>()
const decimalsOf = (code: string): number => {
  let digits = decimals.get(code)
  if (digits !== undefined) return digits
  try {
    digits = new Intl.NumberFormat("en", { style: "currency", currency: code }).resolvedOptions()
      .maximumFractionDigits ?? 2
  } catch {
    // An unknown code: two decimals.
    digits = 2
  }
  if (decimals.size < 1000) decimals.set(code, digits)
  return digits
}

/** Minor units as a person reads them: "NOK 998.00". */
export const money = (amountMinor: number, currency: string): string => {
  const c = currency.trim().toUpperCase()
  const digits = decimalsOf(c)
  return `${c} ${(amountMinor / 10 ** digits).toFixed(digits)}`
}

/** "2026-12-01 at 10:00 (Europe/Oslo)", "2026-12-01" without a time, "no date" without either. */
export const departure = (date: string | null, startTime: string | null, timezone: string): string =>
  date === null ? "no date" : startTime === null ? date : `${date} at ${startTime} (${timezone})`
