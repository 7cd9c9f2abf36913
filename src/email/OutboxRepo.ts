/**
 * The SQL of the email outbox that stores and reads messages (`email_outbox`, migration 0007; the
 * team's addresses from `memberships`), typed with SqlSchema and the row schemas below; a database
 * error or a row that does not decode is a defect at its edge (repoEdge: a span per method), once.
 * The sender's claims and outcomes: OutboxSenderRepo.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { repoEdge } from "../db/repoEdge.js"
import { LOCALES } from "./rules.js"
import { TEMPLATE_NAMES } from "./templates.js"

export const OutboxStatus = Schema.Literal("pending", "sending", "sent", "failed")
export type OutboxStatus = typeof OutboxStatus.Type

/** A message as the CLI lists it (no bodies). */
export const OutboxMessage = Schema.Struct({
  id: Schema.String,
  dedupe_key: Schema.String,
  template: Schema.Literal(...TEMPLATE_NAMES),
  locale: Schema.Literal(...LOCALES),
  message_id: Schema.String,
  to_addresses: Schema.Array(Schema.String),
  subject: Schema.String,
  status: OutboxStatus,
  attempts: Schema.Number,
  next_attempt_at: Schema.DateFromSelf,
  last_error: Schema.NullOr(Schema.String),
  transport_response: Schema.NullOr(Schema.String),
  operator_id: Schema.NullOr(Schema.String),
  booking_id: Schema.NullOr(Schema.String),
  created_at: Schema.DateFromSelf,
  sent_at: Schema.NullOr(Schema.DateFromSelf),
  failed_at: Schema.NullOr(Schema.DateFromSelf)
})
export type OutboxMessage = typeof OutboxMessage.Type

/** A message to store, rendered; `notSendable` says why it is failed at once (null: pending). */
const NewMessage = Schema.Struct({
  id: Schema.String,
  dedupeKey: Schema.String,
  template: Schema.String,
  locale: Schema.String,
  /** The template's data as JSON. */
  data: Schema.String,
  operatorId: Schema.NullOr(Schema.String),
  bookingId: Schema.NullOr(Schema.String),
  messageId: Schema.String,
  from: Schema.String,
  to: Schema.Array(Schema.String),
  replyTo: Schema.NullOr(Schema.String),
  subject: Schema.String,
  text: Schema.String,
  html: Schema.String,
  notSendable: Schema.NullOr(Schema.String),
  /** The enqueuing span's W3C traceparent (migrations/0036), null without tracing. */
  traceparent: Schema.NullOr(Schema.String)
})

const Stored = Schema.Struct({ id: Schema.String, message_id: Schema.String, status: OutboxStatus })

const Role = Schema.Literal("owner", "admin", "member")

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const OUTBOX_COLUMNS = `id, dedupe_key, template, locale, message_id, to_addresses, subject, status, attempts,
  next_attempt_at, last_error, transport_response, operator_id, booking_id, created_at, sent_at, failed_at`

export class OutboxRepo extends Effect.Service<OutboxRepo>()("Email/OutboxRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Stores a message unless its dedupe key exists: None then. */
    const insert = SqlSchema.findOne({
      Request: NewMessage,
      Result: Stored,
      execute: (m) =>
        sql`
          INSERT INTO email_outbox (
            id, dedupe_key, template, locale, data, operator_id, booking_id, message_id, from_address,
            to_addresses, reply_to, subject, text_body, html_body, status, last_error, failed_at, traceparent)
          VALUES (
            ${m.id}, ${m.dedupeKey}, ${m.template}, ${m.locale}, ${m.data}::jsonb,
            ${m.operatorId}, ${m.bookingId}, ${m.messageId}, ${m.from},
            ${m.to}::text[], ${m.replyTo}, ${m.subject}, ${m.text}, ${m.html},
            ${m.notSendable === null ? "pending" : "failed"},
            ${m.notSendable},
            ${m.notSendable === null ? null : sql.literal("now()")}, ${m.traceparent})
          ON CONFLICT (dedupe_key) DO NOTHING
          RETURNING id, message_id, status`
    })

    /** The message stored under a dedupe key (one exists: the insert found it). */
    const byDedupeKey = SqlSchema.single({
      Request: Schema.String,
      Result: Stored,
      execute: (key) => sql`SELECT id, message_id, status FROM email_outbox WHERE dedupe_key = ${key}`
    })

    /** Newest first, at most `limit`. */
    const list = SqlSchema.findAll({
      Request: Schema.Struct({
        status: Schema.UndefinedOr(OutboxStatus),
        bookingId: Schema.UndefinedOr(Schema.String),
        limit: Schema.Number
      }),
      Result: OutboxMessage,
      execute: (f) =>
        sql`
          SELECT ${sql.literal(OUTBOX_COLUMNS)} FROM email_outbox
          WHERE ${f.status ? sql`status = ${f.status}` : sql`true`}
            AND ${f.bookingId ? sql`booking_id = ${f.bookingId}` : sql`true`}
          ORDER BY created_at DESC, id DESC
          LIMIT ${f.limit}`
    })

    /** One message by id or by dedupe key. */
    const find = SqlSchema.findOne({
      Request: Schema.String,
      Result: OutboxMessage,
      execute: (idOrKey) =>
        sql`
          SELECT ${sql.literal(OUTBOX_COLUMNS)} FROM email_outbox
          WHERE ${UUID.test(idOrKey) ? sql`id = ${idOrKey}::uuid` : sql`dedupe_key = ${idOrKey}`}`
    })

    /** A failed message back to pending with fresh attempts; None when it was not failed. */
    const requeueFailed = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ id: Schema.String }),
      execute: (id) =>
        sql`
          UPDATE email_outbox SET status = 'pending', attempts = 0, next_attempt_at = now(), failed_at = NULL
          WHERE id = ${id}::uuid AND status = 'failed'
          RETURNING id`
    })

    /** The addresses of the operator's members in these roles, sorted. */
    const teamAddresses = SqlSchema.findAll({
      Request: Schema.Struct({ operatorId: Schema.String, roles: Schema.Array(Role) }),
      Result: Schema.Struct({ email: Schema.String }),
      execute: (r) =>
        sql`
          SELECT u.email FROM memberships m JOIN users u ON u.id = m.user_id
          WHERE m.operator_id = ${r.operatorId} AND m.role IN ${sql.in(r.roles)}
          ORDER BY u.email`
    })

    return repoEdge("OutboxRepo", { insert, byDedupeKey, list, find, requeueFailed, teamAddresses })
  })
}) {}
