/**
 * GET /bookings/{id}/reschedule-options and POST /bookings/{id}/reschedule over real HTTP, against
 * the Bókun sandbox (real HTTP server, same database) through the real adapter; the outbox and the
 * booking-change recovery (crash between steps) on the same database.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { CrashPoints } from "../../../src/lib/CrashPoints.js"
import { BookingSystemAccounts } from "../../../src/operators/BookingSystemAccounts.js"
import { BookingChanges } from "../../../src/partner/bookingChanges/BookingChanges.js"
import { BookingChangesRepo } from "../../../src/partner/bookingChanges/BookingChangesRepo.js"
import { RescheduleReads } from "../../../src/partner/reschedules/RescheduleReads.js"
import { RescheduleRecovery } from "../../../src/partner/reschedules/RescheduleRecovery.js"
import { Reschedules } from "../../../src/partner/reschedules/Reschedules.js"
import { ReschedulesRepo } from "../../../src/partner/reschedules/ReschedulesRepo.js"
import { DailyLimits } from "../../../src/partner/writes/DailyLimits.js"
import { BookingSystem, BookingSystemUnavailable } from "../../../src/ports/BookingSystem.js"
import { addDays, BokunSandbox, BokunSandboxLive, localDay } from "../../../src/sandbox/bokun/index.js"
import { smallVendor } from "../../sandbox/env.js"
import { createKey, insertBooking, makeWorld } from "../../support/fixtures.js"
import { call, get, type Reply } from "../../support/http.js"
import { auditOf, usedToday } from "../../support/manifest.js"
import { conforms, dereferencedSpec } from "../../support/openapi.js"
import { serverOn, TestServer, testServer } from "../../support/server.js"

const TZ = "Europe/Oslo"
const ENV = { BOKUN_TIMEOUT_MS: "2500", BOKUN_RETRIES: "1" }

const env = Layer.mergeAll(BokunSandboxLive(), Reschedules.Default, DailyLimits.Default).pipe(
  Layer.provideMerge(testServer({ env: ENV }))
)

const expectProblem = (res: Reply, status: number, slug: string) => {
  expect(res.status, res.text).toBe(status)
  expect(res.headers.get("content-type")).toBe("application/problem+json")
  expect(res.body.type).toBe(`/api/v1/docs/errors.md#${slug}`)
}

const today = () => localDay(Date.now(), TZ)

/**
 * Alpha linked to a fresh sandbox vendor (Harbour Cruise: 10:00 and 14:30, capacity 10, Standard
 * 499 NOK / With lunch 649 NOK per adult), a tour mapped to the product, and our booking of 2 adults
 * at Standard on day+5 10:00, also in the sandbox (external reference = our confirmation code).
 */
const setup = Effect.gen(function*() {
  const sandbox = yield* BokunSandbox
  const sql = yield* SqlClient.SqlClient
  const w = yield* makeWorld
  const vendor = yield* sandbox.createVendor(smallVendor(`Resched ${w.tag}`))
  const product = vendor.products[0]!
  const [standard, lunch] = product.rates
  const [account] = yield* sql<{ id: string }>`
    INSERT INTO booking_system_accounts (kind, name, base_url, access_key, secret_key, service_channel_id)
    VALUES ('bokun', ${vendor.title}, ${sandbox.baseUrl}, ${vendor.accessKey}, ${vendor.secretKey}, ${
    String(vendor.serviceChannelId)
  })
    RETURNING id`
  yield* sql`UPDATE operators SET booking_system_account_id = ${account!.id} WHERE id = ${w.alpha}`
  const [tour] = yield* sql<{ id: string }>`
    INSERT INTO tours (operator_id, title, status, timezone, currency, booking_system_product_id)
    VALUES (${w.alpha}, 'Harbour Cruise', 'published', ${TZ}, 'NOK', ${String(product.id)}) RETURNING id`
  const day = addDays(today(), 5)
  const bookingId = yield* insertBooking({
    operatorId: w.alpha,
    tourId: tour!.id,
    tourName: "Harbour Cruise",
    experienceDate: day,
    startTime: "10:00",
    participants: 2,
    amountMinor: 94810,
    guestName: "Kari Nordmann",
    guestEmail: "kari@example.com"
  })
  const [{ confirmation_code: code }] = (yield* sql<{ confirmation_code: string }>`
    SELECT confirmation_code FROM bookings WHERE id = ${bookingId}`) as [{ confirmation_code: string }]
  const seeded = yield* sandbox.addBooking({
    vendorId: vendor.id,
    productId: product.id,
    date: day,
    startTime: "10:00",
    rateId: standard!.id,
    participants: 2,
    channel: "service",
    externalReference: code
  })
  yield* sql`UPDATE bookings SET provider_reference = ${seeded.confirmationCode} WHERE id = ${bookingId}`
  const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["bookings.reschedule:write"] })
  const start = (time: string) => String(product.startTimes.find((s) => s.time === time)!.id)
  return {
    w,
    sandbox,
    sql,
    vendor,
    product,
    standard: String(standard!.id),
    lunch: String(lunch!.id),
    day,
    bookingId,
    code,
    seeded,
    key,
    start,
    lineId: seeded.lineIds[0]!
  }
}).pipe(Effect.orDie)

type Setup = Effect.Effect.Success<typeof setup>

/**
 * A private tour priced per booking (as the demo's Northern Lights Chase and Tagus Sunset Sail):
 * one price, 2500 NOK, for the whole party of up to 8, 19:30 and 21:00; our booking of 3 guests on
 * day+5 19:30, also in the sandbox (where it costs the one price).
 */
