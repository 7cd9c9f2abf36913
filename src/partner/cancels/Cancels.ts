/**
 * Cancel with a full refund (POST /api/v1/bookings/{id}/cancel; spec §2 "Cancel result", §3, §4;
 * rules in src/partner/cancels/rules.ts; docs/api/cancel.md).
 *
 * A cancel records its progress so that a crash at any step is finished once and money never moves
 * twice (migration 0010):
 *   1. a `booking_changes` row (kind `cancel`, state `releasing`, with a lease) is committed before
 *      the booking system is asked to cancel, by the claim every change of a booking makes
 *      (src/partner/bookingChanges/BookingChanges.ts: 409 while another change is open or if one
 *      was made since);
 *   2. the booking system releases the seats; the booking's balance payment links are taken over
 *      and closed at the provider, a link found paid being recorded as a payment
 *      (./CancelLinkClosing.ts); one transaction marks the row `released` and writes a
 *      `booking_refunds` row per payment (void or refund, with our idempotency reference);
 *   3. each refund row is sent to the payment provider with its reference and its answer recorded
 *      (./CancelRefunds.ts);
 *   4. one transaction ends the booking (status per spec §3, reason, commission, pay-later charge,
 *      mirror rows, links due for the watch), enqueues the guest and team emails (./cancelEmails.ts;
 *      dedupe keys name the booking: a booking is cancelled once) and marks the change `done`.
 * Steps 2 (after the release) to 4 are ./CancelRecovery.ts, which also finishes a cancel left at
 * `releasing` or `released` past its lease (the booking-change recovery job, `recover` here, or
 * this request when it finds one): `releasing` re-reads the booking system and goes on only when
 * the booking is cancelled there (else it is abandoned: nothing changed); `released` repeats step 3
 * with the same references and completes step 4. Refunds still open after step 4 (no answer,
 * settling, partly returned) are followed up by the same job until they complete; a refused one is
 * alerted and left to a person (`refunds` CLI).
 *
 * A payment that arrives after step 2 (a link paid before it could be closed, or one the provider
 * did not let us close) is given a refund row of this change when it is recorded (PaidLinkRecorder.record)
 * and sent by the cancel still running, by `refundLate` (the payment-link watch, at once) or by the
 * job: the booking is refunded in full whenever the money comes.
 *
 * Crash points (CRASH_AT, src/lib/CrashPoints.ts): `cancel.after_release` (seats released,
 * not yet recorded), `cancel.after_released` (recorded, no refund sent), `cancel.after_refund`
 * (provider answered, answer not recorded), `cancel.before_complete` (refunds recorded, booking
 * and emails not yet).
 */
import { Effect, Either, Option } from "effect"
import { NotPossible, notYours } from "../../domain/errors.js"
import { CrashPoints } from "../../lib/CrashPoints.js"
import { BookingSystemAccounts } from "../../operators/BookingSystemAccounts.js"
import { OperatorPaymentAccounts } from "../../payments/OperatorPaymentAccounts.js"
import { BookingSystem } from "../../ports/BookingSystem.js"
import { BookingChanges } from "../bookingChanges/BookingChanges.js"
import { BookingChangesRepo } from "../bookingChanges/BookingChangesRepo.js"
import { changeRunning, noAnswer } from "../bookingChanges/rules.js"
import { apiStatusOf, type BookingStatus } from "../bookings/booking.js"
import type { WriteContext, WriteDone } from "../writes/rules.js"
import { CancelRecovery } from "./CancelRecovery.js"
import { CancelRefunds } from "./CancelRefunds.js"
import { CancelRefundsRepo } from "./CancelRefundsRepo.js"
import { type CancelBooking, CancelsRepo } from "./CancelsRepo.js"
import { type CancelFacts, isLive, paidMinor, paymentsToRefund, type RefundOutcome } from "./rules.js"

export interface CancelResultBody {
  readonly id: string
  readonly status: BookingStatus
  readonly already_cancelled: boolean
  readonly refund: {
    readonly outcome: RefundOutcome
    readonly amount_minor: number
    readonly currency: string
  }
}

const refuse = (detail: string) => new NotPossible({ detail })

