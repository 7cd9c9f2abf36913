/**
 * Check-in writes on manifest rows (spec §3, §4). Only `manifest_checkins` changes: the mirror,
 * the booking and the booking system are never touched. Meant to run inside the write's
 * transaction (`Writes.run` with `transactional: true`): the row is locked while the rule decides,
 * so concurrent check-ins of one row are applied one after the other and a repeat is seen as a no-op.
 * SQL: CheckinsRepo.
 */
import { Effect, Either, Option } from "effect"
import { notYours } from "../../domain/errors.js"
import { annotateSpan } from "../../observability/spanFn.js"
import type { WriteContext, WriteDone } from "../writes/rules.js"
import { CheckinsRepo, type TargetRow } from "./CheckinsRepo.js"
import { type CheckinChange, type CheckinStatus, decideCheckin } from "./rules.js"

export type { DescribedRow } from "./CheckinsRepo.js"

export interface CheckinResult {
  readonly id: string
  readonly check_in: { readonly status: CheckinStatus | null; readonly present: number | null }
}

/** The rule applied to a row as read (the write and the assistant's preview). */
const decide = (row: TargetRow, change: CheckinChange) =>
  decideCheckin({
    rowStatus: row.status,
    participants: row.participants,
    current: row.checkin_status === null ? null : { status: row.checkin_status, present: row.present }
  }, change)

export class Checkins extends Effect.Service<Checkins>()("Partner/Checkins", {
  effect: Effect.gen(function*() {
    const repo = yield* CheckinsRepo

    const set = Effect.fn("Checkins.set")(function*(rowId: string, change: CheckinChange, ctx: WriteContext) {
      yield* annotateSpan({ status: change.status })
      const target = yield* repo.lockTarget(rowId, ctx.operatorIds)
      if (Option.isNone(target)) return yield* notYours("manifest row")
      const row = target.value
      yield* ctx.target(row.operator_id)
      const decision = decide(row, change)
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

    /**
     * Every check `set` makes, changing nothing (the assistant's first call of `check_in_guests`):
     * the row as a person recognises it and what the change would be.
     */
    const preview = Effect.fn("Checkins.preview")(
      function*(rowId: string, change: CheckinChange, operatorIds: ReadonlyArray<string>) {
        const found = yield* repo.describeTarget(rowId, operatorIds)
        if (Option.isNone(found)) return yield* notYours("manifest row")
        const decision = decide(found.value, change)
        if (Either.isLeft(decision)) return yield* decision.left
        return { row: found.value, ...decision.right }
      }
    )

    return { set, preview } as const
  }),
  dependencies: [CheckinsRepo.Default]
}) {}