const privateSetup = Effect.gen(function*() {
  const sandbox = yield* BokunSandbox
  const sql = yield* SqlClient.SqlClient
  const w = yield* makeWorld
  const vendor = yield* sandbox.createVendor({
    title: `Private ${w.tag}`,
    timezone: TZ,
    currency: "NOK",
    products: [{
      title: "Northern Lights Chase",
      startTimes: ["19:30", "21:00"],
      capacity: 8,
      pricedPerBooking: true,
      pricingCategories: [{ title: "Guest", isDefault: true }],
      rates: [{ title: "Whole group (private)", prices: { Guest: 250000 } }]
    }]
  })
  const product = vendor.products[0]!
  const [account] = yield* sql<{ id: string }>`
    INSERT INTO booking_system_accounts (kind, name, base_url, access_key, secret_key, service_channel_id)
    VALUES ('bokun', ${vendor.title}, ${sandbox.baseUrl}, ${vendor.accessKey}, ${vendor.secretKey}, ${
    String(vendor.serviceChannelId)
  })
    RETURNING id`
  yield* sql`UPDATE operators SET booking_system_account_id = ${account!.id} WHERE id = ${w.alpha}`
  const [tour] = yield* sql<{ id: string }>`
    INSERT INTO tours (operator_id, title, status, timezone, currency, booking_system_product_id, priced_per_booking)
    VALUES (${w.alpha}, 'Northern Lights Chase', 'published', ${TZ}, 'NOK', ${String(product.id)}, true) RETURNING id`
  const day = addDays(today(), 5)
  const bookingId = yield* insertBooking({
    operatorId: w.alpha,
    tourId: tour!.id,
    tourName: "Northern Lights Chase",
    experienceDate: day,
    startTime: "19:30",
    participants: 3,
    amountMinor: 250000,
    guestName: "Kari Nordmann",
    guestEmail: "kari@example.com"
  })
  const [{ confirmation_code: code }] = (yield* sql<{ confirmation_code: string }>`
    SELECT confirmation_code FROM bookings WHERE id = ${bookingId}`) as [{ confirmation_code: string }]
  const seeded = yield* sandbox.addBooking({
    vendorId: vendor.id,
    productId: product.id,
    date: day,
    startTime: "19:30",
    participants: 3,
    channel: "service",
    externalReference: code
  })
  yield* sql`UPDATE bookings SET provider_reference = ${seeded.confirmationCode} WHERE id = ${bookingId}`
  const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["bookings.reschedule:write"] })
  const start = (time: string) => String(product.startTimes.find((s) => s.time === time)!.id)
  return {
    sandbox,
    sql,
    product,
    rate: String(product.rates[0]!.id),
    day,
    bookingId,
    key,
    start,
    lineId: seeded.lineIds[0]!
  }
}).pipe(Effect.orDie)

const options = (s: Pick<Setup, "bookingId" | "key">, date: string, key = s.key.token) =>
  get(`/api/v1/bookings/${s.bookingId}/reschedule-options?date=${date}`, key)

const reschedule = (
  bookingId: string,
  body: unknown,
  key: string | undefined,
  idempotencyKey: string | null = randomUUID()
) =>
  call(`/api/v1/bookings/${bookingId}/reschedule`, {
    method: "POST",
    key,
    body,
    headers: idempotencyKey === null ? {} : { "Idempotency-Key": idempotencyKey }
  })

/** The sandbox's line: day and start time. */
const sandboxLine = (s: Setup) =>
  s.sql<{ date: string; start_time_id: number; rate_id: number }>`
    SELECT date::text AS date, start_time_id, rate_id FROM bokun_sandbox.product_bookings WHERE id = ${s.lineId}`.pipe(
    Effect.map((rows) => rows[0]!),
    Effect.orDie
  )

const ourBooking = (s: Setup) =>
  s.sql<{ experience_date: string; start_time: string | null; updated_at: Date | null; status: string }>`
    SELECT experience_date, start_time, updated_at, status FROM bookings WHERE id = ${s.bookingId}`.pipe(
    Effect.map((rows) => rows[0]!),
    Effect.orDie
  )

const emailsOf = (s: Setup) =>
  s.sql<{ dedupe_key: string; template: string; to_addresses: Array<string> }>`
    SELECT dedupe_key, template, to_addresses FROM email_outbox WHERE booking_id = ${s.bookingId} ORDER BY template`
    .pipe(
      Effect.orDie
    )

const changesOf = (s: Setup) =>
  s.sql<
    { id: string; state: string }
  >`SELECT id, state FROM booking_changes WHERE booking_id = ${s.bookingId} ORDER BY created_at`
    .pipe(Effect.orDie)

