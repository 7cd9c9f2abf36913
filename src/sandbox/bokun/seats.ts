/**
 * Seats: a departure's seats are checked under an advisory lock held to the end of the transaction
 * (confirmed and reserved lines count); holds lapse at their expiry (TIMEOUT, seats free again);
 * a new booking is written only when every line fits.
 */
import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Catalogue, VendorRow } from "./catalogue.js"
import { badRequest } from "./failure.js"
import type { PaxEntry } from "./render.js"
import { currentDate, validDay } from "./time.js"

export interface SeatSelection {
  readonly productId: number
  readonly date: string
  readonly startTimeId: number
  readonly rateId: number | null
  /** Passengers per pricing category id. */
  readonly pax: ReadonlyMap<number, number>
  readonly pickupPlaceId: number | null
}

export interface NewBooking {
  readonly vendor: VendorRow
  readonly status: "RESERVED" | "CONFIRMED" | "CANCELLED"
  readonly lines: ReadonlyArray<SeatSelection>
  readonly channelId: number | null
  readonly externalReference: string | null
  readonly customer: { firstName: string | null; lastName: string | null; email: string | null; phone: string | null }
  readonly idempotencyKey: string | null
  /** Seats are checked unless false (seeding may overbook on purpose). */
  readonly checkCapacity: boolean
  readonly paidMinor?: number
  readonly paymentStatus?: string | null
  /** The transaction id of a payment taken outside Bókun (checkout `transactionDetails`). */
  readonly paymentReference?: string | null
  readonly createdAt?: Date
}

