/**
 * Check-in writes on manifest rows (spec §3, §4). Only `manifest_checkins` changes: the mirror,
 * the booking and the booking system are never touched. Meant to run inside the write's
 * transaction (`Writes.run` with `transactional: true`): the row is locked while the rule decides,
 * so concurrent check-ins of one row are applied one after the other and a repeat is seen as a no-op.
 * SQL: CheckinsRepo.
 */
import { Effect, Either, Option } from "effect"
import { notYours } from "../../domain/errors.js"
import type { WriteContext, WriteDone } from "../writes/rules.js"
import { CheckinsRepo } from "./CheckinsRepo.js"
import { type CheckinChange, type CheckinStatus, decideCheckin } from "./rules.js"

export interface CheckinResult {
  readonly id: string
  readonly check_in: { readonly status: CheckinStatus | null; readonly present: number | null }
}

export class Checkins extends Effect.Service<Checkins>()("Partner/Checkins", {
  effect: Effect.gen(function*() {
    const repo = yield* CheckinsRepo

    const set = Effect.fn("Checkins.set")(function*(rowId: string, change: CheckinChange, ctx: WriteContext) {
      yield* Effect.annotateCurrentSpan({ status: change.status })
      const target = yield* repo.lockTarget(rowId, ctx.operatorIds)
      if (Option.isNone(target)) return yield* notYours("manifest row")
      const row = target.value
      yield* ctx.target(row.operator_id)
      const decision = decideCheckin({
        rowStatus: row.status,
        participants: row.participants,
        current: row.checkin_status === null ? null : { status: row.checkin_status, present: row.present }
      }, change)
      if (Either.isLeft(decision)) return yield* decision.left
      const { next, noop } = decision.right
      if (!noop) {
        if (next === null) yield* repo.clear(rowId)
        else yield* repo.upsert(rowId, next, ctx.keyId)
      }
      return {
        body: { id: row.id, check_in: { status: next?.status ?? null, present: next?.present ?? null } },
        noop
      } satisfies WriteDone<CheckinResult>
    })

    return { set } as const
  }),
  dependencies: [CheckinsRepo.Default]
}) {}
