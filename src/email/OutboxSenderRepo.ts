/**
 * The SQL of the outbox's sender (OutboxSender): claims of due messages, with a lease in the row
 * itself, and each attempt's outcome, fenced on the claim token so that a sender whose claim
 * expired changes nothing. Typed with SqlSchema; a database error or a row that does not decode is
 * a defect at its edge (repoEdge: a span per method), once.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { repoEdge } from "../db/repoEdge.js"
import { OutboxStatus } from "./OutboxRepo.js"

/** A message a sender claimed: what the Mailer needs, and its attempt number. */
export const ClaimedRow = Schema.Struct({
  id: Schema.String,
  dedupe_key: Schema.String,
  message_id: Schema.String,
  from_address: Schema.String,
  to_addresses: Schema.Array(Schema.String),
  reply_to: Schema.NullOr(Schema.String),
  subject: Schema.String,
  text_body: Schema.String,
  html_body: Schema.NullOr(Schema.String),
  attempts: Schema.Number,
  /** The enqueuing span's traceparent: the send links to it. */
  traceparent: Schema.NullOr(Schema.String)
})
export type ClaimedRow = typeof ClaimedRow.Type

/** The claim of one sender: its token, and until when its lease holds (seconds from now). */
const Claim = Schema.Struct({ token: Schema.String, leaseSeconds: Schema.Number, maxAttempts: Schema.Number })

/** How a claimed message's attempt is settled, fenced on the claim token. */
const Settle = Schema.Struct({ id: Schema.String, token: Schema.String, lastError: Schema.NullOr(Schema.String) })

const CLAIMED_COLUMNS =
  "o.id, o.dedupe_key, o.message_id, o.from_address, o.to_addresses, o.reply_to, o.subject, o.text_body, o.html_body, o.attempts, o.traceparent"

export class OutboxSenderRepo extends Effect.Service<OutboxSenderRepo>()("Email/OutboxSenderRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** The claim itself, of the messages a `chosen` CTE picked: `sending` under this token and lease, one attempt more. */
    const claimChosen = (c: typeof Claim.Type) =>
      sql`
        UPDATE email_outbox o SET status = 'sending', claim_token = ${c.token}::uuid,
          locked_until = now() + make_interval(secs => ${c.leaseSeconds}), attempts = o.attempts + 1
        FROM chosen WHERE o.id = chosen.id
        RETURNING ${sql.literal(CLAIMED_COLUMNS)}`

    /** Marks a delivered message sent; None when its claim had expired (nothing changed). */
    const markSent = SqlSchema.findOne({
      Request: Schema.Struct({ ...Settle.fields, response: Schema.String }),
      Result: Schema.Struct({ id: Schema.String }),
      execute: (s) =>
        sql`
          UPDATE email_outbox SET status = 'sent', sent_at = now(), claim_token = NULL, locked_until = NULL,
            transport_response = ${s.response}, last_error = ${s.lastError}
          WHERE id = ${s.id} AND claim_token = ${s.token}::uuid
          RETURNING id`
    })

    const markFailed = SqlSchema.void({
      Request: Settle,
      execute: (s) =>
        sql`
          UPDATE email_outbox SET status = 'failed', failed_at = now(), claim_token = NULL, locked_until = NULL,
            last_error = ${s.lastError}
          WHERE id = ${s.id} AND claim_token = ${s.token}::uuid`
    })

    /** Back to pending, due again in `delaySeconds`. */
    const scheduleRetry = SqlSchema.void({
      Request: Schema.Struct({ ...Settle.fields, delaySeconds: Schema.Number }),
      execute: (s) =>
        sql`
          UPDATE email_outbox SET status = 'pending', claim_token = NULL, locked_until = NULL,
            next_attempt_at = now() + make_interval(secs => ${s.delaySeconds}), last_error = ${s.lastError}
          WHERE id = ${s.id} AND claim_token = ${s.token}::uuid`
    })

    /** Gives claimed messages back untried (their attempt is not counted). */
    const giveBack = SqlSchema.void({
      Request: Schema.Struct({ token: Schema.String, ids: Schema.Array(Schema.String) }),
      execute: (r) =>
        sql`
          UPDATE email_outbox SET status = 'pending', claim_token = NULL, locked_until = NULL, attempts = attempts - 1
          WHERE claim_token = ${r.token}::uuid AND status = 'sending' AND id IN ${sql.in(r.ids)}`
    })

    /** Fails the claims whose sender died during the last allowed attempt; answers them. */
    const failAbandonedLastAttempts = SqlSchema.findAll({
      Request: Schema.Number,
      Result: Schema.Struct({ id: Schema.String, dedupe_key: Schema.String }),
      execute: (maxAttempts) =>
        sql`
          UPDATE email_outbox SET status = 'failed', failed_at = now(), claim_token = NULL, locked_until = NULL,
            last_error = concat_ws('; ', last_error,
              'the sender stopped during the last attempt (claim expired): it may or may not have been sent')
          WHERE status = 'sending' AND locked_until <= now() AND attempts >= ${maxAttempts}
          RETURNING id, dedupe_key`
    })

    /**
     * Claims up to `limit` due messages (pending and due, or claimed by a sender whose lease ran
     * out), skipping those another sender is claiming at this moment.
     */
    const claimDue = SqlSchema.findAll({
      Request: Schema.Struct({ ...Claim.fields, limit: Schema.Number }),
      Result: ClaimedRow,
      execute: (c) =>
        sql`
          WITH chosen AS (
            SELECT id FROM email_outbox
            WHERE (status = 'pending' AND next_attempt_at <= now())
               OR (status = 'sending' AND locked_until <= now() AND attempts < ${c.maxAttempts})
            ORDER BY next_attempt_at, id
            LIMIT ${c.limit}
            FOR UPDATE SKIP LOCKED
          )
          ${claimChosen(c)}`
    })

    /**
     * Claims one message whatever its backoff says, unless it is sent, being sent or out of attempts:
     * pending, or `sending` by a sender whose lease ran out. `skipLocked`: a message another sender is
     * claiming at this moment is left to it; otherwise that claim is waited for (it commits at once).
     */
    const claimOne = SqlSchema.findAll({
      Request: Schema.Struct({ ...Claim.fields, id: Schema.String, skipLocked: Schema.Boolean }),
      Result: ClaimedRow,
      execute: (c) =>
        sql`
          WITH chosen AS (
            SELECT id FROM email_outbox
            WHERE id = ${c.id}
              AND (status = 'pending' OR (status = 'sending' AND locked_until <= now()))
              AND attempts < ${c.maxAttempts}
            FOR UPDATE ${sql.literal(c.skipLocked ? "SKIP LOCKED" : "")}
          )
          ${claimChosen(c)}`
    })

    /** A message's status now, its attempts and whether its claim's lease ran out; None when there is no such message. */
    const statusOf = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ status: OutboxStatus, attempts: Schema.Number, lease_over: Schema.Boolean }),
      execute: (id) =>
        sql`SELECT status, attempts, coalesce(locked_until <= now(), true) AS lease_over FROM email_outbox WHERE id = ${id}`
    })

    return repoEdge("OutboxSenderRepo", {
      claimDue,
      claimOne,
      markSent,
      markFailed,
      scheduleRetry,
      giveBack,
      failAbandonedLastAttempts,
      statusOf
    })
  })
}) {}
