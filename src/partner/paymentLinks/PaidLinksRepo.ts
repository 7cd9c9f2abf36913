/**
 * The SQL of recording a payment link the guest paid (PaidLinkRecorder.ts): the link's lock and its
 * close as paid, the booking's payment, its pay-later balance collected, and the booking's cancel
 * (the refund of this payment under it is written by src/partner/cancels/CancelRefundsRepo.ts, like
 * every cancel refund). All called inside the recorder's `withTransaction` (they join it: it is
 * fiber-local), most under row locks taken here.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { IdRow, repoEdge, transactionAtEdge } from "../../db/repoEdge.js"
import { insertBalancePayment, type NewBalancePayment } from "../../payments/balancePayment.js"

/** A paid link's booking only in the booking system, as its mirror shows it (and the team's email needs it). */
export const PaidRowMirror = Schema.Struct({
  /** Every line of the booking is CANCELLED. */
  cancelled: Schema.Boolean,
  reference: Schema.NullOr(Schema.String),
  tour_name: Schema.NullOr(Schema.String),
  departure_date: Schema.String,
  start_time: Schema.NullOr(Schema.String),
  guest_name: Schema.NullOr(Schema.String),
  operator_id: Schema.String,
  operator_name: Schema.String,
  operator_timezone: Schema.String
})
export type PaidRowMirror = typeof PaidRowMirror.Type

export class PaidLinksRepo extends Effect.Service<PaidLinksRepo>()("Partner/PaidLinksRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const lockCancel = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ id: Schema.String, state: Schema.Literal("releasing", "released", "done") }),
      execute: (bookingId) =>
        sql`
          SELECT id, state FROM booking_changes
          WHERE booking_id = ${bookingId}::uuid AND kind = 'cancel' AND state IN ('releasing', 'released', 'done')
          ORDER BY created_at DESC LIMIT 1 FOR UPDATE`
    })

    const lockLink = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ state: Schema.String, closed_reason: Schema.NullOr(Schema.String) }),
      execute: (linkId) => sql`SELECT state, closed_reason FROM payment_links WHERE id = ${linkId}::uuid FOR UPDATE`
    })

    const mirrorOfRow = SqlSchema.findOne({
      Request: Schema.Struct({ manifestRowId: Schema.String, operatorId: Schema.String }),
      Result: PaidRowMirror,
      execute: ({ manifestRowId, operatorId }) =>
        sql`
          SELECT NOT EXISTS (
              SELECT 1 FROM manifest_rows line
              WHERE line.account_id = r.account_id AND line.booking_id = r.booking_id AND line.status <> 'CANCELLED') AS cancelled,
            r.reference, coalesce(t.title, r.product_title) AS tour_name, r.departure_date::text AS departure_date, r.start_time,
            r.guest_name, o.id AS operator_id, o.name AS operator_name, o.timezone AS operator_timezone
          FROM manifest_rows r JOIN operators o ON o.id = ${operatorId}::uuid LEFT JOIN tours t ON t.id = r.tour_id
          WHERE r.id = ${manifestRowId}::uuid`
    })

    const insertPayment = insertBalancePayment(sql)

    const lockBooking = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ status: Schema.String, pay_later_status: Schema.NullOr(Schema.String) }),
      execute: (bookingId) =>
        sql`SELECT status, pay_later_status FROM bookings WHERE id = ${bookingId}::uuid FOR UPDATE`
    })

    const insertDoneCancel = SqlSchema.single({
      Request: Schema.Struct({ bookingId: Schema.String, reason: Schema.String }),
      Result: IdRow,
      execute: ({ bookingId, reason }) =>
        sql`
          INSERT INTO booking_changes (booking_id, kind, state, reason, refund_outcome, lease_until, finished_at)
          VALUES (${bookingId}::uuid, 'cancel', 'done', ${reason}, 'pending', now(), now())
          RETURNING id`
    })

    const markCollected = SqlSchema.findOne({
      Request: Schema.Struct({ bookingId: Schema.String, paidAt: Schema.DateFromSelf }),
      Result: IdRow,
      execute: ({ bookingId, paidAt }) =>
        sql`
          UPDATE bookings SET pay_later_status = 'collected', pay_later_paid_at = ${paidAt}, updated_at = now()
          WHERE id = ${bookingId}::uuid AND pay_later_status IN ('upcoming', 'failed')
          RETURNING id`
    })

    const closePaid = SqlSchema.void({
      Request: Schema.Struct({ linkId: Schema.String, providerLinkId: Schema.String }),
      execute: ({ linkId, providerLinkId }) =>
        sql`
          UPDATE payment_links SET state = 'closed', closed_reason = 'paid',
            provider_link_id = coalesce(provider_link_id, ${providerLinkId}), last_checked_at = now(), last_error = NULL,
            updated_at = now()
          WHERE id = ${linkId}::uuid`
    })

    return {
      ...repoEdge("PaidLinksRepo", {
        /** The latest cancel of the booking that has begun (releasing, released or done), locked. */
        lockCancel,
        /** The link's row, locked: its state and why it was closed. */
        lockLink,
        /** The mirror of a link's manifest row (with the link's operator): whether every line of its booking is cancelled. */
        mirrorOfRow: (manifestRowId: string, operatorId: string) => mirrorOfRow({ manifestRowId, operatorId }),
        /** The payment on the booking; none when this provider order is on record already. */
        insertPayment: (payment: NewBalancePayment) => Effect.map(insertPayment(payment), Option.map((r) => r.id)),
        /** The booking, locked. */
        lockBooking,
        /** A `done` cancel change for a booking cancelled elsewhere, to refund under; its id. */
        insertDoneCancel: (bookingId: string, reason: string) =>
          Effect.map(insertDoneCancel({ bookingId, reason }), (r) => r.id),
        /** The pay-later balance collected; false when it was not upcoming or failed. */
        markCollected: (bookingId: string, paidAt: Date) =>
          Effect.map(markCollected({ bookingId, paidAt }), Option.isSome),
        /** The link closed as paid. */
        closePaid: (linkId: string, providerLinkId: string) => closePaid({ linkId, providerLinkId })
      }),
      withTransaction: transactionAtEdge(sql)
    }
  })
}) {}
