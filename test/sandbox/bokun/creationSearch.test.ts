/**
 * The Bókun sandbox's booking search by creation (`creationDateRange`, Bókun's BookingQuery), called
 * as any Bókun client calls it (signed HTTP): bookings created in the range whatever their
 * departure day, the bounds as asked, paging in creation order, one vendor's bookings only, bad
 * dates refused, and the vendor-scoped `failCreationSearch` switch.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Clock, Effect } from "effect"
import { signedHeaders } from "../../../src/adapters/bokun/signing.js"
import { addDays, BokunSandbox, demoProducts, type SandboxVendor } from "../../../src/sandbox/bokun/index.js"
import { call } from "../../support/http.js"
import { sandboxEnv, smallVendor } from "../env.js"

const SEARCH = "/booking.json/booking-search"

const search = (vendor: SandboxVendor, body: unknown) =>
  Effect.gen(function*() {
    const sandbox = yield* BokunSandbox
    const headers = signedHeaders({
      accessKey: vendor.accessKey,
      secretKey: vendor.secretKey,
      method: "POST",
      pathAndQuery: SEARCH,
      epochMillis: yield* Clock.currentTimeMillis
    })
    return yield* call(SEARCH, { baseUrl: sandbox.baseUrl, method: "POST", headers, body })
  })

const at = (iso: string) => new Date(iso)

interface Item {
  readonly confirmationCode: string
  readonly creationDate: number
}

layer(sandboxEnv(), { excludeTestServices: true, timeout: 120_000 })("Bókun sandbox: search by creation", (it) => {
  describe("creationDateRange", () => {
    it.effect("finds the bookings created in the range whatever their departure, pages them in creation order", () =>
      Effect.gen(function*() {
        const sandbox = yield* BokunSandbox
        const vendor = yield* sandbox.createVendor(smallVendor("Creation Tours", { capacity: null }))
        const other = yield* sandbox.createVendor(smallVendor("Other Creation Tours"))
        const product = vendor.products[0]!.id
        // Created in the range, departing long after it (and one before its creation day's end).
        const inside = [
          { created: "2026-03-01T00:00:00.000Z", date: "2026-09-01" },
          { created: "2026-03-01T13:00:00.000Z", date: "2026-03-02" },
          { created: "2026-03-02T08:00:00.000Z", date: "2027-01-15", status: "CANCELLED" as const },
          { created: "2026-03-03T23:59:59.999Z", date: "2026-03-05" },
          { created: "2026-03-02T10:00:00.000Z", date: "2026-06-01" }
        ]
        const codes = new Map<string, string>()
        for (const b of inside) {
          const made = yield* sandbox.addBooking({
            vendorId: vendor.id,
            productId: product,
            date: b.date,
            createdAt: at(b.created),
            ...(b.status ? { status: b.status } : {})
          })
          codes.set(b.created, made.confirmationCode)
        }
        // Outside: the day before, the instant the range ends, and another vendor's booking inside it.
        yield* sandbox.addBooking({
          vendorId: vendor.id,
          productId: product,
          date: "2026-03-02",
          createdAt: at("2026-02-28T23:59:59.999Z")
        })
        yield* sandbox.addBooking({
          vendorId: vendor.id,
          productId: product,
          date: "2026-03-02",
          createdAt: at("2026-03-04T00:00:00.000Z")
        })
        yield* sandbox.addBooking({
          vendorId: other.id,
          productId: other.products[0]!.id,
          date: "2026-03-02",
          createdAt: at("2026-03-02T09:00:00.000Z")
        })

        const range = {
          from: "2026-03-01T00:00:00.000Z",
          to: "2026-03-04T00:00:00.000Z",
          includeLower: true,
          includeUpper: false
        }
        const pages: Array<ReadonlyArray<Item>> = []
        for (let page = 1; page <= 3; page++) {
          const answer = yield* search(vendor, { creationDateRange: range, page, pageSize: 2 })
          expect(answer.status).toBe(200)
          expect(answer.body.totalHits).toBe(5)
          pages.push(answer.body.items as ReadonlyArray<Item>)
        }
        expect(pages.map((p) => p.length)).toEqual([2, 2, 1])
        const expected = [...inside].sort((a, b) => a.created.localeCompare(b.created))
        expect(pages.flat().map((b) => b.confirmationCode)).toEqual(expected.map((b) => codes.get(b.created)))
        expect(pages.flat().map((b) => new Date(b.creationDate).toISOString())).toEqual(expected.map((b) => b.created))
        const past = yield* search(vendor, { creationDateRange: range, page: 4, pageSize: 2 })
        expect(past.body.items).toEqual([])

        // Bounds as asked: the upper one included takes the booking made at 2026-03-04T00:00Z too;
        // the lower one excluded leaves out the one made at 2026-03-01T00:00Z.
        const closed = yield* search(vendor, { creationDateRange: { ...range, includeUpper: true }, pageSize: 50 })
        expect(closed.body.totalHits).toBe(6)
        const open = yield* search(vendor, { creationDateRange: { ...range, includeLower: false }, pageSize: 50 })
        expect(open.body.totalHits).toBe(4)
        // Days and epoch milliseconds are read as Jackson reads them (a day: its 00:00 UTC).
        const days = yield* search(vendor, {
          creationDateRange: { from: "2026-03-01", to: Date.parse("2026-03-04T00:00:00Z"), includeUpper: false },
          pageSize: 50
        })
        expect(days.body.totalHits).toBe(5)
        // The departure-day search is unchanged.
        const byDeparture = yield* search(vendor, { startDateRange: { from: "2026-03-02", to: "2026-03-02" } })
        expect(byDeparture.body.totalHits).toBe(3)
      }))

    it.effect("the demo's sales history: bookings created on every day of the last 400, departing up to 90 days later, over every channel", () =>
      Effect.gen(function*() {
        const sandbox = yield* BokunSandbox
        const sql = yield* SqlClient.SqlClient
        const vendor = yield* sandbox.createVendor({
          title: "History Tours",
          timezone: "Europe/Lisbon",
          currency: "EUR",
          products: demoProducts("EUR")
        })
        const today = "2026-11-20"
        const made = yield* sandbox.generateSalesHistory({ vendorId: vendor.id, today, seed: 5 })
        expect(made.bookings).toBeGreaterThan(400)
        const [stats] = yield* sql<{ first: string; last: string; days: number; max_lead: number; min_lead: number }>`
          SELECT min((b.created_at AT TIME ZONE 'UTC')::date)::text AS first,
            max((b.created_at AT TIME ZONE 'UTC')::date)::text AS last,
            count(DISTINCT (b.created_at AT TIME ZONE 'UTC')::date)::int AS days,
            max(pb.date - (b.created_at AT TIME ZONE 'UTC')::date)::int AS max_lead,
            min(pb.date - (b.created_at AT TIME ZONE 'UTC')::date)::int AS min_lead
          FROM bokun_sandbox.bookings b JOIN bokun_sandbox.product_bookings pb ON pb.booking_id = b.id
          WHERE b.vendor_id = ${vendor.id}`.pipe(Effect.orDie)
        expect(stats!.first <= addDays(today, -400)).toBe(true)
        // The last history departure is 8 days back, booked at least a day before it.
        expect(stats!.last <= addDays(today, -9) && stats!.last >= addDays(today, -20)).toBe(true)
        // Every creation day from 400 days back until the history's last departures were sold.
        expect(stats!.days).toBeGreaterThan(380)
        expect(stats!.max_lead).toBeLessThanOrEqual(91)
        expect(stats!.max_lead).toBeGreaterThan(60)
        expect(stats!.min_lead).toBeGreaterThanOrEqual(0)
        const channels = yield* sql<{ title: string; currency: string }>`
          SELECT DISTINCT c.title, b.currency FROM bokun_sandbox.bookings b
          JOIN bokun_sandbox.channels c ON c.id = b.channel_id WHERE b.vendor_id = ${vendor.id}`.pipe(Effect.orDie)
        expect(new Set(channels.map((c) => c.title))).toEqual(
          new Set([
            "Partner checkout (API)",
            "Viator",
            "GetYourGuide",
            "Expedia",
            "Direct booking",
            "Walk-in",
            "Hotel Concierge Desk"
          ])
        )
        expect(new Set(channels.map((c) => c.currency))).toEqual(new Set(["EUR"]))
      }))

    it.effect("refuses a date it cannot read and a search without a range", () =>
      Effect.gen(function*() {
        const sandbox = yield* BokunSandbox
        const vendor = yield* sandbox.createVendor(smallVendor("Bad Range Tours"))
        const bad = yield* search(vendor, { creationDateRange: { from: "yesterday", to: "2026-03-04" } })
        expect(bad.status).toBe(400)
        expect(bad.body.message).toContain("creationDateRange.from")
        const none = yield* search(vendor, { page: 1 })
        expect(none.status).toBe(400)
      }))

    it.effect("failCreationSearch for one vendor: its creation search answers 503, everything else still answers", () =>
      Effect.gen(function*() {
        const sandbox = yield* BokunSandbox
        const failing = yield* sandbox.createVendor(smallVendor("Failing Sales Tours"))
        const healthy = yield* sandbox.createVendor(smallVendor("Healthy Sales Tours"))
        yield* sandbox.faults.set({ failCreationSearch: true }, { vendorId: failing.id })
        const range = { from: "2026-03-01", to: "2026-03-04" }
        yield* Effect.ensuring(
          Effect.gen(function*() {
            expect((yield* search(failing, { creationDateRange: range })).status).toBe(503)
            expect((yield* search(failing, { startDateRange: range })).status).toBe(200)
            expect((yield* search(healthy, { creationDateRange: range })).status).toBe(200)
          }),
          sandbox.faults.reset
        )
        expect((yield* search(failing, { creationDateRange: range })).status).toBe(200)
      }))
  })
})
