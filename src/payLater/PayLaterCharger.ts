/**
 * The `pay-later-charger` job's work (src/jobs/payLaterCharger.ts; rules in rules.ts; docs/api/pay-later.md):
 * each run claims up to PAY_LATER_CHARGER_BATCH due charges (SKIP LOCKED and a lease: two instances
 * never take the same one) and works on each:
 *
 * 1. An attempt whose outcome is unknown (sent, then a timeout, a lost answer or a crash) is resolved
 *    first by reading the charge at the provider by its reference (`findCharge`): found, its outcome
 *    counts; not found, the same attempt is sent again with the same idempotency reference (the
 *    provider answers the first call's answer if it did get it: never a second charge). A provider
 *    that does not answer leaves it for the next run.
 * 2. Otherwise a new attempt: no saved card or the deadline passed → failed for good; else the
 *    attempt (its idempotency reference) is committed BEFORE the provider is called
 *    (crash point `pay_later.after_attempt_recorded`), then `chargeSavedCard`.
 * 3. The outcome moves the booking's `pay_later_status` and the charge in one transaction: paid →
 *    collected (with the booking's payment on record, so a cancel refunds it); soft decline → failed
 *    and retrying at the next time of the schedule; hard decline, SCA, no retry left, deadline →
 *    failed for good, and then the guest is emailed the balance payment link and the operator told
 *    (PayLaterFailureNotice; a failed-for-good charge not told yet is claimed again until it is).
 *
 * One charge's failure (a defect included) is logged and counted, never the run's.
 */
import { Cause, Clock, Effect, Option } from "effect"
import { CrashPoints } from "../lib/CrashPoints.js"
import { annotateSpan } from "../observability/spanFn.js"
import { OperatorPaymentAccounts } from "../payments/OperatorPaymentAccounts.js"
import {
  type PaymentAccount,
  PaymentProvider,
  type PaymentProviderError,
  type SavedCardChargeResult
} from "../ports/PaymentProvider.js"
import { PayLaterConfig } from "./config.js"
import { PayLaterFailureNotice } from "./FailureNotice.js"
import { type DueCharge, PayLaterChargesRepo } from "./PayLaterChargesRepo.js"
import { afterAttempt, attemptReference, beforeAttempt } from "./rules.js"

export type ChargeStep =
  | "collected"
  | "retrying"
  | "failed"
  | "told"
  | "unknown"
  | "gone"
  | "error"

export interface ChargerSummary {
  readonly claimed: number
  readonly collected: number
  readonly retrying: number
  readonly failed: number
  readonly told: number
  readonly unknown: number
  readonly errors: number
}

