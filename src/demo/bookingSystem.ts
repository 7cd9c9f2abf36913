/**
 * The demo's booking system: the Bókun sandbox, started in-process on SANDBOX_PORT, with one
 * account shared by Fjord Explorer and Arctic Whale Safari and one for Lisboa Tejo Cruises, each in
 * its operators' time zone. Today and the next three local days are sold out, the following weeks
 * partly. Runs on every demo start: the first one seeds the vendors; later ones top up the coming
 * days (the sandbox's tables outlive restarts) and point the accounts at the sandbox's address. The
 * linked tours' catalogue pricing categories and rates take the sandbox products' ids.
 *
 * A new vendor also gets 400 days of sales history (bookings CREATED over the last 400 days, over
 * every channel: the sandbox's `generateSalesHistory`) for the sales ledger. A third account,
 * Nordkapp Coastal Tours', answers everything but the booking search by creation (the sandbox's
 * `failCreationSearch` switch, set on every start), so its sales ledger is never read: its
 * operator's sales show other channels `available: false` (key `Demo: sales unavailable`).
 *
 * The demo's own bookings (the `bookings` table, seed.ts) of the linked tours are bookings in the
 * sandbox too, written in before the sandbox's other sales fill the departures around them: on
 * the service's channel, with the confirmation code as external reference and the sandbox's
 * confirmation code as their `provider_reference`, paid but for a pay-later balance not collected
 * yet. So every write can be tried on them (a reschedule moves the sandbox's booking; the mirror
 * shows them as the service's own sales). Bookings of the kayak (no booking system) have none.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect } from "effect"
import { addDays, localDayAt } from "../domain/localDay.js"
import { BookingSystemAccounts } from "../operators/BookingSystemAccounts.js"
import { demoProducts, type Sandbox, type SandboxProduct, type SandboxVendor } from "../sandbox/bokun/index.js"

interface DemoVendor {
  readonly key: string
  readonly title: string
  readonly timezone: string
  readonly currency: string
  readonly seed: number
  readonly operators: ReadonlyArray<string>
  /** Demo tour title → index of the sandbox demo product it is. */
  readonly tours: Readonly<Record<string, number>>
  /** The booking system answers every call but the search by creation: its sales cannot be read. */
  readonly salesUnavailable?: boolean
}

export const DEMO_VENDORS: ReadonlyArray<DemoVendor> = [
  {
    key: "fjord-arctic",
    title: "Fjord & Arctic (Bókun)",
    timezone: "Europe/Oslo",
    currency: "NOK",
    seed: 11,
    operators: ["Fjord Explorer AS", "Arctic Whale Safari AS"],
    tours: { "Oslofjord Sightseeing Cruise": 0, "Whale Safari from Tromsø": 1, "Northern Lights Chase": 2 }
  },
  {
    key: "lisboa",
    title: "Lisboa Tejo Cruises (Bókun)",
    timezone: "Europe/Lisbon",
    currency: "EUR",
    seed: 12,
    operators: ["Lisboa Tejo Cruises Lda"],
    tours: { "Lisbon Dolphin Watch": 1, "Tagus Sunset Sail": 2 }
  },
  {
    key: "nordkapp",
    title: "Nordkapp Coastal Tours (Bókun)",
    timezone: "Europe/Oslo",
    currency: "NOK",
    seed: 13,
    operators: ["Nordkapp Coastal Tours AS"],
    tours: {},
    salesUnavailable: true
  }
]

/** Days ahead the demo keeps booked (and mirrors at start). */
export const DEMO_DAYS_AHEAD = 30
const FULL_DAYS = 4

/**
 * The catalogue's pricing categories and rates of a tour linked to a sandbox product take the
 * product's ids (what its checkout books with), pairing them in order; translations follow
 * (ON UPDATE CASCADE). A tour whose lists do not pair up one to one keeps its own ids.
 */
const adoptBookingSystemIds = (product: SandboxProduct) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [tour] = yield* sql<
      { id: string }
    >`SELECT id FROM tours WHERE booking_system_product_id = ${product.id.toString()}`
    if (!tour) return
    const lists = [
      { table: "tour_pricing_categories", theirs: product.pricingCategories.map((c) => c.id.toString()) },
      { table: "tour_rates", theirs: product.rates.map((r) => r.id.toString()) }
    ]
    for (const { table, theirs } of lists) {
      const ours = yield* sql<{ id: string }>`SELECT id FROM ${
        sql(table)
      } WHERE tour_id = ${tour.id} ORDER BY position, id`
      if (ours.length !== theirs.length) {
        if (ours.length > 0) {
          yield* Effect.logWarning(`demo: ${table} of tour ${tour.id} do not pair with product ${product.id}; ids kept`)
        }
        continue
      }
      for (const [i, row] of ours.entries()) {
        if (row.id !== theirs[i]) {
          yield* sql`UPDATE ${sql(table)} SET id = ${theirs[i]!} WHERE tour_id = ${tour.id} AND id = ${row.id}`
        }
      }
    }
  })

/** Days before today the sandbox's own sales of a new vendor start. */
const DAYS_BACK = 7

/**
 * The demo bookings of the tours linked to the vendor's products, written into the sandbox (those
 * already there are kept), and their `provider_reference` set to the sandbox's confirmation code.
 * Holds and abandoned checkouts never reached the booking system.
 */
