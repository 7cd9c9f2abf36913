/**
 * Signed, expiring links that open a file without a key (the desk tickets' PDF links,
 * src/quickbook/tickets/ticketLinkSignature.ts; the commission invoices' PDF and CSV links,
 * src/invoices/InvoiceFileLinks.ts).
 *
 * `sig` is HMAC-SHA256 over `<purpose>:v1:<subject>:<exp>` under the links' secret, the first 16
 * bytes in lowercase hex (hex never contains a key prefix such as `svcqb_`, which the Quickbook API
 * refuses anywhere in a URL). `exp` is Unix seconds. The purpose keeps one kind of link from opening
 * another. A link whose signature does not verify, or whose `exp` has passed, opens nothing.
 */
import { createHmac, timingSafeEqual } from "node:crypto"

const SIG_BYTES = 16
const SIG_PATTERN = /^[0-9a-f]{32}$/
const EXP_PATTERN = /^[1-9][0-9]{0,11}$/

const mac = (secret: Uint8Array, purpose: string, subject: string, exp: number) =>
  createHmac("sha256", secret).update(`${purpose}:v1:${subject}:${exp}`).digest().subarray(0, SIG_BYTES)

/** The signature of a `purpose` link to `subject` valid until `exp` (Unix seconds). */
export const signLink = (secret: Uint8Array, purpose: string, subject: string, exp: number): string =>
  mac(secret, purpose, subject, exp).toString("hex")

export type LinkCheck = "valid" | "bad_signature" | "expired"

/** Whether `exp`/`sig` as given in a URL open the `purpose` link to `subject` at `nowMillis`. */
export const checkLink = (
  secret: Uint8Array,
  purpose: string,
  subject: string,
  exp: string,
  sig: string,
  nowMillis: number
): LinkCheck => {
  if (!EXP_PATTERN.test(exp) || !SIG_PATTERN.test(sig)) return "bad_signature"
  const expected = mac(secret, purpose, subject, Number(exp))
  if (!timingSafeEqual(expected, Buffer.from(sig, "hex"))) return "bad_signature"
  return Number(exp) * 1000 > nowMillis ? "valid" : "expired"
}

/** A links' secret derived from another shared secret (used when none is configured), one per `label`. */
export const deriveLinkSecret = (shared: Uint8Array, label: string): Uint8Array =>
  createHmac("sha256", shared).update(label).digest()
