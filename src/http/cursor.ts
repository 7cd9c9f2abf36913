/**
 * Opaque, tamper-evident keyset cursors.
 *
 * A cursor names the last row of a page by its sort key (creation time in microseconds and id)
 * and carries a fingerprint of the filters it was made under; it is signed with HMAC-SHA256 under
 * a secret every instance shares. A cursor that was altered, forged or reused under other filters
 * does not verify.
 */
import { Either } from "effect"
import { createHash, createHmac, timingSafeEqual } from "node:crypto"

export interface CursorPosition {
  /** Microseconds since the epoch, as a decimal string (exact beyond 2^53 ms precision). */
  readonly createdMicros: string
  readonly id: string
}

/** A position's microseconds as an exact ISO timestamp PostgreSQL reads back losslessly. */
export const microsToIso = (micros: string) => {
  const value = BigInt(micros)
  const iso = new Date(Number(value / 1000n)).toISOString()
  return iso.replace("Z", String(value % 1000n).padStart(3, "0") + "Z")
}

const SIG_BYTES = 16

export const filterFingerprint = (filters: Record<string, unknown>): string =>
  createHash("sha256").update(JSON.stringify(filters, Object.keys(filters).sort())).digest("base64url").slice(0, 8)

const sign = (secret: Uint8Array, body: string) =>
  createHmac("sha256", secret).update(body).digest().subarray(0, SIG_BYTES)

export const encodeCursor = (secret: Uint8Array, position: CursorPosition, fingerprint: string): string => {
  const body = Buffer.from(`${position.createdMicros}.${position.id.replaceAll("-", "")}.${fingerprint}`).toString(
    "base64url"
  )
  return `${body}.${sign(secret, body).toString("base64url")}`
}

const UUID_HEX = /^[0-9a-f]{32}$/

export const decodeCursor = (
  secret: Uint8Array,
  cursor: string,
  fingerprint: string
): Either.Either<CursorPosition, string> => {
  const [body, sig, ...rest] = cursor.split(".")
  if (!body || !sig || rest.length > 0) return Either.left("is not a cursor this API issued")
  // Compare the encoded text, not decoded bytes: base64 decoding ignores stray trailing bits, so two
  // different strings could otherwise carry the same signature.
  const expected = Buffer.from(sign(secret, body).toString("base64url"))
  const given = Buffer.from(sig)
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return Either.left("is not a cursor this API issued (altered or from elsewhere)")
  }
  const [micros, hex, fp] = Buffer.from(body, "base64url").toString("utf8").split(".")
  if (!micros || !/^\d{1,20}$/.test(micros) || !hex || !UUID_HEX.test(hex)) return Either.left("is malformed")
  if (fp !== fingerprint) return Either.left("was issued for other filters; start again without a cursor")
  const id = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
  return Either.right({ createdMicros: micros, id })
}
