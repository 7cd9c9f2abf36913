/**
 * The money of a cancel (step 3 of src/partner/cancels/Cancels.ts): each `booking_refunds` row is
 * sent to the payment provider with the idempotency reference it was written with (a void, a
 * refund, or a read of one still settling; src/payments/returnPayment.ts) and the answer recorded;
 * a void refused because the payment settled, or a refund of less than asked, gets its follow-up
 * row (the next `seq`) in the same transaction, tried in the same pass.
 *
 * After a cancel completed, its refunds still open (no answer, settling, partly returned, or a
 * payment that arrived later, PaidLinkRecorder.record) are followed up: `refundLate` (the payment-link
 * watch, at once) and `followUpDue` (the booking-change recovery job) claim the due rows (pushing
 * their next attempt out, so no other runner sends them meanwhile), send them, and `settle` moves
 * the booking forward (live → CANCELLED → REFUNDED). Money that should go back and has not is
 * alerted (`refund_incomplete`) and left to the job, or to a person when refused (`refunds` CLI).
 *
 * Crash point (CRASH_AT, src/lib/CrashPoints.ts): `cancel.after_refund` (the provider answered,
 * the answer not recorded).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Random } from "effect"
import { transactionAtEdge } from "../../db/repoEdge.js"
import { retryDelayMillis } from "../../email/rules.js"
import { CrashPoints } from "../../lib/CrashPoints.js"
import { annotateSpan } from "../../observability/spanFn.js"
import { OperatorPaymentAccounts } from "../../payments/OperatorPaymentAccounts.js"
import { type MoneyReturnUpdate, returnPayment } from "../../payments/returnPayment.js"
import { type PaymentAccount, PaymentProvider } from "../../ports/PaymentProvider.js"
import { BookingChangesRepo } from "../bookingChanges/BookingChangesRepo.js"
import { CancelRefundsRepo, type RefundRow } from "./CancelRefundsRepo.js"
import { CancelsRepo } from "./CancelsRepo.js"
import { type CancelOutcome, cancelOutcome, refundReference } from "./rules.js"

/** Backoff of a refund the provider did not confirm: 30 s doubling to an hour. */
const REFUND_RETRY = { baseMillis: 30_000, maxMillis: 3_600_000 }

/** How many passes over a change's rows one attempt makes (each pass tries the follow-ups of the last). */
const ROUNDS = 4

/** Refunds followed up after their cancel completed (one run of the job). */
export interface RefundFollowUps {
  readonly found: number
  readonly completed: number
  readonly open: number
  readonly failed: number
}

const isFollowedUp = (update: MoneyReturnUpdate) => update._tag === "Superseded" || update._tag === "Partial"

const stillOpen = (row: RefundRow) => row.state === "requested" || row.state === "settling"

