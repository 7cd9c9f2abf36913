/**
 * The Bókun sandbox itself: its authentication, its admin endpoints over HTTP, its schema being
 * created idempotently, and its seeding (deterministic generation, full demo days in each vendor's
 * time zone, the bulk generator).
 */
import { NodeHttpClient } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Clock, Effect, Layer } from "effect"
import { bokunDate, signedHeaders } from "../../src/adapters/bokun/signing.js"
import { bookingSystemLayer } from "../../src/adapters/BookingSystemLive.js"
import { BookingSystem } from "../../src/ports/BookingSystem.js"
import { addDays, BokunSandbox, localDay, startSandbox } from "../../src/sandbox/bokun/index.js"
import { call } from "../support/http.js"
import { sandboxEnv, smallVendor, TEST_ADAPTER } from "./env.js"

/** A signed request as any Bókun client would send it, with the parts a test wants to break. */
const signedCall = (
  baseUrl: string,
  pathAndQuery: string,
  keys: { accessKey: string; secretKey: string },
  options: { method?: string; body?: unknown; at?: number; headers?: Record<string, string> } = {}
) =>
  Effect.gen(function*() {
    const method = options.method ?? "GET"
    const at = options.at ?? (yield* Clock.currentTimeMillis)
    const headers = signedHeaders({ ...keys, method, pathAndQuery, epochMillis: at })
    return yield* call(pathAndQuery, {
      baseUrl,
      method,
      headers: { ...headers, ...options.headers },
      ...(options.body !== undefined ? { body: options.body } : {})
    })
  })

