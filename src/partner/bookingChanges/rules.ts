/**
 * The life of a `booking_changes` row, shared by cancels and reschedules (migrations 0008, 0010):
 * its states, which of them are open (being applied), and when a claim is refused. Pure code, no
 * I/O; src/partner/bookingChanges/BookingChanges.ts claims and recovers, BookingChangesRepo.ts
 * writes the transitions.
 *
 *   reschedule:  moving ──► moved ──► done        cancel:  releasing ──► released ──► done
 *                   └────────┴──► abandoned                    └──► abandoned
 */
import { Either } from "effect"
import { IdempotencyInProgress, Unavailable } from "../../domain/errors.js"

export type ChangeKind = "cancel" | "reschedule"

/** States of a change still being applied, by kind: a crash there leaves it to recovery. */
export const OPEN_STATES = {
  cancel: ["releasing", "released"],
  reschedule: ["moving", "moved"]
} as const satisfies Record<ChangeKind, ReadonlyArray<string>>

/** Every open state, whatever the kind (at most one change of a booking in one of them). */
export const ANY_OPEN_STATE = [...OPEN_STATES.reschedule, ...OPEN_STATES.cancel] as const

/**
 * States a change may be abandoned from (nothing changed in the booking system): a reschedule
 * until it is done; a cancel only before the seats were released (after that it is finished).
 */
export const ABANDONABLE_STATES = {
  cancel: ["releasing"],
  reschedule: ["moving", "moved"]
} as const satisfies Record<ChangeKind, ReadonlyArray<string>>

/** An open change of a booking. */
export interface OpenChange {
  readonly id: string
  readonly kind: ChangeKind
  /** Past its lease: the request that made it is assumed dead (the recovery job finishes it). */
  readonly leaseExpired: boolean
}

/** The booking's changes as a write saw them before it read the booking. */
export interface ChangesSeen {
  readonly bookingId: string
  /** How many changes were recorded for the booking (finished, abandoned or open). */
  readonly recorded: number
  readonly open: OpenChange | undefined
}

/** What recovering one change left open by a crash came to. */
export type RecoveryOutcome = "completed" | "abandoned" | "pending"

/**
 * Whether recovery takes the lease of a change over while it works on it. A cancel's is taken (a
 * request retrying the same booking meanwhile waits, 409, and a change the booking system left
 * unknown waits a lease before it is tried again); a reschedule's is not (its completion locks the
 * row and does nothing once done, so a request may finish it too, and the next run tries again).
 */
export const RECOVERY_HOLDS_LEASE: Record<ChangeKind, boolean> = { cancel: true, reschedule: false }

/** One recovery run over the changes of one kind whose lease is over. */
export interface RecoverySummary {
  readonly found: number
  readonly completed: number
  readonly abandoned: number
  readonly pending: number
}

/** A change's 503: the booking system did not answer while `what`, so nothing changed. */
export const noAnswer = (what: string) =>
  new Unavailable({
    detail: `the booking system did not answer (${what}); nothing changed; retry with the same Idempotency-Key`
  })

export const changeRunning = () =>
  new IdempotencyInProgress({
    detail: "another change of this booking (a cancel or a reschedule) is still being applied; nothing was changed; " +
      "retry shortly with the same Idempotency-Key"
  })

export const changedMeanwhile = () =>
  new IdempotencyInProgress({
    detail:
      "another change of this booking (a cancel or a reschedule) was applied while this request was being checked; " +
      "nothing was changed; retry with the same Idempotency-Key to have this request decided on the booking as it is now"
  })

/** Whether the booking's changes are as `seen` said (none open now, none recorded since); Left: the 409. */
export const unchangedFrom = (seen: ChangesSeen, now: ChangesSeen): Either.Either<void, IdempotencyInProgress> =>
  now.open !== undefined
    ? Either.left(changeRunning())
    : now.recorded !== seen.recorded
    ? Either.left(changedMeanwhile())
    : Either.right(undefined)
