/**
 * Check-in writes on manifest rows (spec §3, §4). Only `manifest_checkins` changes: the mirror,
 * the booking and the booking system are never touched. Meant to run inside the write's
 * transaction (`Writes.run` with `transactional: true`): the row is locked while the rule decides,
 * so concurrent check-ins of one row are applied one after the other and a repeat is seen as a no-op.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Either } from "effect"
import { type CheckinChange, type CheckinStatus, decideCheckin } from "./rules.js"
import { notYours } from "../../domain/errors.js"
import type { WriteContext, WriteDone } from "../writes/rules.js"
import { toPgArray } from "../bookings/Bookings.js"

export interface CheckinResult {
  readonly id: string
  readonly check_in: { readonly status: CheckinStatus | null; readonly present: number | null }
}

interface TargetRow {
  readonly id: string
  readonly operator_id: string
  readonly status: string
  readonly participants: number
  readonly checkin_status: CheckinStatus | null
  readonly present: number | null
}

export class Checkins extends Effect.Service<Checkins>()("Partner/Checkins", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const set = Effect.fn("Checkins.set")(function*(rowId: string, change: CheckinChange, ctx: WriteContext) {
      yield* Effect.annotateCurrentSpan({ status: change.status })
      const [row] = yield* sql<TargetRow>`
        SELECT r.id, r.operator_id, r.status, r.participants, c.status AS checkin_status, c.present
        FROM manifest_rows r
        LEFT JOIN manifest_checkins c ON c.row_id = r.id
        WHERE r.id = ${rowId}::uuid AND r.operator_id = ANY(${toPgArray(ctx.operatorIds)}::uuid[])
        FOR NO KEY UPDATE OF r`
      if (!row) return yield* notYours("manifest row")
      yield* ctx.target(row.operator_id)
      const decision = decideCheckin({
        rowStatus: row.status,
        participants: row.participants,
        current: row.checkin_status === null ? null : { status: row.checkin_status, present: row.present }
      }, change)
      if (Either.isLeft(decision)) return yield* decision.left
      const { next, noop } = decision.right
      if (!noop) {
        if (next === null) {
          yield* sql`DELETE FROM manifest_checkins WHERE row_id = ${rowId}::uuid`
        } else {
          yield* sql`
            INSERT INTO manifest_checkins (row_id, status, present, updated_at, updated_by_key)
            VALUES (${rowId}::uuid, ${next.status}, ${next.present}, now(), ${ctx.keyId})
            ON CONFLICT (row_id) DO UPDATE SET
              status = excluded.status, present = excluded.present,
              updated_at = excluded.updated_at, updated_by_key = excluded.updated_by_key`
        }
      }
      return {
        body: { id: row.id, check_in: { status: next?.status ?? null, present: next?.present ?? null } },
        noop
      } satisfies WriteDone<CheckinResult>
    }, Effect.catchTag("SqlError", Effect.die))

    return { set } as const
  })
}) {}
