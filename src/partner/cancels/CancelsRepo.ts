/**
 * The SQL of cancels (src/partner/cancels/Cancels.ts and its steps): the booking as a cancel reads
 * and ends it, its payments (`booking_payments`) and its balance payment links as the cancel closes
 * them. The refund rows are ./CancelRefundsRepo.ts's; the change's own row is written by
 * src/partner/bookingChanges/BookingChangesRepo.ts. A call inside a caller's `sql.withTransaction`
 * joins that transaction.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { repoEdge } from "../../db/repoEdge.js"
import { toPgArray } from "../../db/sql.js"
import { ChangedBookingFields } from "../bookingChanges/changedBooking.js"
import { LINK_COLUMNS, LinkRow } from "../paymentLinks/PaymentLinksRepo.js"

const Status = Schema.Literal("REFUNDED", "CANCELLED", "CONFIRMED", "RESERVED")

/** The booking as a cancel decides on it. */
export const CancelBooking = Schema.Struct({
  id: Schema.String,
  status: Schema.String,
  operator_id: Schema.String,
  amount_minor: Schema.Number,
  currency: Schema.String,
  payment_strategy: Schema.Literal("pay_now", "pay_later"),
  pay_later_status: Schema.NullOr(Schema.String),
  pay_later_amount_minor: Schema.NullOr(Schema.Number),
  provider_reference: Schema.NullOr(Schema.String),
  /** The booking-system account its seats are held in (the tour's operator's, else the booking's). */
  account_id: Schema.NullOr(Schema.String),
  experience_date: Schema.NullOr(Schema.String)
})
export type CancelBooking = typeof CancelBooking.Type

/** The booking as step 4 ends it and its emails tell it (read under its lock). */
export const CancelledBooking = Schema.Struct({
  ...ChangedBookingFields,
  status: Schema.String,
  experience_date: Schema.NullOr(Schema.String),
  start_time: Schema.NullOr(Schema.String),
  currency: Schema.String
})
export type CancelledBooking = typeof CancelledBooking.Type

/** A payment the booking took (`booking_payments`), as the rules and the refund rows need it. */
export const Payment = Schema.Struct({
  id: Schema.String,
  amountMinor: Schema.Number,
  currency: Schema.String,
  paidAt: Schema.DateFromSelf,
  providerPaymentId: Schema.NullOr(Schema.String),
  merchantId: Schema.String
})

/** A `payment_links` row taken over by the cancel: the payment links' own row. */
export const ClosingLink = LinkRow
export type ClosingLink = LinkRow