export class CancelRefunds extends Effect.Service<CancelRefunds>()("Partner/CancelRefunds", {
  effect: Effect.gen(function*() {
    const transaction = transactionAtEdge(yield* SqlClient.SqlClient)
    const provider = yield* PaymentProvider
    const paymentAccounts = yield* OperatorPaymentAccounts
    const crash = yield* CrashPoints
    const repo = yield* CancelsRepo
    const refundRows = yield* CancelRefundsRepo
    const changes = yield* BookingChangesRepo

    /** The provider account a refund acts on: the operator's credentials, the payment's merchant. */
    const providerAccount = (operatorId: string, merchantId: string) =>
      Effect.flatMap(
        paymentAccounts.forOperator(operatorId),
        Option.match({
          onNone: () => Effect.dieMessage(`operator ${operatorId} has payments but no payment account`),
          onSome: (a): Effect.Effect<PaymentAccount> => Effect.succeed({ ...a, merchantId })
        })
      )

    /** Calls the provider for one row (again with the same reference when unsure) and maps its answer. */
    const callProvider = (row: RefundRow, account: PaymentAccount): Effect.Effect<MoneyReturnUpdate> =>
      returnPayment(provider, account, {
        method: row.method,
        state: row.state === "settling" ? "settling" : "requested",
        purchaseOrderId: row.provider_order_id,
        paymentId: row.provider_payment_id,
        refundOrderId: row.provider_refund_order_id,
        amountMinor: row.amountMinor,
        currency: row.currency.trim(),
        idempotencyReference: row.idempotency_reference,
        description: "Cancellation refund"
      })

    /** Records one answer; a superseded void or a partial refund gets its follow-up row in the same transaction. */
    const record = (row: RefundRow, update: MoneyReturnUpdate) =>
      transaction(Effect.gen(function*() {
        const random = yield* Random.next
        const retryInSeconds = retryDelayMillis(row.attempts + 1, REFUND_RETRY, random) / 1000
        const refundOrderId = "refundOrderId" in update ? update.refundOrderId : null
        switch (update._tag) {
          case "Completed":
            return yield* refundRows.refundCompleted({ id: row.id, refundedMinor: update.refundedMinor, refundOrderId })
          case "Settling":
            return yield* refundRows.refundSettling({ id: row.id, refundOrderId, retryInSeconds })
          case "NoAnswer":
            return yield* refundRows.refundUnanswered({ id: row.id, detail: update.detail, retryInSeconds })
          case "Failed":
            return yield* refundRows.refundFailed({ id: row.id, detail: update.detail })
          case "Superseded":
          case "Partial": {
            const partial = update._tag === "Partial" ? update : undefined
            const replaced = yield* refundRows.refundReplaced({
              id: row.id,
              state: partial ? "partial" : "superseded",
              refundedMinor: partial?.refundedMinor ?? 0,
              refundOrderId: partial?.refundOrderId ?? null,
              detail: update._tag === "Superseded" ? update.detail : null
            })
            if (!replaced) return
            const rest = row.amountMinor - (partial?.refundedMinor ?? 0)
            if (rest <= 0) return
            const seq = row.seq + 1
            yield* refundRows.insertRefund({
              changeId: row.change_id,
              bookingId: row.booking_id,
              paymentId: row.payment_id,
              seq,
              method: "refund",
              reference: refundReference(row.change_id, row.payment_id, seq),
              amountMinor: rest,
              currency: row.currency
            }, { orSkip: true })
          }
        }
      }))

    /** One call for one row, recorded; increments its attempts first so that a crash still counts. */
    const attempt = Effect.fn("CancelRefunds.attempt")(function*(row: RefundRow) {
      yield* annotateSpan({ refund: row.id, method: row.method, state: row.state })
      yield* refundRows.countRefundAttempt(row.id)
      const account = yield* providerAccount(row.operator_id, row.merchant_id)
      const update = yield* callProvider(row, account)
      yield* crash.reached("cancel.after_refund")
      yield* record(row, update)
      return update
    })

    /**
     * Every open row of a change, once each; rows that replace a superseded void or the rest of a
     * partial refund are tried in the same pass (a bounded number of rounds).
     */
    const attemptOpen = Effect.fn("CancelRefunds.attemptOpen")(function*(changeId: string) {
      for (let round = 0; round < ROUNDS; round++) {
        const rows = (yield* refundRows.refundsOfChange(changeId)).filter((r) => r.state === "requested")
        if (rows.length === 0) return
        let followUps = false
        for (const row of rows) {
          if (isFollowedUp(yield* attempt(row))) followUps = true
        }
        if (!followUps) return
      }
    })

    /** Money that should go back has not (yet): the rows are marked alerted and the service logs the alert. */
    const alertIfOpen = Effect.fn("CancelRefunds.alertIfOpen")(
      function*(bookingId: string, changeId: string, outcome: CancelOutcome) {
        if (!outcome.alert) return
        yield* refundRows.alertRefunds(changeId)
        yield* Effect.logError(
          "cancel: seats released but the refund did not complete; the refund job keeps finishing it"
        ).pipe(
          Effect.annotateLogs({ alert: "refund_incomplete", booking_id: bookingId, change_id: changeId })
        )
      }
    )

    /**
     * After a completed cancel's refunds moved on: the booking goes forward only (live to
     * CANCELLED to REFUNDED), and the change keeps the latest outcome.
     */
    const settle = Effect.fn("CancelRefunds.settle")(function*(changeId: string) {
      return yield* transaction(Effect.gen(function*() {
        const found = yield* changes.findCancel(changeId, true)
        if (Option.isNone(found) || found.value.state !== "done") return undefined
        const change = found.value
        const refunds = yield* refundRows.refundsOfChange(changeId)
        const status = yield* repo.lockStatus(change.booking_id)
        const outcome = cancelOutcome(status === "RESERVED" ? "RESERVED" : "CONFIRMED", refunds)
        const rank = (s: string) => (s === "REFUNDED" ? 2 : s === "CANCELLED" ? 1 : 0)
        if (rank(outcome.status) > rank(status)) {
          yield* repo.advanceStatus({
            bookingId: change.booking_id,
            status: outcome.status,
            refunded: outcome.outcome === "refunded"
          })
        }
        if (outcome.outcome !== change.refund_outcome) yield* changes.setRefundOutcome(changeId, outcome.outcome)
        return { outcome, bookingId: change.booking_id }
      }))
    })

    /** `settle`, then the alert when money is still owed. */
    const settleAndAlert = (changeId: string) =>
      Effect.gen(function*() {
        const settled = yield* settle(changeId)
        if (settled === undefined) return undefined
        yield* alertIfOpen(settled.bookingId, changeId, settled.outcome)
        return settled.outcome
      })

    /** One claimed row sent; a row that cannot be sent now counts as no answer (it stays due). */
    const attemptClaimed = (id: string, accept: (row: RefundRow) => boolean, failure: string) =>
      Effect.gen(function*() {
        const row = yield* refundRows.findRefund(id)
        if (Option.isNone(row) || !accept(row.value)) return undefined
        return yield* attempt(row.value).pipe(
          Effect.catchAllCause((cause) =>
            Effect.as(
              Effect.logWarning(`refund ${id} ${failure}`, cause),
              { _tag: "NoAnswer", detail: "" } as MoneyReturnUpdate
            )
          )
        )
      })

    /**
     * Sends now the refunds of a completed cancel that are due: rows written for a payment that
     * arrived after the cancel completed (a balance payment link paid late, PaidLinkRecorder.record), for
     * the payment-link watch that found it. Claimed as the job claims them (never sent by both at
     * once), sent with the reference recorded in the row, the booking moved on as the job does.
     */
    const refundLate = Effect.fn("CancelRefunds.refundLate")(function*(changeId: string) {
      yield* annotateSpan({ change: changeId })
      const due = yield* refundRows.claimLateRefunds(changeId)
      if (due.length === 0) return undefined
      let followUps = false
      for (const id of due) {
        const update = yield* attemptClaimed(id, (r) => r.state === "requested", "could not be sent now")
        if (update !== undefined && isFollowedUp(update)) followUps = true
      }
      if (followUps) yield* attemptOpen(changeId)
      return yield* settleAndAlert(changeId)
    })

    /**
     * Refunds still open after their cancel completed, due now, are tried again (same reference)
     * or read (settling), and each booking follows (the job). One failing refund never stops the
     * others.
     */
    const followUpDue = Effect.fn("CancelRefunds.followUpDue")(function*() {
      const due = yield* refundRows.claimDueRefunds()
      const counts = { found: due.length, completed: 0, open: 0, failed: 0 }
      const touched = new Set<string>()
      for (const { change_id, id } of due) {
        const update = yield* attemptClaimed(id, stillOpen, "could not be followed up")
        if (update === undefined) continue
        touched.add(change_id)
        if (update._tag === "Completed") counts.completed += 1
        else if (update._tag === "Failed") counts.failed += 1
        else counts.open += 1
        if (isFollowedUp(update)) yield* attemptOpen(change_id)
      }
      for (const changeId of touched) yield* settleAndAlert(changeId)
      return counts satisfies RefundFollowUps
    })

    return { attemptOpen, alertIfOpen, refundLate, followUpDue } as const
  }),
  dependencies: [
    OperatorPaymentAccounts.Default,
    CrashPoints.Default,
    CancelsRepo.Default,
    CancelRefundsRepo.Default,
    BookingChangesRepo.Default
  ]
}) {}
