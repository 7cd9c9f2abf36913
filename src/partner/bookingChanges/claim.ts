/**
 * At most one change of a booking in flight, whatever its kind (a cancel or a reschedule): the one
 * claim both writes make before they ask the booking system to change anything
 * (src/partner/cancels/Cancels.ts, src/partner/reschedules/Reschedules.ts; docs/decisions.md "Booking changes: one
 * claim per booking").
 *
 * A write decides on what it read (the booking, its line in the booking system, availability), and
 * those reads take time. So it notes the booking's changes with `seenChanges` BEFORE it reads the
 * booking, and claims with `claimChange` when it has decided: one transaction that locks the
 * booking's row (claims of one booking are taken one after the other, across instances) and
 * inserts the write's `booking_changes` row only when
 *   - no change of the booking is open (`moving`, `moved`, `releasing`, `released`): another
 *     change is still being applied → 409 `changeRunning`;
 *   - no change was recorded since `seenChanges`: another change was applied while this write was
 *     deciding, so its decision rests on a state that is gone (it would move the booking from its
 *     old date again, or cancel what it did not see) → 409 `changedMeanwhile`.
 * Nothing is changed in either case; a retry with the same Idempotency-Key decides on the booking
 * as it is then. A write that answers without a change (`already_on_date`) checks the same with
 * `unchangedSince`, so that its answer is not a stale one either. Rows are never deleted, so their
 * number names the booking's state of changes. The unique index `booking_changes_open`
 * (migration 0010) stays the last guard.
 */
import type { SqlClient, SqlError } from "@effect/sql"
import { Effect, Either } from "effect"
import { IdempotencyInProgress } from "../../domain/errors.js"

/** States of a change still being applied. */
const OPEN_STATES = ["moving", "moved", "releasing", "released"] as const

export interface OpenChange {
  readonly id: string
  readonly kind: "cancel" | "reschedule"
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

export const changeRunning = () =>
  new IdempotencyInProgress({
    detail: "another change of this booking (a cancel or a reschedule) is still being applied; nothing was changed; " +
      "retry shortly with the same Idempotency-Key"
  })

export const changedMeanwhile = () =>
  new IdempotencyInProgress({
    detail: "another change of this booking (a cancel or a reschedule) was applied while this request was being checked; " +
      "nothing was changed; retry with the same Idempotency-Key to have this request decided on the booking as it is now"
  })

/** The booking's changes now: how many were recorded, and the open one if any. */
export const seenChanges = (sql: SqlClient.SqlClient, bookingId: string) =>
  sql<{ recorded: number; id: string | null; kind: "cancel" | "reschedule" | null; lease_expired: boolean | null }>`
    SELECT (SELECT count(*)::int FROM booking_changes WHERE booking_id = ${bookingId}::uuid) AS recorded,
      c.id, c.kind, c.lease_until < now() AS lease_expired
    FROM (SELECT 1) AS one
    LEFT JOIN booking_changes c ON c.booking_id = ${bookingId}::uuid AND c.state IN ${sql.in(OPEN_STATES)}`.pipe(
    Effect.orDie,
    Effect.map(([row]): ChangesSeen => ({
      bookingId,
      recorded: row!.recorded,
      open: row!.id === null ? undefined : { id: row!.id, kind: row!.kind!, leaseExpired: row!.lease_expired === true }
    }))
  )

/** Whether the booking's changes are as `seen` said (none open now, none recorded since); Left: the 409. */
const compare = (seen: ChangesSeen, now: ChangesSeen): Either.Either<void, IdempotencyInProgress> =>
  now.open !== undefined
    ? Either.left(changeRunning())
    : now.recorded !== seen.recorded
    ? Either.left(changedMeanwhile())
    : Either.right(undefined)

/**
 * For an answer that changes nothing (a no-op decided on what was read): fails with 409 when a
 * change of the booking is open now or was recorded since `seen`.
 */
export const unchangedSince = (sql: SqlClient.SqlClient, seen: ChangesSeen) =>
  Effect.flatMap(seenChanges(sql, seen.bookingId), (now) => compare(seen, now))

/**
 * Claims the booking for one change: `insert` (the write's `booking_changes` row, open, with its
 * lease; `RETURNING id`) runs under the booking's row lock, and only when nothing changed since
 * `seen`. Fails with 409 otherwise (nothing inserted).
 */
export const claimChange = (
  sql: SqlClient.SqlClient,
  seen: ChangesSeen,
  insert: Effect.Effect<ReadonlyArray<{ readonly id: string }>, SqlError.SqlError>
): Effect.Effect<{ readonly id: string }, IdempotencyInProgress> =>
  sql.withTransaction(Effect.gen(function*() {
    yield* sql`SELECT id FROM bookings WHERE id = ${seen.bookingId}::uuid FOR NO KEY UPDATE`
    const refused = compare(seen, yield* seenChanges(sql, seen.bookingId))
    if (Either.isLeft(refused)) return Either.left(refused.left)
    const [row] = yield* insert
    return row === undefined ? Either.left(changeRunning()) : Either.right(row)
  })).pipe(
    Effect.orDie,
    Effect.flatMap((claimed) => claimed),
    Effect.withSpan("BookingChanges.claim", { attributes: { booking: seen.bookingId } })
  )
