/** Manifest fixtures inserted directly (the mirror fills these tables in production) and check-in calls. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { call } from "./http.js"

export const insertAccount = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ id: string }>`
    INSERT INTO booking_system_accounts (kind, name, base_url, access_key, secret_key)
    VALUES ('bokun', ${"Test account " + randomUUID().slice(0, 6)}, 'http://127.0.0.1:9', 'access', 'secret')
    RETURNING id`.pipe(Effect.map((rows) => rows[0]!.id), Effect.orDie))

export interface RowInput {
  readonly accountId: string
  readonly operatorId: string
  readonly status?: "CONFIRMED" | "RESERVED" | "CANCELLED"
  readonly participants?: number
  readonly departureDate?: string
}

export const insertRow = (r: RowInput) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ id: string }>`
      INSERT INTO manifest_rows (
        account_id, line_id, booking_id, operator_id, status, product_id, product_title, departure_date,
        start_time, timezone, participants, guest_name)
      VALUES (
        ${r.accountId}, ${randomUUID()}, ${randomUUID().slice(0, 8)}, ${r.operatorId}, ${r.status ?? "CONFIRMED"},
        'p-1', 'Harbour Tour', ${r.departureDate ?? "2026-12-01"}, '10:00', 'Europe/Oslo', ${r.participants ?? 3},
        'Guest Person')
      RETURNING id`.pipe(Effect.map((rows) => rows[0]!.id), Effect.orDie))

/** `count` rows for one operator on a fresh account. */
export const insertRows = (operatorId: string, count: number, extra: Partial<RowInput> = {}) =>
  Effect.flatMap(insertAccount, (accountId) =>
    Effect.forEach(Array.from({ length: count }), () => insertRow({ accountId, operatorId, ...extra })))

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
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ status: string; present: number | null; updated_at: Date; updated_by_key: string | null }>`
      SELECT status, present, updated_at, updated_by_key FROM manifest_checkins WHERE row_id = ${rowId}`.pipe(
      Effect.map((rows) => rows[0] ?? null),
      Effect.orDie
    ))

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
