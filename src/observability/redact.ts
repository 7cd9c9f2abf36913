/**
 * What must never leave the process in a log line, a span or a metric: secret keys (partner
 * `svc_live_…`/`svc_test_…`, quickbook `svcqb_…`, publishable keys in a query string), bearer and
 * basic credentials, OAuth codes and tokens, confirm tokens, signed-link signatures, passwords, and
 * guest contact (email addresses, phone numbers written with a leading `+`).
 *
 * `redactText` replaces each with `[redacted]`. It runs on every string a log line, a span or a
 * metric exports (src/observability/logFormat.ts, ./otlp.ts), so a secret that reaches one through
 * an error message or a URL is cut as well as one in a named field.
 */

const R = "[redacted]"

/** Our secret keys: `svc_live_`, `svc_test_`, `svcqb_live_` … followed by their id and secret. */
const SECRET_KEY = /\bsvc(?:qb)?_(?:live|test)_[A-Za-z0-9_]+/gi

/** `Bearer <token>`, `Basic <credentials>` (a header value quoted in a message). */
const AUTH_SCHEME = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi

/**
 * Query or form parameters, and JSON members, that carry a credential: OAuth (`code`, `access_token`,
 * `refresh_token`, `id_token`, `client_secret`, `code_verifier`), confirm tokens, signatures of signed
 * links (`sig`), publishable or secret keys (`key`, `api_key`), passwords.
 */
const CREDENTIAL_NAMES =
  "code|token|access_token|refresh_token|id_token|client_secret|code_verifier|confirm_token|sig|signature|key|api_key|password|secret"
const CREDENTIAL_PARAM = new RegExp(`([?&;](?:${CREDENTIAL_NAMES})=)[^&#\\s"']*`, "gi")
const CREDENTIAL_MEMBER = new RegExp(`("(?:${CREDENTIAL_NAMES}|password_hash)"\\s*:\\s*)"(?:[^"\\\\]|\\\\.)*"`, "gi")

/** Email addresses. */
const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+/g

/** Phone numbers in international form: `+` then at least 7 digits, spaces or dashes allowed. */
const PHONE = /\+\d[\d\s().-]{5,}\d/g

/** Credentials in a URL's user-info (`postgres://user:password@host`). */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^/\s:@]+:[^/\s@]+@/gi

/** Cheap test first: most strings (ids, routes, numbers as text) hold none of these characters. */
const MAYBE = /svc|bearer|basic|[=@+"]/i

export const redactText = (text: string): string =>
  MAYBE.test(text)
    ? text
      .replace(SECRET_KEY, R)
      .replace(AUTH_SCHEME, `$1 ${R}`)
      .replace(URL_USERINFO, `$1${R}@`)
      .replace(CREDENTIAL_PARAM, `$1${R}`)
      .replace(CREDENTIAL_MEMBER, `$1"${R}"`)
      .replace(EMAIL, R)
      .replace(PHONE, R)
    : text

/** `redactText` on every string inside `value` (arrays and plain objects walked; others kept). */
export const redactDeep = (value: unknown): unknown => {
  if (typeof value === "string") return redactText(value)
  if (Array.isArray(value)) return value.map(redactDeep)
  if (value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {}
    for (const key in value) out[key] = redactDeep((value as Record<string, unknown>)[key])
    return out
  }
  return value
}
