/**
 * The signature of the expiring links to a desk ticket's PDF (GET /api/quickbook/v1/tickets/
 * {reference}.pdf?lang=&exp=&sig=), opened or printed without the desk's key (the links themselves:
 * QuickbookTicketLinks).
 *
 * `sig` is HMAC-SHA256 over `quickbook-ticket-pdf:v1:<reference>:<exp>` under the ticket-link
 * secret, the first 16 bytes in lowercase hex (hex never contains a key prefix such as `svcqb_`,
 * which the Quickbook API refuses anywhere in a URL). `exp` is Unix seconds. The language is not
 * signed: the same ticket in the other language is no secret. A link whose signature does not
 * verify, or whose `exp` has passed, opens nothing.
 */
import { createHmac, timingSafeEqual } from "node:crypto"

const SIG_BYTES = 16
const SIG_PATTERN = /^[0-9a-f]{32}$/
const EXP_PATTERN = /^[1-9][0-9]{0,11}$/

const mac = (secret: Uint8Array, reference: string, exp: number) =>
  createHmac("sha256", secret).update(`quickbook-ticket-pdf:v1:${reference}:${exp}`).digest().subarray(0, SIG_BYTES)

/** The signature of a link to `reference`'s PDF valid until `exp` (Unix seconds). */
export const signTicketLink = (secret: Uint8Array, reference: string, exp: number): string =>
  mac(secret, reference, exp).toString("hex")

export type TicketLinkCheck = "valid" | "bad_signature" | "expired"

/** Whether `exp`/`sig` as given in a URL open `reference`'s PDF at `nowMillis`. */
export const checkTicketLink = (
  secret: Uint8Array,
  reference: string,
  exp: string,
  sig: string,
  nowMillis: number
): TicketLinkCheck => {
  if (!EXP_PATTERN.test(exp) || !SIG_PATTERN.test(sig)) return "bad_signature"
  const expected = mac(secret, reference, Number(exp))
  if (!timingSafeEqual(expected, Buffer.from(sig, "hex"))) return "bad_signature"
  return Number(exp) * 1000 > nowMillis ? "valid" : "expired"
}

/** The secret for ticket links derived from another shared secret (used when none is configured). */
export const deriveTicketLinkSecret = (shared: Uint8Array): Uint8Array =>
  createHmac("sha256", shared).update("quickbook-ticket-pdf-links").digest()
