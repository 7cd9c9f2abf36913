/**
 * SMTP_URL: `smtp://user:password@host:587` (STARTTLS when the server offers it) or
 * `smtps://user:password@host:465` (TLS from the first byte). User and password are
 * percent-decoded; without them no AUTH is attempted. Pure; the password stays Redacted and no
 * error message repeats the URL.
 */
import { Either, Redacted } from "effect"

export interface SmtpSettings {
  readonly host: string
  readonly port: number
  /** TLS from the first byte (smtps). Otherwise plain, upgraded with STARTTLS when offered. */
  readonly secure: boolean
  readonly user: string | null
  readonly password: Redacted.Redacted<string> | null
}

const decode = (value: string): string | null => {
  try {
    return decodeURIComponent(value)
  } catch {
    return null
  }
}

export const parseSmtpUrl = (url: Redacted.Redacted<string>): Either.Either<SmtpSettings, string> => {
  let parsed: URL
  try {
    parsed = new URL(Redacted.value(url).trim())
  } catch {
    return Either.left("SMTP_URL is not a URL (expected smtp://user:password@host:587 or smtps://…)")
  }
  if (parsed.protocol !== "smtp:" && parsed.protocol !== "smtps:") {
    return Either.left(`SMTP_URL must start with smtp:// or smtps://, not ${parsed.protocol}//`)
  }
  if (parsed.hostname === "") return Either.left("SMTP_URL has no host")
  if ((parsed.pathname !== "" && parsed.pathname !== "/") || parsed.search !== "" || parsed.hash !== "") {
    return Either.left("SMTP_URL takes no path, query or fragment")
  }
  const secure = parsed.protocol === "smtps:"
  const user = parsed.username === "" ? null : decode(parsed.username)
  const password = parsed.password === "" ? null : decode(parsed.password)
  if ((parsed.username !== "" && user === null) || (parsed.password !== "" && password === null)) {
    return Either.left("SMTP_URL has a badly percent-encoded user or password")
  }
  if (password !== null && user === null) return Either.left("SMTP_URL has a password but no user")
  return Either.right({
    host: parsed.hostname.replace(/^\[(.*)\]$/, "$1"),
    port: parsed.port === "" ? (secure ? 465 : 587) : Number(parsed.port),
    secure,
    user,
    password: password === null ? null : Redacted.make(password)
  })
}
