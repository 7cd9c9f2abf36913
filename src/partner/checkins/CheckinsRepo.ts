/**
 * The SQL of the check-in write (Checkins): the manifest row read and locked while the rule decides,
 * then its check-in cleared or upserted (only `manifest_checkins` changes), that statement made by
 * the write's final statement (Writes, IdempotencyStoreRepo `complete`). A database error is a
 * defect here, once.
 *
 * A hot write: POST /manifest/{id}/checkin keeps plain `sql<Row>` typed rows and no spans of its own
 * (`repoEdge.untraced`: Checkins.set's and the driver's cover them); it is measured against the bare
 * write by `npm run bench` (bench/README.md, "Issue 3: the check-in write"), where every statement and
 * wrapper around it already shows.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Effect, Option } from "effect"
import { repoEdge } from "../../db/repoEdge.js"
import { toPgArray } from "../../db/sql.js"
import type { CheckIn, CheckinStatus } from "./rules.js"

export interface TargetRow {
  readonly id: string
  readonly operator_id: string
  readonly status: string
  readonly participants: number
  readonly checkin_status: CheckinStatus | null
  readonly present: number | null
}

/** The row as the assistant's confirmation shows it (who, which departure). */
export interface DescribedRow extends TargetRow {
  readonly operator_name: string
  readonly reference: string | null
  readonly guest_name: string | null
  readonly product_title: string | null
  readonly departure_date: string
  readonly start_time: string | null
  readonly timezone: string
}

export class CheckinsRepo extends Effect.Service<CheckinsRepo>()("Partner/CheckinsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** The row of one of these operators with its check-in, locked until the transaction ends. */
    const lockTarget = (rowId: string, operatorIds: ReadonlyArray<string>) =>
      Effect.map(
        sql<TargetRow>`
        SELECT r.id, r.operator_id, r.status, r.participants, c.status AS checkin_status, c.present
        FROM manifest_rows r
        LEFT JOIN manifest_checkins c ON c.row_id = r.id
        WHERE r.id = ${rowId}::uuid AND r.operator_id = ANY(${toPgArray(operatorIds)}::uuid[])
        FOR NO KEY UPDATE OF r`,
        (rows) => Option.fromNullable(rows[0])
      )

    /**
     * The statement that stores the row's check-in (`next`; null clears it), not run here: the write's
     * final statement makes it (WriteDone `change`), in the transaction that holds the row's lock.
     */
    const change = (rowId: string, next: CheckIn | null, keyId: string): Statement.Fragment =>
      next === null
        ? sql`DELETE FROM manifest_checkins WHERE row_id = ${rowId}::uuid`
        : sql`
        INSERT INTO manifest_checkins (row_id, status, present, updated_at, updated_by_key)
        VALUES (${rowId}::uuid, ${next.status}, ${next.present}::int, now(), ${keyId})
        ON CONFLICT (row_id) DO UPDATE SET
          status = excluded.status, present = excluded.present,
          updated_at = excluded.updated_at, updated_by_key = excluded.updated_by_key`

    /** The row of one of these operators with its check-in and what a person recognises it by; no lock. */
    const describeTarget = (rowId: string, operatorIds: ReadonlyArray<string>) =>
      Effect.map(
        sql<DescribedRow>`
        SELECT r.id, r.operator_id, o.name AS operator_name, r.status, r.participants,
          c.status AS checkin_status, c.present, coalesce(r.external_reference, r.reference) AS reference,
          r.guest_name, r.product_title, r.departure_date::text AS departure_date, r.start_time, r.timezone
        FROM manifest_rows r
        JOIN operators o ON o.id = r.operator_id
        LEFT JOIN manifest_checkins c ON c.row_id = r.id
        WHERE r.id = ${rowId}::uuid AND r.operator_id = ANY(${toPgArray(operatorIds)}::uuid[])`,
        (rows) => Option.fromNullable(rows[0])
      )

    return { change, ...repoEdge.untraced({ lockTarget }), ...repoEdge("CheckinsRepo", { describeTarget }) }
  })
}) {}
