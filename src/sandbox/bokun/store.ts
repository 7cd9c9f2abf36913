/**
 * The sandbox's booking system: its data in PostgreSQL (schema bokun_sandbox) and the rules the
 * Bókun API applies to it. Seats are checked per departure under an advisory lock; holds lapse at
 * their expiry (status TIMEOUT, seats free again); cancelling frees seats; moves check capacity.
 *
 * Every write bumps a generation counter, which invalidates the cached result lists of booking
 * searches (paging reads from one snapshot, as Bókun's search index does, until something changes).
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Ref } from "effect"
import type * as Dialect from "../../adapters/bokun/dialect.js"
import { fromMinor } from "../../adapters/bokun/money.js"
import { badRequest, notFound } from "./failure.js"
import { type BookingRow, type LineRow, type PaxEntry, renderBooking } from "./render.js"
import { dayMillis } from "./time.js"

export interface VendorRow {
  readonly id: number
  readonly title: string
  readonly code_prefix: string
  readonly access_key: string
  readonly secret_key: string
  readonly timezone: string
  readonly currency: string
  readonly hold_seconds: number
}

interface ProductRow {
  readonly id: number
  readonly vendor_id: number
  readonly title: string
  readonly timezone: string
  readonly currency: string
  readonly duration_minutes: number | null
  readonly priced_per_booking: boolean
  readonly supports_holds: boolean
  readonly capacity: number | null
  readonly rating_average: number | null
  readonly rating_count: number | null
}

interface PriceRow {
  readonly rate_id: number
  readonly rate_title: string
  readonly category_id: number
  readonly category_title: string
  readonly is_default: boolean
  readonly amount_minor: number
}

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
  readonly createdAt?: Date
}

const isoDay = /^\d{4}-\d{2}-\d{2}$/
const validDay = (day: string) => isoDay.test(day) && new Date(`${day}T00:00:00Z`).toISOString().startsWith(day)

const SEARCH_CACHE_SIZE = 8

export const makeStore = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const generation = yield* Ref.make(0)
  const searchCache = new Map<string, { generation: number; ids: ReadonlyArray<number> }>()
  const changed = Ref.update(generation, (n) => n + 1)
  const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

  // ---------------------------------------------------------------- vendors and products

  const vendorByAccessKey = (accessKey: string) =>
    sql<VendorRow>`SELECT * FROM bokun_sandbox.vendors WHERE access_key = ${accessKey}`.pipe(Effect.map((rows) => rows[0]))

  const vendorById = (id: number) =>
    sql<VendorRow>`SELECT * FROM bokun_sandbox.vendors WHERE id = ${id}`.pipe(
      Effect.flatMap((rows) => (rows[0] ? Effect.succeed(rows[0]) : Effect.fail(notFound(`Vendor ${id}`))))
    )

  const product = (vendorId: number, productId: number) =>
    sql<ProductRow>`
      SELECT * FROM bokun_sandbox.products WHERE id = ${productId} AND vendor_id = ${vendorId}`.pipe(
      Effect.flatMap((rows) => (rows[0] ? Effect.succeed(rows[0]) : Effect.fail(notFound(`Activity ${productId}`))))
    )

  const prices = (productId: number) =>
    sql<PriceRow>`
      SELECT r.id AS rate_id, r.title AS rate_title, c.id AS category_id, c.title AS category_title,
        c.is_default, p.amount_minor
      FROM bokun_sandbox.rates r
      JOIN bokun_sandbox.prices p ON p.rate_id = r.id
      JOIN bokun_sandbox.pricing_categories c ON c.id = p.pricing_category_id
      WHERE r.product_id = ${productId}
      ORDER BY r.position, r.id, c.position, c.id`

  const activity = (vendorId: number, productId: number) =>
    Effect.gen(function*() {
      const p = yield* product(vendorId, productId)
      const vendor = yield* vendorById(vendorId)
      const [rates, categories, startTimes] = yield* Effect.all([
        sql<{ id: number; title: string; description: string | null }>`
          SELECT id, title, description FROM bokun_sandbox.rates WHERE product_id = ${p.id} ORDER BY position, id`,
        sql<{ id: number; title: string; is_default: boolean; min_age: number | null; max_age: number | null }>`
          SELECT id, title, is_default, min_age, max_age FROM bokun_sandbox.pricing_categories
          WHERE product_id = ${p.id} ORDER BY position, id`,
        sql<{ id: number; time: string }>`SELECT id, time FROM bokun_sandbox.start_times WHERE product_id = ${p.id} ORDER BY time`
      ])
      const body: typeof Dialect.Activity.Encoded = {
        id: p.id,
        title: p.title,
        timeZone: p.timezone,
        durationMinutes: p.duration_minutes,
        vendor: { id: vendor.id, title: vendor.title, currencyCode: p.currency, timeZone: vendor.timezone },
        rates: rates.map((r) => ({ id: r.id, title: r.title, description: r.description, pricedPerPerson: !p.priced_per_booking })),
        pricingCategories: categories.map((c) => ({
          id: c.id,
          title: c.title,
          ticketCategory: c.is_default ? "ADULT" : c.max_age !== null && c.max_age < 18 ? "CHILD" : "OTHER",
          defaultCategory: c.is_default,
          minAge: c.min_age,
          maxAge: c.max_age
        })),
        startTimes: startTimes.map((s) => ({ id: s.id, hour: Number(s.time.slice(0, 2)), minute: Number(s.time.slice(3)) })),
        reviewRating: p.rating_average,
        reviewCount: p.rating_count,
        reservationsAllowed: p.supports_holds
      }
      return body
    })

  const pickupPlaces = (vendorId: number, productId: number) =>
    Effect.zipRight(
      product(vendorId, productId),
      sql<{ id: number; title: string }>`
        SELECT id, title FROM bokun_sandbox.pickup_places WHERE product_id = ${productId} ORDER BY title, id`
    ).pipe(Effect.map((rows): typeof Dialect.PickupPlaces.Encoded => ({ pickupPlaces: rows.map((r) => ({ id: r.id, title: r.title })) })))

  const activitySearch = (vendorId: number, page: number, pageSize: number) =>
    Effect.gen(function*() {
      const size = Math.min(Math.max(1, pageSize), 1000)
      const [count] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM bokun_sandbox.products WHERE vendor_id = ${vendorId}`
      const items = yield* sql<{ id: number; title: string }>`
        SELECT id, title FROM bokun_sandbox.products WHERE vendor_id = ${vendorId}
        ORDER BY id LIMIT ${size} OFFSET ${(Math.max(1, page) - 1) * size}`
      const body: typeof Dialect.ActivitySearchResult.Encoded = { totalHits: count!.n, items: items.map((i) => ({ id: i.id, title: i.title })) }
      return body
    })

  // ---------------------------------------------------------------- holds and seats

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

  const checkDeparture = (vendorId: number, selection: { productId: number; startTimeId: number; date: string; rateId: number | null }) =>
    Effect.gen(function*() {
      const p = yield* product(vendorId, selection.productId)
      if (!validDay(selection.date)) return yield* badRequest(`Invalid date ${selection.date}`)
      const [start] = yield* sql<{ id: number }>`
        SELECT id FROM bokun_sandbox.start_times WHERE id = ${selection.startTimeId} AND product_id = ${p.id}`
      if (!start) return yield* badRequest(`Start time ${selection.startTimeId} is not a start time of activity ${p.id}`)
      const priceRows = yield* prices(p.id)
      const rateId = selection.rateId ?? priceRows[0]?.rate_id ?? null
      if (rateId === null || !priceRows.some((r) => r.rate_id === rateId)) {
        return yield* badRequest(`Rate ${selection.rateId} is not a rate of activity ${p.id}`)
      }
      return { product: p, rateId, priceRows }
    })

  /** Inserts a booking with its product bookings; seats are checked (and locked) first unless told not to. */
  const insertBooking = (input: NewBooking) =>
    sql.withTransaction(Effect.gen(function*() {
      const at = input.createdAt ?? (yield* now)
      const lines: Array<{ selection: SeatSelection; rateId: number; pax: ReadonlyArray<PaxEntry>; participants: number; total: number }> = []
      for (const selection of input.lines) {
        const { priceRows, product: p, rateId } = yield* checkDeparture(input.vendor.id, selection)
        if (input.status === "RESERVED" && !p.supports_holds) {
          return yield* badRequest(`Activity ${p.id} does not allow RESERVE_FOR_EXTERNAL_PAYMENT`, "RESERVATIONS_NOT_ALLOWED")
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
          total = priceRows.find((r) => r.rate_id === rateId && r.is_default)?.amount_minor ?? priceRows[0]!.amount_minor
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
        INSERT INTO bokun_sandbox.bookings ${sql.insert({
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
        idempotency_key: input.idempotencyKey,
        hold_expires_at: holdExpires,
        note: null,
        created_at: at,
        updated_at: at
      })}`
      for (const line of lines) {
        const [lineId] = yield* sql<{ id: number }>`SELECT nextval('bokun_sandbox.booking_ids')::bigint AS id`
        yield* sql`
          INSERT INTO bokun_sandbox.product_bookings ${sql.insert({
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
        })}`
      }
      yield* changed
      return { id, holdExpires }
    }))

  // ---------------------------------------------------------------- bookings: reads

  const loadBookings = (ids: ReadonlyArray<number>) =>
    Effect.gen(function*() {
      if (ids.length === 0) return []
      const [bookings, lines] = yield* Effect.all([
        sql<BookingRow>`
          SELECT b.id, b.confirmation_code, b.external_reference, b.status, b.currency, b.first_name, b.last_name,
            b.email, b.phone, b.paid_minor, b.payment_status, b.created_at, b.updated_at, b.channel_id,
            c.title AS channel_title
          FROM bokun_sandbox.bookings b
          LEFT JOIN bokun_sandbox.channels c ON c.id = b.channel_id
          WHERE b.id IN ${sql.in(ids)}`,
        sql<LineRow>`
          SELECT pb.id, pb.booking_id, pb.status, pb.product_id, p.title AS product_title, pb.date,
            pb.start_time_id, st.time AS start_time,
            (extract(epoch FROM ((pb.date + st.time::time) AT TIME ZONE p.timezone)) * 1000)::bigint AS start_millis,
            pb.rate_id, r.title AS rate_title, pb.participants, pb.pax, pb.total_minor,
            pp.id AS pickup_id, pp.title AS pickup_title, pp.minutes_before, v.code_prefix
          FROM bokun_sandbox.product_bookings pb
          JOIN bokun_sandbox.products p ON p.id = pb.product_id
          JOIN bokun_sandbox.vendors v ON v.id = pb.vendor_id
          LEFT JOIN bokun_sandbox.start_times st ON st.id = pb.start_time_id
          LEFT JOIN bokun_sandbox.rates r ON r.id = pb.rate_id
          LEFT JOIN bokun_sandbox.pickup_places pp ON pp.id = pb.pickup_place_id
          WHERE pb.booking_id IN ${sql.in(ids)}
          ORDER BY pb.id`
      ], { concurrency: 2 })
      const linesByBooking = new Map<number, Array<LineRow>>()
      for (const line of lines) {
        const list = linesByBooking.get(line.booking_id)
        if (list) list.push(line)
        else linesByBooking.set(line.booking_id, [line])
      }
      const byId = new Map(bookings.map((b) => [b.id, b]))
      return ids.flatMap((id) => {
        const b = byId.get(id)
        return b ? [renderBooking(b, linesByBooking.get(id) ?? [])] : []
      })
    })

  const bookingIdByCode = (vendorId: number, code: string) =>
    sql<{ id: number }>`
      SELECT id FROM bokun_sandbox.bookings WHERE vendor_id = ${vendorId} AND confirmation_code = ${code}`.pipe(
      Effect.flatMap((rows) => (rows[0] ? Effect.succeed(rows[0].id) : Effect.fail(notFound(`Booking ${code}`))))
    )

  const bookingByCode = (vendorId: number, code: string) =>
    Effect.zipRight(expireHolds, bookingIdByCode(vendorId, code)).pipe(
      Effect.flatMap((id) => loadBookings([id])),
      Effect.map((list) => list[0]!)
    )

  /** Bookings with a product booking on a day in the range, by booking id, one page of them. */
  const searchBookings = (vendorId: number, query: {
    readonly from: string
    readonly to: string
    readonly statuses: ReadonlyArray<string> | null
    readonly page: number
    readonly pageSize: number
  }) =>
    Effect.gen(function*() {
      if (!validDay(query.from) || !validDay(query.to)) return yield* badRequest("startDateRange needs from and to as yyyy-MM-dd")
      yield* expireHolds
      const key = `${vendorId}|${query.from}|${query.to}|${query.statuses?.join(",") ?? "*"}`
      const current = yield* Ref.get(generation)
      let ids = searchCache.get(key)?.generation === current ? searchCache.get(key)!.ids : undefined
      if (!ids) {
        const statuses = query.statuses
        const rows = yield* sql<{ booking_id: number }>`
          SELECT DISTINCT booking_id FROM bokun_sandbox.product_bookings
          WHERE vendor_id = ${vendorId} AND date BETWEEN ${query.from} AND ${query.to}
            ${statuses && statuses.length > 0 ? sql`AND status IN ${sql.in(statuses)}` : sql``}
          ORDER BY booking_id`
        ids = rows.map((r) => r.booking_id)
        searchCache.delete(key)
        searchCache.set(key, { generation: current, ids })
        if (searchCache.size > SEARCH_CACHE_SIZE) searchCache.delete(searchCache.keys().next().value!)
      }
      const size = Math.min(Math.max(1, query.pageSize), 1000)
      const offset = (Math.max(1, query.page) - 1) * size
      const items = yield* loadBookings(ids.slice(offset, offset + size))
      const body: typeof Dialect.BookingSearchResult.Encoded = { totalHits: ids.length, items }
      return body
    })

  const availabilities = (vendorId: number, productId: number, from: string, to: string) =>
    Effect.gen(function*() {
      if (!validDay(from) || !validDay(to)) return yield* badRequest("start and end must be yyyy-MM-dd")
      if (to < from) return yield* badRequest("end is before start")
      yield* expireHolds
      const p = yield* product(vendorId, productId)
      const [departures, priceRows] = yield* Effect.all([
        sql<{ date: string; start_time_id: number; time: string; capacity: number | null; taken: number }>`
          SELECT d::date AS date, st.id AS start_time_id, st.time, COALESCE(dep.capacity, p.capacity) AS capacity,
            COALESCE(t.seats, 0)::int AS taken
          FROM bokun_sandbox.products p
          CROSS JOIN generate_series(${from}::date, ${to}::date, interval '1 day') d
          JOIN bokun_sandbox.start_times st ON st.product_id = p.id
          LEFT JOIN bokun_sandbox.departures dep ON dep.product_id = p.id AND dep.start_time_id = st.id AND dep.date = d::date
          LEFT JOIN LATERAL (
            SELECT sum(pb.participants) AS seats FROM bokun_sandbox.product_bookings pb
            WHERE pb.product_id = p.id AND pb.date = d::date AND pb.start_time_id = st.id
              AND pb.status IN ('CONFIRMED', 'RESERVED')
          ) t ON true
          WHERE p.id = ${p.id}
          ORDER BY d, st.time`,
        prices(p.id)
      ])
      const rates = [...new Map(priceRows.map((r) => [r.rate_id, r.rate_title]))]
      const pricesByRate = rates.map(([rateId]) => ({
        activityRateId: rateId,
        pricePerCategoryUnit: priceRows.filter((r) => r.rate_id === rateId).map((r) => ({
          id: r.category_id,
          amount: { amount: fromMinor(r.amount_minor, p.currency), currency: p.currency }
        }))
      }))
      const body: typeof Dialect.Availabilities.Encoded = departures.map((d) => {
        const left = d.capacity === null ? null : Math.max(0, d.capacity - d.taken)
        return {
          id: `${d.start_time_id}_${d.date.replaceAll("-", "")}`,
          activityId: p.id,
          date: dayMillis(d.date),
          startTime: d.time,
          startTimeId: d.start_time_id,
          availabilityCount: left ?? 0,
          unlimitedAvailability: left === null,
          soldOut: left === 0,
          unavailable: false,
          defaultRateId: rates[0]?.[0] ?? null,
          rates: rates.map(([id, title]) => ({ id, title })),
          pricesByRate
        }
      })
      return body
    })

  // ---------------------------------------------------------------- bookings: writes

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

  /** RESERVED → CONFIRMED while the hold lasts; confirming a confirmed booking answers it again. */
  const confirmReserved = (vendorId: number, code: string, externalReference: string | null) =>
    sql.withTransaction(Effect.gen(function*() {
      const at = yield* now
      const b = yield* lockBooking(vendorId, code)
      if (b.status === "CONFIRMED") return b.id
      const lapsed = b.status === "TIMEOUT" || (b.status === "RESERVED" && b.hold_expires_at !== null && b.hold_expires_at <= at)
      if (lapsed) {
        yield* setStatus(b.id, "TIMEOUT", ["RESERVED"], at)
        return yield* badRequest(`Reservation ${code} has expired`, "RESERVATION_EXPIRED")
      }
      if (b.status !== "RESERVED") return yield* badRequest(`Booking ${code} is ${b.status}, not RESERVED`, "NOT_ALLOWED")
      yield* setStatus(b.id, "CONFIRMED", ["RESERVED"], at)
      if (externalReference !== null) {
        yield* sql`UPDATE bokun_sandbox.bookings SET external_reference = ${externalReference} WHERE id = ${b.id}`
      }
      return b.id
    }))

  /** RESERVED → ABORTED; aborting an aborted or lapsed hold succeeds. */
  const abortReserved = (vendorId: number, code: string) =>
    sql.withTransaction(Effect.gen(function*() {
      const at = yield* now
      const b = yield* lockBooking(vendorId, code)
      if (b.status === "ABORTED" || b.status === "TIMEOUT") return
      if (b.status !== "RESERVED") return yield* badRequest(`Booking ${code} is ${b.status}, only reserved bookings can be aborted`, "NOT_ALLOWED")
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
    sql`DELETE FROM bokun_sandbox.bookings WHERE vendor_id = ${vendorId} AND confirmation_code = ${code} RETURNING id`.pipe(
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
        const [line] = yield* sql<{ id: number; booking_id: number; product_id: number; date: string; start_time_id: number; rate_id: number | null; participants: number; status: string }>`
          SELECT pb.id, pb.booking_id, pb.product_id, pb.date, pb.start_time_id, pb.rate_id, pb.participants, pb.status
          FROM bokun_sandbox.product_bookings pb
          WHERE pb.id = ${Number.isFinite(lineId) ? lineId : -1} AND pb.vendor_id = ${vendorId} FOR UPDATE`
        if (!line) return yield* notFound(`Activity booking ${action.activityBookingId}`)
        if (bookingId !== null && line.booking_id !== bookingId) return yield* badRequest("Actions must edit one booking")
        bookingId = line.booking_id
        if (line.status !== "CONFIRMED" && line.status !== "RESERVED") {
          return yield* badRequest(`Activity booking ${line.id} is ${line.status}`, "NOT_ALLOWED")
        }
        const target = action.type === "ActivityChangeDateAction"
          ? { date: action.date, startTimeId: action.startTimeId == null ? line.start_time_id : Number(action.startTimeId), rateId: line.rate_id }
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
    sql,
    changed,
    vendorByAccessKey,
    vendorById,
    activity,
    pickupPlaces,
    activitySearch,
    expireHolds,
    insertBooking,
    existingByIdempotencyKey,
    serviceChannel,
    loadBookings,
    bookingIdByCode,
    bookingByCode,
    searchBookings,
    availabilities,
    confirmReserved,
    abortReserved,
    cancelBooking,
    deleteBooking,
    updateCustomer,
    editBooking
  }
})

export type Store = Effect.Effect.Success<typeof makeStore>
