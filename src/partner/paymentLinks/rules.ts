/**
 * Balance payment links (spec §2 "Payment link result", §4 POST /bookings/{id}/payment-link):
 * which balance a link is for, how much, and when there is nothing to send. Pure code, no I/O.
 *
 * Which kind applies:
 * - `deferred_balance`: a service booking paid later (`payment_strategy` pay_later) whose balance
 *   is not collected yet (`pay_later_status` upcoming or failed): `pay_later_amount_minor` in
 *   `pay_later_currency`. The booking system is not asked.
 * - `provider_balance`: what the booking system says is still due (`BookingSystem.balance`), for
 *   a booking that exists only in the booking system (addressed by its manifest row id), and for a
 *   service booking paid now that the booking system says still owes.
 *
 * Refused (422): a cancelled or refunded booking (or a cancelled manifest row, or a pay-later
 * balance that was cancelled); a pay-later balance already collected; nothing owed (a zero
 * pay-later amount, a zero balance in the booking system, or a pay-now booking the booking system
 * does not know).
 */
import { Either, Schema } from "effect"
import { NotPossible } from "../../domain/errors.js"
import { retryDelayMillis, type RetryPolicy } from "../../email/rules.js"
import type { NewPaymentLink, PaymentProviderError } from "../../ports/PaymentProvider.js"
import type { LinkRow } from "./PaymentLinksRepo.js"

export const PaymentLinkKind = Schema.Literal("deferred_balance", "provider_balance").annotations({
  identifier: "PaymentLinkKind"
})
export type PaymentLinkKind = typeof PaymentLinkKind.Type

/** What the request addresses, as the rule needs it. */
export type PaymentLinkTarget =
  | {
    readonly source: "service"
    /** Stored status: RESERVED, CONFIRMED, CANCELLED, REFUNDED … */
    readonly status: string
    readonly paymentStrategy: "pay_now" | "pay_later"
    readonly payLaterStatus: string | null
    readonly payLaterAmountMinor: number | null
    readonly payLaterCurrency: string | null
    /** Booking currency (fallback when the pay-later currency is missing). */
    readonly currency: string
    /** Whether the booking system can be asked (an account and a reference are known). */
    readonly inBookingSystem: boolean
  }
  | {
    readonly source: "booking_system"
    /** The manifest row's status: CONFIRMED, RESERVED or CANCELLED. */
    readonly status: string
  }

/** The amount a link is for. */
export interface Owed {
  readonly kind: PaymentLinkKind
  readonly amountMinor: number
  readonly currency: string
}

/** The first step: the amount is known, the booking system must be asked, or nothing to send. */
export type Decision =
  | { readonly _tag: "Owed"; readonly owed: Owed }
  | { readonly _tag: "AskBookingSystem" }

const LIVE = new Set(["CONFIRMED", "RESERVED"])

const refuse = (detail: string) => Either.left(new NotPossible({ detail }))

export const CANCELLED_DETAIL = "the booking is cancelled: there is no balance to pay"
export const NOTHING_OWED_DETAIL = "nothing is owed on this booking"
export const COLLECTED_DETAIL = "the pay-later balance of this booking has already been collected"

/** Decides from our own data: a pay-later amount, or the booking system has to be asked. */
export const decidePaymentLink = (target: PaymentLinkTarget): Either.Either<Decision, NotPossible> => {
  if (!LIVE.has(target.status)) return refuse(CANCELLED_DETAIL)
  if (target.source === "booking_system") return Either.right({ _tag: "AskBookingSystem" })
  if (target.paymentStrategy === "pay_later") {
    switch (target.payLaterStatus) {
      case "collected":
        return refuse(COLLECTED_DETAIL)
      case "cancelled":
        return refuse(CANCELLED_DETAIL)
      case "upcoming":
      case "failed": {
        const amount = target.payLaterAmountMinor ?? 0
        if (amount <= 0) return refuse(NOTHING_OWED_DETAIL)
        return Either.right({
          _tag: "Owed",
          owed: { kind: "deferred_balance", amountMinor: amount, currency: target.payLaterCurrency ?? target.currency }
        })
      }
      default:
        return refuse(NOTHING_OWED_DETAIL)
    }
  }
  return target.inBookingSystem ? Either.right({ _tag: "AskBookingSystem" }) : refuse(NOTHING_OWED_DETAIL)
}

/** The second step: what the booking system says is due. */
export const owedFromBalance = (
  balance: { readonly dueMinor: number; readonly currency: string }
): Either.Either<Owed, NotPossible> =>
  balance.dueMinor > 0
    ? Either.right({ kind: "provider_balance", amountMinor: balance.dueMinor, currency: balance.currency })
    : refuse(NOTHING_OWED_DETAIL)

