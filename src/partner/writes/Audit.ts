/**
 * The audit log of write attempts: who (API key, operator), what (action, target), which request
 * (request id, Idempotency-Key), how it ended (outcome, HTTP status, problem type of a refusal or
 * failure) and when. Append-only; read by the CLI (`audit list`).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { AuditOutcome, WriteAction } from "./rules.js"

export interface AuditEntry {
  readonly keyId: string
  readonly operatorId: string | null
  readonly action: WriteAction
  readonly targetId: string
  readonly requestId: string
  readonly idempotencyKey: string | null
  readonly outcome: AuditOutcome
  readonly status: number
  /** Problem type slug of a refusal or failure (`daily-limit-reached`, `not-found`, ...). */
  readonly reason: string | null
  readonly detail: string | null
}

export interface AuditRow {
  readonly id: number
  readonly at: Date
  readonly key_id: string
  readonly operator_id: string | null
  readonly action: WriteAction
  readonly target_id: string
  readonly request_id: string
  readonly idempotency_key: string | null
  readonly outcome: AuditOutcome
  readonly status: number
  readonly reason: string | null
  readonly detail: string | null
}

export interface AuditFilter {
  readonly keyId?: string | undefined
  readonly operatorId?: string | undefined
  readonly limit?: number | undefined
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export class Audit extends Effect.Service<Audit>()("Partner/Audit", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Appends one entry (inside the caller's transaction when there is one). */
    const record = Effect.fn("Audit.record")(function*(e: AuditEntry) {
      yield* Effect.annotateCurrentSpan({ action: e.action, outcome: e.outcome })
      yield* sql`
        INSERT INTO write_audit (
          key_id, operator_id, action, target_id, request_id, idempotency_key, outcome, status, reason, detail)
        VALUES (
          ${e.keyId}, ${e.operatorId}, ${e.action}, ${e.targetId}, ${e.requestId}, ${e.idempotencyKey},
          ${e.outcome}, ${e.status}, ${e.reason}, ${e.detail})`.pipe(Effect.orDie)
    })

    /** Newest first; `limit` 1 to 1000, default 50. */
    const list = Effect.fn("Audit.list")((f: AuditFilter = {}) => {
      // operator_id is a uuid column: a value that is not one cannot match (and must not reach the cast).
      if (f.operatorId !== undefined && !UUID.test(f.operatorId)) return Effect.succeed([] as ReadonlyArray<AuditRow>)
      const clauses = []
      if (f.keyId !== undefined) clauses.push(sql`key_id = ${f.keyId}`)
      if (f.operatorId !== undefined) clauses.push(sql`operator_id = ${f.operatorId}::uuid`)
      return sql<AuditRow>`
        SELECT id, at, key_id, operator_id, action, target_id, request_id, idempotency_key, outcome, status, reason, detail
        FROM write_audit
        ${clauses.length > 0 ? sql`WHERE ${sql.and(clauses)}` : sql``}
        ORDER BY id DESC
        LIMIT ${Math.min(Math.max(f.limit ?? 50, 1), 1000)}`.pipe(Effect.orDie)
    })

    return { record, list } as const
  })
}) {}
