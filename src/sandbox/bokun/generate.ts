/**
 * Bookings generated from a seed over a range of local days: every departure of every product of
 * the vendor filled toward a target, spread over channels, rates, pax mixes, pickups and payment
 * states, some cancelled; chosen days sold to capacity.
 */
import { Clock, Effect } from "effect"
import { FIRST_NAMES, LAST_NAMES } from "./names.js"
import { seededRng } from "./random.js"
import type { Store } from "./store.js"
import { daysIn } from "./time.js"
import type { ChannelClass } from "./vendors.js"

export interface GenerateSpec {
  readonly vendorId: number
  /** Local departure days, both included. */
  readonly from: string
  readonly to: string
  readonly seed: number
  /** Average share of each departure's seats sold (0..1). Default 0.6. */
  readonly fill?: number
  /** Days on which every departure is sold to capacity (the demo's "full" days). */
  readonly fullDays?: ReadonlyArray<string>
  /** Share of bookings that are cancelled (their seats freed). Default 0.08. */
  readonly cancelledShare?: number
  /** Seats assumed for departures without a capacity (unlimited). Default 20. */
  readonly unlimitedAs?: number
  /** Bookings are made 1 to this many days before their departure. Default 45. */
  readonly maxLeadDays?: number
}

interface GenProduct {
  readonly id: number
  readonly capacity: number | null
  readonly pricedPerBooking: boolean
  readonly starts: ReadonlyArray<number>
  readonly rates: ReadonlyArray<{ id: number; prices: ReadonlyMap<number, number> }>
  readonly categories: ReadonlyArray<{ id: number; title: string; isDefault: boolean }>
  readonly pickups: ReadonlyArray<number>
}

const loadGenProducts = (store: Store, vendorId: number) =>
  Effect.gen(function*() {
    const { sql } = store
    const products = yield* sql<{ id: number; capacity: number | null; priced_per_booking: boolean }>`
      SELECT id, capacity, priced_per_booking FROM bokun_sandbox.products WHERE vendor_id = ${vendorId} ORDER BY id`
    const result: Array<GenProduct> = []
    for (const p of products) {
      const starts = yield* sql<
        { id: number }
      >`SELECT id FROM bokun_sandbox.start_times WHERE product_id = ${p.id} ORDER BY time`
      const prices = yield* sql<{ rate_id: number; category_id: number; amount_minor: number }>`
        SELECT r.id AS rate_id, pr.pricing_category_id AS category_id, pr.amount_minor
        FROM bokun_sandbox.rates r JOIN bokun_sandbox.prices pr ON pr.rate_id = r.id
        WHERE r.product_id = ${p.id} ORDER BY r.position, r.id`
      const categories = yield* sql<{ id: number; title: string; is_default: boolean }>`
        SELECT id, title, is_default FROM bokun_sandbox.pricing_categories WHERE product_id = ${p.id} ORDER BY position, id`
      const pickups = yield* sql<
        { id: number }
      >`SELECT id FROM bokun_sandbox.pickup_places WHERE product_id = ${p.id} ORDER BY id`
      const rateIds = [...new Set(prices.map((r) => r.rate_id))]
      result.push({
        id: p.id,
        capacity: p.capacity,
        pricedPerBooking: p.priced_per_booking,
        starts: starts.map((s) => s.id),
        rates: rateIds.map((id) => ({
          id,
          prices: new Map(prices.filter((r) => r.rate_id === id).map((r) => [r.category_id, r.amount_minor]))
        })),
        categories: categories.map((c) => ({ id: c.id, title: c.title, isDefault: c.is_default })),
        pickups: pickups.map((x) => x.id)
      })
    }
    return result
  })

/**
 * Bookings over the local days [from, to] for every product and departure of the vendor, the same
 * for the same seed and data. Seats already sold count toward each departure's target.
 */
