/**
 * The Mailer port over SMTP with nodemailer: one connection per message (the outbox sends a
 * handful at a time), connection, greeting and socket-inactivity timeouts, and a hard limit on a
 * whole send that aborts it. Replies map onto the port's errors: 4xx (and 503, "bad sequence") is
 * `MailUnavailable`, other 5xx `MailRejected`; no answer at all is `MailUnavailable`. Credentials
 * never reach a log line or an error: nodemailer's own logger is off, and error details are
 * scrubbed of the user and password.
 */
import { Effect, Redacted } from "effect"
import nodemailer, { type NodemailerError } from "nodemailer"
import {
  type MailerClient,
  type MailError,
  MailRejected,
  MailUnavailable,
  type OutgoingMessage
} from "../../ports/Mailer.js"
import type { SmtpSettings } from "./url.js"

export interface SmtpMailerOptions {
  readonly settings: SmtpSettings
  /** Time allowed to connect, to get the greeting, and between any two packets of a session. */
  readonly timeoutMillis: number
}

const CONNECTION_CODES = new Set(["ECONNECTION", "ESOCKET", "EDNS", "ETLS", "EPROXY", "EREQUIRETLS"])

/** The port's error for what nodemailer failed with (exported for unit tests). */
export const classifySmtpError = (error: unknown, scrub: (s: string) => string = (s) => s): MailError => {
  const e = (typeof error === "object" && error !== null ? error : {}) as Partial<NodemailerError>
  const code = typeof e.code === "string" ? e.code : undefined
  const responseCode = typeof e.responseCode === "number" ? e.responseCode : undefined
  const detail = scrub([code, e.message ?? String(error)].filter(Boolean).join(": ")).slice(0, 1000)
  // Refused credentials are the configuration's fault, not the message's: retried, never dropped.
  if (code === "EAUTH" || code === "ENOAUTH") return new MailUnavailable({ reason: "auth", detail, responseCode })
  if (responseCode !== undefined && responseCode >= 400 && responseCode < 500) {
    return new MailUnavailable({ reason: "smtp_4xx", detail, responseCode })
  }
  if (responseCode === 503) return new MailUnavailable({ reason: "smtp_4xx", detail, responseCode })
  if (responseCode !== undefined && responseCode >= 500 && responseCode < 600) {
    return new MailRejected({ reason: "smtp_5xx", detail, responseCode })
  }
  if (code === "ETIMEDOUT" || code === "EABORT") return new MailUnavailable({ reason: "timeout", detail })
  if (code !== undefined && CONNECTION_CODES.has(code)) return new MailUnavailable({ reason: "connection", detail })
  // Refused before anything was sent: no recipient, an address nodemailer cannot encode.
  if (code === "EENVELOPE") return new MailRejected({ reason: "envelope", detail })
  if (code === "EMESSAGE") return new MailRejected({ reason: "message", detail })
  return new MailUnavailable({ reason: code === "EPROTOCOL" ? "protocol" : "other", detail })
}

/** A scoped SMTP Mailer (the transport is closed with the scope). */
export const makeSmtpMailer = (options: SmtpMailerOptions) =>
  Effect.gen(function*() {
    const { settings, timeoutMillis } = options
    const secrets = [settings.password ? Redacted.value(settings.password) : null, settings.user]
      .filter((s): s is string => s !== null && s.length >= 3)
    const scrub = (s: string) => secrets.reduce((acc, secret) => acc.split(secret).join("<redacted>"), s)
    const transport = yield* Effect.acquireRelease(
      Effect.sync(() =>
        nodemailer.createTransport({
          host: settings.host,
          port: settings.port,
          secure: settings.secure,
          ...(settings.user === null ? {} : {
            auth: { user: settings.user, pass: settings.password === null ? "" : Redacted.value(settings.password) }
          }),
          connectionTimeout: timeoutMillis,
          greetingTimeout: timeoutMillis,
          socketTimeout: timeoutMillis,
          dnsTimeout: timeoutMillis,
          logger: false,
          debug: false
        })
      ),
      (t) => Effect.sync(() => t.close())
    )
    // A whole session (connect, greeting, EHLO, STARTTLS, AUTH, envelope, data) is a handful of
    // waits, each bounded by the timeout; a server trickling bytes is cut off here.
    const maxSendMillis = timeoutMillis * 4

    const send = (m: OutgoingMessage) =>
      Effect.tryPromise({
        // The limit is an abort signal rather than an Effect timeout, so that it holds even where
        // the caller runs the send uninterruptibly (the outbox does, to record every outcome).
        try: (signal) =>
          transport.sendMail({
            from: m.from,
            to: [...m.to],
            ...(m.replyTo === null ? {} : { replyTo: m.replyTo }),
            subject: m.subject,
            text: m.text,
            ...(m.html === null ? {} : { html: m.html }),
            messageId: m.messageId,
            headers: { ...m.headers },
            signal: AbortSignal.any([signal, AbortSignal.timeout(maxSendMillis)])
          }),
        catch: (error) => classifySmtpError(error, scrub)
      }).pipe(
        Effect.flatMap((info) =>
          info.accepted.length === 0
            ? Effect.fail(
              new MailRejected({ reason: "smtp_5xx", detail: scrub(`every recipient refused: ${info.response}`) })
            )
            : Effect.succeed({ response: scrub(info.response), rejected: info.rejected.map(String) })
        ),
        Effect.withSpan("Mailer.send", { attributes: { "mail.transport": "smtp", "mail.message_id": m.messageId } })
      )

    return { kind: "smtp", maxSendMillis, send } satisfies MailerClient
  })
