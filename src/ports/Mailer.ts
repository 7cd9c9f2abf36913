/**
 * The one interface through which the service hands an email to someone else for delivery: an
 * SMTP server (`adapters/smtp`) when SMTP_URL is set, otherwise the local mailbox
 * (`adapters/mailbox`), a table every instance shares and the CLI reads (`mail list`).
 *
 * Only the outbox sender calls it (src/email/Outbox.ts): a write never sends mail itself, it
 * enqueues a message in its own transaction.
 *
 * Conventions:
 * - A message is complete: rendered subject and bodies, addresses, and a Message-ID that stays the
 *   same on every attempt. SMTP has no idempotency: a message sent twice arrives twice, and the
 *   shared Message-ID is what lets a mail client (or a person) see that it is the same message.
 * - `MailUnavailable` means "not delivered this time, may work later" (connection refused, timeout,
 *   4xx reply, bad credentials): the outbox retries with backoff. `MailRejected` is a definite "no"
 *   for this message (5xx reply such as an unknown recipient): retrying would get the same answer.
 */
import { Context, Data, type Effect } from "effect"

export interface OutgoingMessage {
  /** RFC 5322 Message-ID with its angle brackets, e.g. `<0b6f…@example.com>`. */
  readonly messageId: string
  /** `Name <address>` or a bare address. */
  readonly from: string
  readonly to: ReadonlyArray<string>
  readonly replyTo: string | null
  readonly subject: string
  /** The plain-text part (always there). */
  readonly text: string
  /** The HTML alternative, when there is one. */
  readonly html: string | null
  /** Extra headers (e.g. `X-Outbox-Id`); the standard ones come from the fields above. */
  readonly headers: Readonly<Record<string, string>>
}

export interface Delivered {
  /** What the other side answered, e.g. `250 2.0.0 Ok: queued as 4B3F` or `mailbox #12`. */
  readonly response: string
  /** Recipients the server refused while accepting the others (empty when all were accepted). */
  readonly rejected: ReadonlyArray<string>
}

export class MailUnavailable extends Data.TaggedError("MailUnavailable")<{
  /** timeout, connection, smtp_4xx, auth, protocol, other */
  readonly reason: string
  readonly detail: string
  readonly responseCode?: number | undefined
}> {}

export class MailRejected extends Data.TaggedError("MailRejected")<{
  /** smtp_5xx, envelope, message */
  readonly reason: string
  readonly detail: string
  readonly responseCode?: number | undefined
}> {}

export type MailError = MailUnavailable | MailRejected

export interface MailerClient {
  /** `smtp` or `mailbox`: where messages go (shown at start and by the CLI). */
  readonly kind: "smtp" | "mailbox"
  /** The longest one `send` can take before it gives up (the outbox sizes its claims from it). */
  readonly maxSendMillis: number
  /** Delivers one message: it has been handed over when this succeeds. */
  readonly send: (message: OutgoingMessage) => Effect.Effect<Delivered, MailError>
}

export class Mailer extends Context.Tag("Ports/Mailer")<Mailer, MailerClient>() {}
