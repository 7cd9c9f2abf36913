/**
 * GET /api/v1/sales end to end from the booking system: bookings made in the Bókun sandbox, read into
 * the sales ledger by the real refresh through the real adapter, summed by the rollup job, answered
 * by the real server; and a booking system that does not answer (the sandbox's vendor-scoped
 * `failCreationSearch` switch), whose other channels are `available: false` while own sales and the
 * healthy account's figures are still answered.
 */
import { NodeHttpClient } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { bookingSystemLayer } from "../../../src/adapters/BookingSystemLive.js"
import { BookingSystemAccounts } from "../../../src/operators/BookingSystemAccounts.js"
import { SalesLedger } from "../../../src/sales/SalesLedger.js"
import { BokunSandbox, BokunSandboxLive } from "../../../src/sandbox/bokun/index.js"
import { smallVendor } from "../../sandbox/env.js"
import { createKey, insertBooking, makeWorld } from "../../support/fixtures.js"
import { get } from "../../support/http.js"
import { linkSandboxVendor } from "../../support/mirror.js"
import { runRollups } from "../../support/sales.js"
import { testServer } from "../../support/server.js"

const env = () =>
  SalesLedger.Default.pipe(
    Layer.provideMerge(BookingSystemAccounts.Default),
    Layer.provideMerge(
      Layer.mergeAll(
        BokunSandboxLive(),
        bookingSystemLayer({ timeout: "2 seconds", retries: 0, retryBase: "10 millis", searchPageSize: 5 })
      )
    ),
    Layer.provide(NodeHttpClient.layerUndici),
    Layer.provide(
      Layer.setConfigProvider(ConfigProvider.fromMap(
        new Map([["SALES_LEDGER_PAGE_PAUSE_MS", "1"], ["SALES_LEDGER_RETRIES", "0"], [
          "SALES_LEDGER_BACKFILL_DAYS",
          "5"
        ]])
      ))
    ),
    Layer.provideMerge(testServer())
  )

const today = () => new Date().toISOString().slice(0, 10)
/** Noon UTC of today (so a test running across midnight still finds its bookings on one day). */
const noon = () => new Date(`${today()}T12:00:00Z`)

/** A sandbox vendor with an account linked to the operators; `book` makes a booking created at noon today. */
const linkedVendor = (operatorIds: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const sandbox = yield* BokunSandbox
    const vendor = yield* sandbox.createVendor(smallVendor(`Sales ${randomUUID().slice(0, 6)}`, { capacity: null }))
    const accountId = yield* linkSandboxVendor(sandbox.baseUrl, vendor, operatorIds)
    const book = (channel: "ota" | "reseller" | "direct" | "service", participants: number) =>
      sandbox.addBooking({
        vendorId: vendor.id,
        productId: vendor.products[0]!.id,
        date: "2027-03-01",
        createdAt: noon(),
        channel,
        participants
      })
    return { vendor, accountId, book, sandbox }
  })

/** The ledger's reads: the recent days, then the backfill of a newly linked account. */
const readLedger = Effect.flatMap(SalesLedger, (ledger) => Effect.zipRight(ledger.refreshRecent(), ledger.backfill()))

layer(env(), { excludeTestServices: true, timeout: 120_000 })("GET /api/v1/sales from the booking system", (it) => {
  it.effect("lines read from the booking system sum to what the sandbox holds; a failing one is unavailable", () =>
    Effect.gen(function*() {
      const w = yield* makeWorld
      const healthy = yield* linkedVendor([w.alpha, w.beta])
      const failing = yield* linkedVendor([w.cetus])
      const ota = yield* healthy.book("ota", 3)
      const reseller = yield* healthy.book("reseller", 2)
      yield* healthy.book("service", 4) // sold through this service's channel: own sales, not other channels
      yield* failing.book("ota", 5)
      yield* failing.sandbox.faults.set({ failCreationSearch: true }, { vendorId: failing.vendor.id })
      yield* insertBooking({ operatorId: w.cetus, createdAt: noon(), amountMinor: 12300, currency: "EUR" })
      yield* readLedger
      yield* runRollups

      const key = yield* createKey({ by: w.bob, operators: [w.alpha, w.beta], scopes: ["finance:read"] })
      const res = yield* get(`/api/v1/sales?from=${today()}&to=${today()}`, key.token)
      expect(res.status, res.text).toBe(200)
      const o = res.body.other_channels
      expect(o.available).toBe(true)
      expect(o.unavailable).toEqual([])
      // What the sandbox itself holds for those two bookings.
      const sql = yield* SqlClient.SqlClient
      const [held] = yield* sql<{ total: number; participants: number }>`
        SELECT sum(total_minor)::int8 AS total, sum(participants)::int8 AS participants
        FROM bokun_sandbox.product_bookings WHERE booking_id IN ${sql.in([ota.bookingId, reseller.bookingId])}`
      expect(held!.total).toBeGreaterThan(0)
      expect(o.totals).toEqual({ revenue_minor: held!.total, bookings: 2, participants: 5 })
      expect(o.channels.map((c: any) => c.bookings).reduce((a: number, b: number) => a + b, 0)).toBe(2)
      expect(new Date(o.as_of).getTime()).toBeGreaterThan(Date.now() - 60_000)

      const lisbon = yield* createKey({ by: w.carol, operators: [w.cetus], scopes: ["finance:read"] })
      const down = yield* get(`/api/v1/sales?from=${today()}&to=${today()}`, lisbon.token)
      expect(down.status, down.text).toBe(200)
      expect(down.body.panion.totals).toEqual([{
        currency: "EUR",
        partner: { id: w.cetus, name: `Cetus Cruises ${w.tag}` },
        revenue_minor: 12300,
        bookings: 1
      }])
      expect(down.body.other_channels.available).toBe(false)
      expect(down.body.other_channels.unavailable.map((u: any) => u.reason)).toEqual(["refresh_failed"])
      expect(down.body.other_channels.totals).toEqual({ revenue_minor: 0, bookings: 0, participants: 0 })

      // The booking system answers again: the next reads complete the ledger, and the figures come.
      yield* failing.sandbox.faults.set({ failCreationSearch: false }, { vendorId: failing.vendor.id })
      yield* readLedger
      yield* runRollups
      const back = yield* get(`/api/v1/sales?from=${today()}&to=${today()}`, lisbon.token)
      expect(back.body.other_channels.available).toBe(true)
      expect(back.body.other_channels.totals.bookings).toBe(1)
      expect(back.body.other_channels.totals.participants).toBe(5)
    }))
})
