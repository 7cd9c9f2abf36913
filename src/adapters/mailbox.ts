/**
 * The Mailer port without an SMTP server (SMTP_URL unset): every message lands in the
 * `mail_mailbox` table, which all instances on the database share and the CLI reads
 * (`mail list`, `mail show`). Each delivery is a row, so a message delivered twice shows twice.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { type MailerClient, MailUnavailable, type OutgoingMessage } from "../ports/Mailer.js"

export const makeMailboxMailer = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const send = (m: OutgoingMessage) =>
    sql<{ id: number }>`
      INSERT INTO mail_mailbox (message_id, from_address, to_addresses, reply_to, subject, text_body, html_body, headers)
      VALUES (
        ${m.messageId}, ${m.from}, ${m.to.map((a) => a.toLowerCase())}::text[], ${m.replyTo}, ${m.subject},
        ${m.text}, ${m.html}, ${JSON.stringify(m.headers)}::jsonb)
      RETURNING id`.pipe(
      Effect.map(([row]) => ({ response: `stored in the local mailbox as #${row!.id}`, rejected: [] })),
      Effect.catchTag("SqlError", (e) =>
        Effect.fail(new MailUnavailable({ reason: "other", detail: `mailbox: ${e.message}` }))),
      Effect.withSpan("Mailer.send", { attributes: { "mail.transport": "mailbox", "mail.message_id": m.messageId } })
    )
  return { kind: "mailbox", maxSendMillis: 30_000, send } satisfies MailerClient
})

export interface MailboxEntry {
  readonly id: number
  readonly delivered_at: Date
  readonly message_id: string
  readonly from: string
  readonly to: ReadonlyArray<string>
  readonly subject: string
}

/** The newest deliveries first, optionally only those to one address. */
export const listMailbox = (filter: { readonly to?: string | undefined; readonly limit?: number | undefined }) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<MailboxEntry>`
      SELECT id, delivered_at, message_id, from_address AS "from", to_addresses AS "to", subject
      FROM mail_mailbox
      WHERE ${filter.to ? sql`to_addresses @> ARRAY[${filter.to.trim().toLowerCase()}]::text[]` : sql`true`}
      ORDER BY id DESC
      LIMIT ${Math.min(Math.max(filter.limit ?? 20, 1), 1000)}`)

/** One delivery in full: headers, text and HTML. */
export const showMailbox = (id: number) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<
        MailboxEntry & { reply_to: string | null; headers: Record<string, string>; text: string; html: string | null }
      >`
      SELECT id, delivered_at, message_id, from_address AS "from", to_addresses AS "to", reply_to, subject, headers,
        text_body AS text, html_body AS html
      FROM mail_mailbox WHERE id = ${id}`
  ).pipe(Effect.map((rows) => rows[0] ?? null))
