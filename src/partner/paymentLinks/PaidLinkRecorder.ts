/**
 * A balance payment link the guest paid, recorded once (docs/api/writes.md "When the guest pays").
 * Both places that learn of a payment use it: the payment-link write when the provider says a link
 * it looks at is paid (src/partner/paymentLinks/OneLinkPerBalance.ts), and the `payment-link-watch` job
 * (src/partner/paymentLinks/LinkStatusChecks.ts).
 *
 * One transaction, under the link row's lock:
 * - a link of a service booking becomes a `booking_payments` row (purpose `balance`, the provider's
 *   order id behind the link, its payment id, amount, currency and payment time), so that a cancel
 *   refunds it; unique (merchant_id, provider_order_id) makes a second recording a no-op;
 * - a `deferred_balance` link also marks the booking's pay-later balance `collected`
 *   (`pay_later_paid_at` = when the guest paid);
 * - a link of a booking only in the booking system (`manifest_row_id`) has no service booking to
 *   record on: it is only closed, unless that booking is cancelled (below);
 * - the link is closed (`paid`).
 * A link already closed as paid is left alone.
 *
 * A payment for a booking that is being or has been cancelled goes back to the guest by itself
 * ("cancel with a full refund" holds whenever the money arrives). Under the lock of the booking's
 * cancel change (taken before the payment is written, so that a cancel recording its refunds waits
 * for it or is waited for):
 * - cancel `releasing`: recorded as usual (the cancel may yet be abandoned); the cancel writes a
 *   refund row for every payment on record when it marks the change `released`, this one included;
 * - cancel `released` or `done`: a `booking_refunds` row for this payment (void or refund, our
 *   idempotency reference `cancel:<change>:<payment>:1`) is written in the same transaction: the
 *   intent is on record before any call. The cancel still running, the booking-change recovery job,
 *   or the caller (the payment-link watch, `Cancels.refundLate`) sends it; unique (change, payment,
 *   seq) and the reference make it once;
 * - a booking cancelled without a cancel change of this service (status CANCELLED or REFUNDED set
 *   elsewhere): a `done` cancel change is recorded for it (reason "payment after cancellation"), with
 *   the refund row, the same way.
 * - a booking only in the booking system that is cancelled (every line of it cancelled in the mirror,
 *   or the caller learnt from the booking system that it is cancelled there): a
 *   `payment_link_refunds` row (void or refund, our reference `<link reference>:refund:1`) is
 *   written in the same transaction, and the operator's team is emailed (`balance_refunded_team`);
 *   `LinkRefunds.sendDue` sends it (the payment-link watch, at once and on later runs).
 * Such a payment is logged as an error with `alert=payment_link_paid_after_cancel` (refunded
 * automatically). Other money that should not have come in (its pay-later balance was collected
 * another way, or the amount differs from the link's) is recorded all the same and logged as an error
 * with `alert=payment_link_unexpected_payment`: a person decides what goes back.
 */
import { Clock, Effect, Option } from "effect"
import { Outbox } from "../../email/Outbox.js"
import { annotateSpan } from "../../observability/spanFn.js"
import type { PaymentLinkStatus } from "../../ports/PaymentProvider.js"
import { CancelRefundsRepo } from "../cancels/CancelRefundsRepo.js"
import { refundMethod, refundReference } from "../cancels/rules.js"
import { balanceRefundedTeamEmail } from "./linkEmails.js"
import { LinkRefundsRepo } from "./LinkRefundsRepo.js"
import { PaidLinksRepo } from "./PaidLinksRepo.js"
import type { LinkRow } from "./PaymentLinksRepo.js"
import { linkRefundReference } from "./rules.js"

export type PaidOutcome =
  /** Recorded now. */
  | "recorded"
  /** Recorded before (the link was already closed as paid). */
  | "already_recorded"

/** What `record` did. */
export interface Recorded {
  readonly outcome: PaidOutcome
  /**
   * The payment arrived for a cancelled booking and its refund row was written now under this
   * cancel change (`released`: the cancel in progress sends it; `done`: send it with
   * `Cancels.refundLate`, or the recovery job will).
   */
  readonly refund: { readonly changeId: string; readonly changeState: "released" | "done" } | null
  /**
   * The link is of a booking only in the booking system, which is cancelled: its payment goes back
   * (a `payment_link_refunds` row was written now; send it with `LinkRefunds.sendDue`).
   */
  readonly linkRefund: boolean
}

