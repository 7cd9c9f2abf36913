/**
 * A balance payment link the guest paid, recorded once (docs/api/writes.md "When the guest pays").
 * Both places that learn of a payment use it: the payment-link write when the provider says a link
 * it looks at is paid (src/partner/paymentLinks/PaymentLinks.ts), and the `payment-link-watch` job
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
import { SqlClient } from "@effect/sql"
import { Clock, Effect } from "effect"
import { refundMethod, refundReference } from "../cancels/rules.js"
import type { NewPaymentLink, PaymentLinkStatus } from "../../ports/PaymentProvider.js"
import { Outbox } from "../../email/Outbox.js"
import { teamLocale } from "../../email/rules.js"
import { linkRefundReference } from "./LinkRefunds.js"

/** A `payment_links` row. */
export interface LinkRow {
  readonly id: string
  readonly target: string
  readonly booking_id: string | null
  readonly manifest_row_id: string | null
  readonly operator_id: string
  readonly kind: "deferred_balance" | "provider_balance"
  readonly state: "creating" | "open" | "closing" | "closed"
  readonly amount_minor: number
  readonly currency: string
  readonly merchant_id: string
  readonly idempotency_reference: string
  readonly provider_reference_id: string
  readonly description: string
  readonly provider_link_id: string | null
  readonly url: string | null
  readonly expires_at: Date | null
  readonly checks: number
}

export const LINK_COLUMNS = `id, target, booking_id, manifest_row_id, operator_id, kind, state, amount_minor, currency,
  merchant_id, idempotency_reference, provider_reference_id, description, provider_link_id, url, expires_at, checks`

/** The request first sent with the row's idempotency reference: sending it again gets the same link. */
export const linkRequest = (row: LinkRow): NewPaymentLink => ({
  amountMinor: row.amount_minor,
  currency: row.currency.trim(),
  referenceId: row.provider_reference_id,
  description: row.description,
  idempotencyReference: row.idempotency_reference
})

/** The reference of the one call that closes a link at the provider (the write's `retire` and the job alike). */
export const cancelReference = (row: LinkRow) => `${row.idempotency_reference}:cancel`

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

