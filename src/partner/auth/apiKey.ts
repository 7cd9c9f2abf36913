/**
 * Secret partner keys: `svc_live_<id>_<secret>`. `id` is public (it is `key.id` on GET /me);
 * only a SHA-256 hash of the 32-character random `secret` is stored, compared in constant time.
 */
import { createHash, randomInt, timingSafeEqual } from "node:crypto"

export const SECRET_KEY_PREFIX = "svc_live_"
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
const ID_LENGTH = 20
const SECRET_LENGTH = 32

const randomString = (length: number) => {
  let out = ""
  for (let i = 0; i < length; i++) out += ALPHABET[randomInt(ALPHABET.length)]
  return out
}

export interface SecretKeyParts {
  readonly id: string
  readonly secret: string
}

/** A new key's random parts, for every kind of secret key of ours (partner and quickbook alike). */
export const randomKeyParts = (): SecretKeyParts => ({
  id: randomString(ID_LENGTH),
  secret: randomString(SECRET_LENGTH)
})

/** The `<id>_<secret>` end of every kind of secret key of ours, as two regular-expression groups. */
export const KEY_PARTS_PATTERN = `([A-Za-z0-9]{${ID_LENGTH}})_([A-Za-z0-9]{${SECRET_LENGTH}})`

export const generateSecretKey = (): SecretKeyParts & { readonly token: string } => {
  const { id, secret } = randomKeyParts()
  return { id, secret, token: `${SECRET_KEY_PREFIX}${id}_${secret}` }
}

const TOKEN = new RegExp(`^${SECRET_KEY_PREFIX}${KEY_PARTS_PATTERN}$`)

export const parseSecretKey = (token: string): SecretKeyParts | undefined => {
  const match = TOKEN.exec(token)
  return match ? { id: match[1]!, secret: match[2]! } : undefined
}

export const hashSecret = (secret: string): Buffer => createHash("sha256").update(secret).digest()

export const secretMatches = (secret: string, storedHash: Uint8Array): boolean => {
  const given = hashSecret(secret)
  return storedHash.length === given.length && timingSafeEqual(given, storedHash)
}

/** True when a string looks like any secret key of ours (used to refuse keys sent in URLs). */
export const looksLikeSecretKey = (value: string) =>
  value.includes(SECRET_KEY_PREFIX) || value.includes("svcqb_live_") || value.includes("svcqb_test_")

/** The URL percent-decoded as far as it decodes (a malformed escape leaves it as it is). */
export const decodedUrl = (url: string) => {
  try {
    return decodeURIComponent(url.replaceAll("+", " "))
  } catch {
    return url
  }
}

/**
 * True when a URL carries a secret key anywhere (path or query, raw or percent-encoded). Asked on
 * every request: a URL without `%` decodes to itself but for `+` → space, which cannot make a key
 * appear, so only a URL with `%` is decoded.
 */
export const urlCarriesSecretKey = (url: string) =>
  looksLikeSecretKey(url) || (url.includes("%") && looksLikeSecretKey(decodedUrl(url)))
