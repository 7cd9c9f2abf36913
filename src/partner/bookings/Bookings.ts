/**
 * Reads of the service's own bookings for the operators a request acts for.
 *
 * The list is newest first by (created_at, id) with keyset paging. Each operator's newest rows
 * come from its own index range (one LATERAL scan per operator), so a key over several operators
 * costs a few short index scans, never a sort over everything it can see.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import {
  apiStatusOf,
  type BookingDetail,
  type BookingStatus,
  type BookingSummary,
  STORED_STATUSES
} from "./booking.js"
import type { CursorPosition } from "../../http/cursor.js"
import { toIso, toIsoOrNull } from "../../domain/dates.js"
import { notYours } from "../../domain/errors.js"

export interface BookingFilters {
  readonly dateFrom?: string | undefined
  readonly dateTo?: string | undefined
  readonly updatedSince?: string | undefined
  readonly status?: BookingStatus | undefined
}

export interface ListRequest extends BookingFilters {
  readonly operatorIds: ReadonlyArray<string>
  readonly limit: number
  readonly after?: CursorPosition | undefined
  readonly includeContact: boolean
}

export interface BookingRow {
  readonly id: string
  readonly confirmation_code: string
  readonly status: string
  readonly operator_id: string
  readonly operator_name: string
  readonly tour_id: string | null
  readonly tour_name: string | null
  readonly experience_date: string | null
  readonly start_time: string | null
  readonly timezone: string
  readonly participants: number | null
  readonly amount_minor: number
  readonly currency: string
  readonly channel: string | null
  readonly guest_name: string | null
  readonly guest_email: string | null
  readonly guest_phone: string | null
  readonly booked_at: Date | null
  readonly created_at: Date
  readonly updated_at: Date | null
  readonly created_micros: string
}

export interface BookingDetailRow extends BookingRow {
  readonly provider_reference: string | null
  readonly payment_strategy: "pay_now" | "pay_later"
  readonly pay_later_status: string | null
  readonly pay_later_amount_minor: number | null
  readonly pay_later_currency: string | null
  readonly pay_later_charge_at: Date | null
  readonly pay_later_paid_at: Date | null
  readonly commission_amount_minor: number | null
  readonly commission_rate_percent: number | null
  readonly commission_currency: string | null
  readonly commission_status: string | null
}

/** Statuses the API shows. Kept literal in SQL so the partial indexes apply. */
const LISTED = "('RESERVED', 'CONFIRMED', 'CANCELLED', 'REFUNDED')"

const SUMMARY_COLUMNS = `b.id, b.confirmation_code, b.status, b.operator_id, b.tour_id, b.tour_name,
  b.experience_date, b.start_time, b.timezone, b.participants, b.amount_minor, b.currency, b.channel,
  b.guest_name, b.guest_email, b.guest_phone, b.booked_at, b.created_at, b.updated_at,
  (extract(epoch FROM b.created_at) * 1000000)::bigint::text AS created_micros`

const DETAIL_COLUMNS = `${SUMMARY_COLUMNS}, b.provider_reference, b.payment_strategy,
  b.pay_later_status, b.pay_later_amount_minor, b.pay_later_currency, b.pay_later_charge_at, b.pay_later_paid_at,
  b.commission_amount_minor, b.commission_rate_percent, b.commission_currency, b.commission_status`

/** Microseconds since the epoch as an exact ISO timestamp PostgreSQL reads back losslessly. */
export const microsToIso = (micros: string) => {
  const value = BigInt(micros)
  const iso = new Date(Number(value / 1000n)).toISOString()
  return iso.replace("Z", String(value % 1000n).padStart(3, "0") + "Z")
}

/** A booking row as the API shows it (pure: the benchmark's floor maps its rows with it too). */
export const toSummary = (row: BookingRow, includeContact: boolean): BookingSummary => ({
  id: row.id,
  confirmation_code: row.confirmation_code,
  status: apiStatusOf(row.status),
  partner: { id: row.operator_id, name: row.operator_name },
  tour: { id: row.tour_id, name: row.tour_name },
  experience_date: row.experience_date,
  start_time: row.start_time,
  timezone: row.timezone,
  participants: row.participants,
  amount_minor: row.amount_minor,
  currency: row.currency,
  channel: row.channel,
  guest: includeContact
    ? { name: row.guest_name, email: row.guest_email, phone: row.guest_phone }
    : { name: row.guest_name },
  booked_at: toIsoOrNull(row.booked_at),
  created_at: toIso(row.created_at),
  updated_at: toIsoOrNull(row.updated_at)
})