export interface RecordOptions {
  /**
   * For a link of a booking only in the booking system: the caller has just read the booking
   * system and the booking is cancelled there (the mirror may not show it yet).
   */
  readonly bookingSystemCancelled?: boolean | undefined
}

const LATE_PAYMENT_REASON = "payment after cancellation: refunded automatically"

const LINK_REFUND_REASON = "balance paid after the booking was cancelled in the booking system: refunded automatically"

/** The payment as the provider reports it, in the link's terms where it says nothing. */
interface Paid {
  readonly amountMinor: number
  readonly currency: string
  readonly paidAt: Date
  readonly now: Date
}

export class PaidLinkRecorder extends Effect.Service<PaidLinkRecorder>()("Partner/PaidLinkRecorder", {
  effect: Effect.gen(function*() {
    const repo = yield* PaidLinksRepo
    const refunds = yield* LinkRefundsRepo
    const cancelRefunds = yield* CancelRefundsRepo
    const outbox = yield* Outbox

    /**
     * A paid link of a booking only in the booking system, inside `record`'s transaction: when the
     * booking is cancelled, the refund's intent (before any call) and the team's email. Whether a
     * refund row was written now.
     */
    const refundIfCancelled = (
      link: LinkRow,
      manifestRowId: string,
      status: PaymentLinkStatus,
      paid: Paid,
      options: RecordOptions
    ) =>
      Effect.gen(function*() {
        const found = yield* repo.mirrorOfRow(manifestRowId, link.operator_id)
        if (Option.isNone(found) || !(found.value.cancelled || options.bookingSystemCancelled === true)) return false
        const method = refundMethod(
          {
            id: link.id,
            amountMinor: paid.amountMinor,
            currency: paid.currency,
            paidAt: paid.paidAt,
            providerPaymentId: status.paymentId
          },
          paid.now
        )
        const made = yield* refunds.insertFirst({
          linkId: link.id,
          method,
          idempotencyReference: linkRefundReference(link.idempotency_reference, 1),
          merchantId: link.merchant_id,
          purchaseOrderId: status.linkId,
          paymentId: status.paymentId,
          amountMinor: paid.amountMinor,
          currency: paid.currency,
          paidAt: paid.paidAt,
          reason: LINK_REFUND_REASON
        })
        if (!made) return false
        const team = yield* outbox.teamAddresses(found.value.operator_id)
        if (team.length > 0) yield* outbox.enqueue(balanceRefundedTeamEmail(link, found.value, team, paid))
        return true
      })

    /**
     * A paid link of a service booking, inside `record`'s transaction: the payment on the booking
     * and, when the booking's cancel has gone past `releasing` (or it was cancelled elsewhere), the
     * refund's intent under that cancel; otherwise a `deferred_balance` collected.
     */
    const recordOnBooking = (
      link: LinkRow,
      bookingId: string,
      status: PaymentLinkStatus,
      paid: Paid,
      change: Option.Option<{ readonly id: string; readonly state: "releasing" | "released" | "done" }>,
      problems: Array<string>
    ) =>
      Effect.gen(function*() {
        const inserted = yield* repo.insertPayment({
          bookingId,
          merchantId: link.merchant_id,
          orderId: status.linkId,
          paymentId: status.paymentId,
          amountMinor: paid.amountMinor,
          currency: paid.currency,
          paidAt: paid.paidAt
        })
        // This payment is on record already (the order was recorded before): only the link is left to close.
        if (Option.isNone(inserted)) return { refund: null, refundedLate: false }
        const paymentId = inserted.value
        const booking = yield* repo.lockBooking(bookingId)
        const live = Option.exists(booking, (b) => b.status === "CONFIRMED" || b.status === "RESERVED")
        let changeId = Option.isNone(change) || change.value.state === "releasing" ? null : change.value.id
        if (Option.isNone(change) && Option.isSome(booking) && !live) {
          // Cancelled elsewhere: a cancel change of this service is recorded to refund under.
          changeId = yield* repo.insertDoneCancel(bookingId, LATE_PAYMENT_REASON)
        }
        let refund: Recorded["refund"] = null
        if (changeId !== null) {
          // The refund's intent under the cancel, once.
          yield* cancelRefunds.insertRefund({
            changeId,
            bookingId,
            paymentId,
            seq: 1,
            method: refundMethod(
              {
                id: paymentId,
                amountMinor: paid.amountMinor,
                currency: paid.currency,
                paidAt: paid.paidAt,
                providerPaymentId: status.paymentId
              },
              paid.now
            ),
            reference: refundReference(changeId, paymentId, 1),
            amountMinor: paid.amountMinor,
            currency: paid.currency
          }, { orSkip: true })
          refund = {
            changeId,
            changeState: Option.isSome(change) && change.value.state === "released" ? "released" : "done"
          }
        }
        // A cancel still `releasing` may yet be abandoned: the payment counts as usual (and is refunded
        // with the others if the cancel goes on).
        const refundedLate = changeId !== null
        if (!refundedLate && link.kind === "deferred_balance" && !(yield* repo.markCollected(bookingId, paid.paidAt))) {
          const was = Option.flatMapNullable(booking, (b) => b.pay_later_status).pipe(Option.getOrElse(() => "gone"))
          problems.push(`its pay-later balance was already ${was}`)
        }
        return { refund, refundedLate }
      })

    /** Records that the provider says `link` is paid (`status.state` is `paid`). */
    const record = Effect.fn("PaidLinkRecorder.record")(
      function*(link: LinkRow, status: PaymentLinkStatus, options: RecordOptions = {}) {
        yield* annotateSpan({ link: link.id, kind: link.kind })
        const now = new Date(yield* Clock.currentTimeMillis)
        const paid: Paid = {
          amountMinor: status.paidMinor > 0 ? status.paidMinor : link.amount_minor,
          currency: (status.currency || link.currency).trim().toUpperCase(),
          paidAt: status.paidAt ?? now,
          now
        }
        const { amountMinor, currency } = paid
        const done = yield* repo.withTransaction(Effect.gen(function*() {
          // The booking's cancel, locked first (see the header; the cancel's own steps lock it first too).
          const change = link.booking_id === null ? Option.none() : yield* repo.lockCancel(link.booking_id)
          const row = yield* repo.lockLink(link.id)
          if (Option.isNone(row)) return yield* Effect.dieMessage(`payment link ${link.id} is gone`)
          const { closed_reason, state } = row.value
          if (state === "closed" && closed_reason === "paid") {
            return {
              outcome: "already_recorded" as const,
              problems: [],
              refund: null,
              refundedLate: false,
              linkRefund: false
            }
          }
          const problems: Array<string> = []
          if (amountMinor !== link.amount_minor || currency !== link.currency.trim()) {
            problems.push(
              `paid ${amountMinor} ${currency}, the link asked for ${link.amount_minor} ${link.currency.trim()}`
            )
          }
          if (state === "closed") problems.push(`the link had been closed here (${closed_reason ?? "no reason"})`)
          const linkRefund = link.booking_id === null && link.manifest_row_id !== null
            ? yield* refundIfCancelled(link, link.manifest_row_id, status, paid, options)
            : false
          const { refund, refundedLate } = link.booking_id === null
            ? { refund: null, refundedLate: linkRefund }
            : yield* recordOnBooking(link, link.booking_id, status, paid, change, problems)
          yield* repo.closePaid(link.id, status.linkId)
          return { outcome: "recorded" as const, problems, refund, refundedLate, linkRefund }
        }))
        const annotations = {
          payment_link_id: link.id,
          booking_id: link.booking_id ?? "",
          manifest_row_id: link.manifest_row_id ?? ""
        }
        if (done.refundedLate) {
          yield* Effect.logError(
            `payment link ${link.id} was paid (${amountMinor} ${currency}) after its booking's cancel began: the payment is ` +
              `refunded automatically${done.linkRefund ? "" : " with the cancel's refunds"}` +
              `${done.problems.length > 0 ? ` (${done.problems.join("; ")})` : ""}`
          ).pipe(Effect.annotateLogs({ ...annotations, alert: "payment_link_paid_after_cancel" }))
        } else if (done.problems.length > 0) {
          yield* Effect.logError(
            `payment link ${link.id} was paid, but ${done.problems.join("; ")}: a person decides what goes back`
          ).pipe(Effect.annotateLogs({ ...annotations, alert: "payment_link_unexpected_payment" }))
        }
        return { outcome: done.outcome, refund: done.refund, linkRefund: done.linkRefund } satisfies Recorded
      }
    )

    return { record } as const
  }),
  dependencies: [PaidLinksRepo.Default, LinkRefundsRepo.Default, CancelRefundsRepo.Default]
}) {}