const importDemoBookings = (sandbox: Sandbox, vendor: SandboxVendor) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const productIds = vendor.products.map((p) => p.id.toString())
    const rows = yield* sql<{
      confirmation_code: string
      product_id: string
      experience_date: string
      start_time: string
      participants: number
      status: string
      guest_name: string | null
      guest_email: string | null
      guest_phone: string | null
      owed_minor: number
      created_at: Date
      updated_at: Date
    }>`
      SELECT b.confirmation_code, t.booking_system_product_id AS product_id, b.experience_date::text AS experience_date,
        b.start_time, b.participants, b.status, b.guest_name, b.guest_email, b.guest_phone,
        (CASE WHEN b.payment_strategy = 'pay_later' AND b.pay_later_status IN ('upcoming', 'failed')
          THEN b.pay_later_amount_minor ELSE 0 END)::int AS owed_minor,
        b.created_at, coalesce(b.updated_at, b.created_at) AS updated_at
      FROM bookings b JOIN tours t ON t.id = b.tour_id
      WHERE t.booking_system_product_id IN ${sql.in(productIds)} AND b.confirmation_code LIKE 'DEMO-%'
        AND b.status IN ('CONFIRMED', 'RESERVED', 'CANCELLED', 'REFUNDED')
        AND b.experience_date IS NOT NULL AND b.start_time IS NOT NULL
      ORDER BY b.confirmation_code`
    if (rows.length === 0) return
    const codes = yield* sandbox.importBookings(
      vendor.id,
      rows.map((b) => {
        const [firstName, ...rest] = (b.guest_name ?? "Guest").split(" ")
        return {
          externalReference: b.confirmation_code,
          productId: Number(b.product_id),
          date: b.experience_date,
          startTime: b.start_time.slice(0, 5),
          participants: b.participants,
          status: b.status === "CANCELLED" || b.status === "REFUNDED" ? "CANCELLED" as const : "CONFIRMED" as const,
          guest: {
            firstName: firstName!,
            lastName: rest.join(" ") || "Guest",
            email: b.guest_email,
            phone: b.guest_phone
          },
          owedMinor: b.owed_minor,
          createdAt: b.created_at,
          updatedAt: b.updated_at
        }
      })
    )
    const pairs = [...codes].map(([ours, theirs]) => ({ ours, theirs }))
    yield* sql`
      UPDATE bookings b SET provider_reference = x.theirs
      FROM jsonb_to_recordset(${JSON.stringify(pairs)}::jsonb) AS x(ours text, theirs text)
      WHERE b.confirmation_code = x.ours AND b.provider_reference IS DISTINCT FROM x.theirs`
  }).pipe(Effect.withSpan("Demo.importBookings"))

export const setUpDemoBookingSystem = (sandbox: Sandbox) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const accounts = yield* BookingSystemAccounts
    const now = yield* Clock.currentTimeMillis
    for (const v of DEMO_VENDORS) {
      const accessKey = `demo-${v.key}`
      const secretKey = `demo-${v.key}-secret`
      const today = localDayAt(v.timezone, new Date(now))
      const fullDays = Array.from({ length: FULL_DAYS }, (_, i) => addDays(today, i))
      const found = yield* sandbox.findVendor(accessKey)
      const vendor = found ?? (yield* sandbox.createVendor({
        title: v.title,
        timezone: v.timezone,
        currency: v.currency,
        accessKey,
        secretKey,
        products: demoProducts(v.currency)
      }))
      const [existing] = yield* sql<
        { id: string }
      >`SELECT id FROM booking_system_accounts WHERE access_key = ${accessKey}`
      const accountId = existing?.id ?? (yield* accounts.create({
        kind: "bokun",
        name: v.title,
        baseUrl: sandbox.baseUrl,
        accessKey,
        secretKey,
        serviceChannelId: String(vendor.serviceChannelId),
        sandbox: true
      }))
      // The sandbox's port may differ from the last run's (SANDBOX_PORT=0); a sandbox (the demo's
      // Quickbook test key sells through it; databases from before migration 0018 are marked here).
      yield* sql`UPDATE booking_system_accounts SET base_url = ${sandbox.baseUrl}, sandbox = true WHERE id = ${accountId}`
      yield* sql`
        UPDATE operators SET booking_system_account_id = ${accountId}
        WHERE name IN ${sql.in(v.operators)} AND booking_system_account_id IS DISTINCT FROM ${accountId}`
      // In memory only: switched on again on every start.
      if (v.salesUnavailable) yield* sandbox.faults.set({ failCreationSearch: true }, { vendorId: vendor.id })
      for (const [title, index] of Object.entries(v.tours)) {
        const product = vendor.products[index]!
        yield* sql`
          UPDATE tours SET booking_system_product_id = ${product.id.toString()}
          WHERE title = ${title} AND operator_id IN (SELECT id FROM operators WHERE name IN ${sql.in(v.operators)})
            AND booking_system_product_id IS NULL`
        yield* adoptBookingSystemIds(product)
      }
      // Our own bookings first, so the sandbox's other sales fill the departures around them; a
      // new vendor gets its sales from a week back, an existing one tops up the coming days.
      yield* importDemoBookings(sandbox, vendor)
      // The sales history of a new vendor whose sales can be read: the departures before the demo's own days.
      if (found === undefined && !v.salesUnavailable) {
        yield* sandbox.generateSalesHistory({ vendorId: vendor.id, today, seed: v.seed })
      }
      yield* sandbox.generateBookings({
        vendorId: vendor.id,
        from: found === undefined ? addDays(today, -DAYS_BACK) : today,
        to: addDays(today, DEMO_DAYS_AHEAD),
        seed: found === undefined ? v.seed : v.seed + Math.floor(now / 86_400_000),
        // The small operator whose sales cannot be read: a few bookings for its manifest.
        ...(v.salesUnavailable ? { fill: 0.15 } : {}),
        fullDays: v.salesUnavailable ? [] : fullDays
      })
    }
  }).pipe(Effect.withSpan("Demo.setUpBookingSystem"))
