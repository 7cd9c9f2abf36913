/**
 * Reschedules (spec §3, §4): the move itself. The options of a day are ./RescheduleOptions.ts; what
 * both read first, ./RescheduleReads.ts.
 *
 * The booking system is the truth about the booking's line (its party, rate, start time and price)
 * and about a day's departures; the rules are plain functions in src/partner/reschedules/rules.ts,
 * the SQL in ./ReschedulesRepo.ts.
 *
 * A reschedule records its progress in `booking_changes` (migration 0008) so that a crash at any
 * step is finished once:
 *   1. a row `moving` (with a lease) is committed before the booking system is asked to move, by the
 *      claim every change of a booking makes (src/partner/bookingChanges/BookingChanges.ts): only
 *      when no change of the booking is open and none was made since this request read it (else 409);
 *   2. the booking system moves the line; the row becomes `moved`;
 *   3. one transaction updates the booking and its mirror row, enqueues the guest and team emails
 *      (dedupe keys carry the row's id) and marks the row `done` (./RescheduleRecovery.ts `complete`).
 * A row left at `moving` or `moved` past its lease is finished by ./RescheduleRecovery.ts (the
 * booking-change recovery job, `recoverStale` here, or a request that finds it): it re-reads the
 * booking system to see whether the line moved, then completes step 3, or marks the row `abandoned`
 * when nothing moved. Step 3 locks the row and does nothing unless it is still open, so it runs at
 * most once however often it is tried.
 *
 * Crash points (CRASH_AT, src/lib/CrashPoints.ts): `reschedule.after_move` (the booking system
 * moved the line, not yet recorded), `reschedule.after_moved` (recorded, booking and emails not yet).
 */
import { Effect, Either, Option } from "effect"
import { NotPossible } from "../../domain/errors.js"
import { CrashPoints } from "../../lib/CrashPoints.js"
import { type BookingLine, BookingSystem, type BookingSystemError } from "../../ports/BookingSystem.js"
import { BookingChanges } from "../bookingChanges/BookingChanges.js"
import { BookingChangesRepo } from "../bookingChanges/BookingChangesRepo.js"
import { changeRunning, noAnswer } from "../bookingChanges/rules.js"
import { apiStatusOf } from "../bookings/booking.js"
import type { WriteContext, WriteDone } from "../writes/rules.js"
import { facts, RescheduleReads } from "./RescheduleReads.js"
import { RescheduleRecovery } from "./RescheduleRecovery.js"
import type { RescheduleBooking } from "./ReschedulesRepo.js"
import { checkReschedulable, decideMove, isAlreadyOn, isOnTarget, type RescheduleRequest } from "./rules.js"

export interface RescheduleResultBody {
  readonly id: string
  readonly status: string
  readonly date: string
  readonly start_time: string | null
  readonly previous_date: string | null
  readonly previous_start_time: string | null
  readonly already_on_date: boolean
}

const refuse = (detail: string) => new NotPossible({ detail })

const rejectionDetail = (e: BookingSystemError) =>
  e._tag === "BookingSystemRejected" && e.reason === "no_seats"
    ? "date unavailable: the departure no longer has the seats"
    : `the booking system refused the move (${e.reason}): ${e.detail}`

