/**
 * Sales fixtures, inserted directly (the ledger refresh and the rates job fill these tables for
 * real): other-channel ledger lines, an account's ledger state, exchange rates; and one run of the
 * rollups, as the job runs it.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { QuickbookKeys } from "../../src/quickbook/terminals/QuickbookKeys.js"
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
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql`UPDATE sales_ledger_lines SET status = ${status}, changed_at = now() WHERE line_id = ${lineId}`.pipe(
        Effect.asVoid,
        Effect.orDie
      )
  )

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

/**
 * Desk sales of `tourId` sold at a desk of `sellerId`, stored as the desk's book step leaves them,
 * through a key of each mode: answers `sell(mode, status, confirmedAt, totalMinor, guests)`.
 */
export const deskSales = (sellerId: string, tourId: string) =>
  Effect.gen(function*() {
    const keys = yield* QuickbookKeys
    const terminal = yield* keys.registerTerminal(sellerId, "Harbour desk", null)
    const live = yield* keys.issueKey({ mode: "live", name: "Live desk", terminals: [terminal.id] })
    const test = yield* keys.issueKey({ mode: "test", name: "Test desk", terminals: [terminal.id] })
    const sql = yield* SqlClient.SqlClient
    return (
      mode: "live" | "test",
      status: "confirmed" | "failed",
      confirmedAt: Date,
      totalMinor: number,
      guests = 2
    ) => {
      const reference = `SVC-${randomUUID().replaceAll("-", "").slice(0, 10).toUpperCase()}`
      return sql`
        INSERT INTO quickbook_sales (reference, terminal_id, key_id, selling_operator_id, tour_id, merchant_id, product_id,
          start_date, start_time, start_time_id, guests, total_minor, vat_minor, currency, cart_line, status, valid_until,
          customer, language, booking_code, confirmed_at, failed_at)
        VALUES (${reference}, ${terminal.id}, ${
        mode === "live" ? live.id : test.id
      }, ${sellerId}, ${tourId}, 'm-1', '1',
          '2026-12-01', '10:00', '1', ${
        JSON.stringify([{ type: "adult", count: guests, unitMinor: 0, categoryId: "1" }])
      },
          ${totalMinor}, 0, 'NOK', '{}', ${status}, ${confirmedAt}, '{"firstName":"Kari"}', 'en',
          ${status === "confirmed" ? `BKN-${reference}` : null}, ${status === "confirmed" ? confirmedAt : null},
          ${status === "failed" ? confirmedAt : null})`.pipe(Effect.as(reference), Effect.orDie)
    }
  }).pipe(Effect.provide(QuickbookKeys.Default), Effect.orDie)
