/**
 * The Bókun sandbox: a real HTTP server speaking Bókun's REST dialect (signature checked), backed by
 * its own tables in PostgreSQL (schema bokun_sandbox, created at start), with fault switches and a
 * seeding API usable in-process (this object) and over HTTP (/sandbox/*, admin.ts).
 *
 *   const sandbox = yield* startSandbox({ port: 0 })          // needs SqlClient and Scope
 *   const vendor = yield* sandbox.createVendor({ title, timezone, currency, products: [...] })
 *   const account = sandbox.account(vendor)                  // a BookingSystemAccount pointing here
 *   yield* sandbox.faults.set({ errorRate: 1 }, { vendorId: vendor.id })
 */
import { HttpMiddleware, HttpRouter } from "@effect/platform"
import type { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Redacted, type Scope } from "effect"
import type { BookingSystemAccount } from "../../ports/BookingSystem.js"
import { answeredToTheEnd } from "../faults.js"
import { listen, type SandboxOptions } from "../server.js"
import { adminApi } from "./admin.js"
import { bokunApi } from "./api.js"
import { type FaultSettings, type FaultState, type LoggedRequest, makeFaults, type RequestFilter } from "./faults.js"
import { createSandboxSchema } from "./schema.js"
import * as Seed from "./seed.js"
import { makeStore } from "./store.js"

export type { SandboxOptions }

export interface Sandbox {
  /** Where the sandbox listens, e.g. http://127.0.0.1:41234: an account's base URL. */
  readonly baseUrl: string
  readonly port: number
  readonly faults: {
    /** Merges switches for every vendor, or for one vendor (its own settings win over the global ones). */
    readonly set: (settings: Partial<FaultSettings>, scope?: { readonly vendorId: number }) => Effect.Effect<void>
    readonly get: Effect.Effect<FaultState>
    /** Every switch off, the request log emptied. */
    readonly reset: Effect.Effect<void>
  }
  /** Calls received on the Bókun API (admin calls excluded), faulted ones included. */
  readonly requests: {
    readonly count: (filter?: RequestFilter) => Effect.Effect<number>
    readonly list: Effect.Effect<ReadonlyArray<LoggedRequest>>
    readonly clear: Effect.Effect<void>
  }
  readonly createVendor: (spec: Seed.VendorSpec) => Effect.Effect<Seed.SandboxVendor>
  /** The vendor with this access key, when it was seeded before (the sandbox's tables outlive restarts). */
  readonly findVendor: (accessKey: string) => Effect.Effect<Seed.SandboxVendor | undefined>
  readonly seedDemoVendor: (spec: Seed.DemoSpec) => Effect.Effect<{
    readonly vendor: Seed.SandboxVendor
    readonly today: string
    readonly fullDays: ReadonlyArray<string>
    readonly bookings: number
    readonly lines: number
  }>
  readonly generateBookings: (
    spec: Seed.GenerateSpec
  ) => Effect.Effect<{ readonly bookings: number; readonly lines: number }>
  /** The vendor's sales history over the last 400 days (demo.ts, `generateSalesHistory`). */
  readonly generateSalesHistory: (
    spec: { readonly vendorId: number; readonly today: string; readonly seed: number; readonly days?: number }
  ) => Effect.Effect<{ readonly bookings: number; readonly lines: number }>
  readonly bulkBookings: (spec: Seed.BulkSpec) => Effect.Effect<{ readonly lines: number }>
  readonly addBooking: (spec: Seed.BookingSpec) => Effect.Effect<Seed.SeededBooking>
  /** Bookings the service sold, written in as its checkout books (idempotent): external reference → confirmation code. */
  readonly importBookings: (
    vendorId: number,
    bookings: ReadonlyArray<Seed.ImportedBooking>
  ) => Effect.Effect<ReadonlyMap<string, string>>
  readonly cancelBooking: (vendorId: number, confirmationCode: string, note?: string) => Effect.Effect<void>
  readonly deleteBooking: (vendorId: number, confirmationCode: string) => Effect.Effect<void>
  readonly setDepartureCapacity: (
    input: { productId: number; startTimeId: number; date: string; capacity: number }
  ) => Effect.Effect<void>
  /** Prices of one rate on some days, by pricing category id, that differ from the rate's own. */
  readonly setDayPrices: (
    input: { rateId: number; dates: ReadonlyArray<string>; prices: Readonly<Record<string, number>> }
  ) => Effect.Effect<void>
  /** A BookingSystemAccount for the vendor, pointing at this sandbox. */
  readonly account: (
    vendor: Pick<Seed.SandboxVendor, "id" | "title" | "accessKey" | "secretKey" | "serviceChannelId">,
    overrides?: Partial<BookingSystemAccount>
  ) => BookingSystemAccount
}

