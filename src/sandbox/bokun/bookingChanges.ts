/**
 * Changes to bookings as Bókun's API makes them: confirm or abort a reservation, cancel (seats
 * freed, idempotent), edit (move date, start time or rate when the new departure has the seats;
 * the price stays), update the customer, and a test's outright delete.
 */
import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type * as Dialect from "../../adapters/bokun/dialect.js"
import { badRequest, notFound } from "./failure.js"
import type { Seats } from "./seats.js"
import { currentDate } from "./time.js"

export const makeBookingChanges = (sql: SqlClient.SqlClient, changed: Effect.Effect<void>, seats: Seats) => {
  const { checkDeparture, lockSeatsLeft } = seats
  const now = currentDate
  const lockBooking = (vendorId: number, code: string) =>
    sql<{ id: number; status: string; hold_expires_at: Date | null; external_reference: string | null }>`
      SELECT id, status, hold_expires_at, external_reference FROM bokun_sandbox.bookings
      WHERE vendor_id = ${vendorId} AND confirmation_code = ${code} FOR UPDATE`.pipe(
      Effect.flatMap((rows) => (rows[0] ? Effect.succeed(rows[0]) : Effect.fail(notFound(`Booking ${code}`))))
    )

  const setStatus = (bookingId: number, status: string, from: ReadonlyArray<string>, at: Date) =>
    Effect.zipRight(
      sql`UPDATE bokun_sandbox.bookings SET status = ${status}, hold_expires_at = NULL, updated_at = ${at} WHERE id = ${bookingId}`,
      sql`UPDATE bokun_sandbox.product_bookings SET status = ${status}, updated_at = ${at}
          WHERE booking_id = ${bookingId} AND status IN ${sql.in(from)}`
    ).pipe(Effect.zipRight(changed))

  /**
   * RESERVED → CONFIRMED while the hold lasts, with the payment taken outside Bókun when one is
   * given (the booking's paid amount and transaction); confirming a confirmed booking answers it
   * again and records nothing more.
   */
  const confirmReserved = (
    vendorId: number,
    code: string,
    externalReference: string | null,
    payment: { readonly paidMinor: number; readonly reference: string | null } | null = null
  ) =>
    sql.withTransaction(Effect.gen(function*() {
      const at = yield* now
      const b = yield* lockBooking(vendorId, code)
      if (b.status === "CONFIRMED") return b.id
      const lapsed = b.status === "TIMEOUT" ||
        (b.status === "RESERVED" && b.hold_expires_at !== null && b.hold_expires_at <= at)
      if (lapsed) {
        yield* setStatus(b.id, "TIMEOUT", ["RESERVED"], at)
        return yield* badRequest(`Reservation ${code} has expired`, "RESERVATION_EXPIRED")
      }
      if (b.status !== "RESERVED") {
        return yield* badRequest(`Booking ${code} is ${b.status}, not RESERVED`, "NOT_ALLOWED")
      }
      // A product that no longer allows reservations (switched off since the hold) does not confirm one.
      const [refused] = yield* sql<{ product_id: string }>`
        SELECT p.id AS product_id FROM bokun_sandbox.product_bookings pb JOIN bokun_sandbox.products p ON p.id = pb.product_id
        WHERE pb.booking_id = ${b.id} AND NOT p.supports_holds LIMIT 1`
      if (refused) {
        return yield* badRequest(
          `Activity ${refused.product_id} does not allow RESERVE_FOR_EXTERNAL_PAYMENT`,
          "RESERVATIONS_NOT_ALLOWED"
        )
      }
      yield* setStatus(b.id, "CONFIRMED", ["RESERVED"], at)
      if (externalReference !== null) {
        yield* sql`UPDATE bokun_sandbox.bookings SET external_reference = ${externalReference} WHERE id = ${b.id}`
      }
      if (payment !== null) {
        yield* sql`
          UPDATE bokun_sandbox.bookings SET paid_minor = ${payment.paidMinor}, payment_reference = ${payment.reference}
          WHERE id = ${b.id}`
      }
      return b.id
    }))

  /** RESERVED → ABORTED; aborting an aborted or lapsed hold succeeds. */
  const abortReserved = (vendorId: number, code: string) =>
    sql.withTransaction(Effect.gen(function*() {
      const at = yield* now
      const b = yield* lockBooking(vendorId, code)
      if (b.status === "ABORTED" || b.status === "TIMEOUT") return
      if (b.status !== "RESERVED") {
        return yield* badRequest(`Booking ${code} is ${b.status}, only reserved bookings can be aborted`, "NOT_ALLOWED")
      }
      yield* setStatus(b.id, "ABORTED", ["RESERVED"], at)
    }))

  /** Cancels the booking and every product booking (seats freed); cancelling again succeeds. */
  const cancelBooking = (vendorId: number, code: string, note: string | null) =>
    sql.withTransaction(Effect.gen(function*() {
      const at = yield* now
      const b = yield* lockBooking(vendorId, code)
      if (b.status === "CANCELLED" || b.status === "ABORTED" || b.status === "TIMEOUT") return
      yield* setStatus(b.id, "CANCELLED", ["CONFIRMED", "RESERVED", "ARRIVED", "NO_SHOW"], at)
      yield* sql`UPDATE bokun_sandbox.bookings SET note = ${note} WHERE id = ${b.id}`
    }))

  /** Deletes a booking outright (a test's way to make a booking vanish from the booking system). */
  const deleteBooking = (vendorId: number, code: string) =>
    sql`DELETE FROM bokun_sandbox.bookings WHERE vendor_id = ${vendorId} AND confirmation_code = ${code} RETURNING id`
      .pipe(
        Effect.flatMap((rows) => (rows.length > 0 ? changed : Effect.fail(notFound(`Booking ${code}`))))
      )

  const updateCustomer = (vendorId: number, code: string, customer: typeof Dialect.Customer.Type) =>
    Effect.gen(function*() {
      const at = yield* now
      const rows = yield* sql`
        UPDATE bokun_sandbox.bookings SET
          first_name = COALESCE(${customer.firstName ?? null}, first_name),
          last_name = COALESCE(${customer.lastName ?? null}, last_name),
          email = COALESCE(${customer.email ?? null}, email),
          phone = COALESCE(${customer.phoneNumber ?? null}, phone),
          updated_at = ${at}
        WHERE vendor_id = ${vendorId} AND confirmation_code = ${code} RETURNING id`
      if (rows.length === 0) return yield* notFound(`Booking ${code}`)
      yield* changed
    })

  /**
   * Applies edit actions (change date / start time, change rate) to product bookings of one booking.
   * A new departure must have the seats; the price stays as it was.
   */
  const editBooking = (vendorId: number, actions: typeof Dialect.EditRequest.Type) =>
    sql.withTransaction(Effect.gen(function*() {
      const at = yield* now
      if (actions.length === 0) return yield* badRequest("No actions")
      let bookingId: number | null = null
      for (const action of actions) {
        const lineId = Number(action.activityBookingId)
        const [line] = yield* sql<
          {
            id: number
            booking_id: number
            product_id: number
            date: string
            start_time_id: number
            rate_id: number | null
            participants: number
            status: string
          }
        >`
          SELECT pb.id, pb.booking_id, pb.product_id, pb.date, pb.start_time_id, pb.rate_id, pb.participants, pb.status
          FROM bokun_sandbox.product_bookings pb
          WHERE pb.id = ${Number.isFinite(lineId) ? lineId : -1} AND pb.vendor_id = ${vendorId} FOR UPDATE`
        if (!line) return yield* notFound(`Activity booking ${action.activityBookingId}`)
        if (bookingId !== null && line.booking_id !== bookingId) {
          return yield* badRequest("Actions must edit one booking")
        }
        bookingId = line.booking_id
        if (line.status !== "CONFIRMED" && line.status !== "RESERVED") {
          return yield* badRequest(`Activity booking ${line.id} is ${line.status}`, "NOT_ALLOWED")
        }
        const target = action.type === "ActivityChangeDateAction"
          ? {
            date: action.date,
            startTimeId: action.startTimeId == null ? line.start_time_id : Number(action.startTimeId),
            rateId: line.rate_id
          }
          : { date: line.date, startTimeId: line.start_time_id, rateId: Number(action.rateId) }
        yield* checkDeparture(vendorId, { productId: line.product_id, ...target })
        const sameDeparture = target.date === line.date && target.startTimeId === line.start_time_id
        if (!sameDeparture) {
          const left = yield* lockSeatsLeft(line.product_id, target.startTimeId, target.date, line.id)
          if (left !== null && left < line.participants) {
            return yield* badRequest(
              `Not enough availability: ${left} seats left on ${target.date}, ${line.participants} needed`,
              "NO_AVAILABILITY"
            )
          }
        }
        yield* sql`
          UPDATE bokun_sandbox.product_bookings
          SET date = ${target.date}, start_time_id = ${target.startTimeId}, rate_id = ${target.rateId}, updated_at = ${at}
          WHERE id = ${line.id}`
      }
      yield* sql`UPDATE bokun_sandbox.bookings SET updated_at = ${at} WHERE id = ${bookingId!}`
      yield* changed
      return bookingId!
    }))

  const serviceChannel = (vendorId: number) =>
    sql<{ id: number }>`SELECT id FROM bokun_sandbox.channels WHERE vendor_id = ${vendorId} AND class = 'service'`.pipe(
      Effect.map((rows) => rows[0]?.id ?? null)
    )

  const existingByIdempotencyKey = (vendorId: number, key: string) =>
    Effect.zipRight(
      sql`SELECT pg_advisory_xact_lock(hashtext(${`bokun_sandbox.idempotency:${vendorId}:${key}`}))`,
      sql<{ id: number; hold_expires_at: Date | null }>`
        SELECT id, hold_expires_at FROM bokun_sandbox.bookings WHERE vendor_id = ${vendorId} AND idempotency_key = ${key}`
    ).pipe(Effect.map((rows) => rows[0]))
  return {
    confirmReserved,
    abortReserved,
    cancelBooking,
    deleteBooking,
    updateCustomer,
    editBooking,
    serviceChannel,
    existingByIdempotencyKey
  }
}
