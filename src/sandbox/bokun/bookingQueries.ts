/**
 * Reads of bookings and availability as Bókun answers them. A booking search reads its matching ids
 * once into a snapshot that every write invalidates (a generation counter), so paging costs one page
 * of rows and pages do not shift while nothing changes, as with Bókun's search index.
 */
import type { SqlClient } from "@effect/sql"
import { Effect, Ref } from "effect"
import type * as Dialect from "../../adapters/bokun/dialect.js"
import { fromMinor } from "../../adapters/bokun/money.js"
import type { Catalogue } from "./catalogue.js"
import { badRequest, notFound } from "./failure.js"
import { type BookingRow, type LineRow, renderBooking } from "./render.js"
import type { Seats } from "./seats.js"
import { dayMillis, validDay } from "./time.js"

const SEARCH_CACHE_SIZE = 8

export const makeBookingQueries = (
  sql: SqlClient.SqlClient,
  generation: Ref.Ref<number>,
  catalogue: Catalogue,
  seats: Seats
) => {
  const { dayPrices, product, prices } = catalogue
  const { expireHolds } = seats
  const searchCache = new Map<string, { generation: number; ids: ReadonlyArray<number> }>()
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

  /**
   * One page of a booking search: by departure day (`startDateRange`: bookings with a product
   * booking on a day in the range, by booking id) or by creation (`creationDateRange`: bookings
   * created in [from, to] as instants, bounds included or not as asked, by creation time then id).
   */
  const searchBookings = (vendorId: number, query: {
    readonly range:
      | { readonly by: "start"; readonly from: string; readonly to: string }
      | {
        readonly by: "creation"
        readonly from: Date
        readonly to: Date
        readonly includeLower: boolean
        readonly includeUpper: boolean
      }
    readonly statuses: ReadonlyArray<string> | null
    readonly page: number
    readonly pageSize: number
  }) =>
    Effect.gen(function*() {
      const range = query.range
      if (range.by === "start" && (!validDay(range.from) || !validDay(range.to))) {
        return yield* badRequest("startDateRange needs from and to as yyyy-MM-dd")
      }
      yield* expireHolds
      const statuses = query.statuses
      const byStatus = statuses && statuses.length > 0 ? sql`AND status IN ${sql.in(statuses)}` : sql``
      const key = range.by === "start"
        ? `${vendorId}|start|${range.from}|${range.to}|${statuses?.join(",") ?? "*"}`
        : `${vendorId}|creation|${range.from.toISOString()}${range.includeLower ? "[" : "("}` +
          `${range.to.toISOString()}${range.includeUpper ? "]" : ")"}|${statuses?.join(",") ?? "*"}`
      const current = yield* Ref.get(generation)
      let ids = searchCache.get(key)?.generation === current ? searchCache.get(key)!.ids : undefined
      if (!ids) {
        const rows = range.by === "start"
          ? yield* sql<{ booking_id: number }>`
              SELECT DISTINCT booking_id FROM bokun_sandbox.product_bookings
              WHERE vendor_id = ${vendorId} AND date BETWEEN ${range.from} AND ${range.to} ${byStatus}
              ORDER BY booking_id`
          : yield* sql<{ booking_id: number }>`
              SELECT id AS booking_id FROM bokun_sandbox.bookings
              WHERE vendor_id = ${vendorId}
                AND created_at ${range.includeLower ? sql`>=` : sql`>`} ${range.from}
                AND created_at ${range.includeUpper ? sql`<=` : sql`<`} ${range.to} ${byStatus}
              ORDER BY created_at, id`
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
      const [departures, priceRows, dayRows] = yield* Effect.all([
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
            AND (p.season_from IS NULL OR d::date >= p.season_from)
            AND (p.season_to IS NULL OR d::date <= p.season_to)
          ORDER BY d, st.time`,
        prices(p.id),
        dayPrices(p.id, from, to)
      ])
      const rates = [...new Map(priceRows.map((r) => [r.rate_id, r.rate_title]))]
      // Day prices replace the rate's price of one category on one day.
      const dayPrice = new Map(dayRows.map((r) => [`${r.date}/${r.rate_id}/${r.category_id}`, r.amount_minor]))
      const amountOn = (date: string, r: (typeof priceRows)[number]) => ({
        amount: fromMinor(dayPrice.get(`${date}/${r.rate_id}/${r.category_id}`) ?? r.amount_minor, p.currency),
        currency: p.currency
      })
      // A product priced per booking also gives the rate's price for the whole party (Bókun's
      // `pricePerBooking`): its default category's price, which is what a booking of it costs.
      const pricesByRateOn = (date: string) =>
        rates.map(([rateId]) => {
          const rows = priceRows.filter((r) => r.rate_id === rateId)
          const perBooking = p.priced_per_booking ? rows.find((r) => r.is_default) ?? rows[0] : undefined
          return {
            activityRateId: rateId,
            pricePerCategoryUnit: rows.map((r) => ({ id: r.category_id, amount: amountOn(date, r) })),
            ...(perBooking !== undefined ? { pricePerBooking: amountOn(date, perBooking) } : {})
          }
        })
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
          pricesByRate: pricesByRateOn(d.date)
        }
      })
      return body
    })
  return { loadBookings, bookingIdByCode, bookingByCode, searchBookings, availabilities }
}

export type BookingQueries = ReturnType<typeof makeBookingQueries>
