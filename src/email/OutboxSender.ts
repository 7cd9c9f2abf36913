/**
 * The outbox's sender (docs/email.md): `sendDue`, run by the outbox job every few seconds on one
 * instance (src/jobs/outboxSender.ts) and by `mail flush`, claims due messages in small batches
 * (`FOR UPDATE SKIP LOCKED`, then a lease in the row itself, committed at once), hands each to the
 * Mailer and marks it sent right after, in one statement. A failed attempt is retried with
 * exponential backoff and jitter; a permanent refusal, or running out of attempts, marks the
 * message failed and logs an error. Several senders may run at once: each message goes to one.
 *
 * At most once is impossible over SMTP: if the process dies after the server accepted a message
 * and before the "sent" mark commits, the claim expires and the message goes out again, with the
 * same Message-ID. The window is one UPDATE long.
 */
import { Cause, Effect, Either, Option, Random } from "effect"
import { randomUUID } from "node:crypto"
import { annotateSpan } from "../observability/spanFn.js"
import { linksTo } from "../observability/traceContext.js"
import { type Delivered, Mailer, type MailError, MailUnavailable, type OutgoingMessage } from "../ports/Mailer.js"
import { MailConfig } from "./config.js"
import { type ClaimedRow, OutboxSenderRepo } from "./OutboxSenderRepo.js"
import { retryDelayMillis } from "./rules.js"

export interface SendSummary {
  /** Messages this run claimed (including claims abandoned by a sender that died). */
  readonly claimed: number
  readonly sent: number
  /** Failed attempts that will be tried again. */
  readonly retried: number
  /** Given up: refused for good, or out of attempts. */
  readonly failed: number
}

const EMPTY: SendSummary = { claimed: 0, sent: 0, retried: 0, failed: 0 }

const add = (a: SendSummary, b: SendSummary): SendSummary => ({
  claimed: a.claimed + b.claimed,
  sent: a.sent + b.sent,
  retried: a.retried + b.retried,
  failed: a.failed + b.failed
})

type Outcome = "sent" | "retried" | "failed"

const describe = (e: MailError) => `${e._tag} (${e.reason}): ${e.detail}`.slice(0, 2000)