layer(env, { excludeTestServices: true, timeout: 180_000 })("reschedule", (it) => {
  describe("GET /bookings/{id}/reschedule-options", () => {
    it.effect("a day with room: same-price departures only, one availability read, read only", () =>
      Effect.gen(function*() {
        const s = yield* setup
        yield* s.sandbox.requests.clear
        const target = addDays(s.day, 1)
        const res = yield* options(s, target)
        expect(res.status, res.text).toBe(200)
        expect(res.body).toEqual({
          id: s.bookingId,
          date: target,
          current_date: s.day,
          reschedulable: true,
          available: true,
          price_differs: false,
          detail: null,
          options: [
            {
              start_time_id: s.start("10:00"),
              rate_id: s.standard,
              start_time: "10:00",
              label: "10:00 · Standard",
              remaining: 10
            },
            {
              start_time_id: s.start("14:30"),
              rate_id: s.standard,
              start_time: "14:30",
              label: "14:30 · Standard",
              remaining: 10
            }
          ]
        })
        expect(yield* s.sandbox.requests.count({ path: /availabilities$/, accessKey: s.vendor.accessKey })).toBe(1)
        expect(
          yield* s.sandbox.requests.count({ method: "POST", path: "/booking.json/edit", accessKey: s.vendor.accessKey })
        ).toBe(0)
        expect((yield* sandboxLine(s)).date).toBe(s.day)
        expect(yield* usedToday(s.key.id, "reschedules")).toBe(0)
      }))

    it.effect("sold out, price differs, and a booking that cannot move at all", () =>
      Effect.gen(function*() {
        const s = yield* setup
        const full = addDays(s.day, 2)
        for (const time of ["10:00", "14:30"]) {
          yield* s.sandbox.setDepartureCapacity({
            productId: s.product.id,
            startTimeId: Number(s.start(time)),
            date: full,
            capacity: 1
          })
        }
        const soldOut = yield* options(s, full)
        expect(soldOut.body).toMatchObject({ reschedulable: true, available: false, price_differs: false, options: [] })
        expect(soldOut.body.detail).toContain("not enough seats")

        // The booking system's prices rose since the booking: room, but only at another price.
        yield* s.sql`UPDATE bokun_sandbox.prices SET amount_minor = amount_minor + 1000 WHERE rate_id = ${
          Number(s.standard)
        }`
        const dearer = yield* options(s, addDays(s.day, 1))
        expect(dearer.body).toMatchObject({ reschedulable: true, available: false, price_differs: true, options: [] })
        expect(dearer.body.detail).toContain("price differs")

        yield* s.sql`UPDATE bookings SET status = 'CANCELLED' WHERE id = ${s.bookingId}`
        yield* s.sandbox.requests.clear
        const cancelled = yield* options(s, addDays(s.day, 1))
        expect(cancelled.body).toMatchObject({
          reschedulable: false,
          available: false,
          detail: "the booking is cancelled",
          options: []
        })
        expect(yield* s.sandbox.requests.count({ accessKey: s.vendor.accessKey })).toBe(0)

        yield* s.sql`UPDATE bookings SET status = 'CONFIRMED', provider_reference = NULL WHERE id = ${s.bookingId}`
        const unlinked = yield* options(s, addDays(s.day, 1))
        expect(unlinked.body.reschedulable).toBe(false)
        expect(unlinked.body.detail).toContain("not linked to a booking system")
      }))

    it.effect("400 bad date, 404 not yours, 403 without the scope, 503 when the booking system is down", () =>
      Effect.gen(function*() {
        const s = yield* setup
        expectProblem(yield* options(s, "2026-02-30"), 400, "invalid-request")
        expectProblem(
          yield* get(`/api/v1/bookings/${s.bookingId}/reschedule-options`, s.key.token),
          400,
          "invalid-request"
        )
        const other = yield* createKey({ by: s.w.bob, operators: [s.w.beta], scopes: ["bookings.reschedule:write"] })
        expectProblem(yield* options(s, addDays(s.day, 1), other.token), 404, "not-found")
        const reader = yield* createKey({ by: s.w.alice, operators: [s.w.alpha], scopes: ["bookings:read"] })
        expectProblem(yield* options(s, addDays(s.day, 1), reader.token), 403, "missing-scope")
        yield* s.sandbox.faults.set({ down: true }, { vendorId: s.vendor.id })
        const down = yield* options(s, addDays(s.day, 1))
        yield* s.sandbox.faults.set({ down: false }, { vendorId: s.vendor.id })
        expectProblem(down, 503, "unavailable")
      }))
  })

  describe("POST /bookings/{id}/reschedule", () => {
    it.effect("moves the booking in the booking system and in the service, emails guest and team once; a replay changes nothing", () =>
      Effect.gen(function*() {
        const s = yield* setup
        const target = addDays(s.day, 1)
        const idem = randomUUID()
        const res = yield* reschedule(
          s.bookingId,
          { date: target, start_time_id: s.start("14:30"), rate_id: s.standard },
          s.key.token,
          idem
        )
        expect(res.status, res.text).toBe(200)
        expect(res.body).toEqual({
          id: s.bookingId,
          status: "CONFIRMED",
          date: target,
          start_time: "14:30",
          previous_date: s.day,
          previous_start_time: "10:00",
          already_on_date: false
        })
        expect(yield* sandboxLine(s)).toEqual({
          date: target,
          start_time_id: Number(s.start("14:30")),
          rate_id: Number(s.standard)
        })
        const ours = yield* ourBooking(s)
        expect(ours).toMatchObject({ experience_date: target, start_time: "14:30", status: "CONFIRMED" })
        expect(ours.updated_at).not.toBeNull()
        const [change] = yield* changesOf(s)
        expect(change!.state).toBe("done")
        const emails = yield* emailsOf(s)
        expect(emails.map((e) => [e.template, e.dedupe_key])).toEqual([
          ["booking_rescheduled_guest", `booking:${s.bookingId}:rescheduled:${change!.id}:guest`],
          ["booking_rescheduled_team", `booking:${s.bookingId}:rescheduled:${change!.id}:team`]
        ])
        expect(emails[0]!.to_addresses).toEqual(["kari@example.com"])
        expect(emails[1]!.to_addresses.length).toBe(3)
        expect(yield* usedToday(s.key.id, "reschedules")).toBe(1)

        yield* s.sandbox.requests.clear
        const replay = yield* reschedule(
          s.bookingId,
          { date: target, rate_id: s.standard, start_time_id: s.start("14:30") },
          s.key.token,
          idem
        )
        expect(replay.status).toBe(200)
        expect(replay.headers.get("idempotent-replayed")).toBe("true")
        expect(replay.text).toBe(res.text)
        expect(yield* s.sandbox.requests.count({ accessKey: s.vendor.accessKey })).toBe(0)
        expect((yield* emailsOf(s)).length).toBe(2)
        expect(yield* usedToday(s.key.id, "reschedules")).toBe(1)

        // The same key for another request: 422; the key is not reused.
        expectProblem(
          yield* reschedule(s.bookingId, { date: addDays(s.day, 2) }, s.key.token, idem),
          422,
          "idempotency-key-reused"
        )
        expect((yield* audit(s)).map((a) => a.outcome)).toEqual(["done", "replayed", "refused"])
      }))

    it.effect("a private tour priced per booking: a party of 3 moves at the same price (one price for the party, not 3 x it)", () =>
      Effect.gen(function*() {
        const s = yield* privateSetup
        const [before] = yield* s.sql<{ total_minor: number }>`
          SELECT total_minor FROM bokun_sandbox.product_bookings WHERE id = ${s.lineId}`
        expect(before!.total_minor).toBe(250000)
        const target = addDays(s.day, 1)
        const offered = yield* options(s, target)
        expect(offered.status, offered.text).toBe(200)
        expect(offered.body).toMatchObject({ reschedulable: true, available: true, price_differs: false, detail: null })
        expect(offered.body.options.map((o: { start_time: string; rate_id: string }) => [o.start_time, o.rate_id]))
          .toEqual([["19:30", s.rate], ["21:00", s.rate]])

        const res = yield* reschedule(s.bookingId, { date: target, start_time_id: s.start("21:00") }, s.key.token)
        expect(res.status, res.text).toBe(200)
        expect(res.body).toMatchObject({
          date: target,
          start_time: "21:00",
          previous_date: s.day,
          previous_start_time: "19:30"
        })
        const [after] = yield* s.sql<
          { date: string; start_time_id: number; participants: number; total_minor: number }
        >`
          SELECT date::text AS date, start_time_id, participants, total_minor FROM bokun_sandbox.product_bookings WHERE id = ${s.lineId}`
        expect(after).toEqual({
          date: target,
          start_time_id: Number(s.start("21:00")),
          participants: 3,
          total_minor: 250000
        })

        // A dearer private departure is still refused as a different price.
        yield* s.sql`UPDATE bokun_sandbox.prices SET amount_minor = 300000 WHERE rate_id = ${Number(s.rate)}`
        const dearer = yield* reschedule(s.bookingId, { date: addDays(s.day, 2) }, s.key.token)
        expectProblem(dearer, 422, "not-possible")
        expect(dearer.body.detail).toContain("price differs")
      }))

    it.effect("the line's manifest row moves with it (the manifest is right before the next mirror refresh)", () =>
      Effect.gen(function*() {
        const s = yield* setup
        const [row] = yield* s.sql<{ id: string }>`
          INSERT INTO manifest_rows (account_id, line_id, booking_id, reference, operator_id, service_booking_id, status,
            product_id, rate_id, rate_title, start_time_id, departure_date, start_time, timezone, participants)
          SELECT o.booking_system_account_id, ${String(s.lineId)}, ${
          String(s.seeded.bookingId)
        }, ${s.seeded.confirmationCode},
            o.id, ${s.bookingId}, 'CONFIRMED', ${String(s.product.id)}, ${s.standard}, 'Standard', ${s.start("10:00")},
            ${s.day}::date, '10:00', ${TZ}, 2
          FROM operators o WHERE o.id = ${s.w.alpha}
          RETURNING id`
        const target = addDays(s.day, 2)
        const res = yield* reschedule(s.bookingId, { date: target, start_time_id: s.start("14:30") }, s.key.token)
        expect(res.status, res.text).toBe(200)
        const [moved] = yield* s.sql<
          { departure_date: string; start_time: string; start_time_id: string; rate_id: string }
        >`
          SELECT departure_date, start_time, start_time_id, rate_id FROM manifest_rows WHERE id = ${row!.id}`
        expect(moved).toEqual({
          departure_date: target,
          start_time: "14:30",
          start_time_id: s.start("14:30"),
          rate_id: s.standard
        })
      }))

    it.effect("omitting start_time_id keeps the time of day; the rule's time is the booking system's", () =>
      Effect.gen(function*() {
        const s = yield* setup
        const res = yield* reschedule(s.bookingId, { date: addDays(s.day, 3) }, s.key.token)
        expect(res.status, res.text).toBe(200)
        expect(res.body).toMatchObject({ date: addDays(s.day, 3), start_time: "10:00", previous_start_time: "10:00" })
        expect((yield* sandboxLine(s)).start_time_id).toBe(Number(s.start("10:00")))
      }))

    it.effect("already on that departure: 200 already_on_date, not counted, nothing moved or emailed", () =>
      Effect.gen(function*() {
        const s = yield* setup
        const res = yield* reschedule(s.bookingId, { date: s.day, start_time_id: s.start("10:00") }, s.key.token)
        expect(res.status, res.text).toBe(200)
        expect(res.body).toEqual({
          id: s.bookingId,
          status: "CONFIRMED",
          date: s.day,
          start_time: "10:00",
          previous_date: null,
          previous_start_time: null,
          already_on_date: true
        })
        expect(yield* usedToday(s.key.id, "reschedules")).toBe(0)
        expect(yield* emailsOf(s)).toEqual([])
        expect(yield* changesOf(s)).toEqual([])
        expect((yield* audit(s)).map((a) => a.outcome)).toEqual(["noop"])
      }))

    it.effect("every 422 has its own detail; none is counted, nothing moves", () =>
      Effect.gen(function*() {
        const s = yield* setup
        const next = addDays(s.day, 1)
        const full = addDays(s.day, 2)
        yield* s.sandbox.setDepartureCapacity({
          productId: s.product.id,
          startTimeId: Number(s.start("10:00")),
          date: full,
          capacity: 1
        })

        const cases: Array<[string, unknown, string, Effect.Effect<unknown>?, Effect.Effect<unknown>?]> = [
          ["price differs", { date: next, rate_id: s.lunch }, "price differs"],
          ["no seats", { date: full }, "not enough seats"],
          ["no such start time", { date: next, start_time_id: "999999" }, "no departure with start_time_id 999999"],
          ["no departure left that day", { date: addDays(today(), -1) }, "already left"],
          [
            "tour already started",
            { date: next },
            "the tour has already started",
            s.sql`UPDATE bookings SET experience_date = ${today()}::date, start_time = '00:00' WHERE id = ${s.bookingId}`
              .pipe(Effect.orDie),
            s.sql`UPDATE bookings SET experience_date = ${s.day}::date, start_time = '10:00' WHERE id = ${s.bookingId}`
              .pipe(Effect.orDie)
          ],
          [
            "pay-later too close to its charge",
            { date: next },
            "pay-later balance is charged within 24 hours",
            s.sql`UPDATE bookings SET payment_strategy = 'pay_later', pay_later_status = 'upcoming', pay_later_amount_minor = 50000,
              pay_later_currency = 'NOK', pay_later_charge_at = now() + interval '2 hours' WHERE id = ${s.bookingId}`
              .pipe(Effect.orDie),
            s.sql`UPDATE bookings SET payment_strategy = 'pay_now', pay_later_status = NULL, pay_later_amount_minor = NULL,
              pay_later_currency = NULL, pay_later_charge_at = NULL WHERE id = ${s.bookingId}`.pipe(Effect.orDie)
          ],
          [
            "cancelled",
            { date: next },
            "the booking is cancelled",
            s.sql`UPDATE bookings SET status = 'CANCELLED' WHERE id = ${s.bookingId}`.pipe(Effect.orDie),
            s.sql`UPDATE bookings SET status = 'CONFIRMED' WHERE id = ${s.bookingId}`.pipe(Effect.orDie)
          ]
        ]
        const spec = yield* dereferencedSpec
        for (const [name, body, detail, before, after] of cases) {
          if (before) yield* before
          const res = yield* reschedule(s.bookingId, body, s.key.token)
          if (after) yield* after
          expectProblem(res, 422, "not-possible")
          expect(res.body.detail, name).toContain(detail)
          conforms(spec, "post", "/api/v1/bookings/{id}/reschedule", res)
        }
        expect(yield* sandboxLine(s)).toMatchObject({ date: s.day, start_time_id: Number(s.start("10:00")) })
        expect((yield* ourBooking(s)).experience_date).toBe(s.day)
        expect(yield* usedToday(s.key.id, "reschedules")).toBe(0)
        expect(yield* emailsOf(s)).toEqual([])
        expect(
          yield* s.sandbox.requests.count({ method: "POST", path: "/booking.json/edit", accessKey: s.vendor.accessKey })
        ).toBe(0)
      }))

    it.effect("cancelled with its refund still open (status still CONFIRMED): options and the move say cancelled, without asking the booking system", () =>
      Effect.gen(function*() {
        const s = yield* setup
        // What a cancel leaves when the seats were released but the refund did not complete (spec §3).
        yield* s.sandbox.cancelBooking(s.vendor.id, s.seeded.confirmationCode)
        yield* s.sql`
          INSERT INTO booking_changes (booking_id, kind, state, key_id, reason, refund_outcome, lease_until, finished_at)
          VALUES (${s.bookingId}, 'cancel', 'done', ${s.key.id}, 'Storm', 'pending', now(), now())`
        expect((yield* ourBooking(s)).status).toBe("CONFIRMED")
        yield* s.sandbox.requests.clear
        const shown = yield* options(s, addDays(s.day, 1))
        expect(shown.body).toMatchObject({
          reschedulable: false,
          available: false,
          detail: "the booking is cancelled",
          options: []
        })
        const moved = yield* reschedule(s.bookingId, { date: addDays(s.day, 1) }, s.key.token)
        expectProblem(moved, 422, "not-possible")
        expect(moved.body.detail).toBe("the booking is cancelled")
        expect(yield* s.sandbox.requests.count({ accessKey: s.vendor.accessKey })).toBe(0)
        expect(yield* usedToday(s.key.id, "reschedules")).toBe(0)
      }))

    it.effect("400 body and header, 404 not yours, 403 without the scope", () =>
      Effect.gen(function*() {
        const s = yield* setup
        expectProblem(yield* reschedule(s.bookingId, {}, s.key.token), 400, "invalid-request")
        expectProblem(yield* reschedule(s.bookingId, { date: "21-11-2026" }, s.key.token), 400, "invalid-request")
        expectProblem(
          yield* reschedule(s.bookingId, { date: addDays(s.day, 1) }, s.key.token, null),
          400,
          "invalid-request"
        )
        const other = yield* createKey({ by: s.w.bob, operators: [s.w.beta], scopes: ["bookings.reschedule:write"] })
        expectProblem(yield* reschedule(s.bookingId, { date: addDays(s.day, 1) }, other.token), 404, "not-found")
        const reader = yield* createKey({ by: s.w.alice, operators: [s.w.alpha], scopes: ["bookings:read"] })
        expectProblem(yield* reschedule(s.bookingId, { date: addDays(s.day, 1) }, reader.token), 403, "missing-scope")
        expect((yield* sandboxLine(s)).date).toBe(s.day)
      }))

    it.effect("a 10,000-character value is quoted back cut to 64 characters, in detail and invalid_params (and an unknown path)", () =>
      Effect.gen(function*() {
        const s = yield* setup
        const long = "x".repeat(10_000)
        const cut = `${"x".repeat(64)}… (10000 characters)`
        const replies = [
          yield* reschedule(s.bookingId, { date: addDays(s.day, 1), start_time_id: long }, s.key.token),
          yield* reschedule(s.bookingId, { date: addDays(s.day, 1), rate_id: long }, s.key.token),
          yield* reschedule(s.bookingId, { date: { [long]: long } }, s.key.token)
        ]
        for (const res of replies) {
          expectProblem(res, 400, "invalid-request")
          expect(res.text.length, res.text.slice(0, 200)).toBeLessThan(2_000)
          expect(res.body.detail).toContain(cut)
          expect(res.body.invalid_params[0].reason).toContain(cut)
        }
        expect(replies[0]!.body.detail).toBe(
          `start_time_id: Expected a string at most 100 character(s) long, actual "${cut}"`
        )
        const path = `/api/v1/bookings/${s.bookingId}/${long}`
        const unknown = yield* get(path, s.key.token)
        expectProblem(unknown, 404, "not-found")
        expect(unknown.body.detail).toBe(`no endpoint GET ${path.slice(0, 64)}… (${path.length} characters)`)
        expect((yield* sandboxLine(s)).date).toBe(s.day)
      }))

    it.effect("the daily limit: past it 429 and nothing moves; the departure it is on already is still answered (not counted)", () =>
      Effect.gen(function*() {
        const s = yield* setup
        yield* Effect.flatMap(DailyLimits, (l) => l.setOverrides(s.key.id, { reschedules: 1 })).pipe(Effect.orDie)
        expect((yield* reschedule(s.bookingId, { date: addDays(s.day, 1) }, s.key.token)).status).toBe(200)
        yield* s.sandbox.requests.clear
        const limited = yield* reschedule(s.bookingId, { date: addDays(s.day, 2) }, s.key.token)
        expectProblem(limited, 429, "daily-limit-reached")
        expect(limited.headers.get("retry-after")).not.toBeNull()
        // Only reads reached the booking system (the line and the day's availability); nothing moved.
        expect(
          yield* s.sandbox.requests.count({
            accessKey: s.vendor.accessKey,
            method: "POST",
            path: /\/booking.json\/edit/
          })
        ).toBe(0)
        expect((yield* sandboxLine(s)).date).toBe(addDays(s.day, 1))
        const noop = yield* reschedule(s.bookingId, { date: addDays(s.day, 1) }, s.key.token)
        expect(noop.status, noop.text).toBe(200)
        expect(noop.body.already_on_date).toBe(true)
        expect(yield* usedToday(s.key.id, "reschedules")).toBe(1)
      }))

    it.effect("the booking system down: 503, nothing changed, the same key works once it is back", () =>
      Effect.gen(function*() {
        const s = yield* setup
        const idem = randomUUID()
        const body = { date: addDays(s.day, 1) }
        yield* s.sandbox.faults.set({ down: true }, { vendorId: s.vendor.id })
        const down = yield* reschedule(s.bookingId, body, s.key.token, idem)
        yield* s.sandbox.faults.set({ errorRate: 1, errorStatus: 503, down: false }, { vendorId: s.vendor.id })
        const failing = yield* reschedule(s.bookingId, body, s.key.token, idem)
        yield* s.sandbox.faults.set({ errorRate: 0 }, { vendorId: s.vendor.id })
        expectProblem(down, 503, "unavailable")
        expectProblem(failing, 503, "unavailable")
        expect((yield* sandboxLine(s)).date).toBe(s.day)
        expect((yield* ourBooking(s)).experience_date).toBe(s.day)
        expect(yield* emailsOf(s)).toEqual([])
        expect(yield* usedToday(s.key.id, "reschedules")).toBe(0)

        const retried = yield* reschedule(s.bookingId, body, s.key.token, idem)
        expect(retried.status, retried.text).toBe(200)
        expect(retried.headers.get("idempotent-replayed")).toBeNull()
        expect((yield* sandboxLine(s)).date).toBe(addDays(s.day, 1))
        expect((yield* emailsOf(s)).length).toBe(2)
      }))

    it.effect("a second request with the same key while the first runs answers 409", () =>
      Effect.gen(function*() {
        const s = yield* setup
        const idem = randomUUID()
        const body = { date: addDays(s.day, 1) }
        yield* s.sandbox.faults.set({ latencyMs: 600 }, { vendorId: s.vendor.id })
        const [first, second] = yield* Effect.all([
          reschedule(s.bookingId, body, s.key.token, idem),
          Effect.zipRight(Effect.sleep("200 millis"), reschedule(s.bookingId, body, s.key.token, idem))
        ], { concurrency: 2 })
        yield* s.sandbox.faults.set({ latencyMs: 0 }, { vendorId: s.vendor.id })
        expect(first.status, first.text).toBe(200)
        expectProblem(second, 409, "idempotency-in-progress")
        expect((yield* emailsOf(s)).length).toBe(2)
      }))

    it.effect("live answers match the OpenAPI document", () =>
      Effect.gen(function*() {
        const s = yield* setup
        const spec = yield* dereferencedSpec
        const reader = yield* createKey({ by: s.w.alice, operators: [s.w.alpha], scopes: ["bookings:read"] })
        const optionReplies = [
          yield* options(s, addDays(s.day, 1)),
          yield* options(s, "nope"),
          yield* options(s, addDays(s.day, 1), reader.token),
          yield* get(`/api/v1/bookings/${randomUUID()}/reschedule-options?date=${s.day}`, s.key.token)
        ]
        for (const res of optionReplies) conforms(spec, "get", "/api/v1/bookings/{id}/reschedule-options", res)
        expect(optionReplies.map((r) => r.status)).toEqual([200, 400, 403, 404])
        const writes = [
          yield* reschedule(s.bookingId, { date: s.day }, s.key.token),
          yield* reschedule(s.bookingId, { date: addDays(s.day, 1) }, s.key.token),
          yield* reschedule(s.bookingId, { date: "x" }, s.key.token),
          yield* reschedule(randomUUID(), { date: s.day }, s.key.token)
        ]
        for (const res of writes) conforms(spec, "post", "/api/v1/bookings/{id}/reschedule", res)
        expect(writes.map((r) => r.status)).toEqual([200, 200, 400, 404])
      }))
  })

  describe("one change of a booking at a time, however requests race (checked against the sandbox's own log)", () => {
    /**
     * What a race left. Every answer is a move (200), a no-op (200 `already_on_date`) or a 409; each
     * move started where the one before it ended (a chain from the booking's day: no two moves from
     * the same departure), the Bókun sandbox was asked to move once per move, guest and team were
     * emailed once per move, the daily limit counted the moves only, and the booking system and the
     * service end on the last move's date. Returns the moves.
     */
    const checkRace = (s: Setup, replies: ReadonlyArray<Reply>) =>
      Effect.gen(function*() {
        for (const r of replies) {
          if (r.status === 409) {
            expectProblem(r, 409, "idempotency-in-progress")
            expect(r.body.detail).toContain("another change of this booking")
          } else expect(r.status, r.text).toBe(200)
        }
        const moves = replies.filter((r) => r.status === 200 && r.body.already_on_date === false).map((r) => r.body)
        expect(moves.length).toBeGreaterThanOrEqual(1)
        let at: string = s.day
        const rest = [...moves]
        while (rest.length > 0) {
          const next = rest.findIndex((m) => m.previous_date === at)
          expect(next, `a move from ${at} among ${JSON.stringify(moves)}`).toBeGreaterThanOrEqual(0)
          at = rest.splice(next, 1)[0]!.date
        }
        expect((yield* sandboxLine(s)).date).toBe(at)
        expect((yield* ourBooking(s)).experience_date).toBe(at)
        expect(
          yield* s.sandbox.requests.count({ method: "POST", path: "/booking.json/edit", accessKey: s.vendor.accessKey })
        )
          .toBe(moves.length)
        const emails = yield* emailsOf(s)
        expect(emails.filter((e) => e.template === "booking_rescheduled_guest").length).toBe(moves.length)
        expect(emails.filter((e) => e.template === "booking_rescheduled_team").length).toBe(moves.length)
        expect(yield* usedToday(s.key.id, "reschedules")).toBe(moves.length)
        expect((yield* changesOf(s)).filter((c) => c.state !== "abandoned").map((c) => c.state)).toEqual(
          moves.map(() => "done")
        )
        return moves
      })

    it.effect("10 rounds of 10 parallel reschedules (different Idempotency-Keys and days): no move from a departure the booking has left", () =>
      Effect.gen(function*() {
        for (let round = 0; round < 10; round++) {
          const s = yield* setup
          // Half the rounds all at once; half spread over 0.4 s with 100 ms of booking-system latency,
          // so that some requests decide while the first move is running and some after it finished.
          const spread = round % 2 === 1
          if (spread) yield* s.sandbox.faults.set({ latencyMs: 100 }, { vendorId: s.vendor.id })
          const replies = yield* Effect.all(
            Array.from({ length: 10 }, (_, i) =>
              Effect.zipRight(
                Effect.sleep(spread ? i * 40 : 0),
                reschedule(s.bookingId, { date: addDays(s.day, i + 1) }, s.key.token)
              )),
            { concurrency: "unbounded" }
          ).pipe(Effect.ensuring(s.sandbox.faults.set({ latencyMs: 0 }, { vendorId: s.vendor.id })))
          yield* checkRace(s, replies)
        }
      }))

    it.effect("two reschedules 0.45 s apart with 300 ms of booking-system latency, 5 rounds: the second does not move from the old day", () =>
      Effect.gen(function*() {
        for (let round = 0; round < 5; round++) {
          const s = yield* setup
          const keys = [randomUUID(), randomUUID()] as const
          const bodies = [{ date: addDays(s.day, 1) }, { date: addDays(s.day, 2) }] as const
          yield* s.sandbox.faults.set({ latencyMs: 300 }, { vendorId: s.vendor.id })
          const replies = yield* Effect.all([
            reschedule(s.bookingId, bodies[0], s.key.token, keys[0]),
            Effect.zipRight(Effect.sleep("450 millis"), reschedule(s.bookingId, bodies[1], s.key.token, keys[1]))
          ], { concurrency: 2 }).pipe(
            Effect.ensuring(s.sandbox.faults.set({ latencyMs: 0 }, { vendorId: s.vendor.id }))
          )
          const moves = yield* checkRace(s, replies)
          // The loser's retry with its own key is decided on the booking as it is now.
          const lost = replies.findIndex((r) => r.status === 409)
          if (lost >= 0) {
            const retried = yield* reschedule(s.bookingId, bodies[lost]!, s.key.token, keys[lost]!)
            expect(retried.status, retried.text).toBe(200)
            expect(retried.body).toMatchObject({
              date: bodies[lost]!.date,
              previous_date: moves.at(-1)!.date,
              already_on_date: false
            })
            expect(yield* checkRace(s, [...replies.filter((r) => r.status === 200), retried])).toHaveLength(
              moves.length + 1
            )
          }
        }
      }))

    it.effect("a reschedule sent after the first finished moves from the first's new day, or is already there", () =>
      Effect.gen(function*() {
        const s = yield* setup
        const first = yield* reschedule(s.bookingId, { date: addDays(s.day, 1) }, s.key.token)
        const second = yield* reschedule(s.bookingId, { date: addDays(s.day, 2) }, s.key.token)
        const third = yield* reschedule(s.bookingId, { date: addDays(s.day, 2) }, s.key.token)
        expect(first.body).toMatchObject({ previous_date: s.day, date: addDays(s.day, 1) })
        expect(second.body).toMatchObject({ previous_date: addDays(s.day, 1), date: addDays(s.day, 2) })
        expect(third.body).toMatchObject({ already_on_date: true, date: addDays(s.day, 2), previous_date: null })
        expect(yield* checkRace(s, [first, second, third])).toHaveLength(2)
      }))
  })

  describe("faults on the move itself (the port wrapped: the call fails, or its answer is lost)", () => {
    type Mode = "fail" | "lose-answer" | "lose-answer-and-next-read"
    /** The real port, except that `move` misbehaves as `mode` says (once), and optionally the read after it. */
    const faulty = (mode: Mode) =>
      Layer.effect(
        BookingSystem,
        Effect.gen(function*() {
          const real = yield* BookingSystem
          let failNextRead = false
          const lost = (operation: string) =>
            new BookingSystemUnavailable({
              accountId: "test",
              operation,
              reason: "timeout",
              detail: "injected: no answer"
            })
          return {
            ...real,
            move: (account, request) =>
              mode === "fail"
                ? Effect.fail(lost("editBooking"))
                : Effect.zipRight(
                  Effect.orDie(real.move(account, request)),
                  Effect.suspend(() => {
                    failNextRead = mode === "lose-answer-and-next-read"
                    return Effect.fail(lost("editBooking"))
                  })
                ),
            booking: (account, reference) =>
              Effect.suspend(() => {
                if (failNextRead) {
                  failNextRead = false
                  return Effect.fail(lost("booking"))
                }
                return real.booking(account, reference)
              })
          }
        })
      )

    const withFaulty = (mode: Mode) =>
      Reschedules.DefaultWithoutDependencies.pipe(
        Layer.provide([
          CrashPoints.Default,
          BookingChanges.Default,
          BookingChangesRepo.Default,
          RescheduleRecovery.Default,
          // What the reschedule reads first, on the same faulty booking system.
          RescheduleReads.DefaultWithoutDependencies.pipe(
            Layer.provide([BookingSystemAccounts.Default, ReschedulesRepo.Default, BookingChangesRepo.Default])
          )
        ]),
        Layer.provide(faulty(mode))
      )

    const ctxOf = (s: Setup) => ({
      keyId: s.key.id,
      idempotencyKey: "test-key-0001",
      operatorIds: [s.w.alpha],
      target: () => Effect.void,
      beforeChange: Effect.void
    })

    const run = (s: Setup, mode: Mode, date: string) =>
      Effect.flatMap(Reschedules, (r) => r.reschedule(s.bookingId, { date }, ctxOf(s))).pipe(
        Effect.either,
        Effect.provide(withFaulty(mode))
      )

    it.effect("the move fails and did not happen: 503, the change abandoned, nothing changed", () =>
      Effect.gen(function*() {
        const s = yield* setup
        const result = yield* run(s, "fail", addDays(s.day, 1))
        expect(result._tag).toBe("Left")
        expect((result as any).left._tag).toBe("Unavailable")
        expect((yield* changesOf(s)).map((c) => c.state)).toEqual(["abandoned"])
        expect((yield* ourBooking(s)).experience_date).toBe(s.day)
        expect(yield* emailsOf(s)).toEqual([])
      }))

    it.effect("the move happened but its answer was lost: the read shows it, the change completes once", () =>
      Effect.gen(function*() {
        const s = yield* setup
        const target = addDays(s.day, 1)
        const result = yield* run(s, "lose-answer", target)
        expect(result._tag).toBe("Right")
        expect((result as any).right.body).toMatchObject({ date: target, already_on_date: false })
        expect((yield* sandboxLine(s)).date).toBe(target)
        expect((yield* ourBooking(s)).experience_date).toBe(target)
        expect((yield* changesOf(s)).map((c) => c.state)).toEqual(["done"])
        expect((yield* emailsOf(s)).length).toBe(2)
      }))

    it.effect("answer lost and the booking system silent after it: 503, left at moving; the job completes it once", () =>
      Effect.gen(function*() {
        const s = yield* setup
        const target = addDays(s.day, 1)
        const result = yield* run(s, "lose-answer-and-next-read", target)
        expect((result as any).left?._tag).toBe("Unavailable")
        expect((yield* sandboxLine(s)).date).toBe(target)
        expect((yield* ourBooking(s)).experience_date).toBe(s.day)
        expect((yield* changesOf(s)).map((c) => c.state)).toEqual(["moving"])
        expect(yield* emailsOf(s)).toEqual([])
        // Still within its lease: the job leaves it alone.
        expect((yield* Effect.flatMap(Reschedules, (r) => r.recoverStale())).found).toBe(0)
        yield* s
          .sql`UPDATE booking_changes SET lease_until = now() - interval '1 second' WHERE booking_id = ${s.bookingId}`
        expect(yield* Effect.flatMap(Reschedules, (r) => r.recoverStale())).toMatchObject({ found: 1, completed: 1 })
        expect(yield* Effect.flatMap(Reschedules, (r) => r.recoverStale())).toMatchObject({ found: 0 })
        expect((yield* ourBooking(s)).experience_date).toBe(target)
        expect((yield* emailsOf(s)).length).toBe(2)
      }))
  })

  describe("a server that crashes between the side effects (CRASH_AT), then the recovery job", () => {
    for (const step of ["reschedule.after_move", "reschedule.after_moved"]) {
      it.effect(`${step}: the job completes the move once; each email once`, () =>
        Effect.gen(function*() {
          const s = yield* setup
          const target = addDays(s.day, 1)
          const { databaseUrl } = yield* TestServer
          const crashed = yield* Effect.scoped(Effect.gen(function*() {
            const ctx = yield* Layer.build(serverOn(databaseUrl, { ...ENV, CRASH_AT: step }))
            return yield* call(`/api/v1/bookings/${s.bookingId}/reschedule`, {
              method: "POST",
              key: s.key.token,
              body: { date: target },
              headers: { "Idempotency-Key": randomUUID() },
              baseUrl: Context.get(ctx, TestServer).baseUrl
            })
          }))
          expect(crashed.status).toBe(500)
          expect((yield* sandboxLine(s)).date).toBe(target)
          expect((yield* ourBooking(s)).experience_date).toBe(s.day)
          yield* s
            .sql`UPDATE booking_changes SET lease_until = now() - interval '1 second' WHERE booking_id = ${s.bookingId}`
          expect(yield* Effect.flatMap(Reschedules, (r) => r.recoverStale())).toMatchObject({ found: 1, completed: 1 })
          expect((yield* ourBooking(s)).experience_date).toBe(target)
          expect((yield* changesOf(s)).map((c) => c.state)).toEqual(["done"])
          expect((yield* emailsOf(s)).map((e) => e.template)).toEqual([
            "booking_rescheduled_guest",
            "booking_rescheduled_team"
          ])
          // Asked again: already there, nothing moves, no email.
          const again = yield* reschedule(s.bookingId, { date: target }, s.key.token)
          expect(again.body).toMatchObject({ already_on_date: true })
          expect((yield* emailsOf(s)).length).toBe(2)
        }))
    }
  })

  describe("crash between steps: the recovery job finishes each change once", () => {
    /** A change row as step 1 writes it, with its lease already over (its request died). */
    const leftBehind = (s: Setup, state: "moving" | "moved", target: string) =>
      s.sql<{ id: string }>`
        INSERT INTO booking_changes (
          booking_id, kind, state, key_id, account_id, booking_reference, line_id, from_date, from_start_time,
          from_start_time_id, from_rate_id, from_rate_title, to_date, to_start_time, to_start_time_id, to_rate_id,
          to_rate_title, change_rate, lease_until)
        SELECT b.id, 'reschedule', ${state}, ${s.key.id}, o.booking_system_account_id, b.provider_reference, ${
        String(s.lineId)
      },
          b.experience_date, b.start_time, ${s.start("10:00")}, ${s.standard}, 'Standard', ${target}::date, '10:00',
          ${s.start("10:00")}, ${s.standard}, 'Standard', false, now() - interval '1 second'
        FROM bookings b JOIN operators o ON o.id = b.operator_id WHERE b.id = ${s.bookingId}
        RETURNING id`.pipe(Effect.map((rows) => rows[0]!.id), Effect.orDie)

    /** The booking system's own move, as the dead request had sent it. */
    const moveInSandbox = (s: Setup, target: string) =>
      Effect.gen(function*() {
        const bs = yield* BookingSystem
        const [account] = yield* s.sql<
          { id: string }
        >`SELECT booking_system_account_id AS id FROM operators WHERE id = ${s.w.alpha}`
        const accounts = s.sandbox.account(s.vendor, { id: account!.id })
        yield* bs.move(accounts, {
          bookingReference: s.seeded.confirmationCode,
          lineId: String(s.lineId),
          date: target,
          startTimeId: s.start("10:00"),
          rateId: null
        })
      }).pipe(Effect.orDie)

    const recover = Effect.flatMap(Reschedules, (r) => r.recoverStale())

    it.effect("moved in the booking system, not in the service (left at moving): completed once, emailed once", () =>
      Effect.gen(function*() {
        const s = yield* setup
        const target = addDays(s.day, 4)
        const change = yield* leftBehind(s, "moving", target)
        yield* moveInSandbox(s, target)
        const first = yield* recover
        expect(first).toMatchObject({ completed: 1, abandoned: 0 })
        expect((yield* ourBooking(s)).experience_date).toBe(target)
        expect((yield* changesOf(s)).map((c) => [c.id, c.state])).toEqual([[change, "done"]])
        expect((yield* emailsOf(s)).map((e) => e.dedupe_key).sort()).toEqual([
          `booking:${s.bookingId}:rescheduled:${change}:guest`,
          `booking:${s.bookingId}:rescheduled:${change}:team`
        ])
        yield* s.sandbox.requests.clear
        const second = yield* recover
        expect(second.found).toBe(0)
        expect((yield* emailsOf(s)).length).toBe(2)
        expect(
          yield* s.sandbox.requests.count({ method: "POST", path: "/booking.json/edit", accessKey: s.vendor.accessKey })
        ).toBe(0)
        // A retry of the request now finds the booking there: a no-op, not a second move.
        const retry = yield* reschedule(s.bookingId, { date: target }, s.key.token)
        expect(retry.body.already_on_date).toBe(true)
      }))

    it.effect("died before the booking system moved (left at moving): abandoned, nothing changed, no email", () =>
      Effect.gen(function*() {
        const s = yield* setup
        yield* leftBehind(s, "moving", addDays(s.day, 4))
        expect(yield* recover).toMatchObject({ found: 1, completed: 0, abandoned: 1 })
        expect((yield* ourBooking(s)).experience_date).toBe(s.day)
        expect((yield* sandboxLine(s)).date).toBe(s.day)
        expect(yield* emailsOf(s)).toEqual([])
        expect((yield* changesOf(s)).map((c) => c.state)).toEqual(["abandoned"])
      }))

    it.effect("moved and recorded (left at moved): completed without asking the booking system again", () =>
      Effect.gen(function*() {
        const s = yield* setup
        const target = addDays(s.day, 4)
        yield* moveInSandbox(s, target)
        yield* leftBehind(s, "moved", target)
        yield* s.sandbox.requests.clear
        expect(yield* recover).toMatchObject({ found: 1, completed: 1 })
        expect(yield* s.sandbox.requests.count({ accessKey: s.vendor.accessKey })).toBe(0)
        expect((yield* ourBooking(s)).experience_date).toBe(target)
        expect((yield* emailsOf(s)).length).toBe(2)
        expect((yield* recover).found).toBe(0)
        expect((yield* emailsOf(s)).length).toBe(2)
      }))

    it.effect("the booking system down during recovery: the change waits for the next run", () =>
      Effect.gen(function*() {
        const s = yield* setup
        const target = addDays(s.day, 4)
        yield* moveInSandbox(s, target)
        yield* leftBehind(s, "moving", target)
        yield* s.sandbox.faults.set({ down: true }, { vendorId: s.vendor.id })
        const waiting = yield* recover
        yield* s.sandbox.faults.set({ down: false }, { vendorId: s.vendor.id })
        expect(waiting).toMatchObject({ found: 1, completed: 0, abandoned: 0, pending: 1 })
        expect((yield* changesOf(s)).map((c) => c.state)).toEqual(["moving"])
        expect(yield* recover).toMatchObject({ completed: 1 })
        expect((yield* emailsOf(s)).length).toBe(2)
      }))

    it.effect("a request while a change is still running answers 409; after its lease the request finishes it first", () =>
      Effect.gen(function*() {
        const s = yield* setup
        const target = addDays(s.day, 4)
        yield* moveInSandbox(s, target)
        const change = yield* leftBehind(s, "moving", target)
        yield* s.sql`UPDATE booking_changes SET lease_until = now() + interval '1 minute' WHERE id = ${change}`
        expectProblem(
          yield* reschedule(s.bookingId, { date: addDays(s.day, 1) }, s.key.token),
          409,
          "idempotency-in-progress"
        )
        yield* s.sql`UPDATE booking_changes SET lease_until = now() - interval '1 second' WHERE id = ${change}`
        const res = yield* reschedule(s.bookingId, { date: target }, s.key.token)
        expect(res.status, res.text).toBe(200)
        expect(res.body.already_on_date).toBe(true)
        expect((yield* changesOf(s)).map((c) => c.state)).toEqual(["done"])
        expect((yield* emailsOf(s)).length).toBe(2)
      }))
  })
})

const audit = (s: Setup) => auditOf(s.key.id)
