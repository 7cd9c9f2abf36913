/**
 * The bookkeeping of a desk payment's money return (QuickbookMoneyReturn.ts; `quickbook_payments`'
 * refund columns, migration 0017): each attempt counted, each provider answer recorded against the
 * attempt it answers (`refund_seq`: an answer about an older attempt changes nothing), the next
 * attempt with its own idempotency reference. Typed with SqlSchema; infrastructure errors are
 * defects at this edge, once (src/db/repoEdge.ts).
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { moves, repoEdge } from "../../db/repoEdge.js"
import { PaymentKey } from "./payment.js"

const Text = Schema.String
const NullText = Schema.NullOr(Schema.String)
/** A money return still open with its attempt `seq`. */
const Open = Schema.Struct({ ...PaymentKey.fields, seq: Schema.Number })

export class QuickbookMoneyReturnRepo extends Effect.Service<QuickbookMoneyReturnRepo>()("Quickbook/MoneyReturnRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const whereKey = (key: PaymentKey) => sql`provider = ${key.provider} AND payment_id = ${key.paymentId}`
    const whereOpen = (r: typeof Open.Encoded) =>
      sql`${
        whereKey(r)
      } AND state = 'refunding' AND refund_state IN ('requested', 'settling') AND refund_seq = ${r.seq}`
    const retryIn = (seconds: number) => sql`now() + make_interval(secs => ${seconds})`
    const clip = (text: string | null) => (text === null ? null : text.slice(0, 1000))

    const countReturnAttempt = SqlSchema.void({
      Request: PaymentKey,
      execute: (key) => sql`UPDATE quickbook_payments SET refund_attempts = refund_attempts + 1 WHERE ${whereKey(key)}`
    })

    const returnCompleted = SqlSchema.void({
      Request: Schema.Struct({ ...Open.fields, refundedMinor: Schema.Number, refundOrderId: NullText }),
      execute: (r) =>
        sql`UPDATE quickbook_payments SET state = 'refunded', refund_state = 'completed', refunded_minor = refunded_minor + ${r.refundedMinor},
          refund_order_id = coalesce(${r.refundOrderId}, refund_order_id), last_error = NULL, lease_until = NULL, updated_at = now()
        WHERE ${whereOpen(r)}`
    })

    const returnSettling = SqlSchema.void({
      Request: Schema.Struct({ ...Open.fields, retryInSeconds: Schema.Number, refundOrderId: NullText }),
      execute: (r) =>
        sql`UPDATE quickbook_payments SET refund_state = 'settling', lease_until = ${retryIn(r.retryInSeconds)},
          refund_order_id = coalesce(${r.refundOrderId}, refund_order_id), updated_at = now()
        WHERE ${whereOpen(r)}`
    })

    /** No definite answer: asked again later; `alerted` marks an answer that did not decode. True when still open. */
    const returnUnanswered = moves(
      Schema.Struct({ ...Open.fields, retryInSeconds: Schema.Number, why: Text, alerted: Schema.Boolean }),
      (r) =>
        sql`UPDATE quickbook_payments SET lease_until = ${retryIn(r.retryInSeconds)}, last_error = ${clip(r.why)},
          alerted_at = ${r.alerted ? sql`coalesce(alerted_at, now())` : sql`alerted_at`}, updated_at = now()
        WHERE ${whereOpen(r)} RETURNING provider`
    )

    /** The provider refused the return: left to a person (alerted); true when this call recorded it. */
    const returnFailed = moves(
      Schema.Struct({ ...Open.fields, why: Text }),
      (r) =>
        sql`UPDATE quickbook_payments SET refund_state = 'failed', lease_until = NULL, last_error = ${clip(r.why)},
        alerted_at = coalesce(alerted_at, now()), updated_at = now()
      WHERE ${whereOpen(r)} RETURNING provider`
    )

    /** The next attempt: a refund of what is still owed with its own reference, after `refundedMinor` came back. */
    const nextReturn = SqlSchema.void({
      Request: Schema.Struct({ ...Open.fields, reference: Text, refundedMinor: Schema.Number, lastError: NullText }),
      execute: (r) =>
        sql`UPDATE quickbook_payments SET refund_method = 'refund', refund_seq = ${
          r.seq + 1
        }, refund_reference = ${r.reference},
          refund_state = 'requested', refund_order_id = NULL, refunded_minor = refunded_minor + ${r.refundedMinor},
          last_error = ${clip(r.lastError)}, updated_at = now()
        WHERE ${whereOpen(r)}`
    })

    return repoEdge("QuickbookMoneyReturnRepo", {
      countReturnAttempt,
      returnCompleted,
      returnSettling,
      returnUnanswered,
      returnFailed,
      nextReturn
    })
  })
}) {}