/** Money this service itself took for the booking (desk sale, paid payment links, checkout), by currency. */
export interface Collected {
  readonly amountMinor: number
  readonly currency: string
}

export const COLLECTED_BY_US_DETAIL =
  "nothing is owed: the balance the booking system shows was already paid to this service (at the sales desk or through a payment link), which the booking system does not show yet"

/**
 * A `provider_balance` less what this service itself collected for the booking. The booking system
 * may not know of that money (a desk sale paid at the card terminal, a payment link paid), so its
 * word alone would ask the guest again: what we took is subtracted, and a link is offered only for
 * what is left. Money taken in another currency cannot be compared: nothing is offered (a person
 * looks). Never asks for more than the booking system says is due.
 */
export const owedAfterCollected = (
  owed: Owed,
  collected: ReadonlyArray<Collected>
): Either.Either<Owed, NotPossible> => {
  const foreign = collected.find((c) => c.amountMinor > 0 && c.currency !== owed.currency)
  if (foreign !== undefined) {
    return refuse(
      `this service collected ${foreign.amountMinor} (minor units, ${foreign.currency}) for this booking, not in ${owed.currency}: the balance cannot be worked out, no link is sent`
    )
  }
  const ours = collected.reduce((sum, c) => sum + Math.max(c.amountMinor, 0), 0)
  const left = owed.amountMinor - ours
  if (left <= 0) return refuse(COLLECTED_BY_US_DETAIL)
  return Either.right({ ...owed, amountMinor: left })
}

/**
 * A link is emailed once per window: a request that sends the same link again within this many
 * seconds of its last email answers that email's outcome instead of emailing the guest again.
 */
export const LINK_EMAIL_WINDOW_SECONDS = 10 * 60

/** A stored link as the reuse rule needs it. */
export interface StoredLink {
  readonly state: "creating" | "open" | "closing" | "closed"
  readonly amountMinor: number
  readonly currency: string
  readonly expiresAt: Date | null
}

/**
 * Whether a stored link can be sent again for what is owed now: open (or still being created),
 * the same amount and currency, and not past its expiry (with a minute to spare for the guest). A
 * `closing` link (an unfinished one the payment-link watch job is closing) never is.
 */
export const reusable = (link: StoredLink, owed: Owed, now: Date): boolean =>
  (link.state === "open" || link.state === "creating") &&
  link.amountMinor === owed.amountMinor &&
  link.currency === owed.currency &&
  (link.expiresAt === null || link.expiresAt.getTime() > now.getTime() + 60_000)

/**
 * How often the payment-link watch job asks the provider about an open link: first 5 minutes after
 * it is sent, then backing off (doubling, with jitter) to once an hour, since most guests pay soon
 * after the email or not at all. A provider that did not answer counts as a check too.
 */
export const LINK_CHECK: RetryPolicy = { baseMillis: 5 * 60_000, maxMillis: 60 * 60_000 }

/** Seconds from sending a link to its first check. */
export const FIRST_LINK_CHECK_SECONDS = LINK_CHECK.baseMillis / 1000

/**
 * When to ask next after the `checks`-th check: the backoff above, but never later than a minute
 * past the link's expiry (so an expired link is closed promptly). `random` is in [0, 1).
 */
export const nextLinkCheck = (checks: number, expiresAt: Date | null, now: Date, random: number): Date => {
  const next = now.getTime() + retryDelayMillis(checks, LINK_CHECK, random)
  return expiresAt !== null && expiresAt.getTime() > now.getTime()
    ? new Date(Math.min(next, expiresAt.getTime() + 60_000))
    : new Date(next)
}

/** The request first sent with a link row's idempotency reference: sending it again gets the same link. */
export const linkRequest = (row: LinkRow): NewPaymentLink => ({
  amountMinor: row.amount_minor,
  currency: row.currency.trim(),
  referenceId: row.provider_reference_id,
  description: row.description,
  idempotencyReference: row.idempotency_reference
})

/**
 * Whether the provider's answer to `linkRequest` sent again proves that no link exists under the
 * row's reference: a definite "no" is never stored by the provider. An idempotency conflict is not
 * one (the provider holds another request under the reference), nor is no answer.
 */
export const provesNoLink = (e: PaymentProviderError) =>
  e._tag === "PaymentProviderRejected" && e.reason !== "idempotency_conflict"

/** The reference of the one call that closes a link at the provider (OneLinkPerBalance's `retire`, the watch and a cancel alike). */
export const cancelReference = (row: LinkRow) => `${row.idempotency_reference}:cancel`

/** Our idempotency reference of the `seq`th money-returning call for a paid link. */
export const linkRefundReference = (linkIdempotencyReference: string, seq: number) =>
  `${linkIdempotencyReference}:refund:${seq}`
