/**
 * Finishing a reschedule (src/partner/reschedules/Reschedules.ts): step 3, once, whoever runs it
 * (the request, or recovery), and the recovery of a change a crash left at `moving` or `moved`
 * past its lease (the booking-change recovery job, or a request that finds it).
 *
 * Step 3 locks the change's row and does nothing unless it is still open, so it runs at most once
 * however often it is tried: one transaction moves the booking and its mirror row, enqueues the
 * guest and team emails (./rescheduleEmails.ts; dedupe keys carry the change's id) and marks the
 * change `done`. Recovery re-reads the booking system to see whether the line moved: `moved` is
 * completed without asking; `moving` is completed when the line is on the target departure,
 * abandoned when it is not (or the booking system no longer has the booking), and left for the next
 * run when the booking system does not answer.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Either, Option } from "effect"
import { transactionAtEdge } from "../../db/repoEdge.js"
import { Outbox } from "../../email/Outbox.js"
import { annotateSpan } from "../../observability/spanFn.js"
import { BookingSystemAccounts } from "../../operators/BookingSystemAccounts.js"
import { BookingSystem } from "../../ports/BookingSystem.js"
import { BookingChanges } from "../bookingChanges/BookingChanges.js"
import { BookingChangesRepo, type RescheduleChange } from "../bookingChanges/BookingChangesRepo.js"
import type { RecoveryOutcome } from "../bookingChanges/rules.js"
import { rescheduleEmails } from "./rescheduleEmails.js"
import { ReschedulesRepo } from "./ReschedulesRepo.js"
import { isOnTarget } from "./rules.js"

export class RescheduleRecovery extends Effect.Service<RescheduleRecovery>()("Partner/RescheduleRecovery", {
  effect: Effect.gen(function*() {
    const transaction = transactionAtEdge(yield* SqlClient.SqlClient)
    const bookingSystem = yield* BookingSystem
    const accounts = yield* BookingSystemAccounts
    const outbox = yield* Outbox
    const repo = yield* ReschedulesRepo
    const changes = yield* BookingChangesRepo
    const bookingChanges = yield* BookingChanges

    /**
     * Step 3, once: the booking, its mirror row, the emails and `done`, in one transaction. Does
     * nothing when the change is no longer open (finished by someone else). Whether it did it.
     */
    const complete = Effect.fn("RescheduleRecovery.complete")(function*(changeId: string) {
      return yield* transaction(Effect.gen(function*() {
        const found = yield* changes.findReschedule(changeId, true)
        if (Option.isNone(found) || (found.value.state !== "moving" && found.value.state !== "moved")) return false
        const change = found.value
        const moved = yield* repo.move(change)
        const team = yield* outbox.teamAddresses(moved.operator_id)
        yield* Effect.forEach(rescheduleEmails(moved, change, team), outbox.enqueue, { discard: true })
        yield* changes.markDone(change.id, null)
        return true
      }))
    })

    /**
     * Finishes one open change left by a crash: `moved` is completed; `moving` is completed when
     * the booking system shows the line on the target departure, else abandoned. When the booking
     * system does not answer, the change stays for the next run.
     */
    const recoverOne = Effect.fn("RescheduleRecovery.recoverOne")(function*(change: RescheduleChange) {
      yield* annotateSpan({ change: change.id, state: change.state })
      const finished = (done: boolean): RecoveryOutcome => (done ? "completed" : "pending")
      yield* changes.countAttempt(change.id)
      if (change.state === "moved") return finished(yield* complete(change.id))
      const account = (yield* Effect.orDie(accounts.byId(change.account_id))).account
      const lines = yield* bookingSystem.booking(account, change.booking_reference).pipe(Effect.either)
      if (Either.isLeft(lines)) {
        if (lines.left._tag === "BookingSystemRejected" && lines.left.reason === "not_found") {
          yield* changes.abandon(change.id, "reschedule", "the booking system no longer has the booking")
          return "abandoned" as const
        }
        yield* changes.noteError(change.id, lines.left.detail)
        return "pending" as const
      }
      const line = lines.right.find((l) => l.lineId === change.line_id)
      const target = {
        date: change.to_date,
        startTimeId: change.to_start_time_id,
        rateId: change.change_rate ? change.to_rate_id : null
      }
      if (line !== undefined && line.status !== "CANCELLED" && isOnTarget(line, target)) {
        yield* changes.markMoved(change.id)
        return finished(yield* complete(change.id))
      }
      yield* changes.abandon(change.id, "reschedule", "recovery: the booking system did not move the line")
      return "abandoned" as const
    })

    /** Every reschedule whose lease is over (the job). One failing change never stops the others. */
    const recover = Effect.fn("RescheduleRecovery.recover")(function*() {
      return yield* bookingChanges.recoverStale(
        "reschedule",
        (id) =>
          Effect.flatMap(
            changes.findReschedule(id),
            Option.match({
              onNone: () => Effect.dieMessage(`reschedule ${id} not found`),
              onSome: recoverOne
            })
          )
      )
    })

    return { complete, recoverOne, recover } as const
  }),
  dependencies: [
    BookingSystemAccounts.Default,
    ReschedulesRepo.Default,
    BookingChangesRepo.Default,
    BookingChanges.Default
  ]
}) {}
