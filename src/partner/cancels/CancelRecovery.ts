/**
 * Finishing a cancel once the booking system has released its seats (steps 2b–4 of
 * src/partner/cancels/Cancels.ts), whoever runs it: the request, or the recovery of a cancel a
 * crash left open (the booking-change recovery job, or a request that finds it past its lease).
 *
 * - `release`: the booking's links closed (./CancelLinkClosing.ts), then one transaction marks the
 *   change `released` and writes a `booking_refunds` row per payment (void or refund, with our
 *   idempotency reference);
 * - `finish`: the refund rows sent (./CancelRefunds.ts), then step 4 once: one transaction sets the
 *   booking's status (spec §3), reason, voided commission and cancelled pay-later charge, marks its
 *   mirror rows cancelled, makes its links still open or `closing` due for the payment-link watch,
 *   enqueues the guest and team emails (./cancelEmails.ts) and marks the change `done`;
 * - `recoverOne`: `releasing` re-reads the booking system and goes on only when the booking is
 *   cancelled there (else it is abandoned: nothing changed); `released` repeats the refunds with
 *   the same references and completes step 4;
 * - `recover` (the job): every cancel past its lease (src/partner/bookingChanges/BookingChanges.ts
 *   takes its lease over), then the refunds still open after their cancel completed.
 *
 * Crash point (CRASH_AT, src/lib/CrashPoints.ts): `cancel.before_complete` (refunds recorded,
 * booking and emails not yet).
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Either, Option } from "effect"
import { transactionAtEdge } from "../../db/repoEdge.js"
import { Outbox } from "../../email/Outbox.js"
import { CrashPoints } from "../../lib/CrashPoints.js"
import { annotateSpan } from "../../observability/spanFn.js"
import { BookingSystemAccounts } from "../../operators/BookingSystemAccounts.js"
import { BookingSystem } from "../../ports/BookingSystem.js"
import { BookingChanges } from "../bookingChanges/BookingChanges.js"
import { BookingChangesRepo, type CancelChange } from "../bookingChanges/BookingChangesRepo.js"
import type { RecoveryOutcome, RecoverySummary } from "../bookingChanges/rules.js"
import { cancelEmails } from "./cancelEmails.js"
import { CancelLinkClosing } from "./CancelLinkClosing.js"
import { CancelRefunds, type RefundFollowUps } from "./CancelRefunds.js"
import { CancelRefundsRepo } from "./CancelRefundsRepo.js"
import { CancelsRepo } from "./CancelsRepo.js"
import { cancelOutcome, refundMethod, refundReference } from "./rules.js"

export interface CancelRecoverySummary {
  /** Cancels left open by a crash, and what became of them. */
  readonly changes: RecoverySummary
  /** Refunds followed up after their cancel completed. */
  readonly refunds: RefundFollowUps
}