layer(sandboxEnv(), { excludeTestServices: true, timeout: 180_000 })("Bókun sandbox", (it) => {
  describe("authentication", () => {
    it.effect("answers 401 to a missing header, a bad signature, an unknown key and a date too far off", () =>
      Effect.gen(function*() {
        const sandbox = yield* BokunSandbox
        const vendor = yield* sandbox.createVendor(smallVendor("Auth Tours"))
        const keys = { accessKey: vendor.accessKey, secretKey: vendor.secretKey }
        const path = `/activity.json/${vendor.products[0]!.id}`
        const ok = yield* signedCall(sandbox.baseUrl, path, keys)
        expect(ok.status).toBe(200)
        expect(ok.body.title).toBe("Harbour Cruise")

        const missing = yield* call(path, { baseUrl: sandbox.baseUrl })
        expect(missing.status).toBe(401)
        expect(missing.body).toMatchObject({
          errorCode: "UNAUTHORIZED",
          message: expect.stringContaining("X-Bokun-Signature")
        })

        const wrongSecret = yield* signedCall(sandbox.baseUrl, path, { ...keys, secretKey: "guess" })
        expect(wrongSecret.status).toBe(401)
        expect(wrongSecret.body.message).toContain("signature")

        const unknown = yield* signedCall(sandbox.baseUrl, path, { ...keys, accessKey: "unknown" })
        expect(unknown.status).toBe(401)

        // The signature covers the query string: signing one path and sending another fails.
        const now = yield* Clock.currentTimeMillis
        const signedForOther = signedHeaders({ ...keys, method: "GET", pathAndQuery: path, epochMillis: now })
        const tampered = yield* call(`${path}?lang=EN`, { baseUrl: sandbox.baseUrl, headers: signedForOther })
        expect(tampered.status).toBe(401)

        const stale = yield* signedCall(sandbox.baseUrl, path, keys, { at: now - 10 * 60_000 })
        expect(stale.status).toBe(401)
        expect(stale.body.message).toContain("5 minutes")
        const early = yield* signedCall(sandbox.baseUrl, path, keys, { at: now + 10 * 60_000 })
        expect(early.status).toBe(401)
        const slightlyOff = yield* signedCall(sandbox.baseUrl, path, keys, { at: now - 60_000 })
        expect(slightlyOff.status).toBe(200)

        const badDate = yield* call(path, {
          baseUrl: sandbox.baseUrl,
          headers: { ...signedForOther, "x-bokun-date": new Date(now).toISOString() }
        })
        expect(badDate.status).toBe(401)
        expect(bokunDate(now)).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
      }))

    it.effect("a vendor only sees its own bookings and products", () =>
      Effect.gen(function*() {
        const sandbox = yield* BokunSandbox
        const a = yield* sandbox.createVendor(smallVendor("Vendor A"))
        const b = yield* sandbox.createVendor(smallVendor("Vendor B"))
        const made = yield* sandbox.addBooking({ vendorId: a.id, productId: a.products[0]!.id, date: "2027-01-10" })
        const keysB = { accessKey: b.accessKey, secretKey: b.secretKey }
        expect((yield* signedCall(sandbox.baseUrl, `/booking.json/booking/${made.confirmationCode}`, keysB)).status)
          .toBe(404)
        expect((yield* signedCall(sandbox.baseUrl, `/activity.json/${a.products[0]!.id}`, keysB)).status).toBe(404)
        const search = yield* signedCall(sandbox.baseUrl, "/booking.json/booking-search", keysB, {
          method: "POST",
          body: { startDateRange: { from: "2027-01-01", to: "2027-01-31" }, page: 1, pageSize: 50 }
        })
        expect(search.body).toEqual({ totalHits: 0, items: [] })
      }))
  })

  describe("admin endpoints", () => {
    it.effect("switch faults over HTTP, per vendor or for all, count requests, and reset", () =>
      Effect.gen(function*() {
        const sandbox = yield* BokunSandbox
        const bs = yield* BookingSystem
        const vendor = yield* sandbox.createVendor(smallVendor("Admin Tours"))
        const other = yield* sandbox.createVendor(smallVendor("Bystander Tours"))
        const account = sandbox.account(vendor)
        const base = sandbox.baseUrl

        const put = yield* call("/sandbox/faults", {
          baseUrl: base,
          method: "PUT",
          body: { errorRate: 1, errorStatus: 500, vendorId: vendor.id }
        })
        expect(put.status).toBe(200)
        expect(put.body.vendors[vendor.accessKey]).toMatchObject({ errorRate: 1, errorStatus: 500 })
        yield* call("/sandbox/reset", { baseUrl: base, method: "POST" }) // clears the log (and faults)
        yield* call("/sandbox/faults", {
          baseUrl: base,
          method: "PUT",
          body: { errorRate: 1, errorStatus: 500, vendorId: vendor.id }
        })
        const failed = yield* Effect.either(bs.products(account))
        expect(failed._tag).toBe("Left")
        expect((yield* bs.products(sandbox.account(other))).length).toBe(1)

        const counted = yield* call("/sandbox/requests?method=POST&path=/activity.json/search", { baseUrl: base })
        expect(counted.body.count).toBe(4) // 3 attempts for the faulted vendor, 1 for the other

        const down = yield* call("/sandbox/faults", { baseUrl: base, method: "PUT", body: { down: true } })
        expect(down.body.all.down).toBe(true)
        // Admin calls keep working while the Bókun API is down.
        expect((yield* call("/sandbox/faults", { baseUrl: base })).status).toBe(200)
        expect((yield* Effect.either(bs.products(sandbox.account(other))))._tag).toBe("Left")

        const refusals = yield* call("/sandbox/faults", {
          baseUrl: base,
          method: "PUT",
          body: { rejectPhone: true, refuseBookings: true, vendorId: vendor.id }
        })
        expect(refusals.body.vendors[vendor.accessKey]).toMatchObject({ rejectPhone: true, refuseBookings: true })

        const invalid = yield* call("/sandbox/faults", { baseUrl: base, method: "PUT", body: { errorRate: 2 } })
        expect(invalid.status).toBe(400)

        const reset = yield* call("/sandbox/reset", { baseUrl: base, method: "POST" })
        expect(reset.status).toBe(200)
        expect((yield* call("/sandbox/faults", { baseUrl: base })).body).toEqual({
          all: {
            latencyMs: 0,
            errorRate: 0,
            errorStatus: 503,
            hang: false,
            down: false,
            rejectPhone: false,
            refuseBookings: false,
            failCreationSearch: false
          },
          vendors: {}
        })
        expect((yield* bs.products(account)).length).toBe(1)
      }))

    it.effect("seed over HTTP: a vendor, a booking, a cancellation and a deletion the adapter then sees", () =>
      Effect.gen(function*() {
        const sandbox = yield* BokunSandbox
        const bs = yield* BookingSystem
        const base = sandbox.baseUrl
        const created = yield* call("/sandbox/vendors", {
          baseUrl: base,
          method: "POST",
          body: smallVendor("HTTP Seeded Tours")
        })
        expect(created.status).toBe(200)
        const vendor = created.body
        expect(vendor).toMatchObject({
          title: "HTTP Seeded Tours",
          accessKey: expect.any(String),
          serviceChannelId: expect.any(Number)
        })
        const account = sandbox.account(vendor)
        const productId = vendor.products[0].id
        const first = (yield* call(`/sandbox/vendors/${vendor.id}/bookings`, {
          baseUrl: base,
          method: "POST",
          body: { productId, date: "2027-02-01", participants: 3, channel: "direct" }
        })).body
        const second = (yield* call(`/sandbox/vendors/${vendor.id}/bookings`, {
          baseUrl: base,
          method: "POST",
          body: { productId, date: "2027-02-01", startTime: "14:30" }
        })).body
        const range = { from: "2027-02-01", to: "2027-02-01" }
        const before = yield* bs.bookingLines(account, range)
        expect(before.map((l) => [l.bookingReference, l.status, l.channel.class]).sort()).toEqual(
          [[first.confirmationCode, "CONFIRMED", "direct"], [second.confirmationCode, "CONFIRMED", "ota"]].sort()
        )
        expect(
          (yield* call(`/sandbox/vendors/${vendor.id}/bookings/${first.confirmationCode}/cancel`, {
            baseUrl: base,
            method: "POST"
          })).status
        ).toBe(200)
        expect(
          (yield* call(`/sandbox/vendors/${vendor.id}/bookings/${second.confirmationCode}`, {
            baseUrl: base,
            method: "DELETE"
          })).status
        ).toBe(200)
        const after = yield* bs.bookingLines(account, range)
        expect(after.map((l) => [l.bookingReference, l.status])).toEqual([[first.confirmationCode, "CANCELLED"]])
        const missing = yield* call(`/sandbox/vendors/${vendor.id}/bookings/${second.confirmationCode}`, {
          baseUrl: base,
          method: "DELETE"
        })
        expect(missing.status).toBe(404)

        const capacity = yield* call("/sandbox/departures", {
          baseUrl: base,
          method: "PUT",
          body: { productId, startTimeId: vendor.products[0].startTimes[0].id, date: "2027-02-02", capacity: 2 }
        })
        expect(capacity.status).toBe(200)
        const [departure] = yield* bs.availability(account, {
          productId: String(productId),
          from: "2027-02-02",
          to: "2027-02-02"
        })
        expect(departure!.seatsLeft).toBe(2)
      }))

    it.effect("a season limits the days a product departs; day prices change one day's price and its bookings", () =>
      Effect.gen(function*() {
        const sandbox = yield* BokunSandbox
        const bs = yield* BookingSystem
        const spec = smallVendor("Seasonal Tours")
        const created = yield* call("/sandbox/vendors", {
          baseUrl: sandbox.baseUrl,
          method: "POST",
          body: { ...spec, products: [{ ...spec.products[0]!, season: { from: "2027-03-02", to: "2027-03-03" } }] }
        })
        expect(created.status).toBe(200)
        const vendor = created.body
        const account = sandbox.account(vendor)
        const product = vendor.products[0]
        const [standard] = product.rates
        const adult = product.pricingCategories.find((c: any) => c.isDefault).id
        const child = product.pricingCategories.find((c: any) => !c.isDefault).id
        const priced = yield* call("/sandbox/day-prices", {
          baseUrl: sandbox.baseUrl,
          method: "PUT",
          body: { rateId: standard.id, dates: ["2027-03-03"], prices: { [adult]: 39900 } }
        })
        expect(priced.status).toBe(200)

        const departures = yield* bs.availability(account, {
          productId: String(product.id),
          from: "2027-03-01",
          to: "2027-03-04"
        })
        expect(departures.map((d) => `${d.date} ${d.startTime}`)).toEqual([
          "2027-03-02 10:00",
          "2027-03-02 14:30",
          "2027-03-03 10:00",
          "2027-03-03 14:30"
        ])
        const priceOf = (date: string, category: number) =>
          departures.find((d) => d.date === date)!.rates.find((r) => r.rateId === String(standard.id))!.prices
            .find((p) => p.pricingCategoryId === String(category))!.amountMinor
        expect([priceOf("2027-03-02", adult), priceOf("2027-03-03", adult)]).toEqual([49900, 39900])
        // A category left out keeps the rate's price.
        expect(priceOf("2027-03-03", child)).toBe(24950)

        // A booking on the day costs the day's price; outside the season there is no departure.
        const booked = yield* sandbox.addBooking({
          vendorId: vendor.id,
          productId: product.id,
          date: "2027-03-03",
          participants: 2
        })
        const [line] = yield* bs.booking(account, booked.confirmationCode)
        expect(line!.totalMinor).toBe(79800)
        const outside = yield* call(`/sandbox/vendors/${vendor.id}/bookings`, {
          baseUrl: sandbox.baseUrl,
          method: "POST",
          body: { productId: product.id, date: "2027-03-04" }
        })
        expect(outside.status).toBe(400)
        expect(outside.text).toContain("NO_AVAILABILITY")
      }))
  })

  describe("schema", () => {
    it.effect("is created idempotently: a second sandbox on the same database starts and sees the same data", () =>
      Effect.gen(function*() {
        const sandbox = yield* BokunSandbox
        const vendor = yield* sandbox.createVendor(smallVendor("Shared Tours"))
        const made = yield* sandbox.addBooking({
          vendorId: vendor.id,
          productId: vendor.products[0]!.id,
          date: "2027-03-03"
        })
        const seen = yield* Effect.scoped(Effect.gen(function*() {
          const [second, third] = yield* Effect.all([startSandbox(), startSandbox()], { concurrency: 2 })
          expect(second.port).not.toBe(sandbox.port)
          expect(third.port).not.toBe(second.port)
          const bs = yield* BookingSystem
          return yield* bs.booking(second.account(vendor), made.confirmationCode)
        }))
        expect(seen[0]!.bookingReference).toBe(made.confirmationCode)
        // A restart finds the vendor it seeded before by its access key, ids and all.
        expect(yield* sandbox.findVendor(vendor.accessKey)).toEqual(vendor)
        expect(yield* sandbox.findVendor("never-seeded")).toBeUndefined()
        const sql = yield* SqlClient.SqlClient
        const tables = yield* sql<{ n: number }>`
          SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'bokun_sandbox'`
        expect(tables[0]!.n).toBe(12)
      }))
  })

  describe("seeding", () => {
    it.effect("generates the same bookings for the same seed, spread over channels, times, rates and pax", () =>
      Effect.gen(function*() {
        const sandbox = yield* BokunSandbox
        const bs = yield* BookingSystem
        const shape = (title: string, seed: number) =>
          Effect.gen(function*() {
            const vendor = yield* sandbox.createVendor(smallVendor(title, { capacity: 30 }))
            const made = yield* sandbox.generateBookings({
              vendorId: vendor.id,
              from: "2027-04-01",
              to: "2027-04-03",
              seed
            })
            const lines = yield* bs.bookingLines(sandbox.account(vendor), { from: "2027-04-01", to: "2027-04-03" })
            return {
              made,
              lines: lines
                .map((l) =>
                  [
                    l.date,
                    l.startTime,
                    l.rateTitle,
                    l.status,
                    l.channel.title,
                    l.guest.name,
                    l.pax.map((p) => `${p.title}:${p.quantity}`).join(","),
                    l.totalMinor
                  ].join("|")
                )
                .sort()
            }
          })
        const one = yield* shape("Seeded One", 11)
        const two = yield* shape("Seeded Two", 11)
        const three = yield* shape("Seeded Three", 12)
        expect(two.lines).toEqual(one.lines)
        expect(three.lines).not.toEqual(one.lines)
        const fields = (i: number) => new Set(one.lines.map((l) => l.split("|")[i]))
        expect(fields(1)).toEqual(new Set(["10:00", "14:30"]))
        expect(fields(2)).toEqual(new Set(["Standard", "With lunch"]))
        expect(fields(3)).toEqual(new Set(["CONFIRMED", "CANCELLED"]))
        expect(fields(4).size).toBeGreaterThanOrEqual(5)
        expect([...fields(6)].some((pax) => pax.includes("Child"))).toBe(true)
      }))

    it.effect("the demo fills today and the next days in each vendor's own time zone", () =>
      Effect.gen(function*() {
        const sandbox = yield* BokunSandbox
        const bs = yield* BookingSystem
        const now = yield* Clock.currentTimeMillis
        for (
          const [title, timezone, currency] of [["Kiwi Cruises", "Pacific/Auckland", "NZD"], [
            "Pacific Coast Tours",
            "America/Los_Angeles",
            "USD"
          ]] as const
        ) {
          const demo = yield* sandbox.seedDemoVendor({
            title,
            timezone,
            currency,
            daysBack: 1,
            daysAhead: 5,
            fullDays: 2
          })
          const today = localDay(now, timezone)
          expect([today, addDays(today, 1)]).toContain(demo.today) // the test may straddle midnight
          expect(demo.fullDays).toEqual([demo.today, addDays(demo.today, 1)])
          const account = sandbox.account(demo.vendor)
          const cruise = demo.vendor.products.find((p) => p.title === "Fjord & Waterfall Cruise")!
          const days = yield* bs.availability(account, {
            productId: String(cruise.id),
            from: demo.today,
            to: addDays(demo.today, 3)
          })
          for (const d of days) {
            if (demo.fullDays.includes(d.date)) expect([d.date, d.seatsLeft]).toEqual([d.date, 0])
          }
          expect(days.filter((d) => !demo.fullDays.includes(d.date)).some((d) => (d.seatsLeft ?? 0) > 0)).toBe(true)
          const lines = yield* bs.bookingLines(account, { from: demo.today, to: demo.today })
          const seated = lines.filter((l) => l.status === "CONFIRMED" && l.productId === String(cruise.id))
          expect(seated.reduce((n, l) => n + l.participants, 0)).toBe(40 * 3)
          expect(new Set(lines.map((l) => l.channel.class))).toEqual(new Set(["service", "ota", "direct", "reseller"]))
          const products = yield* bs.products(account)
          expect(products.map((p) => [p.title, p.timezone, p.currency])).toEqual(
            demo.vendor.products.map((p) => [p.title, timezone, currency])
          )
        }
      }))

    it.effect("the bulk generator writes many lines in one statement, all read back through paging", () =>
      Effect.gen(function*() {
        const sandbox = yield* BokunSandbox
        // Big pages, as a mirror refresh would use them.
        const bs = yield* Effect.provide(
          BookingSystem,
          bookingSystemLayer({ ...TEST_ADAPTER, searchPageSize: 500 }).pipe(Layer.provide(NodeHttpClient.layer))
        )
        const vendor = yield* sandbox.createVendor(smallVendor("Bulk Tours"))
        const written = yield* sandbox.bulkBookings({
          vendorId: vendor.id,
          lines: 5_000,
          from: "2027-05-01",
          to: "2027-05-10",
          seed: 3
        })
        expect(written.lines).toBe(5_000)
        const lines = yield* bs.bookingLines(sandbox.account(vendor), { from: "2027-05-01", to: "2027-05-10" })
        expect(lines).toHaveLength(5_000)
        expect(new Set(lines.map((l) => l.date)).size).toBe(10)
        const cancelled = lines.filter((l) => l.status === "CANCELLED").length
        expect(cancelled).toBeGreaterThan(100)
        expect(cancelled).toBeLessThan(700)
        // The same seed writes the same mix again.
        const again = yield* sandbox.createVendor(smallVendor("Bulk Tours Again"))
        yield* sandbox.bulkBookings({ vendorId: again.id, lines: 200, from: "2027-05-01", to: "2027-05-10", seed: 3 })
        const first200 = yield* sandbox.createVendor(smallVendor("Bulk Tours Third"))
        yield* sandbox.bulkBookings({
          vendorId: first200.id,
          lines: 200,
          from: "2027-05-01",
          to: "2027-05-10",
          seed: 3
        })
        const mix = (v: typeof again) =>
          Effect.map(
            bs.bookingLines(sandbox.account(v), { from: "2027-05-01", to: "2027-05-10" }),
            (ls) =>
              ls.map((l) => `${l.date}|${l.startTime}|${l.participants}|${l.status}|${l.guest.name}|${l.channel.title}`)
                .sort()
          )
        expect(yield* mix(again)).toEqual(yield* mix(first200))
      }))
  })
})
