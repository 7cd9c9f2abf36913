/**
 * Pay-later charging's rules (pure; docs/api/pay-later.md "States and transitions"):
 *
 * - A charge is due at `charge_at` (state upcoming), or at `next_attempt_at` while it is failed and
 *   retrying. Each attempt has its own idempotency reference, `paylater:<charge id>:<n>`.
 * - After an attempt: paid → collected. A soft decline → failed and retrying, the next attempt
 *   RETRY_DELAYS_HOURS[n-1] hours later (+6 h, +24 h, +48 h), moved back to `final_deadline_at` when
 *   it would fall after it; no retry left, or the deadline reached → failed for good. A hard decline
 *   or SCA required → failed for good at once. Failed for good: the guest is emailed the balance
 *   payment link and the operator is told.
 * - A due charge whose deadline has passed, or with no saved card, is not sent: failed for good.
 */
import type { SavedCardChargeOutcome } from "../ports/PaymentProvider.js"

/** Hours after attempt n (1-based) that attempt n+1 is made, after a soft decline. */
export const RETRY_DELAYS_HOURS: ReadonlyArray<number> = [6, 24, 48]

const HOUR = 3_600_000

export const attemptReference = (chargeId: string, attempt: number) => `paylater:${chargeId}:${attempt}`

export type StopReason = "hard_decline" | "sca_required" | "deadline" | "retries_exhausted" | "no_saved_card"

export type AfterAttempt =
  | { readonly _tag: "Collected" }
  | { readonly _tag: "Retry"; readonly at: Date; readonly message: string }
  | { readonly _tag: "Stop"; readonly reason: StopReason; readonly message: string }

/** What the failure message says (shown in the read as `failure_message`, and to the operator). */
export const failureMessage = (reason: StopReason | "soft_decline", declineReason: string | null): string => {
  const code = declineReason ? ` (${declineReason})` : ""
  switch (reason) {
    case "soft_decline":
      return `the card was declined for now${code}; the charge is tried again`
    case "hard_decline":
      return `the card was declined${code}`
    case "sca_required":
      return `the card asks for the guest's authentication${code}`
    case "deadline":
      return `the balance could not be charged before its deadline${code}`
    case "retries_exhausted":
      return `the card was declined on every attempt${code}`
    case "no_saved_card":
      return "no card is saved for this booking"
  }
}

/** The charge's next state after attempt `attempt` (1-based) answered `outcome` at `now`. */
export const afterAttempt = (input: {
  readonly outcome: Exclude<SavedCardChargeOutcome, "pending">
  readonly declineReason: string | null
  readonly attempt: number
  readonly now: Date
  readonly finalDeadlineAt: Date
}): AfterAttempt => {
  const { attempt, declineReason, finalDeadlineAt, now, outcome } = input
  switch (outcome) {
    case "paid":
      return { _tag: "Collected" }
    case "hard_decline":
    case "sca_required":
      return { _tag: "Stop", reason: outcome, message: failureMessage(outcome, declineReason) }
    case "soft_decline": {
      const delay = RETRY_DELAYS_HOURS[attempt - 1]
      if (delay === undefined) {
        return {
          _tag: "Stop",
          reason: "retries_exhausted",
          message: failureMessage("retries_exhausted", declineReason)
        }
      }
      if (now.getTime() >= finalDeadlineAt.getTime()) {
        return { _tag: "Stop", reason: "deadline", message: failureMessage("deadline", declineReason) }
      }
      const at = new Date(Math.min(now.getTime() + delay * HOUR, finalDeadlineAt.getTime()))
      return { _tag: "Retry", at, message: failureMessage("soft_decline", declineReason) }
    }
  }
}

/** Before sending a new attempt: a reason not to send it at all. */
export const beforeAttempt = (input: {
  readonly tokenId: string | null
  readonly now: Date
  readonly finalDeadlineAt: Date
}): { readonly reason: StopReason; readonly message: string } | null =>
  input.tokenId === null
    ? { reason: "no_saved_card", message: failureMessage("no_saved_card", null) }
    : input.now.getTime() > input.finalDeadlineAt.getTime()
    ? { reason: "deadline", message: failureMessage("deadline", null) }
    : null
