/**
 * The sandbox's admin endpoints under /sandbox: not Bókun's, not signed, never subject to faults.
 * They switch faults, read the request log and seed data over HTTP (for the demo and for tests that
 * drive the sandbox from outside the process). Each mirrors a method of the in-process `Sandbox`.
 *
 *   GET    /sandbox/faults                      current switches
 *   PUT    /sandbox/faults                      {latencyMs?, errorRate?, errorStatus?, hang?, down?, rejectPhone?,
 *                                                refuseBookings?, failCreationSearch?, vendorId?}
 *   POST   /sandbox/reset                       all switches off, request log emptied
 *   GET    /sandbox/requests?method=&path=      {count, requests}
 *   POST   /sandbox/vendors                     VendorSpec → vendor with keys, channels and products
 *   POST   /sandbox/demo                        DemoSpec → vendor with demo products and bookings
 *   POST   /sandbox/vendors/{id}/bookings       one booking (BookingSpec without vendorId)
 *   POST   /sandbox/vendors/{id}/generate       GenerateSpec without vendorId
 *   POST   /sandbox/vendors/{id}/bulk           BulkSpec without vendorId
 *   POST   /sandbox/vendors/{id}/bookings/{code}/cancel
 *   DELETE /sandbox/vendors/{id}/bookings/{code}
 *   PUT    /sandbox/departures                  {productId, startTimeId, date, capacity}
 *   PUT    /sandbox/day-prices                  {rateId, dates, prices: {pricingCategoryId: amountMinor}}
 */
import { HttpRouter, HttpServerRequest } from "@effect/platform"
import { Effect, Schema } from "effect"
import { faultSwitchFields } from "../faults.js"
import { answer, body, numericParam, param } from "./api.js"
import type { Sandbox } from "./sandbox.js"

const FaultsBody = Schema.Struct({
  ...faultSwitchFields(500, 503),
  rejectPhone: Schema.optional(Schema.Boolean),
  refuseBookings: Schema.optional(Schema.Boolean),
  failCreationSearch: Schema.optional(Schema.Boolean),
  vendorId: Schema.optional(Schema.Number)
})

/** Admin bodies are the in-process methods' arguments as JSON; the methods check what matters. */
const json = body(Schema.Record({ key: Schema.String, value: Schema.Unknown }))

/**
 * The posted JSON as the argument of the sandbox call it is for: the sandbox's admin API trusts its
 * callers (the tests and the demo), as a provider's own test-data tools do; its public API checks.
 */
const given = <A>(spec: unknown): A => spec as A

export const adminApi = (sandbox: Sandbox) =>
  HttpRouter.empty.pipe(
    HttpRouter.get(
      "/sandbox/faults",
      answer(Effect.map(sandbox.faults.get, (state) => ({
        all: state.all,
        vendors: Object.fromEntries(state.vendors)
      })))
    ),
    HttpRouter.put(
      "/sandbox/faults",
      answer(Effect.gen(function*() {
        const { vendorId, ...settings } = yield* body(FaultsBody)
        yield* sandbox.faults.set(settings, vendorId === undefined ? undefined : { vendorId })
        return yield* sandbox.faults.get.pipe(
          Effect.map((s) => ({ all: s.all, vendors: Object.fromEntries(s.vendors) }))
        )
      }))
    ),
    HttpRouter.post("/sandbox/reset", answer(Effect.as(sandbox.faults.reset, { reset: true }))),
    HttpRouter.get(
      "/sandbox/requests",
      answer(Effect.gen(function*() {
        const params = yield* HttpServerRequest.ParsedSearchParams
        const method = typeof params.method === "string" ? params.method : undefined
        const path = typeof params.path === "string" ? params.path : undefined
        const filter = { ...(method ? { method } : {}), ...(path ? { path } : {}) }
        return { count: yield* sandbox.requests.count(filter), requests: yield* sandbox.requests.list }
      }))
    ),
    HttpRouter.post("/sandbox/vendors", answer(Effect.flatMap(json, (spec) => sandbox.createVendor(given(spec))))),
    HttpRouter.post("/sandbox/demo", answer(Effect.flatMap(json, (spec) => sandbox.seedDemoVendor(given(spec))))),
    HttpRouter.post(
      "/sandbox/vendors/:id/bookings",
      answer(Effect.gen(function*() {
        const vendorId = yield* numericParam("id")
        return yield* sandbox.addBooking(given({ ...(yield* json), vendorId }))
      }))
    ),
    HttpRouter.post(
      "/sandbox/vendors/:id/generate",
      answer(Effect.gen(function*() {
        const vendorId = yield* numericParam("id")
        return yield* sandbox.generateBookings(given({ ...(yield* json), vendorId }))
      }))
    ),
    HttpRouter.post(
      "/sandbox/vendors/:id/bulk",
      answer(Effect.gen(function*() {
        const vendorId = yield* numericParam("id")
        return yield* sandbox.bulkBookings(given({ ...(yield* json), vendorId }))
      }))
    ),
    HttpRouter.post(
      "/sandbox/vendors/:id/bookings/:code/cancel",
      answer(Effect.gen(function*() {
        yield* sandbox.cancelBooking(yield* numericParam("id"), yield* param("code"))
        return { cancelled: true }
      }))
    ),
    HttpRouter.del(
      "/sandbox/vendors/:id/bookings/:code",
      answer(Effect.gen(function*() {
        yield* sandbox.deleteBooking(yield* numericParam("id"), yield* param("code"))
        return { deleted: true }
      }))
    ),
    HttpRouter.put(
      "/sandbox/departures",
      answer(Effect.flatMap(json, (spec) => Effect.as(sandbox.setDepartureCapacity(given(spec)), spec)))
    ),
    HttpRouter.put(
      "/sandbox/day-prices",
      answer(Effect.flatMap(json, (spec) => Effect.as(sandbox.setDayPrices(given(spec)), spec)))
    )
  )
