/**
 * A Quickbook sale's status as GET /sales/{reference} reads it (spec §3), and what the clerk is
 * told about it (pure; decisions in docs/decisions.md "Quickbook: sale status and tickets").
 *
 * - `quoted` or `held` past the quote's validity (a hold extends it to the hold's end) reads as
 *   `expired`, computed on read: nothing has to sweep the row first. A hold that lapsed while the
 *   quote still stands reads as `quoted` (as a release would leave it).
 * - every status carries a clerk message, so that a desk that lost an answer (timeout) can show
 *   what happened; a failed sale's message is the failure code's and says the payment goes back.
 */
import { Schema } from "effect"
import { BookFailureReason, failedClerkMessage } from "../book/rules.js"
import { CLERK_MESSAGES, type ClerkLanguage, MONEY_BACK_MESSAGES } from "../clerkMessages.js"

export const SaleStatus = Schema.Literal("quoted", "held", "expired", "booking", "confirmed", "failed")
export type SaleStatus = typeof SaleStatus.Type

/** Spec §2 Book failure `reason` (defined with POST /book). */
export const isBookFailureReason = Schema.is(BookFailureReason)

/** The status a client sees now: a quote (or hold) that ran out is `expired`. */
export const statusAt = (
  stored: SaleStatus,
  validUntil: Date,
  holdExpiresAt: Date | null,
  now: Date
): SaleStatus => {
  if (stored === "held" && holdExpiresAt !== null && holdExpiresAt > now) return "held"
  if (stored === "quoted" || stored === "held") return validUntil <= now ? "expired" : "quoted"
  return stored
}

const STATUS_MESSAGES: Record<Exclude<SaleStatus, "failed">, Record<ClerkLanguage, string>> = {
  quoted: {
    en: "Quoted, not booked. Take the payment, then book.",
    nb: "Tilbud laget, ikke booket. Ta betalt, og book deretter."
  },
  held: {
    en: "Seats are held, not booked. Take the payment, then book.",
    nb: "Plassene er holdt av, ikke booket. Ta betalt, og book deretter."
  },
  expired: {
    en: "The quote has run out and nothing is held. Make a new quote.",
    nb: "Tilbudet har utløpt og ingenting er holdt av. Lag et nytt tilbud."
  },
  booking: {
    en: "The booking is being made. Check again in a few seconds; do not take another payment.",
    nb: "Bookingen pågår. Sjekk igjen om noen sekunder; ikke ta betalt på nytt."
  },
  confirmed: {
    en: "Booked. The ticket is ready.",
    nb: "Booket. Billetten er klar."
  }
}

/**
 * What the clerk reads for a sale in a status. A failed sale: the message of its reason (when
 * known) and whether the money is back (`moneyReturned` undefined: not known here, "being returned").
 */
export const saleClerkMessage = (
  status: SaleStatus,
  lang: ClerkLanguage,
  failure: { readonly reason?: BookFailureReason | undefined; readonly moneyReturned?: boolean | undefined } = {}
): string => {
  if (status !== "failed") return STATUS_MESSAGES[status][lang]
  // No money goes back automatically for these (nothing was taken, or a person looks at a mismatch).
  if (failure.reason === "payment_not_found" || failure.reason === "payment_mismatch") {
    return CLERK_MESSAGES[failure.reason][lang]
  }
  if (failure.reason !== undefined) return failedClerkMessage(failure.reason, failure.moneyReturned === true, lang)
  const why = lang === "nb" ? "Salget kunne ikke bookes." : "The sale could not be booked."
  return `${why} ${MONEY_BACK_MESSAGES[failure.moneyReturned === true ? "returned" : "returning"][lang]}`
}
