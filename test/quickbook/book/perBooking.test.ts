/**
 * A tour priced per booking (a private tour: one price for the whole party) sold at the desk, over
 * real HTTP with the Bókun and Surfboard sandboxes on one fresh database: the slots give the booking
 * price and the guest prices at 0; a quote of 3 adults and 1 child costs the booking price once, as
 * its own cart line entry, the entries adding up to the total; paying that total at the Surfboard
 * sandbox and booking confirms, and the Bókun booking has the party's pax and the paid amount; the
 * ticket and the guest's email show it; a booking price changed after validUntil answers
 * price_changed with the money returned, a per-guest row that changed does not; a per-guest tour
 * is unchanged.
 */
import SwaggerParser from "@apidevtools/swagger-parser"
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { call, get, type Reply } from "../../support/http.js"
import { paymentsEnv } from "../../support/payments.js"
import {
  BASE,
  type DeskWorld,
  deskWorld,
  deskWorldWith,
  everyVerifiedPaymentSettled,
  expectReturnedOnce
} from "../../support/quickbook.js"

const env = paymentsEnv(Effect.succeed({ TOUR_AVAILABILITY_TIMEOUT_MS: "1500" }))

/** The booking price of the private charter: the sandbox's booking price is its default category's price. */
const CHARTER = 250000

/** A private charter: Adult and Child rows listed on the rate (Bókun lists them), the party pays 2,500.00 NOK. */
const privateWorld = deskWorldWith([{
  title: "Private Fjord Charter",
  startTimes: ["10:00", "14:30"],
  capacity: 10,
  durationMinutes: 120,
  pricedPerBooking: true,
  pricingCategories: [{ title: "Adult", isDefault: true, minAge: 16 }, { title: "Child", minAge: 3, maxAge: 15 }],
  rates: [{ title: "Charter", prices: { Adult: CHARTER, Child: 120000 } }]
}])

const party = [{ type: "adult", count: 3 }, { type: "child", count: 1 }]

interface CartGuest {
  type: string
  label: string
  count: number
  unitMinor: number
  lineMinor: number
}

const quoteParty = (s: DeskWorld, guests: ReadonlyArray<{ type: string; count: number }> = party) =>
  Effect.flatMap(
    call(`${BASE}/quote`, {
      method: "POST",
      key: s.key.token,
      headers: s.headers,
      body: { activityId: s.tour, start: { date: s.day, time: "10:00" }, guests }
    }),
    (r: Reply) =>
      r.status === 200
        ? Effect.succeed(
          r.body as {
            reference: string
            cartLine: { totalMinor: number; currency: string; guests: Array<CartGuest>; payment: any }
          }
        )
        : Effect.dieMessage(`quote: ${r.status} ${r.text}`)
  )

/** The cart line's entries add up to its total (the spec: lineMinor = unitMinor × count, summed to totalMinor). */
const expectLinesAddUp = (cartLine: { totalMinor: number; guests: ReadonlyArray<CartGuest> }) => {
  for (const g of cartLine.guests) expect(g.lineMinor).toBe(g.unitMinor * g.count)
  expect(cartLine.guests.reduce((n, g) => n + g.lineMinor, 0)).toBe(cartLine.totalMinor)
}

const pastValidUntil = (reference: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql`UPDATE quickbook_sales SET valid_until = now() - interval '1 second' WHERE reference = ${reference}`.pipe(
        Effect.orDie
      )
  )

/** What the Bókun sandbox booked for the sale: pax, participants, the line's total and what was paid. */
const bokunBooking = (reference: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ status: string; paid_minor: number; pax: any; participants: number; total_minor: number }>`
      SELECT b.status, b.paid_minor::int AS paid_minor, pb.pax, pb.participants, pb.total_minor::int AS total_minor
      FROM bokun_sandbox.bookings b JOIN bokun_sandbox.product_bookings pb ON pb.booking_id = b.id
      WHERE b.external_reference = ${reference}`.pipe(Effect.orDie)
  )

