/**
 * The signature of the expiring links to a desk ticket's PDF (GET /api/quickbook/v1/tickets/
 * {reference}.pdf?lang=&exp=&sig=), opened or printed without the desk's key (the links themselves:
 * QuickbookTicketLinks). The scheme is src/http/linkSignature.ts with the purpose
 * `quickbook-ticket-pdf` (HMAC-SHA256 over `quickbook-ticket-pdf:v1:<reference>:<exp>`). The
 * language is not signed: the same ticket in the other language is no secret.
 */
import { checkLink, deriveLinkSecret, type LinkCheck, signLink } from "../../http/linkSignature.js"

const PURPOSE = "quickbook-ticket-pdf"

/** The signature of a link to `reference`'s PDF valid until `exp` (Unix seconds). */
export const signTicketLink = (secret: Uint8Array, reference: string, exp: number): string =>
  signLink(secret, PURPOSE, reference, exp)

export type TicketLinkCheck = LinkCheck

/** Whether `exp`/`sig` as given in a URL open `reference`'s PDF at `nowMillis`. */
export const checkTicketLink = (
  secret: Uint8Array,
  reference: string,
  exp: string,
  sig: string,
  nowMillis: number
): TicketLinkCheck => checkLink(secret, PURPOSE, reference, exp, sig, nowMillis)

/** The secret for ticket links derived from another shared secret (used when none is configured). */
export const deriveTicketLinkSecret = (shared: Uint8Array): Uint8Array =>
  deriveLinkSecret(shared, "quickbook-ticket-pdf-links")
