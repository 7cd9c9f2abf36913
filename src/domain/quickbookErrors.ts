/**
 * Quickbook failures (spec §7). Each class fixes the HTTP status; `code` is what the client
 * branches on; `detail` is for our logs only (the body carries `code`, the clerk message in the
 * clerk's language and, where known, the sale `reference`). src/http/quickbook/errors.ts turns
 * them into responses, in one place.
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { Schema } from "effect"

export const QuickbookCode = Schema.Literal(
  "terminal_not_registered",
  "invalid_request",
  "unauthorized",
  "tour_not_sellable_here",
  "not_found",
  "sold_out",
  "price_changed",
  "payment_mismatch",
  "duplicate_payment",
  "provider_refused",
  "hold_expired",
  "hold_not_supported",
  "payment_not_found",
  "phone_required",
  "phone_rejected",
  "rate_limited",
  "provider_unavailable",
  "internal"
)
export type QuickbookCode = typeof QuickbookCode.Type

const fields = {
  code: QuickbookCode,
  detail: Schema.String,
  reference: Schema.optional(Schema.String)
}

export class QbBadRequest extends Schema.TaggedError<QbBadRequest>()("QbBadRequest", fields,
  HttpApiSchema.annotations({ status: 400 })) {}
export class QbUnauthorized extends Schema.TaggedError<QbUnauthorized>()("QbUnauthorized", fields,
  HttpApiSchema.annotations({ status: 401 })) {}
export class QbForbidden extends Schema.TaggedError<QbForbidden>()("QbForbidden", fields,
  HttpApiSchema.annotations({ status: 403 })) {}
/** `variant`: a more precise clerk message for the same code (CLERK_MESSAGE_VARIANTS). */
export class QbNotFound extends Schema.TaggedError<QbNotFound>()(
  "QbNotFound",
  { ...fields, variant: Schema.optional(Schema.Literal("no_ticket_yet")) },
  HttpApiSchema.annotations({ status: 404 })
) {}
export class QbConflict extends Schema.TaggedError<QbConflict>()("QbConflict", fields,
  HttpApiSchema.annotations({ status: 409 })) {}
export class QbGone extends Schema.TaggedError<QbGone>()("QbGone", fields,
  HttpApiSchema.annotations({ status: 410 })) {}
export class QbUnprocessable extends Schema.TaggedError<QbUnprocessable>()("QbUnprocessable", fields,
  HttpApiSchema.annotations({ status: 422 })) {}
export class QbUnavailable extends Schema.TaggedError<QbUnavailable>()("QbUnavailable", fields,
  HttpApiSchema.annotations({ status: 503 })) {}
export class QbRateLimited extends Schema.TaggedError<QbRateLimited>()(
  "QbRateLimited",
  { ...fields, retryAfterSeconds: Schema.Int },
  HttpApiSchema.annotations({ status: 429 })
) {}

export type QuickbookFailure =
  | QbBadRequest
  | QbUnauthorized
  | QbForbidden
  | QbNotFound
  | QbConflict
  | QbGone
  | QbUnprocessable
  | QbUnavailable
  | QbRateLimited

export const unauthorized = (detail: string) => new QbUnauthorized({ code: "unauthorized", detail })

export type ClerkLanguage = "en" | "nb"