layer(env, { excludeTestServices: true, timeout: 240_000 })("quickbook: a tour priced per booking", (it) => {
  it.effect("slots: the booking price and every guest type at 0; GET /tours says the day is available", () =>
    Effect.gen(function*() {
      const s = yield* privateWorld
      const res = yield* get(`${BASE}/tours/${s.tour}/slots?date=${s.day}`, s.key.token, s.headers)
      expect(res.status, res.text).toBe(200)
      const guests = [
        { type: "adult", label: "Adult", unitMinor: 0 },
        { type: "child", label: "Child", unitMinor: 0 }
      ]
      expect(res.body.slots).toEqual([
        { time: "10:00", seatsLeft: 10, soldOut: false, guests, bookingPriceMinor: CHARTER },
        { time: "14:30", seatsLeft: 10, soldOut: false, guests, bookingPriceMinor: CHARTER }
      ])
      const list = yield* get(`${BASE}/tours?date=${s.day}`, s.key.token, s.headers)
      expect(list.body.tours.map((t: any) => [t.activityId, t.available])).toEqual([[s.tour, true]])
    }))

  it.effect("quote of 3 adults and 1 child: the booking price once, its own entry; the entries add up to the total; the pax stored without it", () =>
    Effect.gen(function*() {
      const s = yield* privateWorld
      const q = yield* quoteParty(s)
      expect(q.cartLine.guests).toEqual([
        { type: "adult", label: "Adult", count: 3, unitMinor: 0, lineMinor: 0 },
        { type: "child", label: "Child", count: 1, unitMinor: 0, lineMinor: 0 },
        { type: "booking", label: "Private booking (whole party)", count: 1, unitMinor: CHARTER, lineMinor: CHARTER }
      ])
      expect(q.cartLine.totalMinor).toBe(CHARTER)
      expectLinesAddUp(q.cartLine)
      // 12% VAT included in 2,500.00: 250000 × 12 / 112 = 26785.7.
      expect(q.cartLine.payment.taxLines).toEqual([{ amount: 26786, percentage: 12, type: "VAT" }])
      // The same price for a party of one.
      const one = yield* quoteParty(s, [{ type: "adult", count: 1 }])
      expect(one.cartLine.totalMinor).toBe(CHARTER)
      expectLinesAddUp(one.cartLine)
      // What is stored for the booking system: the guest types only, with their pricing categories.
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ guests: Array<{ type: string; count: number; categoryId: string }>; total: number }>`
        SELECT guests, total_minor::int AS total FROM quickbook_sales WHERE reference = ${q.reference}`
      const category = (title: string) => String(s.pa.pricingCategories.find((c) => c.title === title)!.id)
      expect(row!.guests.map((g) => [g.type, g.count, g.categoryId])).toEqual([
        ["adult", 3, category("Adult")],
        ["child", 1, category("Child")]
      ])
      expect(row!.total).toBe(CHARTER)
      // `booking` is not a guest type a clerk can ask for.
      const asked = yield* call(`${BASE}/quote`, {
        method: "POST",
        key: s.key.token,
        headers: s.headers,
        body: { activityId: s.tour, start: { date: s.day, time: "10:00" }, guests: [{ type: "booking", count: 1 }] }
      })
      expect(asked.status, asked.text).toBe(409)
      expect(asked.body.error.code).toBe("price_changed")
    }))

  for (const way of ["seats", "hold"] as const) {
    it.effect(`paid the quoted total at the Surfboard sandbox and booked (${way}): confirmed; Bókun has the party's pax and the paid amount`, () =>
      Effect.gen(function*() {
        const s = yield* privateWorld
        const q = yield* quoteParty(s)
        expect(q.cartLine.totalMinor).toBe(CHARTER)
        if (way === "hold") yield* s.reserve(q.reference)
        const payment = yield* s.pay(q)
        const res = yield* s.book(q.reference, payment, way === "hold" ? { holdRef: q.reference } : {})
        expect(res.status, res.text).toBe(200)
        expect(res.body.status, res.text).toBe("confirmed")
        const category = (title: string) => s.pa.pricingCategories.find((c) => c.title === title)!.id
        expect(yield* bokunBooking(q.reference)).toEqual([{
          status: "CONFIRMED",
          paid_minor: CHARTER,
          pax: [
            { pricingCategoryId: category("Adult"), title: "Adult", quantity: 3 },
            { pricingCategoryId: category("Child"), title: "Child", quantity: 1 }
          ],
          participants: 4,
          total_minor: CHARTER
        }])
        // Seats count the guests.
        expect(yield* s.seatsLeft).toBe(6)
        expect(yield* s.returned(payment.orderId)).toEqual({ refundOrders: 0, refunded: 0, voided: 0 })
        // The ticket: the guests without amounts, the booking price on its own line, the total.
        const ticket = res.body.ticket
        expect(ticket.lines32.slice(6, 11)).toEqual([
          "3 x Adult",
          "1 x Child",
          "Private booking (whole party)",
          "                    NOK 2,500.00",
          "-".repeat(32)
        ])
        expect(ticket.lines32).toContain("Total               NOK 2,500.00")
        for (const line of ticket.lines32) expect(line.length).toBeLessThanOrEqual(32)
        for (const line of ticket.lines48) expect(line.length).toBeLessThanOrEqual(48)
        // The guest's email: the guests included, the booking price, the total paid.
        const sql = yield* SqlClient.SqlClient
        const [mail] = yield* sql<{ text_body: string }>`
          SELECT text_body FROM email_outbox WHERE dedupe_key = ${`quickbook:${q.reference}:confirmed:guest`}`
        expect(mail!.text_body).toContain(
          "3 x Adult: included\n1 x Child: included\nPrivate booking (whole party): NOK\u00a02,500.00\nTotal paid: NOK\u00a02,500.00"
        )
      }))
  }

  it.effect("past validUntil: the same booking price books (a per-guest row that changed does not matter); a changed booking price is price_changed, the money returned", () =>
    Effect.gen(function*() {
      const s = yield* privateWorld
      const rateId = s.pa.rates[0]!.id
      const category = (title: string) => String(s.pa.pricingCategories.find((c) => c.title === title)!.id)
      // The child's per-guest row changes, the booking price does not: the quoted total stands.
      const same = yield* quoteParty(s)
      expect(same.cartLine.totalMinor).toBe(CHARTER)
      const paidSame = yield* s.pay(same)
      yield* pastValidUntil(same.reference)
      yield* s.bokun.setDayPrices({ rateId, dates: [s.day], prices: { [category("Child")]: 99000 } })
      const booked = yield* s.book(same.reference, paidSame)
      expect(booked.body.status, booked.text).toBe("confirmed")
      // The booking price changes after validUntil: price_changed, the payment returned once.
      const q = yield* quoteParty(s, [{ type: "adult", count: 2 }])
      expect(q.cartLine.totalMinor).toBe(CHARTER)
      const payment = yield* s.pay(q)
      yield* pastValidUntil(q.reference)
      yield* s.bokun.setDayPrices({ rateId, dates: [s.day], prices: { [category("Adult")]: 270000 } })
      const res = yield* s.book(q.reference, payment)
      expect(res.status, res.text).toBe(200)
      expect(res.body).toMatchObject({ status: "failed", reason: "price_changed" })
      yield* expectReturnedOnce(s, payment.orderId, CHARTER)
      expect(yield* bokunBooking(q.reference)).toEqual([])
      // The slots now say the new booking price.
      const slots = yield* get(`${BASE}/tours/${s.tour}/slots?date=${s.day}`, s.key.token, s.headers)
      expect(slots.body.slots[0].bookingPriceMinor).toBe(270000)
    }))

  it.effect("a tour priced per guest is unchanged: no booking price, unit prices × counts, no booking entry", () =>
    Effect.gen(function*() {
      const s = yield* deskWorld
      const slots = yield* get(`${BASE}/tours/${s.tour}/slots?date=${s.day}`, s.key.token, s.headers)
      expect(slots.body.slots[0]).toEqual({
        time: "10:00",
        seatsLeft: 10,
        soldOut: false,
        guests: [
          { type: "adult", label: "Adult", unitMinor: 49900 },
          { type: "child", label: "Child", unitMinor: 24950 }
        ],
        bookingPriceMinor: null
      })
      const q = yield* quoteParty(s)
      expect(q.cartLine.guests).toEqual([
        { type: "adult", label: "Adult", count: 3, unitMinor: 49900, lineMinor: 149700 },
        { type: "child", label: "Child", count: 1, unitMinor: 24950, lineMinor: 24950 }
      ])
      expect(q.cartLine.totalMinor).toBe(174650)
      expectLinesAddUp(q.cartLine)
      const res = yield* s.book(q.reference, yield* s.pay(q))
      expect(res.body.status, res.text).toBe("confirmed")
      expect((yield* bokunBooking(q.reference)).map((b) => [b.paid_minor, b.total_minor, b.participants])).toEqual([
        [174650, 174650, 4]
      ])
    }))

  it.effect("the OpenAPI document describes bookingPriceMinor and the cart line's booking entry; it stays valid", () =>
    Effect.gen(function*() {
      const doc = (yield* get(`${BASE}/openapi.json`)).body
      yield* Effect.promise(() => SwaggerParser.validate(structuredClone(doc)))
      const schemas = doc.components.schemas
      const slot = schemas.DeskSlot
      expect(slot.required).toContain("bookingPriceMinor")
      expect(JSON.stringify(slot.properties.bookingPriceMinor)).toContain("priced per booking")
      const guests = schemas.CartLine.properties.guests
      expect(guests.description).toContain("add up to `totalMinor`")
      expect(guests.items.properties.type.description).toContain("`booking`")
    }))

  it.effect("every verified payment of this file ended confirmed or refunded (each refunded one returned exactly once)", () =>
    everyVerifiedPaymentSettled)
})
