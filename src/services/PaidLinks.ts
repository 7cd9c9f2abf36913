/**
 * A balance payment link the guest paid, recorded once (docs/api/writes.md "When the guest pays").
 * Both places that learn of a payment use it: the payment-link write when the provider says a link
 * it looks at is paid (src/services/PaymentLinks.ts), and the `payment-link-watch` job
 * (src/services/PaymentLinkWatch.ts).
 *
 * One transaction, under the link row's lock:
 * - a link of a service booking becomes a `booking_payments` row (purpose `balance`, the provider's
 *   order id behind the link, its payment id, amount, currency and payment time), so that a cancel
 *   refunds it; unique (merchant_id, provider_order_id) makes a second recording a no-op;
 * - a `deferred_balance` link also marks the booking's pay-later balance `collected`
 *   (`pay_later_paid_at` = when the guest paid);
 * - a link of a booking only in the booking system (`manifest_row_id`) has no service booking to
 *   record on: it is only closed;
 * - the link is closed (`paid`).
 * A link already closed as paid is left alone. Money that should not have come in (the booking was
 * cancelled, its balance was collected another way or cancelled, or the amount differs from the
 * link's) is recorded all the same and logged as an error with `alert=payment_link_unexpected_payment`:
 * a person decides what goes back.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect } from "effect"
import type { NewPaymentLink, PaymentLinkStatus } from "../ports/PaymentProvider.js"

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

export class PaidLinks extends Effect.Service<PaidLinks>()("PaidLinks", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Records that the provider says `link` is paid (`status.state` is `paid`). */
    const record = (link: LinkRow, status: PaymentLinkStatus) =>
      Effect.gen(function*() {
        const paidAt = status.paidAt ?? new Date(yield* Clock.currentTimeMillis)
        const amountMinor = status.paidMinor > 0 ? status.paidMinor : link.amount_minor
        const currency = (status.currency || link.currency).trim().toUpperCase()
        const outcome = yield* sql.withTransaction(Effect.gen(function*() {
          const [row] = yield* sql<{ state: string; closed_reason: string | null }>`
            SELECT state, closed_reason FROM payment_links WHERE id = ${link.id}::uuid FOR UPDATE`
          if (row === undefined) return yield* Effect.dieMessage(`payment link ${link.id} is gone`)
          if (row.state === "closed" && row.closed_reason === "paid") return { outcome: "already_recorded" as const, problems: [] }
          const problems: Array<string> = []
          if (amountMinor !== link.amount_minor || currency !== link.currency.trim()) {
            problems.push(`paid ${amountMinor} ${currency}, the link asked for ${link.amount_minor} ${link.currency.trim()}`)
          }
          if (row.state === "closed") problems.push(`the link had been closed here (${row.closed_reason ?? "no reason"})`)
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
              if (booking !== undefined && booking.status !== "CONFIRMED" && booking.status !== "RESERVED") {
                problems.push(`the booking is ${booking.status}`)
              }
              if (link.kind === "deferred_balance") {
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
          return { outcome: "recorded" as const, problems }
        })).pipe(Effect.orDie)
        if (outcome.problems.length > 0) {
          yield* Effect.logError(
            `payment link ${link.id} was paid, but ${outcome.problems.join("; ")}: a person decides what goes back`
          ).pipe(Effect.annotateLogs({
            alert: "payment_link_unexpected_payment",
            payment_link_id: link.id,
            booking_id: link.booking_id ?? "",
            manifest_row_id: link.manifest_row_id ?? ""
          }))
        }
        return outcome.outcome satisfies PaidOutcome
      }).pipe(Effect.withSpan("PaidLinks.record", { attributes: { link: link.id, kind: link.kind } }))

    return { record } as const
  })
}) {}