export class PayLaterCharger extends Effect.Service<PayLaterCharger>()("PayLater/PayLaterCharger", {
  effect: Effect.gen(function*() {
    const repo = yield* PayLaterChargesRepo
    const provider = yield* PaymentProvider
    const paymentAccounts = yield* OperatorPaymentAccounts
    const notice = yield* PayLaterFailureNotice
    const crash = yield* CrashPoints
    const config = yield* PayLaterConfig

    /** Stops the charge for good, then tells the guest and the operator. */
    const stop = (charge: DueCharge, message: string) =>
      Effect.gen(function*() {
        const moved = yield* repo.markFailed({ chargeId: charge.id, bookingId: charge.booking_id, at: null, message })
        if (!moved) return "gone" as ChargeStep
        // Not told now (the provider did not answer for the link): the next run tells them.
        return yield* notice.tell(charge, message).pipe(
          Effect.as("told" as ChargeStep),
          Effect.catchAll((e) =>
            Effect.as(
              Effect.logWarning(`pay-later charge ${charge.id}: guest and operator not told yet`, e),
              "failed" as ChargeStep
            )
          )
        )
      })

    /** The outcome of attempt `attempt` (its reference), applied. */
    const apply = (
      charge: DueCharge,
      account: PaymentAccount,
      reference: string,
      attempt: number,
      result: SavedCardChargeResult,
      now: Date
    ) =>
      Effect.gen(function*() {
        if (result.outcome === "pending") return "unknown" as ChargeStep
        const next = afterAttempt({
          outcome: result.outcome,
          declineReason: result.declineReason,
          attempt,
          now,
          finalDeadlineAt: charge.final_deadline_at
        })
        const finished = repo.finishAttempt({
          reference,
          outcome: result.outcome,
          declineReason: result.declineReason,
          orderId: result.orderId,
          now
        })
        switch (next._tag) {
          case "Collected": {
            const paidAt = result.paidAt ?? now
            const moved = yield* repo.withTransaction(Effect.gen(function*() {
              yield* finished
              const moved = yield* repo.markCollected({ chargeId: charge.id, bookingId: charge.booking_id, paidAt })
              yield* repo.insertPayment({
                bookingId: charge.booking_id,
                merchantId: account.merchantId,
                orderId: result.orderId,
                paymentId: result.paymentId,
                amountMinor: charge.amount_minor,
                currency: charge.currency,
                paidAt
              })
              return moved
            }))
            if (!moved) {
              // Cancelled meanwhile: the money is on record as the booking's payment; the cancel's refund returns it.
              yield* Effect.logWarning(`pay-later charge ${charge.id} was paid after its booking stopped owing it`)
            }
            return "collected" as ChargeStep
          }
          case "Retry":
            yield* repo.withTransaction(Effect.zipRight(
              finished,
              repo.markFailed({ chargeId: charge.id, bookingId: charge.booking_id, at: next.at, message: next.message })
            ))
            return "retrying" as ChargeStep
          case "Stop":
            yield* finished
            return yield* stop(charge, next.message)
        }
      })

    const send = (charge: DueCharge, account: PaymentAccount, reference: string) =>
      provider.chargeSavedCard(account, {
        tokenId: charge.token_id ?? "",
        amountMinor: charge.amount_minor,
        currency: charge.currency,
        referenceId: reference,
        description: `Balance ${charge.confirmation_code}${charge.tour_name ? `, ${charge.tour_name}` : ""}`,
        idempotencyReference: reference
      })

    /** An answer that is no answer: unknown (try to learn it next run), or a definite "no" (a hard decline). */
    const onProviderError = (
      charge: DueCharge,
      account: PaymentAccount,
      reference: string,
      attempt: number,
      now: Date
    ) =>
    (e: PaymentProviderError) =>
      e._tag === "PaymentProviderUnavailable"
        ? Effect.as(
          Effect.logWarning(`pay-later charge ${charge.id}: outcome unknown (${e.reason})`),
          "unknown" as const
        )
        : apply(charge, account, reference, attempt, {
          orderId: "",
          paymentId: null,
          outcome: "hard_decline",
          declineReason: e.reason.toUpperCase(),
          paidAt: null
        }, now)

    const sendAndApply = (charge: DueCharge, account: PaymentAccount, reference: string, attempt: number, now: Date) =>
      Effect.flatMap(
        Effect.either(send(charge, account, reference)),
        (answer) =>
          answer._tag === "Left"
            ? onProviderError(charge, account, reference, attempt, now)(answer.left)
            : apply(charge, account, reference, attempt, answer.right, now)
      )

    const work = (charge: DueCharge, now: Date) =>
      Effect.gen(function*() {
        const found = yield* paymentAccounts.forOperator(charge.operator_id)
        if (charge.state === "failed" && !charge.retrying) {
          // Failed for good earlier; its guest and operator were not told yet.
          return yield* notice.tell(charge, charge.failure_message ?? "the balance could not be charged").pipe(
            Effect.as("told" as ChargeStep),
            Effect.catchAll((e) =>
              Effect.as(Effect.logWarning(`pay-later charge ${charge.id}: not told yet`, e), "failed" as ChargeStep)
            )
          )
        }
        if (Option.isNone(found)) return yield* stop(charge, "the operator has no payment account")
        const account = found.value

        const open = yield* repo.openAttempt(charge.id)
        if (Option.isSome(open)) {
          const { idempotency_reference: reference, number } = open.value
          const at = { ...account, merchantId: open.value.merchant_id }
          const known = yield* provider.findCharge(at, reference).pipe(Effect.either)
          if (known._tag === "Left") return yield* onProviderError(charge, at, reference, number, now)(known.left)
          if (known.right !== null) return yield* apply(charge, at, reference, number, known.right, now)
          // Never reached the provider: the same attempt again, under the same reference.
          return yield* sendAndApply(charge, at, reference, number, now)
        }

        const refused = beforeAttempt({ tokenId: charge.token_id, now, finalDeadlineAt: charge.final_deadline_at })
        if (refused !== null) return yield* stop(charge, refused.message)

        const number = charge.attempts + 1
        const reference = attemptReference(charge.id, number)
        yield* repo.insertAttempt({
          chargeId: charge.id,
          number,
          reference,
          merchantId: account.merchantId,
          amountMinor: charge.amount_minor,
          currency: charge.currency,
          now
        })
        yield* crash.reached("pay_later.after_attempt_recorded")
        return yield* sendAndApply(charge, account, reference, number, now)
      })

    /** One charge: its failure (a defect too) is logged and counted, and the claim is let go in every case. */
    const one = (charge: DueCharge, now: Date) =>
      work(charge, now).pipe(
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause)
            ? Effect.failCause(cause)
            : Effect.as(Effect.logError(`pay-later charge ${charge.id} failed`, cause), "error" as ChargeStep)
        ),
        Effect.ensuring(Effect.ignore(repo.release(charge.id))),
        Effect.annotateLogs({ pay_later_charge: charge.id })
      )

    /** One run: every due charge claimed now (`at` overrides the clock, for tests and the benchmark). */
    const run = Effect.fn("PayLaterCharger.run")(
      function*(options: { readonly at?: Date; readonly batch?: number } = {}) {
        const now = options.at ?? new Date(yield* Clock.currentTimeMillis)
        const claimed = yield* repo.claimDue({
          now,
          leaseUntil: new Date(now.getTime() + config.leaseSeconds * 1000),
          batch: options.batch ?? config.batchSize
        })
        const steps = yield* Effect.forEach(claimed, (c) => one(c, now), { concurrency: config.concurrency })
        const count = (s: ChargeStep) => steps.filter((x) => x === s).length
        const summary: ChargerSummary = {
          claimed: claimed.length,
          collected: count("collected"),
          retrying: count("retrying"),
          failed: count("failed") + count("told"),
          told: count("told"),
          unknown: count("unknown"),
          errors: count("error")
        }
        yield* annotateSpan({ ...summary })
        return summary
      }
    )

    return { run } as const
  }),
  dependencies: [
    PayLaterChargesRepo.Default,
    OperatorPaymentAccounts.Default,
    PayLaterFailureNotice.Default,
    CrashPoints.Default
  ]
}) {}
