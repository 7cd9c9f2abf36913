/**
 * The Bókun adapter through the BookingSystem port, over real HTTP against the sandbox on a real
 * PostgreSQL: signing, paging, every port method, error mapping, retries only for safe calls,
 * timeouts, a system that is down, latency, holds, cancellations, moves and balances.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Clock, Effect, Exit, Redacted, Tracer } from "effect"
import { BookingSystem, type BookingSystemAccount, type BookingSystemError } from "../../src/ports/BookingSystem.js"
import { BokunSandbox, type SandboxVendor } from "../../src/sandbox/bokun/index.js"
import { sandboxEnv, smallVendor } from "../sandbox/env.js"
import { captivePortal } from "../support/captivePortal.js"
import { freePort } from "../support/globalSetup.js"

const failureOf = <A>(effect: Effect.Effect<A, BookingSystemError>) =>
  Effect.map(Effect.exit(effect), (exit) => {
    if (Exit.isSuccess(exit)) throw new Error(`expected a failure, got ${JSON.stringify(exit.value)}`)
    const failure = exit.cause._tag === "Fail" ? exit.cause.error : undefined
    if (!failure) throw new Error(`expected a BookingSystemError, got ${String(exit.cause)}`)
    return failure
  })

const elapsed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const start = yield* Clock.currentTimeMillis
    const result = yield* effect
    return { result, ms: (yield* Clock.currentTimeMillis) - start }
  })

/** A vendor of its own for each test, and its account. */
const vendorWith = (title: string, options: Parameters<typeof smallVendor>[1] = {}) =>
  Effect.gen(function*() {
    const sandbox = yield* BokunSandbox
    const vendor = yield* sandbox.createVendor(smallVendor(title, options))
    return { sandbox, vendor, account: sandbox.account(vendor), product: vendor.products[0]! }
  })

const paxOf = (vendor: SandboxVendor, adults: number, children = 0) => {
  const [adult, child] = vendor.products[0]!.pricingCategories
  return [
    { pricingCategoryId: String(adult!.id), quantity: adults },
    ...(children > 0 ? [{ pricingCategoryId: String(child!.id), quantity: children }] : [])
  ]
}

/** A card payment taken at the desk (NOK), as the booking carries it. */
const paidAtDesk = (amountMinor: number, reference: string) => ({
  amountMinor,
  currency: "NOK",
  reference,
  paidAt: new Date()
})

const withFaultsReset = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(BokunSandbox, (sandbox) => Effect.ensuring(effect, sandbox.faults.reset))

