/**
 * The SQL of the assistant's confirmations (`assistant_confirmations`, migration 0035): made by a
 * first call, claimed by the one second call that carries the write out, its answer kept for a
 * retried second call. A database error or a row that does not decode is a defect here, once.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { repoEdge } from "../../db/repoEdge.js"
import { CONFIRMATION_KEPT_HOURS, CONFIRMATION_LEASE_SECONDS } from "./rules.js"

export const ConfirmationRow = Schema.Struct({
  id: Schema.String,
  connection_id: Schema.String,
  tool: Schema.String,
  arguments_hash: Schema.String,
  target_id: Schema.String,
  state_fingerprint: Schema.String,
  expires_at: Schema.DateFromSelf,
  used_at: Schema.NullOr(Schema.DateFromSelf),
  result_status: Schema.NullOr(Schema.Number),
  result_body: Schema.NullOr(Schema.String)
})
export type ConfirmationRow = typeof ConfirmationRow.Type

export class ConfirmationsRepo extends Effect.Service<ConfirmationsRepo>()("Assistant/ConfirmationsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql`id, connection_id, tool, arguments_hash, target_id, state_fingerprint, expires_at, used_at,
      result_status, result_body`

    const insert = SqlSchema.single({
      Request: Schema.Struct({
        tokenHash: Schema.String,
        connectionId: Schema.String,
        tool: Schema.String,
        argumentsHash: Schema.String,
        targetId: Schema.String,
        stateFingerprint: Schema.String,
        summary: Schema.String,
        expiresAt: Schema.DateFromSelf
      }),
      Result: Schema.Struct({ id: Schema.String }),
      execute: (r) =>
        sql`
          INSERT INTO assistant_confirmations (
            token_hash, connection_id, tool, arguments_hash, target_id, state_fingerprint, summary, expires_at)
          VALUES (${r.tokenHash}, ${r.connectionId}, ${r.tool}, ${r.argumentsHash}, ${r.targetId},
            ${r.stateFingerprint}, ${r.summary}, ${r.expiresAt})
          RETURNING id`
    })

    const byTokenHash = SqlSchema.findOne({
      Request: Schema.String,
      Result: ConfirmationRow,
      execute: (hash) => sql`SELECT ${columns} FROM assistant_confirmations WHERE token_hash = ${hash}`
    })

    const byId = SqlSchema.findOne({
      Request: Schema.String,
      Result: ConfirmationRow,
      execute: (id) => sql`SELECT ${columns} FROM assistant_confirmations WHERE id = ${id}::uuid`
    })

    /**
     * Takes the confirmation for one second call: unused, or held by a call that has not answered
     * within the lease (it died). True when this call has it.
     */
    const claim = SqlSchema.findAll({
      Request: Schema.String,
      Result: Schema.Struct({ id: Schema.String }),
      execute: (id) =>
        sql`
          UPDATE assistant_confirmations SET used_at = now()
          WHERE id = ${id}::uuid AND result_status IS NULL
            AND (used_at IS NULL OR used_at < now() - make_interval(secs => ${CONFIRMATION_LEASE_SECONDS}))
          RETURNING id`
    })

    /** Keeps the write's final answer (a result or a refusal) for a retried second call. */
    const finish = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.String, status: Schema.Number, body: Schema.String }),
      execute: (r) =>
        sql`
          UPDATE assistant_confirmations SET result_status = ${r.status}, result_body = ${r.body}
          WHERE id = ${r.id}::uuid AND result_status IS NULL`
    })

    /** The write ended without a final answer (a limit, an outage): the token may be tried again. */
    const release = SqlSchema.void({
      Request: Schema.String,
      execute: (id) =>
        sql`UPDATE assistant_confirmations SET used_at = NULL WHERE id = ${id}::uuid AND result_status IS NULL`
    })

    /**
     * Deletes confirmations a day past their expiry (a retried second call is replayed from its row
     * until then, as the REST API replays an Idempotency-Key for 24 hours); answers how many.
     */
    const purgeExpired = SqlSchema.single({
      Request: Schema.Void,
      Result: Schema.Struct({ n: Schema.Number }),
      execute: () =>
        sql`
          WITH gone AS (
            DELETE FROM assistant_confirmations WHERE expires_at <= now() - make_interval(hours => ${CONFIRMATION_KEPT_HOURS})
            RETURNING 1)
          SELECT count(*)::int AS n FROM gone`
    })

    return repoEdge("ConfirmationsRepo", {
      purgeExpired: () => Effect.map(purgeExpired(undefined), (row) => row.n),
      insert,
      byTokenHash,
      byId,
      claim: (id: string) => Effect.map(claim(id), (rows) => rows.length > 0),
      finish,
      release
    })
  })
}) {}
