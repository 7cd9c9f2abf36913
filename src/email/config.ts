import { Config, ConfigError, Either, Option } from "effect"
import { parseSmtpUrl } from "../adapters/smtp/url.js"
import { optionalSecret } from "../lib/settings.js"
import { parseMailbox } from "./rules.js"

/** Email: where messages go and how the outbox sends them (src/email/Outbox.ts, docs/email.md). */
export const MailConfig = Config.all({
  /**
   * `smtp://user:password@host:587` (STARTTLS when offered) or `smtps://…:465`. Unset: messages go
   * to the local mailbox in the database (`npm run cli -- mail list`).
   */
  smtp: optionalSecret("SMTP_URL").pipe(
    Config.mapOrFail((url) =>
      Option.match(url, {
        onNone: () => Either.right(Option.none()),
        onSome: (u) =>
          Either.map(
            Either.mapLeft(parseSmtpUrl(u), (message) => ConfigError.InvalidData(["SMTP_URL"], message)),
            Option.some
          )
      })
    )
  ),
  /** The sender of every email: `Name <address>` or an address. Its domain also names Message-IDs. */
  from: Config.string("MAIL_FROM").pipe(
    Config.withDefault("Tour Partner <no-reply@localhost>"),
    Config.mapOrFail((value) =>
      Either.mapLeft(parseMailbox(value), (message) => ConfigError.InvalidData(["MAIL_FROM"], message))
    )
  ),
  /** SMTP: time allowed to connect, for the greeting, and between any two packets; a whole send gets 4 times this. */
  smtpTimeoutMs: Config.integer("SMTP_TIMEOUT_MS").pipe(Config.withDefault(10_000)),
  /** Messages one sender claims at a time, and how many of them it sends at once. */
  batchSize: Config.integer("OUTBOX_BATCH_SIZE").pipe(Config.withDefault(10)),
  concurrency: Config.integer("OUTBOX_CONCURRENCY").pipe(Config.withDefault(2)),
  /** Attempts before a message is given up (status failed, logged as an error). */
  maxAttempts: Config.integer("OUTBOX_MAX_ATTEMPTS").pipe(Config.withDefault(10)),
  /** Backoff after a failed attempt: doubles from the base, capped, with jitter. */
  retryBaseMs: Config.integer("OUTBOX_RETRY_BASE_MS").pipe(Config.withDefault(30_000)),
  retryMaxMs: Config.integer("OUTBOX_RETRY_MAX_MS").pipe(Config.withDefault(3_600_000))
})

export type MailConfig = Config.Config.Success<typeof MailConfig>
