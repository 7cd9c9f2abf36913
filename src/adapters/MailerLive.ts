/**
 * The Mailer port's implementation: SMTP (nodemailer) when SMTP_URL is set, otherwise the local
 * mailbox table. Says at start which one it is (never the credentials).
 */
import { Effect, Layer, Option } from "effect"
import { MailConfig } from "../email/config.js"
import { formatMailbox } from "../email/rules.js"
import { Mailer } from "../ports/Mailer.js"
import { makeMailboxMailer } from "./mailbox.js"
import { makeSmtpMailer } from "./smtp/mailer.js"

export const MailerLive = Layer.scoped(
  Mailer,
  Effect.gen(function*() {
    const config = yield* MailConfig
    if (Option.isSome(config.smtp)) {
      const settings = config.smtp.value
      yield* Effect.logInfo(
        `email: SMTP to ${settings.host}:${settings.port}${settings.secure ? " (TLS)" : ""} as ${
          formatMailbox(config.from)
        }`
      )
      if (config.from.address.endsWith("@localhost")) {
        yield* Effect.logWarning("email: MAIL_FROM is not set; messages go out from no-reply@localhost")
      }
      return yield* makeSmtpMailer({ settings, timeoutMillis: config.smtpTimeoutMs })
    }
    yield* Effect.logDebug("email: SMTP_URL is not set; messages go to the local mailbox (npm run cli -- mail list)")
    return yield* makeMailboxMailer
  })
)
