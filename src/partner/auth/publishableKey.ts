/**
 * Publishable keys (spec §1, §5 item 3, §8): `pk_widget_<id>`, a site's checkout-script key. It is
 * public by design (it ships in web pages), so the whole key is its id and nothing is secret. It
 * reads only its own site's public catalogue (the tours endpoints), passed as query `key` without an
 * Authorization header; browsers may read the answers only from the key's allowed origins (CORS),
 * and the answers are public and cacheable. Pure code, no I/O.
 */
import { Either } from "effect"
import { randomInt } from "node:crypto"

export const PUBLISHABLE_KEY_PREFIX = "pk_widget_"
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
const ID_LENGTH = 24
const TOKEN = new RegExp(`^${PUBLISHABLE_KEY_PREFIX}([A-Za-z0-9]{${ID_LENGTH}})$`)

/** Uncached requests per minute per publishable key (spec §8). */
export const PUBLISHABLE_REQUESTS_PER_MINUTE = 1200

export const generatePublishableKey = () => {
  let id = ""
  for (let i = 0; i < ID_LENGTH; i++) id += ALPHABET[randomInt(ALPHABET.length)]
  return { id, token: `${PUBLISHABLE_KEY_PREFIX}${id}` }
}

/** The key's id, or undefined when the value is not a well-formed publishable key. */
export const parsePublishableKey = (value: string): string | undefined => TOKEN.exec(value)?.[1]

export const looksLikePublishableKey = (value: string) => value.startsWith(PUBLISHABLE_KEY_PREFIX)

/**
 * An allowed origin as stored: `https://host[:port]` in lower case, no path. Given as a bare domain
 * (`fjordexplorer.no`) it means https; `*.fjordexplorer.no` allows every subdomain (not the domain
 * itself); `http://` is accepted for `localhost` and `127.0.0.1` only (a developer's page).
 */
export const normalizeOrigin = (input: string): Either.Either<string, string> => {
  const raw = input.trim().toLowerCase().replace(/\/+$/, "")
  const withScheme = /^[a-z]+:\/\//.test(raw) ? raw : `https://${raw}`
  let url: URL
  try {
    url = new URL(withScheme.replace("://*.", "://wildcard-placeholder."))
  } catch {
    return Either.left(`"${input}" is not a domain or an origin such as https://www.example.com`)
  }
  if (url.pathname !== "/" || url.search !== "" || url.hash !== "" || url.username !== "" || url.password !== "") {
    return Either.left(`"${input}" must be an origin (scheme, host and port only), not a URL with a path`)
  }
  const local = url.hostname === "localhost" || url.hostname === "127.0.0.1"
  if (url.protocol !== "https:" && !(url.protocol === "http:" && local)) {
    return Either.left(`"${input}" must use https (http only for localhost and 127.0.0.1)`)
  }
  if (!local && !url.hostname.includes(".")) return Either.left(`"${input}" is not a public domain`)
  const origin = url.origin.replace("://wildcard-placeholder.", "://*.")
  return Either.right(origin)
}

/** Whether a browser's `Origin` header is one of the allowed origins (exact, or a `*.` subdomain). */
export const originAllowed = (origin: string, allowed: ReadonlyArray<string>): boolean => {
  let given: URL
  try {
    given = new URL(origin)
  } catch {
    return false
  }
  if (given.origin === "null" || given.origin.toLowerCase() !== origin.toLowerCase()) return false
  return allowed.some((a) => {
    if (!a.includes("://*.")) return a === given.origin
    const [scheme, rest] = a.split("://*.") as [string, string]
    const [suffixHost, port] = rest.split(":") as [string, string | undefined]
    return given.protocol === `${scheme}:` && given.hostname.endsWith(`.${suffixHost}`) &&
      (given.port || undefined) === port
  })
}

/** Cache-Control of the answers to publishable keys (spec §8), by endpoint. */
export const PUBLIC_CACHE_CONTROL = {
  list: "public, s-maxage=300, stale-while-revalidate=3600",
  detail: "public, s-maxage=600, stale-while-revalidate=86400",
  availability: "public, s-maxage=60, stale-while-revalidate=300"
} as const