export class CancelRecovery extends Effect.Service<CancelRecovery>()("Partner/CancelRecovery", {
  effect: Effect.gen(function*() {
    const transaction = transactionAtEdge(yield* SqlClient.SqlClient)
    const bookingSystem = yield* BookingSystem
    const accounts = yield* BookingSystemAccounts
    const outbox = yield* Outbox
    const crash = yield* CrashPoints
    const repo = yield* CancelsRepo
    const refundRows = yield* CancelRefundsRepo
    const changes = yield* BookingChangesRepo
    const bookingChanges = yield* BookingChanges
    const refunds = yield* CancelRefunds
    const links = yield* CancelLinkClosing

    /** The seats are released: the links closed, then `released` and one refund row per payment, together. */
    const release = Effect.fn("CancelRecovery.release")(function*(changeId: string, bookingId: string) {
      yield* links.close(bookingId)
      yield* transaction(Effect.gen(function*() {
        if (!(yield* changes.markReleased(changeId))) return
        const at = new Date(yield* Clock.currentTimeMillis)
        const currency = yield* repo.currencyOf(bookingId)
        for (const p of yield* repo.paymentsOf(bookingId)) {
          yield* refundRows.insertRefund({
            changeId,
            bookingId,
            paymentId: p.id,
            seq: 1,
            method: refundMethod(p, at),
            reference: refundReference(changeId, p.id, 1),
            amountMinor: p.amountMinor,
            currency
          }, { orSkip: false })
        }
      }))
    })

    /**
     * Step 4, once: the booking, its mirror rows, the emails and `done`, in one transaction. Does
     * nothing when the change is not `released` (finished by someone else). Returns the outcome.
     */
    const complete = Effect.fn("CancelRecovery.complete")(function*(changeId: string) {
      return yield* transaction(Effect.gen(function*() {
        const found = yield* changes.findCancel(changeId, true)
        if (Option.isNone(found) || found.value.state !== "released") return undefined
        const change = found.value
        const rows = yield* refundRows.refundsOfChange(changeId)
        const b = yield* repo.lockForCompletion(change.booking_id, change.key_id)
        const outcome = cancelOutcome(b.status === "RESERVED" ? "RESERVED" : "CONFIRMED", rows)
        const amountMinor = rows.filter((r) => r.seq === 1).reduce((sum, r) => sum + r.amountMinor, 0)
        const currency = b.currency.trim()
        yield* repo.endBooking({
          bookingId: change.booking_id,
          status: outcome.status,
          reason: change.reason,
          refunded: outcome.outcome === "refunded"
        })
        yield* repo.cancelMirrorRows(change.booking_id)
        yield* repo.linksDueNow(change.booking_id)
        const team = yield* outbox.teamAddresses(b.operator_id)
        const emails = cancelEmails({
          bookingId: change.booking_id,
          booking: b,
          reason: change.reason,
          refund: { outcome: outcome.outcome, amountMinor, currency },
          team
        })
        yield* Effect.forEach(emails, outbox.enqueue, { discard: true })
        yield* changes.markDone(changeId, outcome.outcome)
        yield* refunds.alertIfOpen(change.booking_id, changeId, outcome)
        return { outcome, amountMinor, currency }
      }))
    })

    /** Steps 3 and 4 for a released change (a request, or recovery after a crash). */
    const finish = Effect.fn("CancelRecovery.finish")(function*(changeId: string) {
      yield* refunds.attemptOpen(changeId)
      yield* crash.reached("cancel.before_complete")
      return yield* complete(changeId)
    })

    /** Whether the booking system shows the booking cancelled (every line); Left: it did not answer. */
    const releasedInBookingSystem = Effect.fn("CancelRecovery.releasedInBookingSystem")(
      function*(accountId: string, reference: string) {
        const account = (yield* Effect.orDie(accounts.byId(accountId))).account
        const lines = yield* bookingSystem.booking(account, reference).pipe(Effect.either)
        if (Either.isRight(lines)) return Either.right(lines.right.every((l) => l.status === "CANCELLED"))
        if (lines.left._tag === "BookingSystemRejected" && lines.left.reason === "not_found") return Either.right(true)
        return Either.left(lines.left.detail)
      }
    )

    /**
     * Finishes one cancel a crash left open: `released` is finished; `releasing` goes on when the
     * booking system shows the booking cancelled, else it is abandoned; without an answer it stays.
     */
    const recoverOne = Effect.fn("CancelRecovery.recoverOne")(function*(change: CancelChange) {
      yield* annotateSpan({ change: change.id, state: change.state })
      yield* changes.countAttempt(change.id)
      if (change.state === "releasing") {
        if (change.account_id !== null && change.booking_reference !== null) {
          const released = yield* releasedInBookingSystem(change.account_id, change.booking_reference)
          if (Either.isLeft(released)) {
            yield* changes.noteError(change.id, released.left)
            return "pending" as const
          }
          if (!released.right) {
            yield* changes.abandon(change.id, "cancel", "recovery: the booking system did not cancel the booking")
            return "abandoned" as const
          }
        }
        yield* release(change.id, change.booking_id)
      }
      return (yield* finish(change.id)) === undefined ? "pending" as const : "completed" as const
    })

    /**
     * Cancels left open past their lease are finished; then refunds still open after their cancel
     * completed are tried again (same reference) or read (settling), and the booking follows. One
     * failing change or refund never stops the others.
     */
    const recover = Effect.fn("CancelRecovery.recover")(function*() {
      const recovered = yield* bookingChanges.recoverStale(
        "cancel",
        (id) =>
          Effect.flatMap(
            changes.findCancel(id),
            Option.match({
              onNone: () => Effect.dieMessage(`cancel ${id} not found`),
              onSome: (change): Effect.Effect<RecoveryOutcome, unknown> => recoverOne(change)
            })
          )
      )
      const followedUp = yield* refunds.followUpDue()
      return { changes: recovered, refunds: followedUp } satisfies CancelRecoverySummary
    })

    return { release, finish, releasedInBookingSystem, recoverOne, recover } as const
  }),
  dependencies: [
    BookingSystemAccounts.Default,
    CrashPoints.Default,
    CancelsRepo.Default,
    CancelRefundsRepo.Default,
    BookingChangesRepo.Default,
    BookingChanges.Default,
    CancelRefunds.Default,
    CancelLinkClosing.Default
  ]
}) {}
