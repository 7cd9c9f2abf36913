/**
 * At most one change of a booking in flight, whatever its kind (a cancel or a reschedule): the one
 * claim both writes make before they ask the booking system to change anything, and the recovery
 * scan that finishes what a crash left open (src/partner/cancels/Cancels.ts,
 * src/partner/reschedules/Reschedules.ts; docs/decisions.md "Booking changes: one claim per
 * booking"). The row's states and when a claim is refused are in ./rules.ts, its SQL in
 * ./BookingChangesRepo.ts.
 *
 * A write decides on what it read (the booking, its line in the booking system, availability), and
 * those reads take time. So it notes the booking's changes with `seen` BEFORE it reads the
 * booking, and claims with `claim` when it has decided: one transaction that locks the
 * booking's row (claims of one booking are taken one after the other, across instances) and
 * inserts the write's `booking_changes` row (open, with its lease) only when
 *   - no change of the booking is open (`moving`, `moved`, `releasing`, `released`): another
 *     change is still being applied → 409 `changeRunning`;
 *   - no change was recorded since `seen`: another change was applied while this write was
 *     deciding, so its decision rests on a state that is gone (it would move the booking from its
 *     old date again, or cancel what it did not see) → 409 `changedMeanwhile`.
 * Nothing is changed in either case; a retry with the same Idempotency-Key decides on the booking
 * as it is then. A write that answers without a change (`already_on_date`) checks the same with
 * `unchangedSince`, so that its answer is not a stale one either. Rows are never deleted, so their
 * number names the booking's state of changes. The unique index `booking_changes_open`
 * (migration 0010) stays the last guard.
 *
 * A change whose lease is over is assumed to belong to a dead request: `recoverStale` (the
 * booking-change recovery job) hands each such change of a kind to that kind's recovery, once per
 * run, one failing change never stopping the others.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Either, Option } from "effect"
import { transactionAtEdge } from "../../db/repoEdge.js"
import type { IdempotencyInProgress } from "../../domain/errors.js"
import { annotateSpan } from "../../observability/spanFn.js"
import { BookingChangesRepo, type NewChange } from "./BookingChangesRepo.js"
import {
  type ChangeKind,
  changeRunning,
  type ChangesSeen,
  RECOVERY_HOLDS_LEASE,
  type RecoveryOutcome,
  type RecoverySummary,
  unchangedFrom
} from "./rules.js"

export class BookingChanges extends Effect.Service<BookingChanges>()("Partner/BookingChanges", {
  effect: Effect.gen(function*() {
    const transaction = transactionAtEdge(yield* SqlClient.SqlClient)
    const repo = yield* BookingChangesRepo

    /** The booking's changes now: how many were recorded, and the open one if any. */
    const seen = Effect.fn("BookingChanges.seen")(function*(bookingId: string) {
      return yield* repo.seen(bookingId)
    })

    /**
     * For an answer that changes nothing (a no-op decided on what was read): fails with 409 when a
     * change of the booking is open now or was recorded since `seen`.
     */
    const unchangedSince = Effect.fn("BookingChanges.unchangedSince")(function*(before: ChangesSeen) {
      return yield* unchangedFrom(before, yield* repo.seen(before.bookingId))
    })

    /**
     * Claims the booking for one change: inserts `change` (open, leased from now) under the
     * booking's row lock, and only when nothing changed since `before`. Fails with 409 otherwise
     * (nothing inserted). The id of the change.
     */
    const claim = Effect.fn("BookingChanges.claim")(function*(before: ChangesSeen, change: NewChange) {
      yield* annotateSpan({ booking: before.bookingId })
      const claimed = yield* transaction(Effect.gen(function*() {
        yield* repo.lockBooking(before.bookingId)
        const refused = unchangedFrom(before, yield* repo.seen(before.bookingId))
        if (Either.isLeft(refused)) return Either.left(refused.left)
        const inserted = yield* repo.insert(change)
        return Option.match(inserted, {
          onNone: (): Either.Either<string, IdempotencyInProgress> => Either.left(changeRunning()),
          onSome: ({ id }) => Either.right(id)
        })
      }))
      return yield* claimed
    })

    /**
     * Every open change of `kind` whose lease is over, handed to `recoverOne` (the job); the lease
     * is taken over first where the kind's recovery holds it (./rules.ts). One failing change never
     * stops the others: it counts as pending and is tried again next run.
     */
    const recoverStale = Effect.fn("BookingChanges.recoverStale")(function*(
      kind: ChangeKind,
      recoverOne: (changeId: string) => Effect.Effect<RecoveryOutcome, unknown>
    ) {
      yield* annotateSpan({ kind })
      const stale = yield* repo.stale(kind)
      const counts = { found: stale.length, completed: 0, abandoned: 0, pending: 0 }
      for (const id of stale) {
        const ours = RECOVERY_HOLDS_LEASE[kind] ? yield* repo.takeOver(id, kind) : yield* repo.isStale(id, kind)
        if (!ours) continue
        const outcome = yield* recoverOne(id).pipe(
          Effect.catchAllCause((cause) =>
            Effect.as(Effect.logWarning(`${kind} ${id} could not be recovered`, cause), "pending" as const)
          )
        )
        counts[outcome] += 1
      }
      return counts satisfies RecoverySummary
    })

    return { seen, unchangedSince, claim, recoverStale } as const
  }),
  dependencies: [BookingChangesRepo.Default]
}) {}
