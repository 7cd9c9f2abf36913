/**
 * Check-in writes on manifest rows (spec §3, §4). Only `manifest_checkins` changes: the mirror,
 * the booking and the booking system are never touched. Meant to run inside the write's
 * transaction (`Writes.run` with `transactional: true`): the row is locked while the rule decides,
 * so concurrent check-ins of one row are applied one after the other and a repeat is seen as a no-op.
 * The change itself is left to the write's final statement (WriteDone `change`), which stores the
 * answer and the audit entry in the same round trip.
 * SQL: CheckinsRepo.
 */
import { Effect, Either, Option } from "effect"
import { notYours } from "../../domain/errors.js"
import { annotateSpan, spanFn } from "../../observability/spanFn.js"
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

    const set = spanFn("Checkins.set")(function*(rowId: string, change: CheckinChange, ctx: WriteContext) {
      yield* annotateSpan({ status: change.status })
      const target = yield* repo.lockTarget(rowId, ctx.operatorIds)
      if (Option.isNone(target)) return yield* notYours("manifest row")
      const row = target.value
      yield* ctx.target(row.operator_id)
      const decision = decide(row, change)
      if (Either.isLeft(decision)) return yield* decision.left
      const { next, noop } = decision.right
      return {
        body: { id: row.id, check_in: { status: next?.status ?? null, present: next?.present ?? null } },
        noop,
        // Made by the write's final statement, with the stored answer and the audit entry (one round trip).
        change: noop ? undefined : repo.change(rowId, next, ctx.keyId)
      } satisfies WriteDone<CheckinResult>
    })

    /**
     * Every check `set` makes, changing nothing (the assistant's first call of `check_in_guests`):
     * the row as a person recognises it and what the change would be.
     */
    const preview = spanFn("Checkins.preview")(
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
