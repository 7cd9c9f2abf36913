/**
 * The daily manifest of the operators a request acts for, read from the booking-system mirror
 * (migration 0003) in one statement:
 *
 * - `day`: the time zone of the first operator in view, and the oldest `mirror_days.synced_at` of
 *   the day over the booking-system accounts of the operators in view (null when one of them has
 *   no entry for the day, or when none of them has an account);
 * - joined to it (LEFT JOIN … ON true, so an empty day still answers one row) the day's rows of
 *   those operators from `manifest_rows_by_day`, with the operator's name, the check-in and our
 *   booking's confirmation code.
 *
 * A row of an account shared by several operators is stored once, under one operator, so it is
 * read once. Grouping, order and counts are domain rules (src/partner/manifest/rules.ts).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { toIsoOrNull } from "../../domain/dates.js"
import type { CheckInStatus, Manifest as ManifestBody, ManifestRowStatus } from "./schemas.js"
import { buildManifest, type ManifestEntry, paxBreakdownOf } from "./rules.js"
import { toPgArray } from "../bookings/Bookings.js"

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

/** A manifest row as the grouping reads it (pure: the benchmark's floor maps its rows with it too). */
export const toEntry = (r: ManifestRowRecord, includeContact: boolean): ManifestEntry => ({
  departure: {
    startTime: r.start_time,
    timezone: r.timezone,
    productTitle: r.product_title,
    rateTitle: r.rate_title,
    accountId: r.account_id,
    productId: r.product_id,
    rateId: r.rate_id
  },
  row: {
    id: r.id!,
    reference: r.reference,
    confirmation_code: r.confirmation_code,
    status: r.status,
    partner: { id: r.operator_id, name: r.operator_name },
    channel: { class: r.channel_class, source: r.channel_source, title: r.channel_title },
    participants: r.participants,
    pax_breakdown: paxBreakdownOf(r.pax_breakdown),
    guest: includeContact
      ? { name: r.guest_name, email: r.guest_email, phone: r.guest_phone }
      : { name: r.guest_name },
    pickup: r.pickup_place === null && r.pickup_time === null ? null : { place: r.pickup_place, time: r.pickup_time },
    payment_status: r.payment_status,
    check_in: { status: r.check_in_status, present: r.check_in_present }
  }
})

export class Manifest extends Effect.Service<Manifest>()("Partner/Manifest", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const day = Effect.fn("Manifest.day")(function*(r: ManifestRequest) {
      yield* Effect.annotateCurrentSpan({ date: r.date, operators: r.operatorIds.length })
      const operators = toPgArray(r.operatorIds)
      const rows = yield* sql<ManifestRowRecord>`
        WITH day AS (
          SELECT o.timezone AS day_timezone, (
            SELECT CASE WHEN bool_or(d.synced_at IS NULL) THEN NULL ELSE min(d.synced_at) END
            FROM (SELECT DISTINCT booking_system_account_id AS id FROM operators
                  WHERE id = ANY(${operators}::uuid[]) AND booking_system_account_id IS NOT NULL) a
            LEFT JOIN mirror_days d ON d.account_id = a.id AND d.departure_date = ${r.date}::date
          ) AS day_synced_at
          FROM operators o WHERE o.id = ${r.operatorIds[0]!}::uuid
        )
        SELECT day.day_timezone, day.day_synced_at, m.*
        FROM day LEFT JOIN (
          SELECT ${sql.literal(ROW_COLUMNS)}, ${sql.literal(r.includeContact ? CONTACT_COLUMNS : NO_CONTACT_COLUMNS)}
          FROM manifest_rows r
          JOIN operators o ON o.id = r.operator_id
          LEFT JOIN manifest_checkins c ON c.row_id = r.id
          LEFT JOIN bookings b ON b.id = r.service_booking_id
          WHERE r.operator_id = ANY(${operators}::uuid[]) AND r.departure_date = ${r.date}::date
        ) m ON true`.pipe(Effect.orDie)
      const first = rows[0]
      if (first === undefined) return yield* Effect.dieMessage("operator of the key not found")
      const entries: Array<ManifestEntry> = []
      for (const row of rows) if (row.id !== null) entries.push(toEntry(row, r.includeContact))
      return buildManifest(
        { date: r.date, timezone: first.day_timezone, synced_at: toIsoOrNull(first.day_synced_at) },
        entries
      ) satisfies ManifestBody
    })

    return { day } as const
  })
}) {}
