/**
 * Manifest check-in (spec §3 "Manifest check-in state"): the state of a manifest row is null (not
 * seen), checked_in (optionally with how many of the party turned up) or no_show. Only this state
 * is stored; the booking, its guests and money never change and the booking system is not told.
 */
import { Either, Schema } from "effect"
import { InvalidRequest, NotPossible } from "../../domain/errors.js"

export const CheckinStatus = Schema.Literal("checked_in", "no_show")
export type CheckinStatus = typeof CheckinStatus.Type

/** The stored state; `present` null means everyone in the party. */
export interface CheckIn {
  readonly status: CheckinStatus
  readonly present: number | null
}

/** What a check-in request asks for. */
export type CheckinChange =
  | { readonly status: "checked_in"; readonly present?: number | undefined }
  | { readonly status: "no_show" }
  | { readonly status: "clear" }

/** The manifest row as the rule needs it. */
export interface CheckinTarget {
  readonly rowStatus: string
  readonly participants: number
  readonly current: CheckIn | null
}

export interface CheckinDecision {
  /** The state to store; null removes it. */
  readonly next: CheckIn | null
  /** True when the row already is in that state: nothing is written and nothing counted. */
  readonly noop: boolean
}

const sameState = (a: CheckIn | null, b: CheckIn | null) =>
  a === null || b === null ? a === b : a.status === b.status && a.present === b.present

/**
 * The rules, in order: a cancelled row cannot be checked in or marked no-show (clearing a stale
 * state is allowed); `present` is at most the row's participants; setting the state the row
 * already has is a no-op.
 */
export const decideCheckin = (
  target: CheckinTarget,
  change: CheckinChange
): Either.Either<CheckinDecision, NotPossible | InvalidRequest> => {
  if (target.rowStatus === "CANCELLED" && change.status !== "clear") {
    return Either.left(
      new NotPossible({
        detail: `the booking line is cancelled; it cannot be marked ${change.status} (only \`clear\` is accepted)`
      })
    )
  }
  const present = change.status === "checked_in" ? change.present ?? null : null
  if (present !== null && present > target.participants) {
    return Either.left(
      new InvalidRequest({
        detail: `present must be at most the row's participants (${target.participants})`,
        field: "present"
      })
    )
  }
  const next: CheckIn | null = change.status === "clear" ? null : { status: change.status, present }
  return Either.right({ next, noop: sameState(target.current, next) })
}