layer(sandboxEnv(), { excludeTestServices: true, timeout: 120_000 })("Bókun adapter against the sandbox", (it) => {
  describe("signing", () => {
    it.effect("a wrong secret key or an unknown access key is refused as unauthorized", () =>
      Effect.gen(function*() {
        const { account, sandbox } = yield* vendorWith("Signing Tours")
        const bs = yield* BookingSystem
        const wrongSecret = { ...account, secretKey: Redacted.make("not-the-secret") }
        const refused = yield* failureOf(bs.products(wrongSecret))
        expect(refused._tag).toBe("BookingSystemRejected")
        expect(refused.reason).toBe("unauthorized")
        const unknownKey = yield* failureOf(bs.products({ ...account, accessKey: Redacted.make("nobody") }))
        expect(unknownKey.reason).toBe("unauthorized")
        // A refusal is definite: not retried.
        yield* sandbox.requests.clear
        yield* failureOf(bs.booking(wrongSecret, "X-1"))
        expect(yield* sandbox.requests.count({ path: "/booking.json/booking/X-1" })).toBe(1)
        // The right keys pass.
        expect((yield* bs.products(account)).length).toBe(1)
      }))

    it.effect("credentials never appear in errors or spans", () =>
      Effect.gen(function*() {
        const { account, sandbox, vendor } = yield* vendorWith("Secret Keepers")
        const bs = yield* BookingSystem
        const spans: Array<{ name: string; attributes: Record<string, unknown> }> = []
        const tracer = Tracer.make({
          span: (name, parent, context, links, startTime, kind) => {
            const attributes = new Map<string, unknown>()
            const span: Tracer.Span = {
              _tag: "Span",
              name,
              spanId: Math.random().toString(16).slice(2),
              traceId: "t",
              parent,
              context,
              status: { _tag: "Started", startTime },
              attributes,
              links,
              sampled: true,
              kind,
              end: () => spans.push({ name, attributes: Object.fromEntries(attributes) }),
              attribute: (k, v) => attributes.set(k, v),
              event: () => {},
              addLinks: () => {}
            }
            return span
          },
          context: (f) => f()
        })
        yield* bs.products(account).pipe(Effect.withTracer(tracer))
        yield* sandbox.faults.set({ errorRate: 1 }, { vendorId: vendor.id })
        const error = yield* failureOf(bs.booking(account, "NOPE-1").pipe(Effect.withTracer(tracer)))
        yield* sandbox.faults.reset
        const everything = JSON.stringify({ spans, error, detail: error.detail, message: String(error) })
        expect(spans.map((s) => s.name)).toContain("Bokun.activity")
        const bokunSpan = spans.find((s) => s.name === "Bokun.activity")!
        expect(bokunSpan.attributes).toMatchObject({
          "bokun.account_id": account.id,
          "http.request.method": "GET",
          "http.route": "/activity.json/{id}",
          "http.response.status_code": 200
        })
        expect(everything).not.toContain(vendor.accessKey)
        expect(everything).not.toContain(vendor.secretKey)
        expect(JSON.stringify(account)).not.toContain(vendor.secretKey)
      }))
  })

  describe("booking lines", () => {
    it.effect("pages through the search: every line once, from every channel, cancelled ones included", () =>
      Effect.gen(function*() {
        const { account, sandbox, vendor, product } = yield* vendorWith("Paging Tours", { capacity: 200 })
        const other = yield* vendorWith("Other Vendor")
        const bs = yield* BookingSystem
        const generated = yield* sandbox.generateBookings({
          vendorId: vendor.id,
          from: "2027-03-01",
          to: "2027-03-04",
          seed: 7,
          fill: 0.2
        })
        expect(generated.bookings).toBeGreaterThan(20) // several pages of 7
        yield* sandbox.addBooking({ vendorId: other.vendor.id, productId: other.product.id, date: "2027-03-02" })
        yield* sandbox.addBooking({ vendorId: vendor.id, productId: product.id, date: "2027-03-05" }) // outside
        yield* sandbox.requests.clear
        const lines = yield* bs.bookingLines(account, { from: "2027-03-01", to: "2027-03-04" })
        const ids = lines.map((l) => l.lineId)
        expect(new Set(ids).size).toBe(ids.length)
        expect(lines.length).toBe(generated.lines)
        expect(lines.every((l) => l.date >= "2027-03-01" && l.date <= "2027-03-04")).toBe(true)
        expect(lines.every((l) => l.productId === String(product.id))).toBe(true)
        const pages = yield* sandbox.requests.count({ path: "/booking.json/booking-search" })
        expect(pages).toBe(Math.ceil(generated.bookings / 7))
        const classes = new Set(lines.map((l) => l.channel.class))
        expect([...classes].sort()).toEqual(["direct", "ota", "reseller", "service"])
        expect(lines.some((l) => l.status === "CANCELLED")).toBe(true)
        expect(lines.some((l) => l.pax.length === 2)).toBe(true)
        for (const l of lines) expect(l.participants).toBe(l.pax.reduce((n, p) => n + p.quantity, 0))
      }))

    it.effect("maps one line completely: channel, pax, guest, pickup, payment, money in minor units", () =>
      Effect.gen(function*() {
        const { account, sandbox, vendor, product } = yield* vendorWith("Mapping Tours")
        const bs = yield* BookingSystem
        const [adult, child] = product.pricingCategories
        const made = yield* sandbox.addBooking({
          vendorId: vendor.id,
          productId: product.id,
          date: "2027-04-10",
          startTime: "14:30",
          rateId: product.rates[1]!.id,
          pax: [{ pricingCategoryId: adult!.id, quantity: 2 }, { pricingCategoryId: child!.id, quantity: 1 }],
          channel: "service",
          externalReference: "T-ABC123",
          guest: { firstName: "Nora", lastName: "Lie", email: "nora@example.com", phone: "+4799999999" },
          pickupPlaceId: product.pickupPlaces[0]!.id,
          paidMinor: 50000
        })
        const [line] = yield* bs.booking(account, made.confirmationCode)
        expect(line).toEqual({
          lineId: String(made.lineIds[0]),
          bookingId: String(made.bookingId),
          bookingReference: made.confirmationCode,
          externalReference: "T-ABC123",
          status: "CONFIRMED",
          productId: String(product.id),
          productTitle: "Harbour Cruise",
          rateId: String(product.rates[1]!.id),
          rateTitle: "With lunch",
          startTimeId: String(product.startTimes[1]!.id),
          date: "2027-04-10",
          startTime: "14:30",
          participants: 3,
          pax: [
            { pricingCategoryId: String(adult!.id), title: "Adult", quantity: 2 },
            { pricingCategoryId: String(child!.id), title: "Child", quantity: 1 }
          ],
          channel: { class: "service", source: "checkout", title: "Partner checkout (API)" },
          guest: { name: "Nora Lie", email: "nora@example.com", phone: "+4799999999" },
          pickup: { place: "Grand Hotel", time: "14:10" },
          paymentStatus: "PARTIALLY_PAID",
          totalMinor: 2 * 64900 + 32450,
          currency: "NOK",
          createdAt: expect.any(Date),
          updatedAt: expect.any(Date)
        })
        // Without the service channel id the same line is just another reseller.
        const [plain] = yield* bs.booking({ ...account, serviceChannelId: null }, made.confirmationCode)
        expect(plain!.channel.class).toBe("reseller")
      }))

    it.effect("reads amounts with the currency's decimals (ISK has none)", () =>
      Effect.gen(function*() {
        const sandbox = yield* BokunSandbox
        const bs = yield* BookingSystem
        const vendor = yield* sandbox.createVendor({
          title: "Reykjavik Whales",
          timezone: "Atlantic/Reykjavik",
          currency: "ISK",
          products: [{
            title: "Whale watching",
            startTimes: ["09:00"],
            rates: [{ title: "Standard", prices: { Adult: 12990 } }]
          }]
        })
        const account = sandbox.account(vendor)
        const made = yield* sandbox.addBooking({
          vendorId: vendor.id,
          productId: vendor.products[0]!.id,
          date: "2027-06-01",
          participants: 2,
          paidMinor: 12990
        })
        const [line] = yield* bs.booking(account, made.confirmationCode)
        expect(line!.totalMinor).toBe(25980)
        expect(line!.currency).toBe("ISK")
        expect(yield* bs.balance(account, made.confirmationCode)).toEqual({
          bookingReference: made.confirmationCode,
          totalMinor: 25980,
          paidMinor: 12990,
          dueMinor: 12990,
          currency: "ISK"
        })
        const [departure] = yield* bs.availability(account, {
          productId: String(vendor.products[0]!.id),
          from: "2027-06-01",
          to: "2027-06-01"
        })
        expect(departure!.rates[0]!.prices[0]!.amountMinor).toBe(12990)
      }))

    it.effect("an unknown booking is rejected as not_found", () =>
      Effect.gen(function*() {
        const { account } = yield* vendorWith("Lookup Tours")
        const bs = yield* BookingSystem
        const error = yield* failureOf(bs.booking(account, "NO-SUCH-1"))
        expect(error).toMatchObject({ _tag: "BookingSystemRejected", reason: "not_found" })
      }))
  })

  describe("catalogue and availability", () => {
    it.effect("lists products with rates, categories, start times, pickups, rating and holds", () =>
      Effect.gen(function*() {
        const { account, product } = yield* vendorWith("Catalogue Tours", { supportsHolds: false })
        const bs = yield* BookingSystem
        const [p] = yield* bs.products(account)
        expect(p).toEqual({
          id: String(product.id),
          title: "Harbour Cruise",
          timezone: "Europe/Oslo",
          currency: "NOK",
          durationMinutes: 90,
          pricedPerBooking: false,
          rates: product.rates.map((r) => ({ id: String(r.id), title: r.title, description: null })),
          pricingCategories: [
            { id: String(product.pricingCategories[0]!.id), title: "Adult", isDefault: true, minAge: 16, maxAge: null },
            { id: String(product.pricingCategories[1]!.id), title: "Child", isDefault: false, minAge: 3, maxAge: 15 }
          ],
          startTimes: product.startTimes.map((s) => ({ id: String(s.id), time: s.time })),
          pickupPlaces: [{ id: String(product.pickupPlaces[0]!.id), title: "Grand Hotel" }],
          rating: { average: 4.6, count: 210 },
          supportsHolds: false
        })
      }))

    it.effect("seats left follow bookings; a full departure is sold out; unlimited has no count", () =>
      Effect.gen(function*() {
        const { account, sandbox, vendor, product } = yield* vendorWith("Seats Tours", { capacity: 10 })
        const bs = yield* BookingSystem
        yield* sandbox.addBooking({
          vendorId: vendor.id,
          productId: product.id,
          date: "2027-05-01",
          startTime: "10:00",
          participants: 4
        })
        yield* sandbox.addBooking({
          vendorId: vendor.id,
          productId: product.id,
          date: "2027-05-01",
          startTime: "14:30",
          participants: 10
        })
        const cancelled = yield* sandbox.addBooking({
          vendorId: vendor.id,
          productId: product.id,
          date: "2027-05-02",
          participants: 6
        })
        yield* sandbox.cancelBooking(vendor.id, cancelled.confirmationCode)
        const days = yield* bs.availability(account, {
          productId: String(product.id),
          from: "2027-05-01",
          to: "2027-05-02"
        })
        expect(days.map((d) => [d.date, d.startTime, d.seatsLeft, d.soldOut])).toEqual([
          ["2027-05-01", "10:00", 6, false],
          ["2027-05-01", "14:30", 0, true],
          ["2027-05-02", "10:00", 10, false],
          ["2027-05-02", "14:30", 10, false]
        ])
        expect(days[0]!.rates.map((r) => r.title)).toEqual(["Standard", "With lunch"])
        expect(days[0]!.rates[0]!.prices.map((p) => p.amountMinor)).toEqual([49900, 24950])

        const open = yield* vendorWith("Open Boat", { capacity: null })
        const [unlimited] = yield* bs.availability(open.account, {
          productId: String(open.product.id),
          from: "2027-05-01",
          to: "2027-05-01"
        })
        expect(unlimited).toMatchObject({ seatsLeft: null, soldOut: false })
      }))

    it.effect("a product priced per booking: the rate's price is for the whole party (pricePerBooking), and a booking of 3 costs it once", () =>
      Effect.gen(function*() {
        const sandbox = yield* BokunSandbox
        const bs = yield* BookingSystem
        const vendor = yield* sandbox.createVendor({
          title: "Private Sails",
          timezone: "Europe/Lisbon",
          currency: "EUR",
          products: [{
            title: "Sunset Sail",
            startTimes: ["19:30"],
            pricedPerBooking: true,
            pricingCategories: [{ title: "Guest", isDefault: true }],
            rates: [{ title: "Whole boat", prices: { Guest: 45000 } }]
          }]
        })
        const account = sandbox.account(vendor)
        const product = vendor.products[0]!
        const [departure] = yield* bs.availability(account, {
          productId: String(product.id),
          from: "2027-06-01",
          to: "2027-06-01"
        })
        expect(departure!.rates[0]!.pricePerBooking).toEqual({ amountMinor: 45000, currency: "EUR" })
        const made = yield* sandbox.addBooking({
          vendorId: vendor.id,
          productId: product.id,
          date: "2027-06-01",
          participants: 3
        })
        const [line] = yield* bs.booking(account, made.confirmationCode)
        expect(line!.totalMinor).toBe(45000)
        // A product priced per guest has none.
        const { account: perGuest, product: cruise } = yield* vendorWith("Per Guest Tours")
        const [priced] = yield* bs.availability(perGuest, {
          productId: String(cruise.id),
          from: "2027-06-01",
          to: "2027-06-01"
        })
        expect(priced!.rates[0]!.pricePerBooking).toBeNull()
      }))
  })

  describe("holds and bookings", () => {
    it.effect("a hold takes seats; booking it confirms with the guest; the same idempotency key returns the same hold", () =>
      Effect.gen(function*() {
        const { account, sandbox, vendor, product } = yield* vendorWith("Hold Tours", { capacity: 10 })
        const bs = yield* BookingSystem
        const seats = {
          productId: String(product.id),
          date: "2027-07-01",
          startTimeId: String(product.startTimes[0]!.id),
          rateId: String(product.rates[0]!.id),
          pax: paxOf(vendor, 2, 1)
        }
        const hold = yield* bs.hold(account, { ...seats, idempotencyKey: "hold-1", holdSeconds: 600 })
        expect(hold.totalMinor).toBe(2 * 49900 + 24950)
        expect(hold.currency).toBe("NOK")
        const now = yield* Clock.currentTimeMillis
        expect(hold.expiresAt.getTime()).toBeGreaterThan(now + 500_000)
        expect(hold.expiresAt.getTime()).toBeLessThanOrEqual(now + 600_000 + 5_000)
        const again = yield* bs.hold(account, { ...seats, idempotencyKey: "hold-1", holdSeconds: 600 })
        expect(again.holdId).toBe(hold.holdId)
        const [departure] = yield* bs.availability(account, {
          productId: seats.productId,
          from: "2027-07-01",
          to: "2027-07-01"
        })
        expect(departure!.seatsLeft).toBe(7)
        // A reserved hold is a RESERVED line.
        expect((yield* bs.booking(account, hold.holdId))[0]!.status).toBe("RESERVED")

        const booked = yield* bs.book(account, {
          holdId: hold.holdId,
          seats: null,
          guest: { name: "Ada Lovelace", email: "ada@example.com", phone: null },
          externalReference: "T-HOLD1",
          payment: paidAtDesk(hold.totalMinor, "pay-hold-1")
        })
        expect(booked.bookingReference).toBe(hold.holdId)
        expect(booked.lines).toHaveLength(1)
        expect(booked.lines[0]).toMatchObject({
          status: "CONFIRMED",
          externalReference: "T-HOLD1",
          participants: 3,
          guest: { name: "Ada Lovelace", email: "ada@example.com", phone: null },
          channel: { class: "service" },
          // What was paid at the desk went with the confirmation: the booking reads as paid.
          paymentStatus: "PAID"
        })
        expect(yield* bs.balance(account, hold.holdId)).toMatchObject({
          totalMinor: hold.totalMinor,
          paidMinor: hold.totalMinor,
          dueMinor: 0
        })
        // Booking the same hold again (a retry) answers the same booking.
        const retried = yield* bs.book(account, {
          holdId: hold.holdId,
          seats: null,
          guest: { name: "Ada Lovelace", email: null, phone: null },
          externalReference: "T-HOLD1",
          payment: paidAtDesk(hold.totalMinor, "pay-hold-1")
        })
        expect(retried.bookingId).toBe(booked.bookingId)
        const [after] = yield* bs.availability(account, {
          productId: seats.productId,
          from: "2027-07-01",
          to: "2027-07-01"
        })
        expect(after!.seatsLeft).toBe(7)
        expect(yield* sandbox.requests.count({ method: "POST", path: "/checkout.json/submit" })).toBeGreaterThanOrEqual(
          2
        )
      }))

    it.effect("releasing a hold frees its seats and is idempotent; an unknown hold releases too", () =>
      Effect.gen(function*() {
        const { account, vendor, product } = yield* vendorWith("Release Tours", { capacity: 10 })
        const bs = yield* BookingSystem
        const seats = {
          productId: String(product.id),
          date: "2027-07-02",
          startTimeId: String(product.startTimes[0]!.id),
          rateId: null,
          pax: paxOf(vendor, 4)
        }
        const hold = yield* bs.hold(account, { ...seats, idempotencyKey: "rel-1", holdSeconds: 600 })
        const seatsLeft = Effect.map(
          bs.availability(account, { productId: seats.productId, from: "2027-07-02", to: "2027-07-02" }),
          (d) => d[0]!.seatsLeft
        )
        expect(yield* seatsLeft).toBe(6)
        yield* bs.releaseHold(account, hold.holdId)
        expect(yield* seatsLeft).toBe(10)
        yield* bs.releaseHold(account, hold.holdId)
        yield* bs.releaseHold(account, "RT-999999999")
        // Replaying the key of a released hold does not pretend the hold is still there.
        expect(yield* failureOf(bs.hold(account, { ...seats, idempotencyKey: "rel-1", holdSeconds: 600 })))
          .toMatchObject({ _tag: "BookingSystemRejected", reason: "hold_expired" })
        const error = yield* failureOf(
          bs.book(account, {
            holdId: hold.holdId,
            seats: null,
            guest: { name: "Late", email: null, phone: null },
            externalReference: "T-LATE",
            payment: paidAtDesk(1, "pay-late")
          })
        )
        expect(error._tag).toBe("BookingSystemRejected")
      }))

    it.effect("a hold lapses at its expiry: seats come back, confirming it is rejected as hold_expired", () =>
      Effect.gen(function*() {
        const { account, vendor, product } = yield* vendorWith("Expiry Tours", { capacity: 10, holdSeconds: 1 })
        const bs = yield* BookingSystem
        const seats = {
          productId: String(product.id),
          date: "2027-07-03",
          startTimeId: String(product.startTimes[0]!.id),
          rateId: null,
          pax: paxOf(vendor, 5)
        }
        const hold = yield* bs.hold(account, { ...seats, idempotencyKey: "exp-1", holdSeconds: 600 })
        const now = yield* Clock.currentTimeMillis
        expect(hold.expiresAt.getTime()).toBeLessThanOrEqual(now + 2_000) // the system's own expiry wins
        yield* Effect.sleep("1500 millis")
        const [departure] = yield* bs.availability(account, {
          productId: seats.productId,
          from: "2027-07-03",
          to: "2027-07-03"
        })
        expect(departure!.seatsLeft).toBe(10)
        const error = yield* failureOf(
          bs.book(account, {
            holdId: hold.holdId,
            seats: null,
            guest: { name: "Slow Guest", email: null, phone: null },
            externalReference: "T-SLOW",
            payment: paidAtDesk(1, "pay-slow")
          })
        )
        expect(error).toMatchObject({ _tag: "BookingSystemRejected", reason: "hold_expired" })
        // A lapsed hold is not a booking: it is left out of the lines.
        expect(yield* bs.bookingLines(account, { from: "2027-07-03", to: "2027-07-03" })).toEqual([])
        yield* bs.releaseHold(account, hold.holdId)
      }))

    it.effect("no seats and products without holds are definite rejections", () =>
      Effect.gen(function*() {
        const { account, vendor, product } = yield* vendorWith("Full Tours", { capacity: 3 })
        const bs = yield* BookingSystem
        const seats = {
          productId: String(product.id),
          date: "2027-07-04",
          startTimeId: String(product.startTimes[0]!.id),
          rateId: null,
          pax: paxOf(vendor, 4)
        }
        expect(yield* failureOf(bs.hold(account, { ...seats, idempotencyKey: "full-1", holdSeconds: 60 })))
          .toMatchObject({ _tag: "BookingSystemRejected", reason: "no_seats" })
        expect(
          yield* failureOf(
            bs.book(account, {
              holdId: null,
              seats,
              guest: { name: "Too Many", email: null, phone: null },
              externalReference: "T-FULL",
              payment: paidAtDesk(1, "pay-full")
            })
          )
        )
          .toMatchObject({ _tag: "BookingSystemRejected", reason: "no_seats" })
        const noHolds = yield* vendorWith("No Holds Tours", { supportsHolds: false })
        const other = {
          ...seats,
          productId: String(noHolds.product.id),
          startTimeId: String(noHolds.product.startTimes[0]!.id),
          pax: paxOf(noHolds.vendor, 1)
        }
        expect(yield* failureOf(bs.hold(noHolds.account, { ...other, idempotencyKey: "nh-1", holdSeconds: 60 })))
          .toMatchObject({ _tag: "BookingSystemRejected", reason: "hold_not_supported" })
      }))

    it.effect("books directly from seats; a retry with the same reference does not book twice", () =>
      Effect.gen(function*() {
        const { account, vendor, product } = yield* vendorWith("Direct Tours", { capacity: 10 })
        const bs = yield* BookingSystem
        const seats = {
          productId: String(product.id),
          date: "2027-07-05",
          startTimeId: String(product.startTimes[1]!.id),
          rateId: String(product.rates[0]!.id),
          pax: paxOf(vendor, 2)
        }
        const request = {
          holdId: null,
          seats,
          guest: { name: "Grace Hopper", email: "grace@example.com", phone: "+4712345678" },
          externalReference: "T-DIRECT",
          payment: paidAtDesk(99800, "pay-direct")
        }
        const first = yield* bs.book(account, request)
        const second = yield* bs.book(account, request)
        expect(second.bookingId).toBe(first.bookingId)
        expect(first.lines[0]).toMatchObject({
          status: "CONFIRMED",
          startTime: "14:30",
          participants: 2,
          totalMinor: 99800,
          guest: { name: "Grace Hopper" },
          paymentStatus: "PAID"
        })
        const lines = yield* bs.bookingLines(account, { from: "2027-07-05", to: "2027-07-05" })
        expect(lines).toHaveLength(1)
        expect(lines[0]!.paymentStatus).toBe("PAID")
        expect(yield* bs.balance(account, first.bookingReference)).toMatchObject({
          totalMinor: 99800,
          paidMinor: 99800,
          dueMinor: 0
        })
      }))

    it.effect("a product without reservations is booked in one checkout that carries what was paid", () =>
      Effect.gen(function*() {
        const { account, sandbox, vendor, product } = yield* vendorWith("One Step Tours", {
          capacity: 10,
          supportsHolds: false
        })
        const bs = yield* BookingSystem
        const seats = {
          productId: String(product.id),
          date: "2027-07-06",
          startTimeId: String(product.startTimes[0]!.id),
          rateId: null,
          pax: paxOf(vendor, 2)
        }
        const booked = yield* bs.book(account, {
          holdId: null,
          seats,
          guest: { name: "Alan Turing", email: null, phone: null },
          externalReference: "T-ONESTEP",
          payment: paidAtDesk(99800, "pay-onestep")
        })
        expect(booked.lines[0]).toMatchObject({ status: "CONFIRMED", totalMinor: 99800, paymentStatus: "PAID" })
        expect(yield* bs.balance(account, booked.bookingReference)).toMatchObject({ paidMinor: 99800, dueMinor: 0 })
        expect(
          yield* sandbox.requests.count({
            method: "POST",
            path: "/checkout.json/confirm-reserved/" + booked.bookingReference
          })
        ).toBe(0)
      }))
  })

  describe("cancel, move and balance", () => {
    it.effect("cancelling frees the seats and is idempotent; an unknown booking is not_found", () =>
      Effect.gen(function*() {
        const { account, sandbox, vendor, product } = yield* vendorWith("Cancel Tours", { capacity: 10 })
        const bs = yield* BookingSystem
        const made = yield* sandbox.addBooking({
          vendorId: vendor.id,
          productId: product.id,
          date: "2027-08-01",
          participants: 6
        })
        yield* bs.cancel(account, made.confirmationCode, "Storm warning")
        yield* bs.cancel(account, made.confirmationCode, "Storm warning")
        const [line] = yield* bs.booking(account, made.confirmationCode)
        expect(line!.status).toBe("CANCELLED")
        const [departure] = yield* bs.availability(account, {
          productId: String(product.id),
          from: "2027-08-01",
          to: "2027-08-01"
        })
        expect(departure!.seatsLeft).toBe(10)
        expect(yield* bs.balance(account, made.confirmationCode)).toMatchObject({ totalMinor: 0, dueMinor: 0 })
        expect(yield* failureOf(bs.cancel(account, "CT-1", "none"))).toMatchObject({ reason: "not_found" })
      }))

    it.effect("moves a line to another day, start time and rate when the seats are there; never onto a full departure", () =>
      Effect.gen(function*() {
        const { account, sandbox, vendor, product } = yield* vendorWith("Move Tours", { capacity: 10 })
        const bs = yield* BookingSystem
        const made = yield* sandbox.addBooking({
          vendorId: vendor.id,
          productId: product.id,
          date: "2027-09-01",
          startTime: "10:00",
          participants: 4
        })
        yield* sandbox.addBooking({
          vendorId: vendor.id,
          productId: product.id,
          date: "2027-09-02",
          startTime: "10:00",
          participants: 8
        })
        const lineId = String(made.lineIds[0])
        const full = yield* failureOf(
          bs.move(account, {
            bookingReference: made.confirmationCode,
            lineId,
            date: "2027-09-02",
            startTimeId: null,
            rateId: null
          })
        )
        expect(full).toMatchObject({ _tag: "BookingSystemRejected", reason: "no_seats" })
        const moved = yield* bs.move(account, {
          bookingReference: made.confirmationCode,
          lineId,
          date: "2027-09-02",
          startTimeId: String(product.startTimes[1]!.id),
          rateId: String(product.rates[1]!.id)
        })
        expect(moved).toMatchObject({
          lineId,
          date: "2027-09-02",
          startTime: "14:30",
          rateTitle: "With lunch",
          totalMinor: 4 * 49900
        })
        const seats = yield* bs.availability(account, {
          productId: String(product.id),
          from: "2027-09-01",
          to: "2027-09-02"
        })
        expect(seats.map((d) => d.seatsLeft)).toEqual([10, 10, 2, 6])
        // Moving within the same departure never counts the line against itself.
        const same = yield* bs.move(account, {
          bookingReference: made.confirmationCode,
          lineId,
          date: "2027-09-02",
          startTimeId: String(product.startTimes[1]!.id),
          rateId: null
        })
        expect(same.date).toBe("2027-09-02")
        const unknown = yield* failureOf(
          bs.move(account, {
            bookingReference: made.confirmationCode,
            lineId: "1",
            date: "2027-09-02",
            startTimeId: null,
            rateId: null
          })
        )
        expect(unknown.reason).toBe("not_found")
      }))

    it.effect("the balance is what the booking system says is still owed", () =>
      Effect.gen(function*() {
        const { account, sandbox, vendor, product } = yield* vendorWith("Balance Tours")
        const bs = yield* BookingSystem
        const made = yield* sandbox.addBooking({
          vendorId: vendor.id,
          productId: product.id,
          date: "2027-10-01",
          participants: 3,
          paidMinor: 30000
        })
        expect(yield* bs.balance(account, made.confirmationCode)).toEqual({
          bookingReference: made.confirmationCode,
          totalMinor: 149700,
          paidMinor: 30000,
          dueMinor: 119700,
          currency: "NOK"
        })
      }))
  })

  describe("failures", () => {
    it.effect("5xx on a safe call: retried, then Unavailable; a write is sent exactly once", () =>
      withFaultsReset(Effect.gen(function*() {
        const { account, sandbox, vendor, product } = yield* vendorWith("Flaky Tours")
        const bs = yield* BookingSystem
        const made = yield* sandbox.addBooking({ vendorId: vendor.id, productId: product.id, date: "2027-11-01" })
        yield* sandbox.faults.set({ errorRate: 1, errorStatus: 503 }, { vendorId: vendor.id })
        yield* sandbox.requests.clear
        const read = yield* failureOf(bs.booking(account, made.confirmationCode))
        expect(read).toMatchObject({ _tag: "BookingSystemUnavailable", reason: "http_5xx", operation: "booking" })
        expect(yield* sandbox.requests.count({ path: `/booking.json/booking/${made.confirmationCode}` })).toBe(3)
        const search = yield* failureOf(bs.bookingLines(account, { from: "2027-11-01", to: "2027-11-01" }))
        expect(search.reason).toBe("http_5xx")
        expect(yield* sandbox.requests.count({ path: "/booking.json/booking-search" })).toBe(3)

        yield* sandbox.faults.set({ errorStatus: 500 }, { vendorId: vendor.id })
        const write = yield* failureOf(bs.cancel(account, made.confirmationCode, "test"))
        expect(write).toMatchObject({
          _tag: "BookingSystemUnavailable",
          reason: "http_5xx",
          operation: "cancelBooking"
        })
        expect(yield* sandbox.requests.count({ path: `/booking.json/cancel-booking/${made.confirmationCode}` })).toBe(1)
        const hold = yield* failureOf(bs.hold(account, {
          productId: String(product.id),
          date: "2027-11-01",
          startTimeId: String(product.startTimes[0]!.id),
          rateId: null,
          pax: paxOf(vendor, 1),
          idempotencyKey: "flaky-1",
          holdSeconds: 60
        }))
        expect(hold.reason).toBe("http_5xx")
        expect(yield* sandbox.requests.count({ path: "/checkout.json/submit" })).toBe(1)

        // Switched back on, the read succeeds and the write never happened.
        yield* sandbox.faults.reset
        expect((yield* bs.booking(account, made.confirmationCode))[0]!.status).toBe("CONFIRMED")
      })))

    it.effect("a retry after a transient error succeeds (errors on only some calls)", () =>
      withFaultsReset(Effect.gen(function*() {
        const { account, sandbox, vendor } = yield* vendorWith("Wobbly Tours")
        const bs = yield* BookingSystem
        yield* sandbox.faults.set({ errorRate: 0.5 }, { vendorId: vendor.id })
        yield* sandbox.requests.clear
        // 3 attempts each at 50%: all ten reads fail only with probability 10 × 1/8; retried reads mostly pass.
        const results = yield* Effect.forEach(Array.from({ length: 10 }), () => Effect.either(bs.products(account)))
        expect(results.filter((r) => r._tag === "Right").length).toBeGreaterThan(0)
        expect(yield* sandbox.requests.count({ accessKey: vendor.accessKey })).toBeGreaterThan(20)
      })))

    it.effect("a hanging system: Unavailable timeout within the configured time; a write is not retried", () =>
      withFaultsReset(Effect.gen(function*() {
        const { account, sandbox, vendor } = yield* vendorWith("Hanging Tours")
        const bs = yield* BookingSystem
        yield* sandbox.faults.set({ hang: true }, { vendorId: vendor.id })
        yield* sandbox.requests.clear
        const read = yield* elapsed(failureOf(bs.products(account)))
        expect(read.result).toMatchObject({ _tag: "BookingSystemUnavailable", reason: "timeout" })
        // 3 attempts of 1 s plus short backoff.
        expect(read.ms).toBeGreaterThanOrEqual(2_900)
        expect(read.ms).toBeLessThan(8_000)
        expect(yield* sandbox.requests.count({ path: "/activity.json/search" })).toBe(3)
        const write = yield* elapsed(failureOf(bs.cancel(account, "HT-1", "x")))
        expect(write.result.reason).toBe("timeout")
        expect(write.ms).toBeLessThan(3_000)
        expect(yield* sandbox.requests.count({ path: "/booking.json/cancel-booking/HT-1" })).toBe(1)
      })))

    it.effect("a system that is down or not there: Unavailable connection", () =>
      withFaultsReset(Effect.gen(function*() {
        const { account, sandbox, vendor } = yield* vendorWith("Down Tours")
        const healthy = yield* vendorWith("Healthy Tours")
        const bs = yield* BookingSystem
        yield* sandbox.faults.set({ down: true }, { vendorId: vendor.id })
        expect(yield* failureOf(bs.products(account))).toMatchObject({
          _tag: "BookingSystemUnavailable",
          reason: "connection"
        })
        // Only that vendor is down.
        expect((yield* bs.products(healthy.account)).length).toBe(1)
        const port = yield* Effect.promise(() => freePort())
        const nowhere: BookingSystemAccount = { ...account, baseUrl: `http://127.0.0.1:${port}` }
        expect(yield* failureOf(bs.products(nowhere))).toMatchObject({
          _tag: "BookingSystemUnavailable",
          reason: "connection"
        })
      })))

    it.effect("latency below the timeout only slows calls down; above it they time out", () =>
      withFaultsReset(Effect.gen(function*() {
        const { account, sandbox, vendor } = yield* vendorWith("Slow Tours")
        const bs = yield* BookingSystem
        yield* sandbox.faults.set({ latencyMs: 300 }, { vendorId: vendor.id })
        const slow = yield* elapsed(bs.products(account))
        expect(slow.result).toHaveLength(1)
        expect(slow.ms).toBeGreaterThanOrEqual(3 * 300) // search, activity and pickups, in sequence for one product
        yield* sandbox.faults.set({ latencyMs: 1_500 }, { vendorId: vendor.id })
        expect(yield* failureOf(bs.booking(account, "ST-1"))).toMatchObject({ reason: "timeout" })
      })))

    it.effect("an answer that is not Bókun JSON is Unavailable bad_response, not retried", () =>
      Effect.scoped(Effect.gen(function*() {
        const { account } = yield* vendorWith("Odd Proxy")
        const bs = yield* BookingSystem
        const portal = yield* captivePortal
        const baseUrl = portal.baseUrl
        const error = yield* failureOf(bs.booking({ ...account, baseUrl }, "X-1"))
        expect(error).toMatchObject({ _tag: "BookingSystemUnavailable", reason: "bad_response" })
        expect(portal.hits()).toBe(1)
      })))
  })
})