export class PaidLinkRecorder extends Effect.Service<PaidLinkRecorder>()("PaidLinkRecorder", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const outbox = yield* Outbox

    /**
     * A paid link of a booking only in the booking system, inside `record`'s transaction: when the
     * booking is cancelled, the refund's intent (before any call) and the team's email. Whether a
     * refund row was written now.
     */
    const refundIfCancelled = (
      link: LinkRow,
      status: PaymentLinkStatus,
      paid: { readonly amountMinor: number; readonly currency: string; readonly paidAt: Date; readonly now: Date },
      options: RecordOptions
    ) =>
      Effect.gen(function*() {
        const [row] = yield* sql<{
          cancelled: boolean
          reference: string | null
          tour_name: string | null
          departure_date: string
          start_time: string | null
          guest_name: string | null
          operator_id: string
          operator_name: string
          operator_timezone: string
        }>`
          SELECT NOT EXISTS (
              SELECT 1 FROM manifest_rows line
              WHERE line.account_id = r.account_id AND line.booking_id = r.booking_id AND line.status <> 'CANCELLED') AS cancelled,
            r.reference, coalesce(t.title, r.product_title) AS tour_name, r.departure_date::text AS departure_date, r.start_time,
            r.guest_name, o.id AS operator_id, o.name AS operator_name, o.timezone AS operator_timezone
          FROM manifest_rows r JOIN operators o ON o.id = ${link.operator_id}::uuid LEFT JOIN tours t ON t.id = r.tour_id
          WHERE r.id = ${link.manifest_row_id}::uuid`
        if (row === undefined || !(row.cancelled || options.bookingSystemCancelled === true)) return false
        const method = refundMethod(
          { id: link.id, amountMinor: paid.amountMinor, currency: paid.currency, paidAt: paid.paidAt, providerPaymentId: status.paymentId },
          paid.now
        )
        const [made] = yield* sql<{ id: string }>`
          INSERT INTO payment_link_refunds (link_id, seq, method, idempotency_reference, merchant_id, purchase_order_id, payment_id,
            amount_minor, currency, paid_at, reason)
          VALUES (${link.id}::uuid, 1, ${method}, ${linkRefundReference(link.idempotency_reference, 1)}, ${link.merchant_id},
            ${status.linkId}, ${status.paymentId}, ${paid.amountMinor}, ${paid.currency}, ${paid.paidAt}, ${LINK_REFUND_REASON})
          ON CONFLICT (link_id, seq) DO NOTHING
          RETURNING id`
        if (made === undefined) return false
        const team = yield* outbox.teamAddresses(row.operator_id)
        if (team.length > 0) {
          yield* outbox.enqueue({
            dedupeKey: `payment_link:${link.id}:refunded:team`,
            to: team,
            locale: teamLocale(row.operator_timezone),
            operatorId: row.operator_id,
            bookingId: link.manifest_row_id,
            template: "balance_refunded_team",
            data: {
              operatorName: row.operator_name,
              tourName: row.tour_name && row.tour_name.trim() ? row.tour_name : "your tour",
              bookingReference: row.reference && row.reference.trim() ? row.reference : link.provider_reference_id,
              departure: { date: row.departure_date, startTime: row.start_time },
              guestName: row.guest_name,
              amount: { amountMinor: paid.amountMinor, currency: paid.currency }
            }
          })
        }
        return true
      })

    /** Records that the provider says `link` is paid (`status.state` is `paid`). */
    const record = (link: LinkRow, status: PaymentLinkStatus, options: RecordOptions = {}) =>
      Effect.gen(function*() {
        const now = new Date(yield* Clock.currentTimeMillis)
        const paidAt = status.paidAt ?? now
        const amountMinor = status.paidMinor > 0 ? status.paidMinor : link.amount_minor
        const currency = (status.currency || link.currency).trim().toUpperCase()
        const done = yield* sql.withTransaction(Effect.gen(function*() {
          // The booking's cancel, locked first (see the header; the cancel's own steps lock it first too).
          const [change] = link.booking_id === null ? [] : yield* sql<{ id: string; state: "releasing" | "released" | "done" }>`
            SELECT id, state FROM booking_changes
            WHERE booking_id = ${link.booking_id}::uuid AND kind = 'cancel' AND state IN ('releasing', 'released', 'done')
            ORDER BY created_at DESC LIMIT 1 FOR UPDATE`
          const [row] = yield* sql<{ state: string; closed_reason: string | null }>`
            SELECT state, closed_reason FROM payment_links WHERE id = ${link.id}::uuid FOR UPDATE`
          if (row === undefined) return yield* Effect.dieMessage(`payment link ${link.id} is gone`)
          if (row.state === "closed" && row.closed_reason === "paid") {
            return { outcome: "already_recorded" as const, problems: [], refund: null, refundedLate: false, linkRefund: false }
          }
          const problems: Array<string> = []
          let refund: Recorded["refund"] = null
          let refundedLate = false
          if (amountMinor !== link.amount_minor || currency !== link.currency.trim()) {
            problems.push(`paid ${amountMinor} ${currency}, the link asked for ${link.amount_minor} ${link.currency.trim()}`)
          }
          if (row.state === "closed") problems.push(`the link had been closed here (${row.closed_reason ?? "no reason"})`)
          let linkRefund = false
          if (link.booking_id === null && link.manifest_row_id !== null) {
            linkRefund = yield* refundIfCancelled(link, status, { amountMinor, currency, paidAt, now }, options)
            refundedLate = linkRefund
          }
          if (link.booking_id !== null) {
            const [inserted] = yield* sql<{ id: string }>`
              INSERT INTO booking_payments (booking_id, purpose, merchant_id, provider_order_id, provider_payment_id, amount_minor,
                currency, paid_at)
              VALUES (${link.booking_id}::uuid, 'balance', ${link.merchant_id}, ${status.linkId}, ${status.paymentId}, ${amountMinor},
                ${currency}, ${paidAt})
              ON CONFLICT (merchant_id, provider_order_id) DO NOTHING
              RETURNING id`
            // This payment is on record already (the order was recorded before): only the link is left to close.
            if (inserted !== undefined) {
              const [booking] = yield* sql<{ status: string; pay_later_status: string | null }>`
                SELECT status, pay_later_status FROM bookings WHERE id = ${link.booking_id}::uuid FOR UPDATE`
              const live = booking !== undefined && (booking.status === "CONFIRMED" || booking.status === "RESERVED")
              let changeId = change === undefined || change.state === "releasing" ? null : change.id
              if (change === undefined && booking !== undefined && !live) {
                // Cancelled elsewhere: a cancel change of this service is recorded to refund under.
                const [made] = yield* sql<{ id: string }>`
                  INSERT INTO booking_changes (booking_id, kind, state, reason, refund_outcome, lease_until, finished_at)
                  VALUES (${link.booking_id}::uuid, 'cancel', 'done', ${LATE_PAYMENT_REASON}, 'pending', now(), now())
                  RETURNING id`
                changeId = made!.id
              }
              if (changeId !== null) {
                const method = refundMethod({ id: inserted.id, amountMinor, currency, paidAt, providerPaymentId: status.paymentId }, now)
                yield* sql`
                  INSERT INTO booking_refunds (change_id, booking_id, payment_id, seq, method, idempotency_reference, amount_minor, currency, state)
                  VALUES (${changeId}::uuid, ${link.booking_id}::uuid, ${inserted.id}::uuid, 1, ${method},
                    ${refundReference(changeId, inserted.id, 1)}, ${amountMinor}, ${currency}, 'requested')
                  ON CONFLICT (change_id, payment_id, seq) DO NOTHING`
                refund = { changeId, changeState: change?.state === "released" ? "released" : "done" }
              }
              // A cancel still `releasing` may yet be abandoned: the payment counts as usual (and is refunded
              // with the others if the cancel goes on).
              refundedLate = changeId !== null
              if (!refundedLate && link.kind === "deferred_balance") {
                const [collected] = yield* sql<{ id: string }>`
                  UPDATE bookings SET pay_later_status = 'collected', pay_later_paid_at = ${paidAt}, updated_at = now()
                  WHERE id = ${link.booking_id}::uuid AND pay_later_status IN ('upcoming', 'failed')
                  RETURNING id`
                if (collected === undefined) {
                  problems.push(`its pay-later balance was already ${booking?.pay_later_status ?? "gone"}`)
                }
              }
            }
          }
          yield* sql`
            UPDATE payment_links SET state = 'closed', closed_reason = 'paid',
              provider_link_id = coalesce(provider_link_id, ${status.linkId}), last_checked_at = now(), last_error = NULL,
              updated_at = now()
            WHERE id = ${link.id}::uuid`
          return { outcome: "recorded" as const, problems, refund, refundedLate, linkRefund }
        })).pipe(Effect.orDie)
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
      }).pipe(Effect.withSpan("PaidLinkRecorder.record", { attributes: { link: link.id, kind: link.kind } }))

    return { record } as const
  })
}) {}
