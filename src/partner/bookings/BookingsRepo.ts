/**
 * The SQL of the bookings reads (Bookings): the service's own bookings of the operators a request
 * acts for. A database error is a defect here, once.
 *
 * The list is newest first by (created_at, id) with keyset paging. Each operator's newest rows
 * come from its own index range (one LATERAL scan per operator), so a key over several operators
 * costs a few short index scans, never a sort over everything it can see.
 *
 * Hot reads: GET /bookings and GET /bookings/{id} keep plain `sql<Row>` rows, typed but not decoded
 * by a Schema, and these methods have no span of their own (`repoEdge.untraced`: the use case's span
 * and the driver's `sql.execute` cover them). Measured with `npm run bench` (bench/README.md,
 * "Issue 2"): a Schema pass over a 50-row page costs about 0.2 ms of Node CPU per request, and every
 * span a few microseconds, on reads that must stay at 0.7 of the bare floor.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { repoEdge } from "../../db/repoEdge.js"
import { toPgArray } from "../../db/sql.js"
import { type CursorPosition, microsToIso } from "../../http/cursor.js"
import { type BookingStatus, STORED_STATUSES } from "./booking.js"

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

export class BookingsRepo extends Effect.Service<BookingsRepo>()("Partner/BookingsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const filterClauses = (r: ListRequest) => {
      const clauses = [sql.literal(`b.status IN ${LISTED}`)]
      if (r.status) clauses.push(sql`b.status IN ${sql.in(STORED_STATUSES[r.status])}`)
      if (r.dateFrom) clauses.push(sql`b.experience_date >= ${r.dateFrom}::date`)
      if (r.dateTo) clauses.push(sql`b.experience_date <= ${r.dateTo}::date`)
      if (r.updatedSince) clauses.push(sql`coalesce(b.updated_at, b.created_at) >= ${r.updatedSince}::timestamptz`)
      if (r.after) {
        clauses.push(
          sql`(b.created_at, b.id) < (${microsToIso(r.after.createdMicros)}::timestamptz, ${r.after.id}::uuid)`
        )
      }
      return sql.and(clauses)
    }

    /** Up to `take` rows of the list, newest first (a hot read: see above). */
    const list = (r: ListRequest, take: number) =>
      sql<BookingRow>`
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
        LIMIT ${take}`

    /** One listed booking of these operators (a hot read: see above). */
    const findById = (id: string, operatorIds: ReadonlyArray<string>) =>
      Effect.map(
        sql<BookingDetailRow>`
        SELECT ${sql.literal(DETAIL_COLUMNS)}, o.name AS operator_name
        FROM bookings b JOIN operators o ON o.id = b.operator_id
        WHERE b.id = ${id}::uuid AND b.operator_id = ANY(${toPgArray(operatorIds)}::uuid[])
          AND ${sql.literal(`b.status IN ${LISTED}`)}`,
        (rows) => Option.fromNullable(rows[0])
      )

    return repoEdge.untraced({ list, findById })
  })
}) {}
