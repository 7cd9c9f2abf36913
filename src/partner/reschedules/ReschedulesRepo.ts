/**
 * The SQL of reschedules (src/partner/reschedules/Reschedules.ts): the booking as a reschedule
 * reads it, and step 3's writes (the booking and its mirror row moved). The change's own row is
 * written by src/partner/bookingChanges/BookingChangesRepo.ts. A call inside a caller's
 * `sql.withTransaction` joins that transaction.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { repoEdge } from "../../db/repoEdge.js"
import { toPgArray } from "../../db/sql.js"
import { RescheduleChange } from "../bookingChanges/BookingChangesRepo.js"
import { ChangedBookingFields } from "../bookingChanges/changedBooking.js"

/** The booking as a reschedule decides on it. */
export const RescheduleBooking = Schema.Struct({
  id: Schema.String,
  status: Schema.String,
  operator_id: Schema.String,
  experience_date: Schema.NullOr(Schema.String),
  start_time: Schema.NullOr(Schema.String),
  timezone: Schema.String,
  provider_reference: Schema.NullOr(Schema.String),
  payment_strategy: Schema.Literal("pay_now", "pay_later"),
  pay_later_charge_at: Schema.NullOr(Schema.DateFromSelf),
  pay_later_paid_at: Schema.NullOr(Schema.DateFromSelf),
  product_id: Schema.NullOr(Schema.String),
  account_id: Schema.NullOr(Schema.String),
  /** A cancel of the booking completed (its refund may still be open, so the status can still read CONFIRMED). */
  cancel_done: Schema.Boolean
})
export type RescheduleBooking = typeof RescheduleBooking.Type

/** The booking once moved, as its emails need it. */
export const MovedBooking = Schema.Struct({ id: Schema.String, ...ChangedBookingFields })
export type MovedBooking = typeof MovedBooking.Type

export class ReschedulesRepo extends Effect.Service<ReschedulesRepo>()("Partner/ReschedulesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const findBooking = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.String, operatorIds: Schema.Array(Schema.String) }),
      Result: RescheduleBooking,
      execute: ({ id, operatorIds }) =>
        sql`
          SELECT b.id, b.status, b.operator_id, b.experience_date, b.start_time, b.timezone, b.provider_reference,
            b.payment_strategy, b.pay_later_charge_at, b.pay_later_paid_at,
            t.booking_system_product_id AS product_id, tour_operator.booking_system_account_id AS account_id,
            EXISTS (SELECT 1 FROM booking_changes c WHERE c.booking_id = b.id AND c.kind = 'cancel' AND c.state = 'done') AS cancel_done
          FROM bookings b
          LEFT JOIN tours t ON t.id = b.tour_id
          LEFT JOIN operators tour_operator ON tour_operator.id = t.operator_id
          WHERE b.id = ${id}::uuid AND b.operator_id = ANY(${toPgArray(operatorIds)}::uuid[])
            AND b.status IN ('RESERVED', 'CONFIRMED', 'CANCELLED', 'REFUNDED')`
    })

    /** The booking on its new departure; what its emails need. */
    const moveBooking = SqlSchema.single({
      Request: RescheduleChange,
      Result: MovedBooking,
      execute: (c) =>
        sql`
          UPDATE bookings b SET experience_date = ${c.to_date}::date, start_time = ${c.to_start_time}, updated_at = now()
          FROM operators o
          WHERE b.id = ${c.booking_id}::uuid AND o.id = b.operator_id
          RETURNING b.id, b.operator_id, o.name AS operator_name, o.timezone AS operator_timezone, b.confirmation_code,
            b.tour_name, b.participants, b.guest_name, b.guest_email,
            (SELECT name FROM api_keys WHERE id = ${c.key_id}) AS key_name`
    })

    /** The booking's line in the mirror on its new departure (and rate, when the move changes it). */
    const moveMirrorRow = SqlSchema.void({
      Request: RescheduleChange,
      execute: (c) =>
        sql`
          UPDATE manifest_rows SET departure_date = ${c.to_date}::date, start_time = ${c.to_start_time},
            start_time_id = ${c.to_start_time_id},
            rate_id = CASE WHEN ${c.change_rate} THEN ${c.to_rate_id} ELSE rate_id END,
            rate_title = CASE WHEN ${c.change_rate} THEN ${c.to_rate_title} ELSE rate_title END
          WHERE account_id = ${c.account_id}::uuid AND line_id = ${c.line_id}`
    })

    return repoEdge("ReschedulesRepo", {
      findBooking: (id: string, operatorIds: ReadonlyArray<string>) => findBooking({ id, operatorIds }),
      /** Step 3's writes: the booking and its mirror row on the target departure. */
      move: (change: RescheduleChange) => Effect.zipLeft(moveBooking(change), moveMirrorRow(change))
    })
  })
}) {}
