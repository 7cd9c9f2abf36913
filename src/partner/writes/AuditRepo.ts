/**
 * The SQL of the write audit log (Audit; `write_audit`), typed with SqlSchema and the row schema
 * below; a database error or a row that does not decode is a defect here, once.
 *
 * `append` runs on every write, the check-in measured by `npm run bench` among them: a plain
 * statement without a span of its own (`repoEdge.untraced`: Audit.record's and the driver's cover
 * it); see IdempotencyStoreRepo for the measurement.
 */
import { SqlClient, SqlSchema, type Statement } from "@effect/sql"
import { Effect, Schema } from "effect"
import { repoEdge } from "../../db/repoEdge.js"
import { type AuditOutcome, WRITE_ACTIONS, type WriteAction } from "./rules.js"

const Action = Schema.Literal(...WRITE_ACTIONS)
const Outcome = Schema.Literal("done", "noop", "replayed", "refused", "failed")

export const AuditRow = Schema.Struct({
  id: Schema.Number,
  at: Schema.DateFromSelf,
  key_id: Schema.String,
  operator_id: Schema.NullOr(Schema.String),
  action: Action,
  target_id: Schema.String,
  request_id: Schema.String,
  idempotency_key: Schema.NullOr(Schema.String),
  outcome: Outcome,
  status: Schema.Number,
  reason: Schema.NullOr(Schema.String),
  detail: Schema.NullOr(Schema.String),
  channel: Schema.Literal("api", "mcp"),
  client_name: Schema.NullOr(Schema.String),
  person_email: Schema.NullOr(Schema.String)
})
export type AuditRow = typeof AuditRow.Type

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
  /** The assistant channel's caller (absent: the REST API). */
  readonly assistant?: AuditAssistant | undefined
}

/** Who made a write through the assistant-facing MCP server (src/assistant/connection.ts). */
export interface AuditAssistant {
  readonly clientId: string
  readonly clientName: string
  readonly personId: string
  readonly personEmail: string
}

/**
 * The statement that appends `e` when `when` holds: `append` below, and the write's final statement
 * that stores its answer and audits it in one round trip (IdempotencyStoreRepo `complete`).
 */
export const auditInsert = (sql: SqlClient.SqlClient, e: AuditEntry, when: Statement.Fragment) =>
  sql`
    INSERT INTO write_audit (
      key_id, operator_id, action, target_id, request_id, idempotency_key, outcome, status, reason, detail,
      channel, client_id, client_name, person_id, person_email)
    SELECT
      ${e.keyId}::text, ${e.operatorId}::uuid, ${e.action}::text, ${e.targetId}::text, ${e.requestId}::text,
      ${e.idempotencyKey}::text, ${e.outcome}::text, ${e.status}::int, ${e.reason}::text, ${e.detail}::text,
      ${e.assistant ? "mcp" : "api"}::text, ${e.assistant?.clientId ?? null}::text,
      ${e.assistant?.clientName ?? null}::text, ${e.assistant?.personId ?? null}::text,
      ${e.assistant?.personEmail ?? null}::text
    WHERE ${when}`

export class AuditRepo extends Effect.Service<AuditRepo>()("Partner/AuditRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Appends one entry (inside the caller's transaction when there is one; on every write: see above). */
    const append = (e: AuditEntry) => Effect.asVoid(auditInsert(sql, e, sql`true`))

    /** Newest first, at most `limit`, of a key or an operator (an operator id that is a uuid). */
    const list = SqlSchema.findAll({
      Request: Schema.Struct({
        keyId: Schema.UndefinedOr(Schema.String),
        operatorId: Schema.UndefinedOr(Schema.String),
        limit: Schema.Number
      }),
      Result: AuditRow,
      execute: (f) => {
        const clauses = []
        if (f.keyId !== undefined) clauses.push(sql`key_id = ${f.keyId}`)
        if (f.operatorId !== undefined) clauses.push(sql`operator_id = ${f.operatorId}::uuid`)
        return sql`
            SELECT id, at, key_id, operator_id, action, target_id, request_id, idempotency_key, outcome, status, reason, detail,
              channel, client_name, person_email
            FROM write_audit
            ${clauses.length > 0 ? sql`WHERE ${sql.and(clauses)}` : sql``}
            ORDER BY id DESC
            LIMIT ${f.limit}`
      }
    })

    return { ...repoEdge("AuditRepo", { list }), ...repoEdge.untraced({ append }) }
  })
}) {}
