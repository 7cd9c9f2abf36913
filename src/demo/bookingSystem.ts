/**
 * The demo's booking system: the Bókun sandbox, started in-process on SANDBOX_PORT, with one
 * account shared by Fjord Explorer and Arctic Whale Safari and one for Lisboa Tejo Cruises, each in
 * its operators' time zone. Today and the next three local days are sold out, the following weeks
 * partly. Runs on every demo start: the first one seeds the vendors; later ones top up the coming
 * days (the sandbox's tables outlive restarts) and point the accounts at the sandbox's address.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect } from "effect"
import { addDays, localDayAt } from "../domain/localDay.js"
import type { Sandbox } from "../sandbox/bokun/index.js"
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
        serviceChannelId: String(vendor.serviceChannelId)
      }))
      // The sandbox's port may differ from the last run's (SANDBOX_PORT=0).
      yield* sql`UPDATE booking_system_accounts SET base_url = ${sandbox.baseUrl} WHERE id = ${accountId}`
      yield* sql`
        UPDATE operators SET booking_system_account_id = ${accountId}
        WHERE name IN ${sql.in(v.operators)} AND booking_system_account_id IS DISTINCT FROM ${accountId}`
      for (const [title, index] of Object.entries(v.tours)) {
        yield* sql`
          UPDATE tours SET booking_system_product_id = ${vendor.products[index]!.id.toString()}
          WHERE title = ${title} AND operator_id IN (SELECT id FROM operators WHERE name IN ${sql.in(v.operators)})
            AND booking_system_product_id IS NULL`
      }
    }
  }).pipe(Effect.withSpan("Demo.setUpBookingSystem"))
