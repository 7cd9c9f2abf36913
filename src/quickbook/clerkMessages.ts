/**
 * What the desk clerk reads (spec §7 `clerkMessage`), in English and Norwegian bokmål: per error code,
 * the more precise variants of a code, the messages of a request the API cannot read, the money-back
 * sentences and the leads of a failed book; and the clerk's language from Accept-Language.
 * src/quickbook/errorMapping.ts and the book's failed answer read them.
 */
import type { QuickbookCode } from "./errors.js"
import { QUOTE_MAX_ENTRIES, QUOTE_MAX_GUESTS } from "./sales/rules.js"

export type ClerkLanguage = "en" | "nb"

/** What the clerk reads, per code, in English and Norwegian (bokmål). */
export const CLERK_MESSAGES: Record<QuickbookCode, Record<ClerkLanguage, string>> = {
  terminal_not_registered: {
    en: "This terminal is not registered for desk sales. Contact support.",
    nb: "Denne terminalen er ikke registrert for skrankesalg. Kontakt support."
  },
  invalid_request: {
    en: "The request could not be read. Check the details and try again.",
    nb: "Forespørselen kunne ikke leses. Sjekk opplysningene og prøv igjen."
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
export const CLERK_MESSAGE_VARIANTS: Record<
  | "no_ticket_yet"
  | "test_sale"
  | "live_sale"
  | "too_many_guest_entries"
  | "too_many_guests"
  | "payment_provider"
  | "still_processing"
  | "database",
  Record<ClerkLanguage, string>
> = {
  no_ticket_yet: {
    en: "There is no ticket yet: this sale is not booked. Check the sale's status.",
    nb: "Det finnes ingen billett ennå: salget er ikke booket. Sjekk salgets status."
  },
  test_sale: {
    en: "This is a test sale: it cannot be used in live mode.",
    nb: "Dette er et testsalg: det kan ikke brukes i live-modus."
  },
  live_sale: {
    en: "This is a live sale: it cannot be used in test mode.",
    nb: "Dette er et ekte salg: det kan ikke brukes i testmodus."
  },
  too_many_guest_entries: {
    en: `A sale can have at most ${QUOTE_MAX_ENTRIES} guest lines. Combine guests of the same type.`,
    nb: `Et salg kan ha høyst ${QUOTE_MAX_ENTRIES} gjestelinjer. Slå sammen gjester av samme type.`
  },
  too_many_guests: {
    en: `A sale can have at most ${QUOTE_MAX_GUESTS} guests. Split the group into several sales.`,
    nb: `Et salg kan ha høyst ${QUOTE_MAX_GUESTS} gjester. Del gruppen opp i flere salg.`
  },
  payment_provider: {
    en:
      "The payment provider is not answering, so the payment could not be checked and nothing was booked. Try again shortly with the same payment.",
    nb:
      "Betalingsleverandøren svarer ikke, så betalingen kunne ikke sjekkes og ingenting ble booket. Prøv igjen om litt med samme betaling."
  },
  still_processing: {
    en: "This payment is still being processed. Check the sale's status before trying again.",
    nb: "Denne betalingen behandles fortsatt. Sjekk salgets status før du prøver igjen."
  },
  database: {
    en: "The booking service is not answering right now, so nothing was done. Try again in a moment.",
    nb: "Bookingtjenesten svarer ikke akkurat nå, så ingenting ble gjort. Prøv igjen om litt."
  }
}

/**
 * What the clerk reads about a parameter or body field (as the request names it, e.g.
 * `customer.email`, `guests.0.count`; list indexes are looked up as `*`), with a hint on the
 * expected form where one helps.
 */
const FIELDS: Record<
  string,
  { readonly label: Record<ClerkLanguage, string>; readonly hint?: Record<ClerkLanguage, string> }
> = {
  body: { label: { en: "The request body", nb: "Innholdet i forespørselen" } },
  activityId: { label: { en: "The tour", nb: "Turen" } },
  date: { label: { en: "The date", nb: "Datoen" }, hint: { en: "Use YYYY-MM-DD.", nb: "Bruk ÅÅÅÅ-MM-DD." } },
  start: { label: { en: "The departure", nb: "Avgangen" } },
  "start.date": { label: { en: "The date", nb: "Datoen" }, hint: { en: "Use YYYY-MM-DD.", nb: "Bruk ÅÅÅÅ-MM-DD." } },
  "start.time": { label: { en: "The start time", nb: "Starttiden" }, hint: { en: "Use HH:MM.", nb: "Bruk TT:MM." } },
  guests: { label: { en: "The guests", nb: "Gjestene" } },
  "guests.*": { label: { en: "A guest line", nb: "En gjestelinje" } },
  "guests.*.type": { label: { en: "A guest type", nb: "En gjestetype" } },
  "guests.*.count": {
    label: { en: "A number of guests", nb: "Et antall gjester" },
    hint: { en: "Use 1 to 50 per line.", nb: "Bruk 1 til 50 per linje." }
  },
  reference: { label: { en: "The sale reference", nb: "Salgsreferansen" } },
  idempotencyKey: { label: { en: "The hold's idempotency key", nb: "Reservasjonens idempotensnøkkel" } },
  holdRef: { label: { en: "The hold reference", nb: "Reservasjonsreferansen" } },
  payment: { label: { en: "The payment", nb: "Betalingen" } },
  "payment.provider": { label: { en: "The payment provider", nb: "Betalingsleverandøren" } },
  "payment.orderId": { label: { en: "The payment's order id", nb: "Betalingens ordre-id" } },
  "payment.paymentId": { label: { en: "The payment id", nb: "Betalings-id-en" } },
  customer: { label: { en: "The guest's details", nb: "Gjestens opplysninger" } },
  "customer.firstName": { label: { en: "The guest's first name", nb: "Gjestens fornavn" } },
  "customer.lastName": { label: { en: "The guest's last name", nb: "Gjestens etternavn" } },
  "customer.email": { label: { en: "The guest's email address", nb: "Gjestens e-postadresse" } },
  "customer.phone": {
    label: { en: "The guest's phone number", nb: "Gjestens telefonnummer" },
    hint: {
      en: "Use the international format, e.g. +4791234567.",
      nb: "Bruk internasjonalt format, f.eks. +4791234567."
    }
  },
  language: {
    label: { en: "The guest's language", nb: "Gjestens språk" },
    hint: { en: "Use en or nb.", nb: "Bruk en eller nb." }
  },
  lang: {
    label: { en: "The ticket language", nb: "Billettspråket" },
    hint: { en: "Use en or nb.", nb: "Bruk en eller nb." }
  },
  exp: { label: { en: "The ticket link", nb: "Billettlenken" } },
  sig: { label: { en: "The ticket link", nb: "Billettlenken" } }
}

/** A 400 `invalid_request` clerk message naming the field (its label, and its name for support): missing, or not valid. */
export const invalidFieldMessage = (field: string, missing: boolean, lang: ClerkLanguage): string => {
  const name = field.length > 60 ? `${field.slice(0, 60)}…` : field
  const known = FIELDS[field.replace(/\.\d+(?=\.|$)/g, ".*")]
  const subject = known === undefined
    ? (lang === "nb" ? `Feltet ${name}` : `The field ${name}`)
    : field === "body"
    ? known.label[lang]
    : `${known.label[lang]} (${name})`
  const hint = missing || known?.hint === undefined ? "" : ` ${known.hint[lang]}`
  return lang === "nb"
    ? `${subject} ${missing ? "mangler" : "er ugyldig"}.${hint} Sjekk opplysningene og prøv igjen.`
    : `${subject} ${missing ? "is missing" : "is not valid"}.${hint} Check the details and try again.`
}

/**
 * Clerk messages for requests the desk app got wrong (nothing the clerk typed): a body the service
 * cannot read, an endpoint or method that does not exist.
 */
export const REQUEST_MESSAGES: Record<
  "body_not_json" | "body_not_utf8" | "body_too_deep" | "body_too_large" | "body_not_json_type",
  Record<ClerkLanguage, string>
> = {
  body_not_json: {
    en: "The desk app sent a request that is not valid JSON. Try again; contact support if it persists.",
    nb: "Skrankeappen sendte en forespørsel som ikke er gyldig JSON. Prøv igjen; kontakt support hvis det fortsetter."
  },
  body_not_utf8: {
    en: "The desk app sent a request that is not UTF-8 text. Contact support.",
    nb: "Skrankeappen sendte en forespørsel som ikke er UTF-8-tekst. Kontakt support."
  },
  body_too_deep: {
    en: "The desk app sent a request nested too deeply to read. Contact support.",
    nb: "Skrankeappen sendte en forespørsel som er nøstet for dypt til å leses. Kontakt support."
  },
  body_too_large: {
    en: "The desk app sent a request larger than the service takes. Contact support.",
    nb: "Skrankeappen sendte en forespørsel som er større enn tjenesten tar imot. Kontakt support."
  },
  body_not_json_type: {
    en: "The desk app sent a request that is not JSON (Content-Type: application/json). Contact support.",
    nb: "Skrankeappen sendte en forespørsel som ikke er JSON (Content-Type: application/json). Kontakt support."
  }
}

/** 404 for a path the API does not have. */
export const unknownEndpointMessage = (method: string, path: string, lang: ClerkLanguage) =>
  lang === "nb"
    ? `Endepunktet finnes ikke: ${method} ${path}. Skrankeappen må kanskje oppdateres; kontakt support.`
    : `No such endpoint: ${method} ${path}. The desk app may need an update; contact support.`

/** 405 for a path that does not take the method. */
export const wrongMethodMessage = (method: string, path: string, allow: ReadonlyArray<string>, lang: ClerkLanguage) =>
  lang === "nb"
    ? `Skrankeappen brukte ${method} på ${path}, som bare tar imot ${allow.join(", ")}. Kontakt support.`
    : `The desk app used ${method} on ${path}, which takes only ${allow.join(", ")}. Contact support.`

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
    const lang: ClerkLanguage | undefined = ["nb", "no", "nn"].includes(primary)
      ? "nb"
      : primary === "en"
      ? "en"
      : undefined
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

/**
 * A failed book's lead for a case of its reason (the answer's `variant`): `sale_failed`, a second
 * payment (duplicate_payment) for a sale that already failed, which only a new quote can sell;
 * `sale_booking`, a second payment for a sale whose first payment is still being booked (whether
 * the sale stands is not known yet); `stray`, a payment that matched no sale (payment_mismatch),
 * returned once no sale could use it.
 */
export type BookFailedVariant = "sale_failed" | "sale_booking" | "stray"
export const BOOK_FAILED_VARIANT_LEADS: Record<BookFailedVariant, Record<ClerkLanguage, string>> = {
  sale_failed: {
    en: "This sale already failed and cannot be paid again. Make a new quote and take the payment for it.",
    nb: "Dette salget har allerede feilet og kan ikke betales på nytt. Lag et nytt tilbud og ta betalt for det."
  },
  sale_booking: {
    en:
      "This sale was already paid with another payment, which is still being booked. Check the sale's status to see whether it was booked; do not take another payment.",
    nb:
      "Salget er allerede betalt med en annen betaling, som fortsatt bookes. Sjekk salgets status for å se om det ble booket; ikke ta en ny betaling."
  },
  stray: {
    en: "This payment did not match its sale and was not used, so nothing was booked.",
    nb: "Denne betalingen stemte ikke med salget og ble ikke brukt, så ingenting ble booket."
  }
}
