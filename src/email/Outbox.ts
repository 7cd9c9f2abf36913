/**
 * The transactional email outbox (docs/email.md).
 *
 * A write that should tell someone about a state change calls `enqueue` inside its own
 * `sql.withTransaction`: the message is rendered there and then and stored in `email_outbox`, so
 * it exists exactly when the state change committed. A dedupe key (`booking:<id>:cancelled:guest`)
 * makes a retried or replayed write enqueue nothing new.
 *
 * The sender (`sendDue`, run by the outbox job every few seconds on one instance, and by
 * `mail flush`) claims due messages in small batches (`FOR UPDATE SKIP LOCKED`, then a lease in
 * the row itself, committed at once), hands each to the Mailer and marks it sent right after, in
 * one statement. A failed attempt is retried with exponential backoff and jitter; a permanent
 * refusal, or running out of attempts, marks the message failed and logs an error.
 *
 * At most once is impossible over SMTP: if the process dies after the server accepted a message
 * and before the "sent" mark commits, the claim expires and the message goes out again, with the
 * same Message-ID. The window is one UPDATE long.
 */
import { SqlClient } from "@effect/sql"
import { Cause, Effect, Either, Random } from "effect"
import { randomUUID } from "node:crypto"
import { MailConfig } from "../config.js"
import { type EmailContent, renderEmail, type TemplateName } from "./templates.js"
import { formatMailbox, isEmailAddress, type Locale, messageIdFor, retryDelayMillis } from "./rules.js"
import { type Delivered, type MailError, Mailer, MailUnavailable, type OutgoingMessage } from "../ports/Mailer.js"

export type OutboxStatus = "pending" | "sending" | "sent" | "failed"

/** One email to send once: a template and its data, who it goes to, and what it is about. */
export type EnqueueRequest = EmailContent & {
  /**
   * What this email is about, unique for ever: `booking:<booking id>:<event>:<audience>`, e.g.
   * `booking:5f0c…:cancelled:guest`, `booking:5f0c…:rescheduled:2026-11-21T10:00:team`. A second
   * enqueue with the same key is a no-op that returns the first message.
   */
  readonly dedupeKey: string
  /** One address or several (a team). An unusable address makes the message `failed` at once. */
  readonly to: string | ReadonlyArray<string>
  readonly locale: Locale
  /** Where replies should go (e.g. the operator's address for guest emails); dropped if unusable. */
  readonly replyTo?: string | null | undefined
  readonly operatorId?: string | null | undefined
  /** The booking (or manifest row) the email is about, for look-ups. */
  readonly bookingId?: string | null | undefined
}

export interface Enqueued {
  readonly id: string
  readonly messageId: string
  /** false: the dedupe key existed, nothing was added (id and status are the existing message's). */
  readonly created: boolean
  readonly status: OutboxStatus
}

export interface SendSummary {
  /** Messages this run claimed (including claims abandoned by a sender that died). */
  readonly claimed: number
  readonly sent: number
  /** Failed attempts that will be tried again. */
  readonly retried: number
  /** Given up: refused for good, or out of attempts. */
  readonly failed: number
}

export interface OutboxMessage {
  readonly id: string
  readonly dedupe_key: string
  readonly template: TemplateName
  readonly locale: Locale
  readonly message_id: string
  readonly to_addresses: ReadonlyArray<string>
  readonly subject: string
  readonly status: OutboxStatus
  readonly attempts: number
  readonly next_attempt_at: Date
  readonly last_error: string | null
  readonly transport_response: string | null
  readonly operator_id: string | null
  readonly booking_id: string | null
  readonly created_at: Date
  readonly sent_at: Date | null
  readonly failed_at: Date | null
}

export interface OutboxFilter {
  readonly status?: OutboxStatus | undefined
  readonly bookingId?: string | undefined
  readonly limit?: number | undefined
}