const factsOf = (b: CancelBooking): CancelFacts => ({
  status: b.status,
  amountMinor: b.amount_minor,
  currency: b.currency.trim(),
  paymentStrategy: b.payment_strategy,
  payLaterStatus: b.pay_later_status,
  payLaterAmountMinor: b.pay_later_amount_minor
})

export class Cancels extends Effect.Service<Cancels>()("Partner/Cancels", {
  effect: Effect.gen(function*() {
    const bookingSystem = yield* BookingSystem
    const accounts = yield* BookingSystemAccounts
    const paymentAccounts = yield* OperatorPaymentAccounts
    const crash = yield* CrashPoints
    const repo = yield* CancelsRepo
    const refundRows = yield* CancelRefundsRepo
    const changes = yield* BookingChangesRepo
    const bookingChanges = yield* BookingChanges
    const recovery = yield* CancelRecovery
    const refunds = yield* CancelRefunds

    const loadBooking = (id: string, operatorIds: ReadonlyArray<string>) =>
      Effect.flatMap(repo.findBooking(id, operatorIds), Effect.orElseFail(() => notYours("booking")))

    /**
     * The answer from a cancel made before: `already_cancelled` (a no-op), or, when this request has
     * just finished a cancel an earlier attempt left open, that cancel's result.
     */
    const previousCancel = (b: CancelBooking, finishedNow = false) =>
      Effect.gen(function*() {
        const last = yield* changes.lastDoneCancel(b.id)
        const rows = Option.isNone(last) ? [] : yield* refundRows.refundsOfChange(last.value.id)
        // Cancelled elsewhere (the dashboard, before this service kept cancels): what the status says.
        const unrecorded = b.status === "REFUNDED"
          ? { outcome: "refunded" as const, amount: paidMinor(factsOf(b)) }
          : { outcome: "none" as const, amount: 0 }
        const done: WriteDone<CancelResultBody> = {
          body: {
            id: b.id,
            status: apiStatusOf(b.status),
            already_cancelled: !finishedNow,
            refund: {
              outcome: Option.isNone(last) ? unrecorded.outcome : last.value.refund_outcome ?? "none",
              amount_minor: Option.isNone(last)
                ? unrecorded.amount
                : rows.filter((r) => r.seq === 1).reduce((sum, r) => sum + r.amountMinor, 0),
              currency: b.currency.trim()
            }
          },
          noop: !finishedNow
        }
        return done
      })

    /**
     * What a cancel of this live booking would return, or why it cannot be made (422): the payments on
     * record must add up to what was paid, the operator must be able to refund, the guest must be
     * told a departure, the seats must be releasable.
     */
    const refundable = (b: CancelBooking) =>
      Effect.gen(function*() {
        const payments = paymentsToRefund(factsOf(b), yield* repo.paymentsOf(b.id))
        if (Either.isLeft(payments)) return yield* refuse(payments.left)
        if (payments.right.length > 0 && Option.isNone(yield* paymentAccounts.forOperator(b.operator_id))) {
          return yield* refuse(
            "the operator has no payment account, so the refund cannot be made; cancel it in the dashboard"
          )
        }
        if (b.experience_date === null) {
          return yield* refuse(
            "the booking has no departure day, so the guest cannot be told what was cancelled; cancel it in the dashboard"
          )
        }
        if (b.provider_reference !== null && b.account_id === null) {
          return yield* refuse(
            "the booking has a booking-system reference but its operator is not linked to a booking system, so its seats cannot be released"
          )
        }
        return payments.right
      })

    /**
     * Every check `cancel` makes before it changes anything, changing nothing (the assistant's first
     * call of `cancel_booking`): the booking, whether it is already cancelled, and what the guest
     * would get back. A change of the booking still open answers 409, as the cancel would.
     */
    const preview = Effect.fn("Cancels.preview")(function*(id: string, operatorIds: ReadonlyArray<string>) {
      const b = yield* loadBooking(id, operatorIds)
      if (!isLive(b.status)) return { booking: b, alreadyCancelled: true, refundMinor: 0 }
      if ((yield* changes.seen(b.id)).open !== undefined) return yield* changeRunning()
      if (Option.isSome(yield* changes.lastDoneCancel(b.id))) {
        return { booking: b, alreadyCancelled: true, refundMinor: 0 }
      }
      const payments = yield* refundable(b)
      return { booking: b, alreadyCancelled: false, refundMinor: payments.reduce((sum, p) => sum + p.amountMinor, 0) }
    })

    const cancel = Effect.fn("Cancels.cancel")(
      function*(id: string, request: { readonly reason: string }, ctx: WriteContext) {
        // Before the booking is read: the claim holds only if no change was made since (src/partner/bookingChanges/BookingChanges.ts).
        const seen = yield* bookingChanges.seen(id)
        const b = yield* loadBooking(id, ctx.operatorIds)
        yield* ctx.target(b.operator_id)
        if (!isLive(b.status)) return yield* previousCancel(b)

        // A change of this booking still open: running (409), or a cancel left by a crash (finish it).
        const { open } = yield* changes.seen(b.id)
        if (open !== undefined) {
          const change = open.leaseExpired && open.kind === "cancel"
            ? yield* changes.findCancel(open.id)
            : Option.none()
          if (Option.isNone(change) || !change.value.lease_expired) return yield* changeRunning()
          yield* ctx.beforeChange
          const outcome = yield* recovery.recoverOne(change.value)
          if (outcome === "pending") return yield* noAnswer("finishing an earlier cancel of this booking")
          if (outcome === "completed") return yield* previousCancel(yield* loadBooking(id, ctx.operatorIds), true)
        }
        // Seats released earlier, refund still being finished: that cancel stands.
        if (Option.isSome(yield* changes.lastDoneCancel(b.id))) return yield* previousCancel(b)

        yield* refundable(b)

        // Step 1: the intent, committed before the booking system is asked (and the daily slot taken).
        yield* ctx.beforeChange
        const changeId = yield* bookingChanges.claim(seen, {
          kind: "cancel",
          bookingId: b.id,
          keyId: ctx.keyId,
          accountId: b.account_id,
          bookingReference: b.provider_reference,
          reason: request.reason
        })

        // Step 2: the booking system releases the seats (a booking it never knew holds none).
        if (b.provider_reference !== null && b.account_id !== null) {
          const account = (yield* Effect.orDie(accounts.byId(b.account_id))).account
          const cancelled = yield* bookingSystem.cancel(account, b.provider_reference, request.reason).pipe(
            Effect.either
          )
          if (Either.isLeft(cancelled)) {
            const error = cancelled.left
            if (error._tag === "BookingSystemRejected" && error.reason !== "not_found") {
              yield* changes.abandon(changeId, "cancel", `${error.reason}: ${error.detail}`)
              return yield* refuse(
                `the booking system refused to cancel the booking (${error.reason}): ${error.detail}`
              )
            }
            if (error._tag === "BookingSystemUnavailable") {
              // No answer: the cancel may or may not have happened. Ask once.
              const released = yield* recovery.releasedInBookingSystem(b.account_id, b.provider_reference)
              // Unknown: the change stays `releasing`; the job (or a retry after the lease) settles it.
              if (Either.isLeft(released)) return yield* noAnswer("cancelling the booking")
              if (!released.right) {
                yield* changes.abandon(
                  changeId,
                  "cancel",
                  `the booking system did not answer the cancel: ${error.detail}`
                )
                return yield* noAnswer("cancelling the booking")
              }
            }
          }
        }
        yield* crash.reached("cancel.after_release")
        yield* recovery.release(changeId, b.id)
        yield* crash.reached("cancel.after_released")

        // Steps 3 and 4.
        const result = yield* recovery.finish(changeId)
        if (result === undefined) return yield* previousCancel(yield* loadBooking(id, ctx.operatorIds), true)
        const done: WriteDone<CancelResultBody> = {
          body: {
            id: b.id,
            status: apiStatusOf(result.outcome.status),
            already_cancelled: false,
            refund: { outcome: result.outcome.outcome, amount_minor: result.amountMinor, currency: result.currency }
          },
          noop: false
        }
        return done
      }
    )

    return { cancel, preview, recover: recovery.recover, refundLate: refunds.refundLate } as const
  }),
  dependencies: [
    BookingSystemAccounts.Default,
    OperatorPaymentAccounts.Default,
    CrashPoints.Default,
    CancelsRepo.Default,
    CancelRefundsRepo.Default,
    BookingChangesRepo.Default,
    BookingChanges.Default,
    CancelRecovery.Default,
    CancelRefunds.Default
  ]
}) {}
