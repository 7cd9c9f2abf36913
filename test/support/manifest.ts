/**
 * Check-in calls over HTTP and what they leave behind: the stored check-in, the daily write counter and
 * the audit. Mirror rows to check in come from ./mirror.ts.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { call } from "./http.js"

export interface CheckinCall {
  readonly key?: string | undefined
  /** The header value; null sends none. Default: a fresh UUID. */
  readonly idempotencyKey?: string | null
  readonly baseUrl?: string
  readonly headers?: Record<string, string>
}

export const checkin = (rowId: string, body: unknown, o: CheckinCall = {}) => {
  const idempotencyKey = o.idempotencyKey === undefined ? randomUUID() : o.idempotencyKey
  return call(`/api/v1/manifest/${rowId}/checkin`, {
    method: "POST",
    key: o.key,
    body,
    headers: { ...(idempotencyKey === null ? {} : { "Idempotency-Key": idempotencyKey }), ...o.headers },
    ...(o.baseUrl ? { baseUrl: o.baseUrl } : {})
  })
}

export const checkinState = (rowId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ status: string; present: number | null; updated_at: Date; updated_by_key: string | null }>`
      SELECT status, present, updated_at, updated_by_key FROM manifest_checkins WHERE row_id = ${rowId}`.pipe(
        Effect.map((rows) => rows[0] ?? null),
        Effect.orDie
      )
  )

export const usedToday = (keyId: string, action = "checkins") =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ used: number }>`
      SELECT used FROM daily_write_counters
      WHERE key_id = ${keyId} AND action = ${action} AND day = (now() AT TIME ZONE 'UTC')::date`.pipe(
      Effect.map((rows) => rows[0]?.used ?? 0),
      Effect.orDie
    ))

export const auditOf = (keyId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{
      operator_id: string | null
      action: string
      target_id: string
      request_id: string
      idempotency_key: string | null
      outcome: string
      status: number
      reason: string | null
      detail: string | null
    }>`
      SELECT operator_id, action, target_id, request_id, idempotency_key, outcome, status, reason, detail
      FROM write_audit WHERE key_id = ${keyId} ORDER BY id`.pipe(Effect.orDie))