export const toDetail = (row: BookingDetailRow, includeContact: boolean): BookingDetail => ({
  ...toSummary(row, includeContact),
  provider_reference: row.provider_reference,
  payment: {
    strategy: row.payment_strategy,
    pay_later: row.payment_strategy === "pay_later" && row.pay_later_status !== null
      ? {
        status: row.pay_later_status,
        amount_minor: row.pay_later_amount_minor ?? 0,
        currency: row.pay_later_currency,
        charge_at: toIsoOrNull(row.pay_later_charge_at),
        paid_at: toIsoOrNull(row.pay_later_paid_at)
      }
      : null
  },
  commission: row.commission_amount_minor === null ? null : {
    amount_minor: row.commission_amount_minor,
    rate_percent: row.commission_rate_percent,
    currency: row.commission_currency,
    status: row.commission_status
  }
})

export interface BookingListPage {
  readonly rows: ReadonlyArray<BookingSummary>
  /** Position of the last row when more rows follow. */
  readonly next: CursorPosition | undefined
}

export class Bookings extends Effect.Service<Bookings>()("Partner/Bookings", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const filterClauses = (r: ListRequest) => {
      const clauses = [sql.literal(`b.status IN ${LISTED}`)]
      if (r.status) clauses.push(sql`b.status IN ${sql.in(STORED_STATUSES[r.status])}`)
      if (r.dateFrom) clauses.push(sql`b.experience_date >= ${r.dateFrom}::date`)
      if (r.dateTo) clauses.push(sql`b.experience_date <= ${r.dateTo}::date`)
      if (r.updatedSince) clauses.push(sql`coalesce(b.updated_at, b.created_at) >= ${r.updatedSince}::timestamptz`)
      if (r.after) {
        clauses.push(sql`(b.created_at, b.id) < (${microsToIso(r.after.createdMicros)}::timestamptz, ${r.after.id}::uuid)`)
      }
      return sql.and(clauses)
    }

    const list = Effect.fn("Bookings.list")(function*(r: ListRequest) {
      const take = r.limit + 1
      const rows = yield* sql<BookingRow>`
        SELECT b.*, o.name AS operator_name
        FROM unnest(${toPgArray(r.operatorIds)}::uuid[]) AS op(id)
        CROSS JOIN LATERAL (
          SELECT ${sql.literal(SUMMARY_COLUMNS)}
          FROM bookings b
          WHERE b.operator_id = op.id AND ${filterClauses(r)}
          ORDER BY b.created_at DESC, b.id DESC
          LIMIT ${take}
        ) b
        JOIN operators o ON o.id = b.operator_id
        ORDER BY b.created_at DESC, b.id DESC
        LIMIT ${take}`.pipe(Effect.orDie)
      const page = rows.slice(0, r.limit)
      const last = page[page.length - 1]
      return {
        rows: page.map((row) => toSummary(row, r.includeContact)),
        next: rows.length > r.limit && last ? { createdMicros: last.created_micros, id: last.id } : undefined
      } satisfies BookingListPage
    })

    const get = Effect.fn("Bookings.get")((id: string, operatorIds: ReadonlyArray<string>, includeContact: boolean) =>
      sql<BookingDetailRow>`
        SELECT ${sql.literal(DETAIL_COLUMNS)}, o.name AS operator_name
        FROM bookings b JOIN operators o ON o.id = b.operator_id
        WHERE b.id = ${id}::uuid AND b.operator_id = ANY(${toPgArray(operatorIds)}::uuid[])
          AND ${sql.literal(`b.status IN ${LISTED}`)}`.pipe(
        Effect.orDie,
        Effect.flatMap(([row]) => (row ? Effect.succeed(toDetail(row, includeContact)) : Effect.fail(notYours("booking"))))
      ))

    return { list, get } as const
  })
}) {}

/** A PostgreSQL array literal for a list of UUIDs (validated upstream, so no quoting needed). */
export const toPgArray = (ids: ReadonlyArray<string>) => `{${ids.join(",")}}`