interface ClaimedRow {
  readonly id: string
  readonly dedupe_key: string
  readonly message_id: string
  readonly from_address: string
  readonly to_addresses: ReadonlyArray<string>
  readonly reply_to: string | null
  readonly subject: string
  readonly text_body: string
  readonly html_body: string | null
  readonly attempts: number
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const EMPTY: SendSummary = { claimed: 0, sent: 0, retried: 0, failed: 0 }

const add = (a: SendSummary, b: SendSummary): SendSummary => ({
  claimed: a.claimed + b.claimed,
  sent: a.sent + b.sent,
  retried: a.retried + b.retried,
  failed: a.failed + b.failed
})

type Outcome = "sent" | "retried" | "failed"

const describe = (e: MailError) => `${e._tag} (${e.reason}): ${e.detail}`.slice(0, 2000)

const OUTBOX_COLUMNS = `id, dedupe_key, template, locale, message_id, to_addresses, subject, status, attempts,
  next_attempt_at, last_error, transport_response, operator_id, booking_id, created_at, sent_at, failed_at`

export class Outbox extends Effect.Service<Outbox>()("Email/Outbox", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const mailer = yield* Mailer
    const config = yield* MailConfig
    const from = formatMailbox(config.from)
    const policy = { baseMillis: config.retryBaseMs, maxMillis: config.retryMaxMs }
    const batchSize = Math.max(1, config.batchSize)
    const concurrency = Math.max(1, config.concurrency)
    // A claim lasts as long as the slowest possible batch, with room to spare: a sender that is
    // still working never loses its messages to another one.
    const leaseMillis = Math.ceil(batchSize / concurrency) * mailer.maxSendMillis + 30_000

    /**
     * Stores one message (rendered now) unless its dedupe key exists. Call it inside the
     * transaction of the state change it tells about. Template data that does not match its
     * template is a bug in the caller: a defect, which rolls that transaction back.
     */
    const enqueue = Effect.fn("Outbox.enqueue")(function*(request: EnqueueRequest) {
      yield* Effect.annotateCurrentSpan({ "outbox.template": request.template, "outbox.dedupe_key": request.dedupeKey })
      const rendered = renderEmail(request.locale, request)
      if (Either.isLeft(rendered)) return yield* Effect.die(rendered.left)
      const { subject, text, html } = rendered.right
      if (request.dedupeKey.length < 1 || request.dedupeKey.length > 500) {
        return yield* Effect.dieMessage(`outbox dedupe key must be 1 to 500 characters: ${request.dedupeKey}`)
      }
      const to = (typeof request.to === "string" ? [request.to] : [...request.to]).map((a) => a.trim())
      const unusable = to.length === 0 ? ["(no recipient)"] : to.filter((a) => !isEmailAddress(a))
      const replyTo = request.replyTo && isEmailAddress(request.replyTo.trim()) ? request.replyTo.trim() : null
      const id = randomUUID()
      const messageId = messageIdFor(id, config.from)
      const failed = unusable.length > 0
      const [row] = yield* sql<{ id: string; message_id: string; status: OutboxStatus }>`
        INSERT INTO email_outbox (
          id, dedupe_key, template, locale, data, operator_id, booking_id, message_id, from_address,
          to_addresses, reply_to, subject, text_body, html_body, status, last_error, failed_at)
        VALUES (
          ${id}, ${request.dedupeKey}, ${request.template}, ${request.locale}, ${JSON.stringify(request.data)}::jsonb,
          ${request.operatorId ?? null}, ${request.bookingId ?? null}, ${messageId}, ${from},
          ${to}::text[], ${replyTo}, ${subject}, ${text}, ${html},
          ${failed ? "failed" : "pending"},
          ${failed ? `not sendable: unusable recipient address ${unusable.join(", ")}` : null},
          ${failed ? sql.literal("now()") : null})
        ON CONFLICT (dedupe_key) DO NOTHING
        RETURNING id, message_id, status`
      if (row !== undefined) {
        if (failed) {
          yield* Effect.logWarning(`email ${request.dedupeKey} not sendable: unusable recipient address`)
        }
        return { id: row.id, messageId: row.message_id, created: true, status: row.status } satisfies Enqueued
      }
      const [existing] = yield* sql<{ id: string; message_id: string; status: OutboxStatus }>`
        SELECT id, message_id, status FROM email_outbox WHERE dedupe_key = ${request.dedupeKey}`
      return { id: existing!.id, messageId: existing!.message_id, created: false, status: existing!.status } satisfies Enqueued
    }, Effect.orDie)

    // -------------------------------------------------------------------------------------------
    // Sending

    const finish = (row: ClaimedRow, token: string, result: Either.Either<Delivered, MailError>) =>
      Effect.gen(function*() {
        const annotations = { outbox_id: row.id, dedupe_key: row.dedupe_key, attempt: row.attempts }
        if (Either.isRight(result)) {
          const updated = yield* sql`
            UPDATE email_outbox SET status = 'sent', sent_at = now(), claim_token = NULL, locked_until = NULL,
              transport_response = ${result.right.response},
              last_error = ${result.right.rejected.length > 0 ? `refused recipients: ${result.right.rejected.join(", ")}` : null}
            WHERE id = ${row.id} AND claim_token = ${token}::uuid
            RETURNING id`
          if (updated.length === 0) {
            yield* Effect.logWarning(`email ${row.dedupe_key} sent, but its claim had expired: another sender may send it again`)
          }
          if (result.right.rejected.length > 0) {
            yield* Effect.logWarning(`email ${row.dedupe_key} sent, but the server refused ${result.right.rejected.join(", ")}`)
          }
          return "sent" as Outcome
        }
        const error = result.left
        const last = row.attempts >= config.maxAttempts
        if (error._tag === "MailRejected" || last) {
          yield* sql`
            UPDATE email_outbox SET status = 'failed', failed_at = now(), claim_token = NULL, locked_until = NULL,
              last_error = ${describe(error)}
            WHERE id = ${row.id} AND claim_token = ${token}::uuid`
          yield* Effect.logError(
            error._tag === "MailRejected"
              ? `email ${row.dedupe_key} refused for good; not retried: ${describe(error)}`
              : `email ${row.dedupe_key} given up after ${row.attempts} attempts: ${describe(error)}`
          ).pipe(Effect.annotateLogs({ ...annotations, alert: "email_failed" }))
          return "failed" as Outcome
        }
        const delay = retryDelayMillis(row.attempts, policy, yield* Random.next)
        yield* sql`
          UPDATE email_outbox SET status = 'pending', claim_token = NULL, locked_until = NULL,
            next_attempt_at = now() + make_interval(secs => ${delay / 1000}), last_error = ${describe(error)}
          WHERE id = ${row.id} AND claim_token = ${token}::uuid`
        yield* Effect.logWarning(`email ${row.dedupe_key}: attempt ${row.attempts} failed, next in ${delay} ms: ${describe(error)}`)
          .pipe(Effect.annotateLogs(annotations))
        return "retried" as Outcome
      })

    const toMessage = (row: ClaimedRow): OutgoingMessage => ({
      messageId: row.message_id,
      from: row.from_address,
      to: row.to_addresses,
      replyTo: row.reply_to,
      subject: row.subject,
      text: row.text_body,
      html: row.html_body,
      headers: { "X-Outbox-Id": row.id, "Auto-Submitted": "auto-generated" }
    })

    /** Sends one claimed message and records the outcome: one uninterruptible step. */
    const deliver = Effect.fn("Outbox.deliver")(function*(row: ClaimedRow, token: string) {
      yield* Effect.annotateCurrentSpan({ "outbox.id": row.id, "outbox.attempt": row.attempts })
      const result = yield* mailer.send(toMessage(row)).pipe(
        Effect.either,
        // A defect in a transport is one more failed attempt, not a dead sender.
        Effect.catchAllDefect((defect) =>
          Effect.succeed(Either.left(new MailUnavailable({ reason: "other", detail: Cause.pretty(Cause.die(defect)) })))
        )
      )
      return yield* finish(row, token, result)
    }, Effect.uninterruptible)

    /** Sends what was claimed; gives back (on interruption) the claims it had not started. */
    const sendClaimed = (rows: ReadonlyArray<ClaimedRow>, token: string) => {
      const started = new Set<string>()
      return Effect.forEach(rows, (row) => Effect.suspend(() => {
        started.add(row.id)
        return deliver(row, token)
      }), { concurrency }).pipe(
        Effect.map((outcomes): SendSummary => ({
          claimed: rows.length,
          sent: outcomes.filter((o) => o === "sent").length,
          retried: outcomes.filter((o) => o === "retried").length,
          failed: outcomes.filter((o) => o === "failed").length
        })),
        Effect.onInterrupt(() => {
          const unstarted = rows.filter((r) => !started.has(r.id)).map((r) => r.id)
          return unstarted.length === 0 ? Effect.void : sql`
            UPDATE email_outbox SET status = 'pending', claim_token = NULL, locked_until = NULL, attempts = attempts - 1
            WHERE claim_token = ${token}::uuid AND status = 'sending' AND id IN ${sql.in(unstarted)}`.pipe(Effect.ignore)
        })
      )
    }

    const CLAIMED_COLUMNS = sql.literal(
      "o.id, o.dedupe_key, o.message_id, o.from_address, o.to_addresses, o.reply_to, o.subject, o.text_body, o.html_body, o.attempts"
    )

    /** A claim whose sender died during the last allowed attempt: nothing left to try. */
    const failAbandonedLastAttempts = sql<{ id: string; dedupe_key: string }>`
      UPDATE email_outbox SET status = 'failed', failed_at = now(), claim_token = NULL, locked_until = NULL,
        last_error = concat_ws('; ', last_error,
          'the sender stopped during the last attempt (claim expired): it may or may not have been sent')
      WHERE status = 'sending' AND locked_until <= now() AND attempts >= ${config.maxAttempts}
      RETURNING id, dedupe_key`.pipe(
      Effect.tap((rows) =>
        Effect.forEach(rows, (r) =>
          Effect.logError(`email ${r.dedupe_key} given up: its sender stopped during the last attempt`)
            .pipe(Effect.annotateLogs({ outbox_id: r.id, alert: "email_failed" })))
      )
    )

    /**
     * One batch: claims up to `limit` due messages (pending and due, or claimed by a sender whose
     * lease ran out), sends them and records each outcome. Several senders may run at once: each
     * message goes to one of them.
     */
    const sendDue = Effect.fn("Outbox.sendDue")(function*(options: { readonly limit?: number } = {}) {
      yield* failAbandonedLastAttempts
      const token = randomUUID()
      const rows = yield* sql<ClaimedRow>`
        WITH due AS (
          SELECT id FROM email_outbox
          WHERE (status = 'pending' AND next_attempt_at <= now())
             OR (status = 'sending' AND locked_until <= now() AND attempts < ${config.maxAttempts})
          ORDER BY next_attempt_at, id
          LIMIT ${options.limit ?? batchSize}
          FOR UPDATE SKIP LOCKED
        )
        UPDATE email_outbox o SET status = 'sending', claim_token = ${token}::uuid,
          locked_until = now() + make_interval(secs => ${leaseMillis / 1000}), attempts = o.attempts + 1
        FROM due WHERE o.id = due.id
        RETURNING ${CLAIMED_COLUMNS}`
      if (rows.length === 0) return EMPTY
      return yield* sendClaimed(rows, token)
    }, Effect.orDie)

    /** Sends every message due now, batch after batch (at most `maxBatches`). */
    const flush = Effect.fn("Outbox.flush")(function*(options: { readonly maxBatches?: number } = {}) {
      let total = EMPTY
      for (let i = 0; i < (options.maxBatches ?? 100); i++) {
        const batch = yield* sendDue()
        total = add(total, batch)
        if (batch.claimed === 0) break
      }
      return total
    })

    /**
     * Tries one message now, whatever its backoff says (e.g. right after the write that enqueued
     * it committed, to answer whether the email went out), and answers its status afterwards:
     * `sent`, `pending` (a retry is scheduled), `failed`, or `sending` (another sender has it).
     * Never sends a message that is sent or being sent.
     */
    const deliverNow = Effect.fn("Outbox.deliverNow")(function*(id: string) {
      yield* Effect.annotateCurrentSpan({ "outbox.id": id })
      const token = randomUUID()
      const rows = yield* sql<ClaimedRow>`
        WITH one AS (
          SELECT id FROM email_outbox
          WHERE id = ${id}
            AND (status = 'pending' OR (status = 'sending' AND locked_until <= now()))
            AND attempts < ${config.maxAttempts}
          FOR UPDATE SKIP LOCKED
        )
        UPDATE email_outbox o SET status = 'sending', claim_token = ${token}::uuid,
          locked_until = now() + make_interval(secs => ${leaseMillis / 1000}), attempts = o.attempts + 1
        FROM one WHERE o.id = one.id
        RETURNING ${CLAIMED_COLUMNS}`
      if (rows.length > 0) yield* sendClaimed(rows, token)
      const [row] = yield* sql<{ status: OutboxStatus }>`SELECT status FROM email_outbox WHERE id = ${id}`
      if (row === undefined) return yield* Effect.dieMessage(`no outbox message ${id}`)
      return row.status
    }, Effect.orDie)

    // -------------------------------------------------------------------------------------------
    // Reading and repair (CLI)

    const list = Effect.fn("Outbox.list")((filter: OutboxFilter = {}) =>
      sql<OutboxMessage>`
        SELECT ${sql.literal(OUTBOX_COLUMNS)} FROM email_outbox
        WHERE ${filter.status ? sql`status = ${filter.status}` : sql`true`}
          AND ${filter.bookingId ? sql`booking_id = ${filter.bookingId}` : sql`true`}
        ORDER BY created_at DESC, id DESC
        LIMIT ${Math.min(Math.max(filter.limit ?? 50, 1), 1000)}`.pipe(Effect.orDie))

    /** One message by id or by dedupe key. */
    const find = Effect.fn("Outbox.find")((idOrKey: string) =>
      sql<OutboxMessage>`
        SELECT ${sql.literal(OUTBOX_COLUMNS)} FROM email_outbox
        WHERE ${UUID.test(idOrKey) ? sql`id = ${idOrKey}::uuid` : sql`dedupe_key = ${idOrKey}`}`
        .pipe(Effect.map((rows) => rows[0] ?? null), Effect.orDie))

    /** Puts a failed message back in the queue with fresh attempts. Answers whether it was failed. */
    const retry = Effect.fn("Outbox.retry")((id: string) =>
      sql`
        UPDATE email_outbox SET status = 'pending', attempts = 0, next_attempt_at = now(), failed_at = NULL
        WHERE id = ${id}::uuid AND status = 'failed'
        RETURNING id`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie))

    /**
     * The addresses of an operator's team, for the team's emails: every member of the operator
     * (owner, admin and member roles) unless `roles` says which.
     */
    const teamAddresses = Effect.fn("Outbox.teamAddresses")((
      operatorId: string,
      roles: ReadonlyArray<"owner" | "admin" | "member"> = ["owner", "admin", "member"]
    ) =>
      sql<{ email: string }>`
        SELECT u.email FROM memberships m JOIN users u ON u.id = m.user_id
        WHERE m.operator_id = ${operatorId} AND m.role IN ${sql.in(roles)}
        ORDER BY u.email`.pipe(
        Effect.map((rows) => rows.map((r) => r.email)),
        Effect.orDie
      ))

    return { enqueue, sendDue, flush, deliverNow, list, find, retry, teamAddresses, transport: mailer.kind } as const
  })
}) {}
