/**
 * Bookings sold elsewhere by the service (the demo's own bookings), written into the booking system
 * as its checkout would have booked them: on the vendor's `service` channel with our confirmation
 * code as external reference, every guest in the default pricing category at the product's first
 * rate, priced as the sandbox prices it. Capacity is not checked (the bookings were sold already).
 * Set-based, and idempotent by external reference: a booking already there is kept and answered.
 */
import { Effect } from "effect"
import { badRequest } from "./failure.js"
import type { Store } from "./store.js"

export interface ImportedBooking {
  /** Our confirmation code: the booking's external reference in the booking system. */
  readonly externalReference: string
  readonly productId: number
  /** Local departure day and `HH:MM` start time (one of the product's). */
  readonly date: string
  readonly startTime: string
  readonly participants: number
  readonly status: "CONFIRMED" | "CANCELLED"
  readonly guest: {
    readonly firstName: string
    readonly lastName: string
    readonly email: string | null
    readonly phone: string | null
  }
  /** What the guest still owes on it (a pay-later balance not collected yet); the rest is paid. */
  readonly owedMinor: number
  readonly createdAt: Date
  readonly updatedAt: Date
}

/** Writes the bookings missing from the vendor; answers external reference → confirmation code for all of them. */
export const importBookings = (store: Store, vendorId: number, bookings: ReadonlyArray<ImportedBooking>) =>
  Effect.gen(function*() {
    const { sql } = store
    const vendor = yield* store.vendorById(vendorId)
    const codes = new Map<string, string>()
    if (bookings.length === 0) return codes
    const existing = yield* sql<{ external_reference: string; confirmation_code: string }>`
      SELECT external_reference, confirmation_code FROM bokun_sandbox.bookings
      WHERE vendor_id = ${vendor.id} AND external_reference IN ${sql.in(bookings.map((b) => b.externalReference))}`
    for (const row of existing) codes.set(row.external_reference, row.confirmation_code)
    const missing = bookings.filter((b) => !codes.has(b.externalReference))
    if (missing.length === 0) return codes

    const [channel] = yield* sql<{ id: number }>`
      SELECT id FROM bokun_sandbox.channels WHERE vendor_id = ${vendor.id} AND class = 'service' ORDER BY id LIMIT 1`
    // Each product's start times, its default category and that category's price at the first rate.
    const products = yield* sql<{
      id: number
      priced_per_booking: boolean
      start_time_id: number
      time: string
      rate_id: number
      category_id: number
      category_title: string
      amount_minor: number
    }>`
      SELECT p.id, p.priced_per_booking, st.id AS start_time_id, st.time, pr.rate_id, pr.pricing_category_id AS category_id,
        pc.title AS category_title, pr.amount_minor
      FROM bokun_sandbox.products p
      JOIN bokun_sandbox.start_times st ON st.product_id = p.id
      JOIN LATERAL (
        SELECT x.rate_id, x.pricing_category_id, x.amount_minor FROM bokun_sandbox.prices x
        JOIN bokun_sandbox.rates r ON r.id = x.rate_id
        JOIN bokun_sandbox.pricing_categories c ON c.id = x.pricing_category_id
        WHERE r.product_id = p.id ORDER BY r.position, r.id, c.is_default DESC, c.position, c.id LIMIT 1
      ) pr ON true
      JOIN bokun_sandbox.pricing_categories pc ON pc.id = pr.pricing_category_id
      WHERE p.vendor_id = ${vendor.id}`
    const departure = new Map(products.map((p) => [`${p.id}|${p.time}`, p]))

    const ids = yield* sql<{ id: number }>`
      SELECT nextval('bokun_sandbox.booking_ids')::bigint AS id FROM generate_series(1, ${missing.length * 2})`
    const rows: Array<Record<string, unknown>> = []
    const lines: Array<Record<string, unknown>> = []
    for (const [i, b] of missing.entries()) {
      const p = departure.get(`${b.productId}|${b.startTime}`)
      if (p === undefined) return yield* badRequest(`No start time ${b.startTime} on product ${b.productId}`)
      const total = p.priced_per_booking ? p.amount_minor : p.amount_minor * b.participants
      const id = ids[2 * i]!.id
      const code = `${vendor.code_prefix}-${id}`
      codes.set(b.externalReference, code)
      rows.push({
        id,
        vendor_id: vendor.id,
        confirmation_code: code,
        external_reference: b.externalReference,
        status: b.status,
        channel_id: channel?.id ?? null,
        currency: vendor.currency,
        first_name: b.guest.firstName,
        last_name: b.guest.lastName,
        email: b.guest.email,
        phone: b.guest.phone,
        paid_minor: b.status === "CANCELLED" ? 0 : Math.max(0, total - b.owedMinor),
        payment_status: null,
        idempotency_key: null,
        hold_expires_at: null,
        note: b.status === "CANCELLED" ? "Cancelled through the partner checkout" : null,
        created_at: b.createdAt,
        updated_at: b.updatedAt
      })
      lines.push({
        id: ids[2 * i + 1]!.id,
        booking_id: id,
        vendor_id: vendor.id,
        product_id: p.id,
        rate_id: p.rate_id,
        start_time_id: p.start_time_id,
        date: b.date,
        status: b.status,
        participants: b.participants,
        pax: JSON.stringify([{ pricingCategoryId: p.category_id, title: p.category_title, quantity: b.participants }]),
        pickup_place_id: null,
        total_minor: total,
        updated_at: b.updatedAt
      })
    }
    yield* sql.withTransaction(Effect.gen(function*() {
      for (let i = 0; i < rows.length; i += 1000) {
        yield* sql`INSERT INTO bokun_sandbox.bookings ${sql.insert(rows.slice(i, i + 1000))}`
        yield* sql`INSERT INTO bokun_sandbox.product_bookings ${sql.insert(lines.slice(i, i + 1000))}`
      }
    }))
    yield* store.changed
    return codes
  }).pipe(Effect.withSpan("BokunSandbox.importBookings"))