export const generateBookings = (store: Store, spec: GenerateSpec) =>
  Effect.gen(function*() {
    const { sql } = store
    const vendor = yield* store.vendorById(spec.vendorId)
    const rng = seededRng(spec.seed)
    const products = yield* loadGenProducts(store, vendor.id)
    const channels = yield* sql<{ id: number; class: ChannelClass; weight: number }>`
      SELECT id, class, weight FROM bokun_sandbox.channels WHERE vendor_id = ${vendor.id} ORDER BY id`
    const taken = new Map(
      (yield* sql<{ product_id: number; date: string; start_time_id: number; seats: number }>`
        SELECT product_id, date, start_time_id, sum(participants)::int AS seats FROM bokun_sandbox.product_bookings
        WHERE vendor_id = ${vendor.id} AND date BETWEEN ${spec.from} AND ${spec.to} AND status IN ('CONFIRMED', 'RESERVED')
        GROUP BY 1, 2, 3`).map((r) => [`${r.product_id}|${r.date}|${r.start_time_id}`, r.seats])
    )
    const capacities = new Map(
      (yield* sql<{ product_id: number; date: string; start_time_id: number; capacity: number }>`
        SELECT d.product_id, d.date, d.start_time_id, d.capacity FROM bokun_sandbox.departures d
        JOIN bokun_sandbox.products p ON p.id = d.product_id
        WHERE p.vendor_id = ${vendor.id} AND d.date BETWEEN ${spec.from} AND ${spec.to}`).map((r) => [
        `${r.product_id}|${r.date}|${r.start_time_id}`,
        r.capacity
      ])
    )
    const now = yield* Clock.currentTimeMillis
    const fullDays = new Set(spec.fullDays ?? [])
    const bookings: Array<Record<string, unknown>> = []
    const lines: Array<Record<string, unknown>> = []
    const pending: Array<{ booking: Record<string, unknown>; line: Record<string, unknown> }> = []

    for (const day of daysIn(spec.from, spec.to)) {
      for (const p of products) {
        for (const start of p.starts) {
          const key = `${p.id}|${day}|${start}`
          const capacity = capacities.get(key) ?? p.capacity ?? spec.unlimitedAs ?? 20
          const target = fullDays.has(day)
            ? capacity
            : Math.min(capacity, Math.round(capacity * (spec.fill ?? 0.6) * (0.5 + rng.next())))
          let seats = taken.get(key) ?? 0
          while (seats < target) {
            const party = Math.min(target - seats, rng.weighted([1, 2, 2, 2, 3, 4, 4, 5, 6], () => 1))
            const cancelled = rng.chance(spec.cancelledShare ?? 0.08)
            const channel = rng.weighted(channels, (c) => c.weight)
            const rate = rng.pick(p.rates)
            const adult = p.categories.find((c) => c.isDefault) ?? p.categories[0]!
            const others = p.categories.filter((c) => c !== adult && rate.prices.has(c.id))
            const minors = others.length > 0 && party > 1 && rng.chance(0.35) ? rng.int(1, party - 1) : 0
            const pax = [{ pricingCategoryId: adult.id, title: adult.title, quantity: party - minors }]
            if (minors > 0) {
              const other = rng.pick(others)
              pax.push({ pricingCategoryId: other.id, title: other.title, quantity: minors })
            }
            const total = p.pricedPerBooking
              ? rate.prices.get(adult.id) ?? 0
              : pax.reduce((sum, x) => sum + (rate.prices.get(x.pricingCategoryId) ?? 0) * x.quantity, 0)
            const first = rng.pick(FIRST_NAMES)
            const last = rng.pick(LAST_NAMES)
            const paid = channel.class === "direct"
              ? rng.weighted([total, Math.round(total * 0.3), 0], (x) => (x === total ? 6 : x === 0 ? 2 : 3))
              : total
            const departure = Date.parse(`${day}T12:00:00Z`)
            const created = new Date(
              Math.min(now, departure - rng.int(1, spec.maxLeadDays ?? 45) * 86_400_000 - rng.int(0, 86_399) * 1000)
            )
            const status = cancelled ? "CANCELLED" : "CONFIRMED"
            pending.push({
              booking: {
                vendor_id: vendor.id,
                external_reference: channel.class === "service"
                  ? `T-${Math.floor(rng.next() * 1e10).toString(36).toUpperCase()}`
                  : channel.class === "ota"
                  ? `${rng.int(100000000, 999999999)}`
                  : null,
                status,
                channel_id: channel.id,
                currency: vendor.currency,
                first_name: first,
                last_name: last,
                email: rng.chance(0.9)
                  ? `${first}.${last}@example.com`.toLowerCase().replace(/[^a-z0-9.@]/g, "")
                  : null,
                phone: rng.chance(0.7) ? `+47${rng.int(40000000, 99999999)}` : null,
                paid_minor: paid,
                payment_status: channel.class === "ota" ? "INVOICED" : null,
                idempotency_key: null,
                hold_expires_at: null,
                note: cancelled ? "Cancelled by guest" : null,
                created_at: created,
                updated_at: created
              },
              line: {
                vendor_id: vendor.id,
                product_id: p.id,
                rate_id: rate.id,
                start_time_id: start,
                date: day,
                status,
                participants: party,
                pax: JSON.stringify(pax),
                pickup_place_id: p.pickups.length > 0 && rng.chance(0.5) ? rng.pick(p.pickups) : null,
                total_minor: total,
                updated_at: created
              }
            })
            if (!cancelled) seats += party
          }
        }
      }
    }
    if (pending.length === 0) return { bookings: 0, lines: 0 }
    const ids = yield* sql<{ id: number }>`
      SELECT nextval('bokun_sandbox.booking_ids')::bigint AS id FROM generate_series(1, ${pending.length * 2})`
    pending.forEach((entry, i) => {
      const bookingId = ids[2 * i]!.id
      bookings.push({ id: bookingId, confirmation_code: `${vendor.code_prefix}-${bookingId}`, ...entry.booking })
      lines.push({ id: ids[2 * i + 1]!.id, booking_id: bookingId, ...entry.line })
    })
    yield* sql.withTransaction(Effect.gen(function*() {
      for (let i = 0; i < bookings.length; i += 1000) {
        yield* sql`INSERT INTO bokun_sandbox.bookings ${sql.insert(bookings.slice(i, i + 1000))}`
        yield* sql`INSERT INTO bokun_sandbox.product_bookings ${sql.insert(lines.slice(i, i + 1000))}`
      }
    }))
    yield* store.changed
    return { bookings: bookings.length, lines: lines.length }
  }).pipe(Effect.withSpan("BokunSandbox.generateBookings"))