export class CancelsRepo extends Effect.Service<CancelsRepo>()("Partner/CancelsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    // ---------------------------------------------------------------------------------------------
    // The booking

    const findBooking = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.String, operatorIds: Schema.Array(Schema.String) }),
      Result: CancelBooking,
      execute: ({ id, operatorIds }) =>
        sql`
          SELECT b.id, b.status, b.operator_id, b.amount_minor::int AS amount_minor, b.currency, b.payment_strategy,
            b.pay_later_status, b.pay_later_amount_minor::int AS pay_later_amount_minor, b.provider_reference, b.experience_date,
            coalesce(tour_operator.booking_system_account_id, o.booking_system_account_id) AS account_id
          FROM bookings b
          JOIN operators o ON o.id = b.operator_id
          LEFT JOIN tours t ON t.id = b.tour_id
          LEFT JOIN operators tour_operator ON tour_operator.id = t.operator_id
          WHERE b.id = ${id}::uuid AND b.operator_id = ANY(${toPgArray(operatorIds)}::uuid[])
            AND b.status IN ('RESERVED', 'CONFIRMED', 'CANCELLED', 'REFUNDED')`
    })

    const currencyOf = SqlSchema.single({
      Request: Schema.String,
      Result: Schema.Struct({ currency: Schema.String }),
      execute: (bookingId) => sql`SELECT currency FROM bookings WHERE id = ${bookingId}::uuid`
    })

    const lockForCompletion = SqlSchema.single({
      Request: Schema.Struct({ bookingId: Schema.String, keyId: Schema.NullOr(Schema.String) }),
      Result: CancelledBooking,
      execute: ({ bookingId, keyId }) =>
        sql`
          SELECT b.status, b.operator_id, o.name AS operator_name, o.timezone AS operator_timezone, b.confirmation_code,
            b.tour_name, b.experience_date, b.start_time, b.participants, b.guest_name, b.guest_email, b.currency,
            (SELECT name FROM api_keys WHERE id = ${keyId}) AS key_name
          FROM bookings b JOIN operators o ON o.id = b.operator_id WHERE b.id = ${bookingId}::uuid FOR UPDATE OF b`
    })

    const Ending = Schema.Struct({ bookingId: Schema.String, status: Status, refunded: Schema.Boolean })

    /** Step 4: the booking's status and reason, its commission voided, its pay-later charge cancelled. */
    const endBooking = SqlSchema.void({
      Request: Schema.Struct({ ...Ending.fields, reason: Schema.NullOr(Schema.String) }),
      execute: (e) =>
        sql`
          UPDATE bookings SET status = ${e.status}, cancel_reason = ${e.reason},
            commission_status = CASE WHEN commission_amount_minor IS NULL THEN commission_status ELSE 'voided' END,
            pay_later_status = CASE
              WHEN pay_later_status IN ('upcoming', 'failed') THEN 'cancelled'
              WHEN pay_later_status = 'collected' AND ${e.refunded} THEN 'cancelled'
              ELSE pay_later_status END,
            updated_at = now()
          WHERE id = ${e.bookingId}::uuid`
    })

    const cancelMirrorRows = SqlSchema.void({
      Request: Schema.String,
      execute: (bookingId) =>
        sql`UPDATE manifest_rows SET status = 'CANCELLED' WHERE service_booking_id = ${bookingId}::uuid`
    })

    /** Its open balance links are owed nothing now: the payment-link watch closes them at its next run. */
    const linksDueNow = SqlSchema.void({
      Request: Schema.String,
      execute: (bookingId) =>
        sql`UPDATE payment_links SET next_check_at = now() WHERE booking_id = ${bookingId}::uuid AND state IN ('open', 'closing')`
    })

    const lockStatus = SqlSchema.single({
      Request: Schema.String,
      Result: Schema.Struct({ status: Schema.String }),
      execute: (bookingId) => sql`SELECT status FROM bookings WHERE id = ${bookingId}::uuid FOR UPDATE`
    })

    /** After a completed cancel's refunds moved on: the booking's status forward (and a collected balance cancelled once refunded). */
    const advanceStatus = SqlSchema.void({
      Request: Ending,
      execute: (e) =>
        sql`
          UPDATE bookings SET status = ${e.status},
            pay_later_status = CASE WHEN pay_later_status = 'collected' AND ${e.refunded}
              THEN 'cancelled' ELSE pay_later_status END,
            updated_at = now()
          WHERE id = ${e.bookingId}::uuid`
    })

    const paymentsOf = SqlSchema.findAll({
      Request: Schema.String,
      Result: Payment,
      execute: (bookingId) =>
        sql`
          SELECT id, amount_minor::int AS "amountMinor", currency, paid_at AS "paidAt",
            provider_payment_id AS "providerPaymentId", merchant_id AS "merchantId"
          FROM booking_payments WHERE booking_id = ${bookingId}::uuid ORDER BY paid_at, id`
    })

    // ---------------------------------------------------------------------------------------------
    // The booking's balance payment links

    /** Every live link of the booking taken over for closing. */
    const takeOverLinks = SqlSchema.findAll({
      Request: Schema.String,
      Result: ClosingLink,
      execute: (bookingId) =>
        sql`
          UPDATE payment_links SET state = 'closing', next_check_at = now(), updated_at = now()
          WHERE booking_id = ${bookingId}::uuid AND state IN ('creating', 'open', 'closing')
          RETURNING ${sql.literal(LINK_COLUMNS)}`
    })

    const linkLearnt = SqlSchema.void({
      Request: Schema.Struct({
        id: Schema.String,
        linkId: Schema.String,
        url: Schema.String,
        expiresAt: Schema.NullOr(Schema.DateFromSelf)
      }),
      execute: (l) =>
        sql`
          UPDATE payment_links SET provider_link_id = ${l.linkId}, url = ${l.url}, expires_at = ${l.expiresAt}, updated_at = now()
          WHERE id = ${l.id}::uuid AND state = 'closing'`
    })

    const linkClosed = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.String, reason: Schema.String, linkId: Schema.NullOr(Schema.String) }),
      execute: (l) =>
        sql`
          UPDATE payment_links SET state = 'closed', closed_reason = ${l.reason}, provider_link_id = coalesce(provider_link_id, ${l.linkId}),
            last_checked_at = now(), last_error = NULL, updated_at = now()
          WHERE id = ${l.id}::uuid AND state = 'closing'`
    })

    const linkStillClosing = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.String, error: Schema.String }),
      execute: (l) =>
        sql`
          UPDATE payment_links SET last_error = ${l.error.slice(0, 1000)}, next_check_at = now()
          WHERE id = ${l.id}::uuid AND state = 'closing'`
    })

    return repoEdge("CancelsRepo", {
      findBooking: (id: string, operatorIds: ReadonlyArray<string>) => findBooking({ id, operatorIds }),
      currencyOf: (bookingId: string) => Effect.map(currencyOf(bookingId), (r) => r.currency),
      lockForCompletion: (bookingId: string, keyId: string | null) => lockForCompletion({ bookingId, keyId }),
      endBooking,
      cancelMirrorRows,
      linksDueNow,
      lockStatus: (bookingId: string) => Effect.map(lockStatus(bookingId), (r) => r.status),
      advanceStatus,
      paymentsOf,
      takeOverLinks,
      linkLearnt,
      linkClosed,
      linkStillClosing
    })
  })
}) {}
