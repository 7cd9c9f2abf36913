/**
 * The Bókun adapter's `createdBookingLines` through the BookingSystem port, over real HTTP against
 * the sandbox: the UTC days asked for become a `creationDateRange` of instants, every page is read
 * (one request per page, `createdLinePages`), each line once with its booking's creation time, and
 * a search the system does not answer is `BookingSystemUnavailable` after the safe-call retries.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Chunk, Effect, Exit, Stream } from "effect"
import { BookingSystem, createdLinePages } from "../../../src/ports/BookingSystem.js"
import { BokunSandbox } from "../../../src/sandbox/bokun/index.js"
import { sandboxEnv, smallVendor, TEST_ADAPTER } from "../../sandbox/env.js"

const SEARCH = "/booking.json/booking-search"

layer(sandboxEnv(), { excludeTestServices: true, timeout: 120_000 })("Bókun adapter: lines by creation", (it) => {
  describe("createdBookingLines", () => {
    it.effect("reads every page of the bookings created on the days asked for, each line once", () =>
      Effect.gen(function*() {
        const sandbox = yield* BokunSandbox
        const bs = yield* BookingSystem
        const vendor = yield* sandbox.createVendor(smallVendor("Created Lines Tours", { capacity: null }))
        const account = sandbox.account(vendor)
        const product = vendor.products[0]!.id
        const made: Array<string> = []
        // 17 bookings created over 2026-05-10..12 (UTC), departing weeks later; 3 pages of 7.
        for (let i = 0; i < 17; i++) {
          const created = new Date(Date.parse("2026-05-10T00:00:00Z") + i * 4 * 3_600_000 + 1_000)
          const booking = yield* sandbox.addBooking({
            vendorId: vendor.id,
            productId: product,
            date: "2026-07-01",
            createdAt: created,
            channel: i % 3 === 0 ? "direct" : i % 3 === 1 ? "ota" : "reseller",
            ...(i === 4 ? { status: "CANCELLED" as const } : {})
          })
          made.push(String(booking.lineIds[0]))
        }
        // Created the day before and the day after: not asked for.
        for (const created of ["2026-05-09T23:59:59Z", "2026-05-13T00:00:00Z"]) {
          yield* sandbox.addBooking({
            vendorId: vendor.id,
            productId: product,
            date: "2026-05-20",
            createdAt: new Date(created)
          })
        }
        yield* sandbox.requests.clear
        const pages = yield* createdLinePages(bs, account, { from: "2026-05-10", to: "2026-05-12" }).pipe(
          Stream.runCollect,
          Effect.map(Chunk.toReadonlyArray)
        )
        expect(TEST_ADAPTER.searchPageSize).toBe(7)
        expect(pages.map((p) => p.length)).toEqual([7, 7, 3])
        expect(yield* sandbox.requests.count({ path: SEARCH })).toBe(3)
        const lines = pages.flat()
        expect(lines.map((l) => l.lineId).sort()).toEqual([...made].sort())
        for (const l of lines) {
          expect(l.createdAt.toISOString() >= "2026-05-10T00:00:00.000Z").toBe(true)
          expect(l.createdAt.toISOString() < "2026-05-13T00:00:00.000Z").toBe(true)
          expect(l.date).toBe("2026-07-01")
          expect(l.totalMinor).toBeGreaterThan(0)
          expect(l.currency).toBe("NOK")
        }
        expect(lines.filter((l) => l.status === "CANCELLED").length).toBe(1)
        expect(new Set(lines.map((l) => l.channel.class))).toEqual(new Set(["direct", "ota", "reseller"]))

        // One page at a time: the caller asks for the next page it was told about.
        const first = yield* bs.createdBookingLines(account, { from: "2026-05-10", to: "2026-05-12", page: 1 })
        expect(first.nextPage).toBe(2)
        expect(first.totalBookings).toBe(17)
        const last = yield* bs.createdBookingLines(account, { from: "2026-05-10", to: "2026-05-12", page: 3 })
        expect(last.nextPage).toBeNull()
        // A day with nothing created: one empty page.
        const empty = yield* bs.createdBookingLines(account, { from: "2026-04-01", to: "2026-04-01", page: 1 })
        expect(empty).toEqual({ lines: [], nextPage: null, totalBookings: 0 })
      }))

    it.effect("a creation search the system does not answer is BookingSystemUnavailable, after the retries", () =>
      Effect.gen(function*() {
        const sandbox = yield* BokunSandbox
        const bs = yield* BookingSystem
        const vendor = yield* sandbox.createVendor(smallVendor("Unanswered Sales Tours"))
        const account = sandbox.account(vendor)
        yield* sandbox.faults.set({ failCreationSearch: true }, { vendorId: vendor.id })
        yield* sandbox.requests.clear
        const exit = yield* Effect.exit(
          bs.createdBookingLines(account, { from: "2026-05-10", to: "2026-05-12", page: 1 })
        )
        const calls = yield* sandbox.requests.count({ path: SEARCH })
        yield* sandbox.faults.reset
        expect(Exit.isFailure(exit)).toBe(true)
        if (Exit.isFailure(exit) && exit.cause._tag === "Fail") {
          expect(exit.cause.error._tag).toBe("BookingSystemUnavailable")
          expect(exit.cause.error.reason).toBe("http_5xx")
        } else {
          throw new Error(`expected a failure, got ${String(exit)}`)
        }
        expect(calls).toBe(1 + TEST_ADAPTER.retries!)
        // Not a range of days: refused before any call.
        const bad = yield* Effect.exit(
          bs.createdBookingLines(account, { from: "2026-05-12", to: "2026-05-10", page: 1 })
        )
        expect(Exit.isFailure(bad)).toBe(true)
      }))
  })
})
