/**
 * Sales fixtures, inserted directly (the ledger refresh and the rates job fill these tables for
 * real): other-channel ledger lines, an account's ledger state, exchange rates; and one run of the
 * rollups, as the job runs it.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { SalesRollups } from "../../src/sales/SalesRollups.js"

export interface LedgerLineInput {
  readonly accountId: string
  readonly operatorId: string
  readonly createdAt: Date
  readonly totalMinor: number
  readonly currency?: string
  readonly participants?: number
  readonly status?: "CONFIRMED" | "RESERVED" | "CANCELLED"
  readonly channel?: { class: string | null; title: string | null }
  readonly bookingId?: string
  readonly externalReference?: string | null
}

/** One ledger line; answers its line id. */
export const insertLedgerLine = (l: LedgerLineInput) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const lineId = randomUUID()
    return sql`
      INSERT INTO sales_ledger_lines (account_id, line_id, booking_id, external_reference, operator_id, product_id,
        status, channel_class, channel_title, participants, total_minor, currency, created_at, synced_at)
      VALUES (${l.accountId}, ${lineId}, ${l.bookingId ?? randomUUID()}, ${l.externalReference ?? null},
        ${l.operatorId}, 'p-1', ${l.status ?? "CONFIRMED"}, ${l.channel?.class ?? "ota"},
        ${l.channel === undefined ? "Viator" : l.channel.title}, ${l.participants ?? 2}, ${l.totalMinor},
        ${l.currency ?? "NOK"}, ${l.createdAt}, now())`.pipe(Effect.as(lineId), Effect.orDie)
  })

/** A ledger line changed as a refresh that found it changed would (its `changed_at` moves). */
export const setLedgerLineStatus = (lineId: string, status: "CONFIRMED" | "CANCELLED") =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE sales_ledger_lines SET status = ${status}, changed_at = now() WHERE line_id = ${lineId}`.pipe(
      Effect.asVoid,
      Effect.orDie
    ))

/** The account's ledger state: complete from `coveredFrom` up to `coveredUntil` (default: now). */
export const setLedgerState = (
  accountId: string,
  s: { coveredFrom: string | null; coveredUntil?: Date | null; outcome?: "ok" | "failed" }
) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`
      INSERT INTO sales_ledger_accounts (account_id, covered_from, covered_until, last_attempt_at, last_outcome, updated_at)
      VALUES (${accountId}, ${s.coveredFrom}, ${s.coveredUntil === undefined ? new Date() : s.coveredUntil}, now(),
        ${s.outcome ?? "ok"}, now())
      ON CONFLICT (account_id) DO UPDATE SET covered_from = excluded.covered_from,
        covered_until = excluded.covered_until, last_attempt_at = excluded.last_attempt_at,
        last_outcome = excluded.last_outcome, updated_at = now()`.pipe(Effect.asVoid, Effect.orDie))

/** NOK for one unit of `currency` on the banking day `day`. */
export const insertRate = (currency: string, day: string, nokPerUnit: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`
      INSERT INTO exchange_rates (currency, day, nok_per_unit, source, fetched_at)
      VALUES (${currency}, ${day}, ${nokPerUnit}, 'norges_bank', now())
      ON CONFLICT (currency, day) DO UPDATE SET nok_per_unit = excluded.nok_per_unit`.pipe(Effect.asVoid, Effect.orDie))

/** One run of both rollups (what the sales-rollups job runs). */
export const runRollups = Effect.flatMap(SalesRollups, (r) => r.refresh()).pipe(Effect.provide(SalesRollups.Default))