/** What the clerk reads, per code, in English and Norwegian (bokmål). */
export const CLERK_MESSAGES: Record<QuickbookCode, Record<ClerkLanguage, string>> = {
  terminal_not_registered: {
    en: "This terminal is not registered for desk sales. Contact support.",
    nb: "Denne terminalen er ikke registrert for skrankesalg. Kontakt support."
  },
  invalid_request: {
    en: "The sale could not be read. Check the details and try again.",
    nb: "Salget kunne ikke leses. Sjekk opplysningene og prøv igjen."
  },
  unauthorized: {
    en: "The desk system is not signed in. Contact support.",
    nb: "Skrankesystemet er ikke logget inn. Kontakt support."
  },
  tour_not_sellable_here: {
    en: "This tour cannot be sold at this desk.",
    nb: "Denne turen kan ikke selges i denne skranken."
  },
  not_found: { en: "Sale not found.", nb: "Fant ikke salget." },
  sold_out: {
    en: "Not enough seats left on this departure.",
    nb: "Det er ikke nok ledige plasser på denne avgangen."
  },
  price_changed: {
    en: "The price has changed. Make a new quote.",
    nb: "Prisen er endret. Lag et nytt tilbud."
  },
  payment_mismatch: {
    en: "The payment does not match the sale. Nothing was booked. Support has been alerted.",
    nb: "Betalingen stemmer ikke med salget. Ingenting ble booket. Support er varslet."
  },
  duplicate_payment: {
    en: "This sale was already paid. The second payment is being refunded.",
    nb: "Salget er allerede betalt. Den andre betalingen blir refundert."
  },
  provider_refused: {
    en: "The tour operator refused the booking.",
    nb: "Turoperatøren avviste bookingen."
  },
  hold_expired: {
    en: "The seat hold ran out. Make a new quote.",
    nb: "Plassreservasjonen har utløpt. Lag et nytt tilbud."
  },
  hold_not_supported: {
    en: "Seats cannot be held for this tour. Continue without holding.",
    nb: "Plasser kan ikke holdes av for denne turen. Fortsett uten reservasjon."
  },
  payment_not_found: {
    en: "The payment was not found. Nothing was booked.",
    nb: "Fant ikke betalingen. Ingenting ble booket."
  },
  phone_required: {
    en: "This tour needs the guest's phone number.",
    nb: "Denne turen krever gjestens telefonnummer."
  },
  phone_rejected: {
    en: "The phone number was not accepted. Check it and try again.",
    nb: "Telefonnummeret ble ikke godtatt. Sjekk det og prøv igjen."
  },
  rate_limited: {
    en: "Too many requests from this desk. Wait a moment and try again.",
    nb: "For mange forespørsler fra denne skranken. Vent litt og prøv igjen."
  },
  provider_unavailable: {
    en: "The booking system is not answering. Try again shortly.",
    nb: "Bookingsystemet svarer ikke. Prøv igjen om litt."
  },
  internal: {
    en: "Something went wrong. Try again; contact support if it persists.",
    nb: "Noe gikk galt. Prøv igjen; kontakt support hvis det fortsetter."
  }
}

/** Clerk messages more precise than their code's, chosen by an error's `variant`. */
export const CLERK_MESSAGE_VARIANTS: Record<"no_ticket_yet", Record<ClerkLanguage, string>> = {
  no_ticket_yet: {
    en: "There is no ticket yet: this sale is not booked. Check the sale's status.",
    nb: "Det finnes ingen billett ennå: salget er ikke booket. Sjekk salgets status."
  }
}

/**
 * The clerk's language from `Accept-Language`: Norwegian (`nb`, `no` or `nn`, any region) when it
 * ranks above English, else English. Weights (`q=`) are honoured; order breaks ties.
 */
export const clerkLanguage = (acceptLanguage: string | undefined): ClerkLanguage => {
  if (!acceptLanguage) return "en"
  let best: { lang: ClerkLanguage; q: number } | undefined
  for (const part of acceptLanguage.split(",")) {
    const [tag = "", ...params] = part.trim().toLowerCase().split(";")
    const primary = tag.trim().split("-")[0]!
    const lang: ClerkLanguage | undefined = ["nb", "no", "nn"].includes(primary) ? "nb" : primary === "en" ? "en" : undefined
    if (!lang) continue
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith("q="))
    const q = qParam ? Number(qParam.slice(2)) : 1
    if (!Number.isFinite(q) || q <= 0) continue
    if (!best || q > best.q) best = { lang, q }
  }
  return best?.lang ?? "en"
}

/**
 * The second sentence of a failed book's `clerkMessage` (after the reason's own message): whether
 * the payment is back on the card (`moneyReturned` true) or still on its way back.
 */
export const MONEY_BACK_MESSAGES: Record<"returned" | "returning", Record<ClerkLanguage, string>> = {
  returned: {
    en: "The payment has been returned to the card.",
    nb: "Betalingen er ført tilbake til kortet."
  },
  returning: {
    en: "The payment is on its way back to the card; nothing more to do.",
    nb: "Betalingen er på vei tilbake til kortet; du trenger ikke gjøre noe mer."
  }
}

/** A failed book's lead sentence where it differs from the error message of the same code. */
export const BOOK_FAILED_LEADS: Partial<Record<QuickbookCode, Record<ClerkLanguage, string>>> = {
  duplicate_payment: {
    en: "This sale was already paid with another payment; that sale stands.",
    nb: "Salget er allerede betalt med en annen betaling; det salget står ved lag."
  },
  provider_unavailable: {
    en: "The booking system did not answer, so nothing was booked.",
    nb: "Bookingsystemet svarte ikke, så ingenting ble booket."
  },
  terminal_not_registered: {
    en: "This terminal is no longer registered for desk sales, so nothing was booked.",
    nb: "Denne terminalen er ikke lenger registrert for skrankesalg, så ingenting ble booket."
  }
}