export const makeSeats = (sql: SqlClient.SqlClient, changed: Effect.Effect<void>, catalogue: Catalogue) => {
  const { inSeason, prices, product } = catalogue
  const now = currentDate
  /** Holds past their expiry lapse (TIMEOUT): their seats are free again. */
  const expireHolds = Effect.gen(function*() {
    const at = yield* now
    const lapsed = yield* sql<{ id: number }>`
      UPDATE bokun_sandbox.bookings SET status = 'TIMEOUT', updated_at = ${at}
      WHERE status = 'RESERVED' AND hold_expires_at <= ${at}
      RETURNING id`
    if (lapsed.length > 0) {
      yield* sql`
        UPDATE bokun_sandbox.product_bookings SET status = 'TIMEOUT', updated_at = ${at}
        WHERE booking_id IN ${sql.in(lapsed.map((r) => r.id))} AND status = 'RESERVED'`
      yield* changed
    }
  })

  /** Seats left on a departure (null: unlimited), taken under a lock held to the transaction's end. */
  const lockSeatsLeft = (productId: number, startTimeId: number, date: string, excludeLineId: number | null) =>
    Effect.gen(function*() {
      yield* sql`SELECT pg_advisory_xact_lock(hashtext(${`bokun_sandbox.departure:${productId}:${startTimeId}:${date}`}))`
      const [row] = yield* sql<{ capacity: number | null; taken: number }>`
        SELECT COALESCE(d.capacity, p.capacity) AS capacity,
          COALESCE((SELECT sum(pb.participants) FROM bokun_sandbox.product_bookings pb
            WHERE pb.product_id = p.id AND pb.date = ${date} AND pb.start_time_id = ${startTimeId}
              AND pb.status IN ('CONFIRMED', 'RESERVED') AND pb.id <> ${excludeLineId ?? -1}), 0)::int AS taken
        FROM bokun_sandbox.products p
        LEFT JOIN bokun_sandbox.departures d ON d.product_id = p.id AND d.start_time_id = ${startTimeId} AND d.date = ${date}
        WHERE p.id = ${productId}`
      return row!.capacity === null ? null : row!.capacity - row!.taken
    })

  const checkDeparture = (
    vendorId: number,
    selection: { productId: number; startTimeId: number; date: string; rateId: number | null }
  ) =>
    Effect.gen(function*() {
      const p = yield* product(vendorId, selection.productId)
      if (!validDay(selection.date)) return yield* badRequest(`Invalid date ${selection.date}`)
      const [start] = yield* sql<{ id: number }>`
        SELECT id FROM bokun_sandbox.start_times WHERE id = ${selection.startTimeId} AND product_id = ${p.id}`
      if (!start) {
        return yield* badRequest(`Start time ${selection.startTimeId} is not a start time of activity ${p.id}`)
      }
      if (!inSeason(p, selection.date)) {
        return yield* badRequest(`Activity ${p.id} has no departure on ${selection.date}`, "NO_AVAILABILITY")
      }
      const priceRows = yield* prices(p.id, selection.date)
      const rateId = selection.rateId ?? priceRows[0]?.rate_id ?? null
      if (
        rateId === null || !priceRows.some((r) => r.rate_id === rateId)
      ) {
        return yield* badRequest(`Rate ${selection.rateId} is not a rate of activity ${p.id}`)
      }
      return { product: p, rateId, priceRows }
    })

  /** Inserts a booking with its product bookings; seats are checked (and locked) first unless told not to. */
  const insertBooking = (input: NewBooking) =>
    sql.withTransaction(Effect.gen(function*() {
      const at = input.createdAt ?? (yield* now)
      const lines: Array<
        { selection: SeatSelection; rateId: number; pax: ReadonlyArray<PaxEntry>; participants: number; total: number }
      > = []
      for (const selection of input.lines) {
        const { priceRows, product: p, rateId } = yield* checkDeparture(input.vendor.id, selection)
        if (input.status === "RESERVED" && !p.supports_holds) {
          return yield* badRequest(
            `Activity ${p.id} does not allow RESERVE_FOR_EXTERNAL_PAYMENT`,
            "RESERVATIONS_NOT_ALLOWED"
          )
        }
        const pax: Array<PaxEntry> = []
        let total = 0
        for (const [categoryId, quantity] of selection.pax) {
          const price = priceRows.find((r) => r.rate_id === rateId && r.category_id === categoryId)
          if (!price) return yield* badRequest(`Pricing category ${categoryId} is not priced on rate ${rateId}`)
          if (quantity <= 0) continue
          pax.push({ pricingCategoryId: categoryId, title: price.category_title, quantity })
          total += p.priced_per_booking ? 0 : price.amount_minor * quantity
        }
        const participants = pax.reduce((n, e) => n + e.quantity, 0)
        if (participants === 0) return yield* badRequest("No passengers")
        if (p.priced_per_booking) {
          const rows = priceRows.filter((r) => r.rate_id === rateId)
          total = (rows.find((r) => r.is_default) ?? rows[0]!).amount_minor
        }
        if (input.checkCapacity && input.status !== "CANCELLED") {
          const left = yield* lockSeatsLeft(p.id, selection.startTimeId, selection.date, null)
          if (left !== null && left < participants) {
            return yield* badRequest(
              `Not enough availability: ${left} seats left on ${selection.date}, ${participants} requested`,
              "NO_AVAILABILITY"
            )
          }
        }
        lines.push({ selection, rateId, pax, participants, total })
      }
      if (lines.length === 0) return yield* badRequest("No activity bookings")
      const [ids] = yield* sql<{ id: number }>`SELECT nextval('bokun_sandbox.booking_ids')::bigint AS id`
      const id = ids!.id
      const holdExpires = input.status === "RESERVED" ? new Date(at.getTime() + input.vendor.hold_seconds * 1000) : null
      yield* sql`
        INSERT INTO bokun_sandbox.bookings ${
        sql.insert({
          id,
          vendor_id: input.vendor.id,
          confirmation_code: `${input.vendor.code_prefix}-${id}`,
          external_reference: input.externalReference,
          status: input.status,
          channel_id: input.channelId,
          currency: input.vendor.currency,
          first_name: input.customer.firstName,
          last_name: input.customer.lastName,
          email: input.customer.email,
          phone: input.customer.phone,
          paid_minor: input.paidMinor ?? 0,
          payment_status: input.paymentStatus ?? null,
          payment_reference: input.paymentReference ?? null,
          idempotency_key: input.idempotencyKey,
          hold_expires_at: holdExpires,
          note: null,
          created_at: at,
          updated_at: at
        })
      }`
      for (const line of lines) {
        const [lineId] = yield* sql<{ id: number }>`SELECT nextval('bokun_sandbox.booking_ids')::bigint AS id`
        yield* sql`
          INSERT INTO bokun_sandbox.product_bookings ${
          sql.insert({
            id: lineId!.id,
            booking_id: id,
            vendor_id: input.vendor.id,
            product_id: line.selection.productId,
            rate_id: line.rateId,
            start_time_id: line.selection.startTimeId,
            date: line.selection.date,
            status: input.status,
            participants: line.participants,
            pax: JSON.stringify(line.pax),
            pickup_place_id: line.selection.pickupPlaceId,
            total_minor: line.total,
            updated_at: at
          })
        }`
      }
      yield* changed
      return { id, holdExpires }
    }))
  return { expireHolds, lockSeatsLeft, checkDeparture, insertBooking }
}

export type Seats = ReturnType<typeof makeSeats>
