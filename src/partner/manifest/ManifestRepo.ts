/**
 * The SQL of the daily manifest (Manifest), read from the booking-system mirror (migration 0003) in
 * one statement:
 *
 * - `day`: the time zone of the first operator in view, and the oldest `mirror_days.synced_at` of
 *   the day over the booking-system accounts of the operators in view (null when one of them has
 *   no entry for the day, or when none of them has an account);
 * - joined to it (LEFT JOIN … ON true, so an empty day still answers one row) the day's rows of
 *   those operators from `manifest_rows_by_day`, with the operator's name, the check-in and our
 *   booking's confirmation code.
 *
 * A row of an account shared by several operators is stored once, under one operator, so it is
 * read once. A database error is a defect here, once.
 *
 * A hot read: GET /manifest keeps plain `sql<Row>` rows, typed but not decoded by a Schema, and no
 * span of its own (`repoEdge.untraced`: Manifest.day's and the driver's cover it): a day holds up to
 * 1,000 passengers, and the manifest is measured against a bare floor by `npm run bench`
 * (bench/README.md, "Issue 3").
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { repoEdge } from "../../db/repoEdge.js"
import { toPgArray } from "../../db/sql.js"
import type { CheckInStatus, ManifestRowStatus } from "./schemas.js"

export interface ManifestRequest {
  /** Local departure day YYYY-MM-DD. */
  readonly date: string
  /** Operators in view, the first (by name) giving the manifest's time zone; never empty. */
  readonly operatorIds: ReadonlyArray<string>
  readonly includeContact: boolean
}

export interface ManifestRowRecord {
  readonly day_timezone: string
  readonly day_synced_at: Date | null
  /** null only on the single row of a day without rows. */
  readonly id: string | null
  readonly reference: string | null
  readonly confirmation_code: string | null
  readonly status: ManifestRowStatus
  readonly operator_id: string
  readonly operator_name: string
  readonly account_id: string
  readonly product_id: string
  readonly product_title: string | null
  readonly rate_id: string | null
  readonly rate_title: string | null
  readonly start_time: string | null
  readonly timezone: string
  readonly participants: number
  readonly pax_breakdown: unknown
  readonly channel_class: string | null
  readonly channel_source: string | null
  readonly channel_title: string | null
  readonly guest_name: string | null
  readonly guest_email: string | null
  readonly guest_phone: string | null
  readonly pickup_place: string | null
  readonly pickup_time: string | null
  readonly payment_status: string | null
  readonly check_in_status: CheckInStatus | null
  readonly check_in_present: number | null
}

const ROW_COLUMNS = `r.id, r.reference, coalesce(b.confirmation_code, r.external_reference) AS confirmation_code,
  r.status, r.operator_id, o.name AS operator_name, r.account_id, r.product_id, r.product_title, r.rate_id,
  r.rate_title, r.start_time, r.timezone, r.participants, r.pax_breakdown, r.channel_class, r.channel_source,
  r.channel_title, r.guest_name, r.pickup_place, r.pickup_time, r.payment_status,
  c.status AS check_in_status, c.present AS check_in_present`

/** Contact columns are not even read without the scope. */
const CONTACT_COLUMNS = "r.guest_email, r.guest_phone"
const NO_CONTACT_COLUMNS = "NULL::text AS guest_email, NULL::text AS guest_phone"

export class ManifestRepo extends Effect.Service<ManifestRepo>()("Partner/ManifestRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** The day's head and rows (at least one row: the head alone when the day has none). */
    const day = (r: ManifestRequest) => {
      const operators = toPgArray(r.operatorIds)
      return sql<ManifestRowRecord>`
        WITH day AS (
          SELECT o.timezone AS day_timezone, (
            SELECT CASE WHEN bool_or(d.synced_at IS NULL) THEN NULL ELSE min(d.synced_at) END
            FROM (SELECT DISTINCT booking_system_account_id AS id FROM operators
                  WHERE id = ANY(${operators}::uuid[]) AND booking_system_account_id IS NOT NULL) a
            LEFT JOIN mirror_days d ON d.account_id = a.id AND d.departure_date = ${r.date}::date
          ) AS day_synced_at
          FROM operators o WHERE o.id = ${r.operatorIds[0] ?? null}::uuid
        )
        SELECT day.day_timezone, day.day_synced_at, m.*
        FROM day LEFT JOIN (
          SELECT ${sql.literal(ROW_COLUMNS)}, ${sql.literal(r.includeContact ? CONTACT_COLUMNS : NO_CONTACT_COLUMNS)}
          FROM manifest_rows r
          JOIN operators o ON o.id = r.operator_id
          LEFT JOIN manifest_checkins c ON c.row_id = r.id
          LEFT JOIN bookings b ON b.id = r.service_booking_id
          WHERE r.operator_id = ANY(${operators}::uuid[]) AND r.departure_date = ${r.date}::date
        ) m ON true`
    }

    return repoEdge.untraced({ day })
  })
}) {}