export class Reschedules extends Effect.Service<Reschedules>()("Partner/Reschedules", {
  effect: Effect.gen(function*() {
    const bookingSystem = yield* BookingSystem
    const crash = yield* CrashPoints
    const changes = yield* BookingChangesRepo
    const bookingChanges = yield* BookingChanges
    const recovery = yield* RescheduleRecovery

    const { accountOf, loadBooking, noLine, now, readLine } = yield* RescheduleReads

    /**
     * Every check of a move before anything changes: the booking can move at all, its line in the
     * booking system, and either "already there" (a no-op) or the departure and rate it would move to
     * (422 when the day has no place at the same price).
     */
    const planMove = (b: RescheduleBooking, request: RescheduleRequest) =>
      Effect.gen(function*() {
        const at = yield* now
        const eligible = checkReschedulable(facts(b), at)
        if (Either.isLeft(eligible)) return yield* refuse(eligible.left)
        const account = yield* accountOf(b.account_id!)
        const read = yield* readLine(account, b.provider_reference!, b.product_id!)
        if (Either.isLeft(read)) return yield* refuse(yield* noLine(b.id, read.left))
        const line: BookingLine = read.right
        if (isAlreadyOn(line, request)) return { _tag: "AlreadyOn" as const, line }

        const departures = yield* bookingSystem.availability(account, {
          productId: b.product_id!,
          from: request.date,
          to: request.date
        })
          .pipe(
            Effect.catchTag("BookingSystemUnavailable", () => Effect.fail(noAnswer("reading availability"))),
            Effect.catchTag("BookingSystemRejected", (e) => Effect.fail(refuse(`date unavailable: ${e.detail}`)))
          )
        const decided = decideMove(line, request, departures, b.timezone, at)
        if (Either.isLeft(decided)) return yield* refuse(decided.left)
        return { _tag: "Move" as const, line, account, target: decided.right }
      })

    /**
     * Every check `reschedule` makes before it changes anything, changing nothing (the assistant's
     * first call of `reschedule_booking`). A change of the booking still open answers 409.
     */
    const preview = Effect.fn("Reschedules.preview")(
      function*(id: string, request: RescheduleRequest, operatorIds: ReadonlyArray<string>) {
        const seen = yield* bookingChanges.seen(id)
        const b = yield* loadBooking(id, operatorIds)
        if (seen.open !== undefined) return yield* changeRunning()
        return { booking: b, plan: yield* planMove(b, request) }
      }
    )

    // ---------------------------------------------------------------------------------------------
    // The write

    const reschedule = Effect.fn("Reschedules.reschedule")(
      function*(id: string, request: RescheduleRequest, ctx: WriteContext) {
        // The booking's changes as they are before anything is read: the claim below (and a no-op
        // answer) holds only if none was made since (src/partner/bookingChanges/BookingChanges.ts).
        const seen = yield* bookingChanges.seen(id)
        let b = yield* loadBooking(id, ctx.operatorIds)
        yield* ctx.target(b.operator_id)

        // A change of this booking still open: running (409), or a reschedule left by a crash (finish it first).
        if (seen.open !== undefined) {
          if (!seen.open.leaseExpired || seen.open.kind !== "reschedule") return yield* changeRunning()
          const change = yield* changes.findReschedule(seen.open.id)
          if (Option.isSome(change)) {
            const outcome = yield* recovery.recoverOne(change.value)
            if (outcome === "pending") return yield* noAnswer("finishing an earlier change of this booking")
            b = yield* loadBooking(id, ctx.operatorIds)
          }
        }

        const plan = yield* planMove(b, request)
        const line: BookingLine = plan.line

        if (plan._tag === "AlreadyOn") {
          // Not an answer read from a state another change has just left.
          yield* bookingChanges.unchangedSince(seen)
          const noop: WriteDone<RescheduleResultBody> = {
            body: {
              id: b.id,
              status: apiStatusOf(b.status),
              date: b.experience_date ?? line.date,
              start_time: b.start_time,
              previous_date: null,
              previous_start_time: null,
              already_on_date: true
            },
            noop: true
          }
          return noop
        }
        const { account, target } = plan

        // Step 1: the intent, committed before the booking system is asked (and the daily slot taken).
        yield* ctx.beforeChange
        const changeId = yield* bookingChanges.claim(seen, {
          kind: "reschedule",
          bookingId: b.id,
          keyId: ctx.keyId,
          accountId: b.account_id!,
          bookingReference: b.provider_reference!,
          lineId: line.lineId,
          from: {
            date: b.experience_date ?? line.date,
            startTime: b.start_time,
            startTimeId: line.startTimeId,
            rateId: line.rateId,
            rateTitle: line.rateTitle
          },
          to: {
            date: target.date,
            startTime: target.startTime,
            startTimeId: target.startTimeId,
            rateId: target.rateId,
            rateTitle: target.rateTitle
          },
          changeRate: target.changeRate
        })

        // Step 2: the booking system.
        const moved = yield* bookingSystem.move(account, {
          bookingReference: b.provider_reference!,
          lineId: line.lineId,
          date: target.date,
          startTimeId: target.startTimeId,
          rateId: target.changeRate ? target.rateId : null
        }).pipe(Effect.either)
        if (Either.isLeft(moved)) {
          const error = moved.left
          if (error._tag === "BookingSystemRejected") {
            yield* changes.abandon(changeId, "reschedule", rejectionDetail(error))
            return yield* refuse(rejectionDetail(error))
          }
          // No answer: the move may or may not have happened. Ask once.
          const check = yield* bookingSystem.booking(account, b.provider_reference!).pipe(Effect.either)
          if (Either.isLeft(check)) {
            // Unknown: the change stays `moving`; the job (or a retry after the lease) settles it.
            return yield* noAnswer("moving the booking")
          }
          const now_ = check.right.find((l) => l.lineId === line.lineId)
          const checkTarget = {
            date: target.date,
            startTimeId: target.startTimeId,
            rateId: target.changeRate ? target.rateId : null
          }
          if (now_ === undefined || !isOnTarget(now_, checkTarget)) {
            yield* changes.abandon(
              changeId,
              "reschedule",
              `the booking system did not answer the move: ${error.detail}`
            )
            return yield* noAnswer("moving the booking")
          }
        }
        yield* crash.reached("reschedule.after_move")
        yield* changes.markMoved(changeId)
        yield* crash.reached("reschedule.after_moved")

        // Step 3: the service, the mirror row and the emails, together.
        yield* recovery.complete(changeId)
        const done: WriteDone<RescheduleResultBody> = {
          body: {
            id: b.id,
            status: apiStatusOf(b.status),
            date: target.date,
            start_time: target.startTime,
            previous_date: b.experience_date,
            previous_start_time: b.start_time,
            already_on_date: false
          },
          noop: false
        }
        return done
      }
    )

    return { reschedule, preview, recoverStale: recovery.recover } as const
  }),
  dependencies: [
    CrashPoints.Default,
    RescheduleReads.Default,
    BookingChangesRepo.Default,
    BookingChanges.Default,
    RescheduleRecovery.Default
  ]
}) {}