const die = <A, E>(effect: Effect.Effect<A, E>) => Effect.orDie(effect)

export const startSandbox = (
  options: SandboxOptions = {}
): Effect.Effect<Sandbox, never, SqlClient.SqlClient | Scope.Scope> =>
  Effect.gen(function*() {
    yield* createSandboxSchema
    const store = yield* makeStore
    const faults = yield* makeFaults
    const { server, port, baseUrl } = yield* listen(options)

    const vendorKey = (vendorId: number) => Effect.map(store.vendorById(vendorId), (v) => v.access_key)

    const sandbox: Sandbox = {
      baseUrl,
      port,
      faults: {
        set: (settings, scope) =>
          die(
            scope === undefined
              ? faults.set(settings)
              : Effect.flatMap(vendorKey(scope.vendorId), (key) => faults.set(settings, key))
          ),
        get: faults.get,
        reset: faults.reset
      },
      requests: faults.requests,
      createVendor: (spec) => die(Seed.createVendor(store, spec)),
      findVendor: (accessKey) => die(Seed.findVendor(store, accessKey)),
      seedDemoVendor: (spec) => die(Seed.seedDemoVendor(store, spec)),
      generateBookings: (spec) => die(Seed.generateBookings(store, spec)),
      generateSalesHistory: (spec) => die(Seed.generateSalesHistory(store, spec)),
      bulkBookings: (spec) => die(Seed.bulkBookings(store, spec)),
      addBooking: (spec) => die(Seed.addBooking(store, spec)),
      importBookings: (vendorId, bookings) => die(Seed.importBookings(store, vendorId, bookings)),
      cancelBooking: (vendorId, code, note) => die(store.cancelBooking(vendorId, code, note ?? null)),
      deleteBooking: (vendorId, code) => die(store.deleteBooking(vendorId, code)),
      setDepartureCapacity: (input) => die(Seed.setDepartureCapacity(store, input)),
      setDayPrices: (input) => die(Seed.setDayPrices(store, input)),
      account: (vendor, overrides) => ({
        id: `bokun-sandbox-${vendor.id}`,
        kind: "bokun",
        name: vendor.title,
        baseUrl,
        accessKey: Redacted.make(vendor.accessKey),
        secretKey: Redacted.make(vendor.secretKey),
        serviceChannelId: String(vendor.serviceChannelId),
        ...overrides
      })
    }

    const app = HttpRouter.concat(bokunApi(store, faults.effective), adminApi(sandbox))
    // The sandbox stands in for a system we do not own: its requests are not the service's spans.
    yield* server.serve(faults.middleware(answeredToTheEnd(app))).pipe(
      Effect.locally(HttpMiddleware.currentTracerDisabledWhen, () => true)
    )
    yield* Effect.logDebug(`Bókun sandbox listening on ${baseUrl}`)
    return sandbox
  }).pipe(Effect.orDie, Effect.withSpan("BokunSandbox.start"))

/** The running sandbox, for layers and tests. */
export class BokunSandbox extends Context.Tag("Sandbox/BokunSandbox")<BokunSandbox, Sandbox>() {}

/** A sandbox for the layer's lifetime. */
export const BokunSandboxLive = (options: SandboxOptions = {}) => Layer.scoped(BokunSandbox, startSandbox(options))
