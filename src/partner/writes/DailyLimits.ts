/**
 * Daily write limits per key, action and UTC day of the database clock (spec §8), shared by every
 * instance. A write reserves its slot before it acts, with one conditional increment that cannot
 * pass the limit however many requests race (the counter row is locked while it is checked), and
 * gives the slot back when the outcome is refused or a no-op: only writes that changed something
 * stay counted. SQL: DailyLimitsRepo.
 */
import { Effect } from "effect"
import { DailyLimitReached, InvalidRequest, NotFound } from "../../domain/errors.js"
import { annotateSpan, spanFn } from "../../observability/spanFn.js"
import { DailyLimitsRepo } from "./DailyLimitsRepo.js"
import { DEFAULT_DAILY_LIMITS, WRITE_ACTIONS, type WriteAction } from "./rules.js"

export type Reservation =
  | { readonly _tag: "Reserved"; readonly day: string }
  | { readonly _tag: "Exhausted"; readonly limit: number; readonly retryAfterSeconds: number }

/** A slot held for one write: which counter to give it back to. */
export interface Slot {
  readonly keyId: string
  readonly action: WriteAction
  readonly day: string
}

export interface LimitStatus {
  readonly action: WriteAction
  readonly limit: number
  /** True when the key has its own limit for this action. */
  readonly overridden: boolean
  readonly used_today: number
}

/** The 429 of a used-up daily limit (a write, or the assistant's first call checking the room). */
export const limitReached = (action: WriteAction, limit: number, retryAfterSeconds: number) =>
  new DailyLimitReached({
    detail: `this key's daily limit of ${limit} ${action} is used up until 00:00 UTC`,
    limit: action,
    retryAfterSeconds
  })

export class DailyLimits extends Effect.Service<DailyLimits>()("Partner/DailyLimits", {
  effect: Effect.gen(function*() {
    const repo = yield* DailyLimitsRepo

    /** Takes one slot of today's limit, or says when the next one frees up (next UTC midnight). */
    const reserve = spanFn("DailyLimits.reserve")(function*(keyId: string, action: WriteAction) {
      yield* annotateSpan({ action })
      const row = yield* repo.reserve({ keyId, action, defaultLimit: DEFAULT_DAILY_LIMITS[action] })
      const reservation: Reservation = row.used !== null
        ? { _tag: "Reserved", day: row.day }
        : { _tag: "Exhausted", limit: row.daily_limit, retryAfterSeconds: Math.max(1, row.reset_seconds) }
      return reservation
    })

    /**
     * Fails as a write would when today's limit has no room left, counting nothing (the assistant's
     * first call of a write: src/assistant/confirmations/).
     */
    const checkRoom = spanFn("DailyLimits.checkRoom")(function*(keyId: string, action: WriteAction) {
      yield* annotateSpan({ action })
      const row = yield* repo.room({ keyId, action, defaultLimit: DEFAULT_DAILY_LIMITS[action] })
      if (row.used >= row.daily_limit) {
        return yield* limitReached(action, row.daily_limit, Math.max(1, row.reset_seconds))
      }
    })

    /** Returns a slot (the write was refused or changed nothing). */
    const giveBack = spanFn("DailyLimits.giveBack")(function*(slot: Slot) {
      yield* annotateSpan({ action: slot.action })
      yield* repo.giveBack(slot)
    })

    const keyExists = (keyId: string) =>
      Effect.flatMap(
        repo.keyExists(keyId),
        ({ found }) => found ? Effect.void : Effect.fail(new NotFound({ detail: `key ${keyId} not found` }))
      )

    /** Every action's limit for the key and what it used today. */
    const statusOf = spanFn("DailyLimits.statusOf")(function*(keyId: string) {
      yield* keyExists(keyId)
      const rows = yield* repo.usage(keyId)
      return rows.map((r): LimitStatus => ({
        action: r.action,
        limit: r.daily_limit ?? DEFAULT_DAILY_LIMITS[r.action],
        overridden: r.daily_limit !== null,
        used_today: r.used ?? 0
      }))
    })

    /** Sets the key's own limits (whole numbers, 0 or more) for the actions given. */
    const setOverrides = spanFn("DailyLimits.setOverrides")(function*(
      keyId: string,
      limits: Partial<Record<WriteAction, number>>
    ) {
      const entries = Object.entries(limits).filter(([, value]) => value !== undefined) as Array<[WriteAction, number]>
      const bad = entries.find(([, value]) => !Number.isInteger(value) || value < 0)
      if (bad) {
        return yield* new InvalidRequest({ detail: `${bad[0]} must be a whole number, 0 or more`, field: bad[0] })
      }
      yield* keyExists(keyId)
      yield* repo.setLimits(keyId, entries)
    })

    /** Back to the defaults for the actions given (all when none). */
    const clearOverrides = spanFn("DailyLimits.clearOverrides")(function*(
      keyId: string,
      actions: ReadonlyArray<WriteAction> = WRITE_ACTIONS
    ) {
      yield* repo.clearLimits({ keyId, actions })
    })

    return { reserve, checkRoom, giveBack, statusOf, setOverrides, clearOverrides } as const
  }),
  dependencies: [DailyLimitsRepo.Default]
}) {}
