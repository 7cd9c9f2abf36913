/**
 * The demo's booking system: the Bókun sandbox, started in-process on SANDBOX_PORT, with one
 * account shared by Fjord Explorer and Arctic Whale Safari and one for Lisboa Tejo Cruises, each in
 * its operators' time zone. Today and the next three local days are sold out, the following weeks
 * partly. Runs on every demo start: the first one seeds the vendors; later ones top up the coming
 * days (the sandbox's tables outlive restarts) and point the accounts at the sandbox's address. The
 * linked tours' catalogue pricing categories and rates take the sandbox products' ids.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect } from "effect"
import { addDays, localDayAt } from "../domain/localDay.js"
import type { Sandbox, SandboxProduct } from "../sandbox/bokun/index.js"
import { BookingSystemAccounts } from "../services/BookingSystemAccounts.js"

interface DemoVendor {
  readonly key: string
  readonly title: string
  readonly timezone: string
  readonly currency: string
  readonly seed: number
  readonly operators: ReadonlyArray<string>
  /** Demo tour title → index of the sandbox demo product it is. */
  readonly tours: Readonly<Record<string, number>>
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
    const [tour] = yield* sql<{ id: string }>`SELECT id FROM tours WHERE booking_system_product_id = ${product.id.toString()}`
    if (!tour) return
    const lists = [
      { table: "tour_pricing_categories", theirs: product.pricingCategories.map((c) => c.id.toString()) },
      { table: "tour_rates", theirs: product.rates.map((r) => r.id.toString()) }
    ]
    for (const { table, theirs } of lists) {
      const ours = yield* sql<{ id: string }>`SELECT id FROM ${sql(table)} WHERE tour_id = ${tour.id} ORDER BY position, id`
      if (ours.length !== theirs.length) {
        if (ours.length > 0) yield* Effect.logWarning(`demo: ${table} of tour ${tour.id} do not pair with product ${product.id}; ids kept`)
        continue
      }
      for (const [i, row] of ours.entries()) {
        if (row.id !== theirs[i]) yield* sql`UPDATE ${sql(table)} SET id = ${theirs[i]!} WHERE tour_id = ${tour.id} AND id = ${row.id}`
      }
    }
  })

export const setUpDemoBookingSystem = (sandbox: Sandbox) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const accounts = yield* BookingSystemAccounts
    const now = yield* Clock.currentTimeMillis
    for (const v of DEMO_VENDORS) {
      const accessKey = `demo-${v.key}`
      const secretKey = `demo-${v.key}-secret`
      let vendor = yield* sandbox.findVendor(accessKey)
      if (vendor === undefined) {
        vendor = (yield* sandbox.seedDemoVendor({
          title: v.title,
          timezone: v.timezone,
          currency: v.currency,
          seed: v.seed,
          daysAhead: DEMO_DAYS_AHEAD,
          fullDays: FULL_DAYS,
          accessKey,
          secretKey
        })).vendor
      } else {
        const today = localDayAt(v.timezone, new Date(now))
        yield* sandbox.generateBookings({
          vendorId: vendor.id,
          from: today,
          to: addDays(today, DEMO_DAYS_AHEAD),
          seed: v.seed + Math.floor(now / 86_400_000),
          fullDays: Array.from({ length: FULL_DAYS }, (_, i) => addDays(today, i))
        })
      }
      const [existing] = yield* sql<{ id: string }>`SELECT id FROM booking_system_accounts WHERE access_key = ${accessKey}`
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
      for (const [title, index] of Object.entries(v.tours)) {
        const product = vendor.products[index]!
        yield* sql`
          UPDATE tours SET booking_system_product_id = ${product.id.toString()}
          WHERE title = ${title} AND operator_id IN (SELECT id FROM operators WHERE name IN ${sql.in(v.operators)})
            AND booking_system_product_id IS NULL`
        yield* adoptBookingSystemIds(product)
      }
    }
  }).pipe(Effect.withSpan("Demo.setUpBookingSystem"))
