/**
 * The transactional email outbox (docs/email.md).
 *
 * A write that should tell someone about a state change calls `enqueue` inside its own
 * `sql.withTransaction`: the message is rendered there and then and stored in `email_outbox`, so
 * it exists exactly when the state change committed. A dedupe key (`booking:<id>:cancelled:guest`)
 * makes a retried or replayed write enqueue nothing new.
 *
 * Sending (`sendDue`, `flush`, `deliverNow`, `deliverOrAwait`) is the OutboxSender's, handed out here as well; the
 * CLI reads and repairs messages through `list`, `find` and `retry`.
 */
import { Effect, Either, Option } from "effect"
import { randomUUID } from "node:crypto"
import { annotateSpan } from "../observability/spanFn.js"
import { currentTraceparent } from "../observability/traceContext.js"
import { Mailer } from "../ports/Mailer.js"
import { MailConfig } from "./config.js"
import { OutboxRepo, type OutboxStatus } from "./OutboxRepo.js"
import { OutboxSender } from "./OutboxSender.js"
import { formatMailbox, isEmailAddress, type Locale, messageIdFor } from "./rules.js"
import { type EmailContent, renderEmail } from "./templates.js"

export type { OutboxMessage, OutboxStatus } from "./OutboxRepo.js"
export type { SendSummary } from "./OutboxSender.js"

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

export interface OutboxFilter {
  readonly status?: OutboxStatus | undefined
  readonly bookingId?: string | undefined
  readonly limit?: number | undefined
}

export class Outbox extends Effect.Service<Outbox>()("Email/Outbox", {
  effect: Effect.gen(function*() {
    const repo = yield* OutboxRepo
    const sender = yield* OutboxSender
    const mailer = yield* Mailer
    const config = yield* MailConfig
    const from = formatMailbox(config.from)

    /**
     * Stores one message (rendered now) unless its dedupe key exists. Call it inside the
     * transaction of the state change it tells about. Template data that does not match its
     * template is a bug in the caller: a defect, which rolls that transaction back.
     */
    const enqueue = Effect.fn("Outbox.enqueue")(function*(request: EnqueueRequest) {
      yield* annotateSpan({ "outbox.template": request.template, "outbox.dedupe_key": request.dedupeKey })
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
      const stored = yield* repo.insert({
        id,
        dedupeKey: request.dedupeKey,
        template: request.template,
        locale: request.locale,
        data: JSON.stringify(request.data),
        operatorId: request.operatorId ?? null,
        bookingId: request.bookingId ?? null,
        messageId: messageIdFor(id, config.from),
        from,
        to,
        replyTo,
        subject,
        text,
        html,
        notSendable: unusable.length > 0 ? `not sendable: unusable recipient address ${unusable.join(", ")}` : null,
        traceparent: yield* currentTraceparent
      })
      if (Option.isSome(stored)) {
        const row = stored.value
        if (unusable.length > 0) {
          yield* Effect.logWarning(`email ${request.dedupeKey} not sendable: unusable recipient address`)
        }
        return { id: row.id, messageId: row.message_id, created: true, status: row.status } satisfies Enqueued
      }
      const existing = yield* repo.byDedupeKey(request.dedupeKey)
      return {
        id: existing.id,
        messageId: existing.message_id,
        created: false,
        status: existing.status
      } satisfies Enqueued
    })

    // -------------------------------------------------------------------------------------------
    // Reading and repair (CLI)

    const list = Effect.fn("Outbox.list")((filter: OutboxFilter = {}) =>
      repo.list({
        status: filter.status,
        bookingId: filter.bookingId,
        limit: Math.min(Math.max(filter.limit ?? 50, 1), 1000)
      })
    )

    /** One message by id or by dedupe key. */
    const find = Effect.fn("Outbox.find")((idOrKey: string) => Effect.map(repo.find(idOrKey), Option.getOrNull))

    /** Puts a failed message back in the queue with fresh attempts. Answers whether it was failed. */
    const retry = Effect.fn("Outbox.retry")((id: string) => Effect.map(repo.requeueFailed(id), Option.isSome))

    /**
     * The addresses of an operator's team, for the team's emails: every member of the operator
     * (owner, admin and member roles) unless `roles` says which.
     */
    const teamAddresses = Effect.fn("Outbox.teamAddresses")((
      operatorId: string,
      roles: ReadonlyArray<"owner" | "admin" | "member"> = ["owner", "admin", "member"]
    ) => Effect.map(repo.teamAddresses({ operatorId, roles }), (rows) => rows.map((r) => r.email)))

    const { deliverNow, deliverOrAwait, flush, sendDue } = sender
    return {
      enqueue,
      sendDue,
      flush,
      deliverNow,
      deliverOrAwait,
      list,
      find,
      retry,
      teamAddresses,
      transport: mailer.kind
    } as const
  }),
  dependencies: [OutboxRepo.Default, OutboxSender.Default]
}) {}