export class OutboxSender extends Effect.Service<OutboxSender>()("Email/OutboxSender", {
  effect: Effect.gen(function*() {
    const repo = yield* OutboxSenderRepo
    const mailer = yield* Mailer
    const config = yield* MailConfig
    const policy = { baseMillis: config.retryBaseMs, maxMillis: config.retryMaxMs }
    const batchSize = Math.max(1, config.batchSize)
    const concurrency = Math.max(1, config.concurrency)
    // A claim lasts as long as the slowest possible batch, with room to spare: a sender that is
    // still working never loses its messages to another one.
    const leaseMillis = Math.ceil(batchSize / concurrency) * mailer.maxSendMillis + 30_000

    const finish = (row: ClaimedRow, token: string, result: Either.Either<Delivered, MailError>) =>
      Effect.gen(function*() {
        const annotations = { outbox_id: row.id, dedupe_key: row.dedupe_key, attempt: row.attempts }
        if (Either.isRight(result)) {
          const { rejected, response } = result.right
          const updated = yield* repo.markSent({
            id: row.id,
            token,
            response,
            lastError: rejected.length > 0 ? `refused recipients: ${rejected.join(", ")}` : null
          })
          if (Option.isNone(updated)) {
            yield* Effect.logWarning(
              `email ${row.dedupe_key} sent, but its claim had expired: another sender may send it again`
            )
          }
          if (rejected.length > 0) {
            yield* Effect.logWarning(`email ${row.dedupe_key} sent, but the server refused ${rejected.join(", ")}`)
          }
          return "sent" as Outcome
        }
        const error = result.left
        const last = row.attempts >= config.maxAttempts
        if (error._tag === "MailRejected" || last) {
          yield* repo.markFailed({ id: row.id, token, lastError: describe(error) })
          yield* Effect.logError(
            error._tag === "MailRejected"
              ? `email ${row.dedupe_key} refused for good; not retried: ${describe(error)}`
              : `email ${row.dedupe_key} given up after ${row.attempts} attempts: ${describe(error)}`
          ).pipe(Effect.annotateLogs({ ...annotations, alert: "email_failed" }))
          return "failed" as Outcome
        }
        const delay = retryDelayMillis(row.attempts, policy, yield* Random.next)
        yield* repo.scheduleRetry({ id: row.id, token, delaySeconds: delay / 1000, lastError: describe(error) })
        yield* Effect.logWarning(
          `email ${row.dedupe_key}: attempt ${row.attempts} failed, next in ${delay} ms: ${describe(error)}`
        )
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
    // Its span links to the trace that enqueued the message (the request's), kept in the row.
    const deliver = (row: ClaimedRow, token: string) =>
      Effect.gen(function*() {
        yield* annotateSpan({ "outbox.id": row.id, "outbox.attempt": row.attempts })
        const result = yield* mailer.send(toMessage(row)).pipe(
          Effect.either,
          // A defect in a transport is one more failed attempt, not a dead sender.
          Effect.catchAllDefect((defect) =>
            Effect.succeed(
              Either.left(new MailUnavailable({ reason: "other", detail: Cause.pretty(Cause.die(defect)) }))
            )
          )
        )
        return yield* finish(row, token, result)
      }).pipe(
        Effect.uninterruptible,
        Effect.withSpan("OutboxSender.deliver", { links: linksTo(row.traceparent) })
      )

    /** Sends what was claimed; gives back (on interruption) the claims it had not started. */
    const sendClaimed = (rows: ReadonlyArray<ClaimedRow>, token: string) => {
      const started = new Set<string>()
      return Effect.forEach(rows, (row) =>
        Effect.suspend(() => {
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
            return unstarted.length === 0 ? Effect.void : repo.giveBack({ token, ids: unstarted }).pipe(Effect.ignore)
          })
        )
    }

    /** A claim whose sender died during the last allowed attempt: nothing left to try. */
    const failAbandonedLastAttempts = repo.failAbandonedLastAttempts(config.maxAttempts).pipe(
      Effect.tap((rows) =>
        Effect.forEach(
          rows,
          (r) =>
            Effect.logError(`email ${r.dedupe_key} given up: its sender stopped during the last attempt`)
              .pipe(Effect.annotateLogs({ outbox_id: r.id, alert: "email_failed" }))
        )
      )
    )

    const claim = { leaseSeconds: leaseMillis / 1000, maxAttempts: config.maxAttempts }

    /**
     * One batch: claims up to `limit` due messages (pending and due, or claimed by a sender whose
     * lease ran out), sends them and records each outcome. Several senders may run at once: each
     * message goes to one of them.
     */
    const sendDue = Effect.fn("OutboxSender.sendDue")(function*(options: { readonly limit?: number } = {}) {
      yield* failAbandonedLastAttempts
      const token = randomUUID()
      const rows = yield* repo.claimDue({ ...claim, token, limit: options.limit ?? batchSize })
      if (rows.length === 0) return EMPTY
      return yield* sendClaimed(rows, token)
    })

    /** Sends every message due now, batch after batch (at most `maxBatches`). */
    const flush = Effect.fn("OutboxSender.flush")(function*(options: { readonly maxBatches?: number } = {}) {
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
    const deliverNow = Effect.fn("OutboxSender.deliverNow")(function*(id: string) {
      yield* annotateSpan({ "outbox.id": id })
      const token = randomUUID()
      const rows = yield* repo.claimOne({ ...claim, token, id, skipLocked: true })
      if (rows.length > 0) yield* sendClaimed(rows, token)
      const row = yield* repo.statusOf(id)
      if (Option.isNone(row)) return yield* Effect.dieMessage(`no outbox message ${id}`)
      return row.value.status
    })

    /**
     * The outcome of one attempt at a message, for a caller that must say whether it went out
     * (several requests may share one email): this call's own attempt now (as `deliverNow`), or the
     * attempt another sender has under way, waited for until its outcome is recorded, however long
     * it takes (a claim being made is waited for on its row lock; an attempt in progress is looked
     * at every 50 ms); only a sender whose lease ran out (it died) is taken over, with an attempt of
     * this call. Answers `sent`, `failed`, or `pending` (the attempt failed, a retry is scheduled);
     * never `sending`. Never sends a message that is sent or being sent, and never retries at once
     * an attempt another sender has just made.
     */
    const deliverOrAwait = Effect.fn("OutboxSender.deliverOrAwait")(function*(id: string) {
      yield* annotateSpan({ "outbox.id": id })
      for (;;) {
        const token = randomUUID()
        const rows = yield* repo.claimOne({ ...claim, token, id, skipLocked: false })
        if (rows.length > 0) yield* sendClaimed(rows, token)
        for (;;) {
          const found = yield* repo.statusOf(id)
          if (Option.isNone(found)) return yield* Effect.dieMessage(`no outbox message ${id}`)
          const row = found.value
          if (row.status !== "sending") return row.status
          if (row.lease_over) {
            // Its sender died: taken over above, or failed when that was its last attempt.
            if (row.attempts >= config.maxAttempts) yield* failAbandonedLastAttempts
            break
          }
          yield* Effect.sleep("50 millis")
        }
      }
    })

    return { sendDue, flush, deliverNow, deliverOrAwait } as const
  }),
  dependencies: [OutboxSenderRepo.Default]
}) {}
