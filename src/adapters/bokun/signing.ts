/**
 * Bókun request signing. Every call carries three headers:
 * - `X-Bokun-Date`: the UTC time of the request, `yyyy-MM-dd HH:mm:ss`;
 * - `X-Bokun-AccessKey`: the account's access key;
 * - `X-Bokun-Signature`: base64(HMAC-SHA1(secretKey, date + accessKey + METHOD + pathAndQuery)).
 * The path is the request path with its query string, exactly as sent. The sandbox checks the same way.
 */
import { createHmac, timingSafeEqual } from "node:crypto"

export const DATE_HEADER = "x-bokun-date"
export const ACCESS_KEY_HEADER = "x-bokun-accesskey"
export const SIGNATURE_HEADER = "x-bokun-signature"

const pad = (n: number) => String(n).padStart(2, "0")

/** `yyyy-MM-dd HH:mm:ss` in UTC. */
export const bokunDate = (epochMillis: number): string => {
  const d = new Date(epochMillis)
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`
}

/** The instant an `X-Bokun-Date` value names, or null when it is not in that format. */
export const parseBokunDate = (value: string): number | null => {
  const m = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/.exec(value)
  if (!m) return null
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number]
  const millis = Date.UTC(y, mo - 1, d, h, mi, s)
  return bokunDate(millis) === value ? millis : null
}

export interface SignatureInput {
  readonly date: string
  readonly accessKey: string
  readonly secretKey: string
  readonly method: string
  readonly pathAndQuery: string
}

export const signature = (input: SignatureInput): string =>
  createHmac("sha1", input.secretKey)
    .update(input.date + input.accessKey + input.method.toUpperCase() + input.pathAndQuery, "utf8")
    .digest("base64")

/** The three signing headers for one request at `epochMillis`. */
export const signedHeaders = (
  input: Omit<SignatureInput, "date"> & { readonly epochMillis: number }
): Record<string, string> => {
  const date = bokunDate(input.epochMillis)
  return {
    [DATE_HEADER]: date,
    [ACCESS_KEY_HEADER]: input.accessKey,
    [SIGNATURE_HEADER]: signature({ ...input, date })
  }
}

/** Constant-time comparison of a received signature with the expected one. */
export const signatureMatches = (received: string, expected: string): boolean => {
  const a = Buffer.from(received, "utf8")
  const b = Buffer.from(expected, "utf8")
  return a.length === b.length && timingSafeEqual(a, b)
}

/** Header names that carry credentials or signatures: redacted wherever headers are printed or traced. */
export const REDACTED_HEADERS: ReadonlyArray<string> = [ACCESS_KEY_HEADER, SIGNATURE_HEADER]
