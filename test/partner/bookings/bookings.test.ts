import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { createKey, insertBooking, makeWorld } from "../../support/fixtures.js"
import { get, type Reply } from "../../support/http.js"
import { testServer } from "../../support/server.js"

const ids = (body: any): Array<string> => body.data.map((b: any) => b.id)

/** Walks every page of a list and returns the ids in order. */
const walk = <R = never>(
  path: string,
  key: string,
  limit: number,
  between?: (page: number) => Effect.Effect<unknown, never, R>
) =>
  Effect.gen(function*() {
    const seen: Array<string> = []
    let cursor: string | null = null
    let page = 0
    do {
      const sep = path.includes("?") ? "&" : "?"
      const res: Reply = yield* get(
        `${path}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
        key
      )
      expect(res.status).toBe(200)
      expect(res.body.data.length).toBeLessThanOrEqual(limit)
      seen.push(...ids(res.body))
      cursor = res.body.next_cursor
      if (cursor !== null) expect(cursor.length).toBeLessThanOrEqual(200)
      if (between) yield* between(page)
      page++
    } while (cursor !== null)
    return seen
  })

layer(testServer(), { excludeTestServices: true, timeout: 120_000 })("GET /api/v1/bookings", (it) => {
  it.effect("shows every summary field, newest first; contact keys only with guests.contact:read", () =>
    Effect.gen(function*() {
      const w = yield* makeWorld
      const older = yield* insertBooking({ operatorId: w.alpha, createdAt: new Date("2026-10-01T10:00:00Z") })
      const newer = yield* insertBooking({
        operatorId: w.alpha,
        createdAt: new Date("2026-10-02T10:00:00Z"),
        updatedAt: new Date("2026-10-03T08:00:00Z"),
        bookedAt: new Date("2026-10-02T10:00:01Z"),
        experienceDate: "2026-12-24",
        startTime: "18:30",
        timezone: "Europe/Oslo",
        participants: 3,
        amountMinor: 149700,
        currency: "NOK",
        channel: "viator",
        guestName: "Nora Lie",
        guestEmail: "nora@example.com",
        guestPhone: null,
        tourName: "Christmas Cruise"
      })
      const plain = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["bookings:read"] })
      const contact = yield* createKey({
        by: w.alice,
        operators: [w.alpha],
        scopes: ["bookings:read", "guests.contact:read"]
      })

      const res = yield* get("/api/v1/bookings", plain.token)
      expect(res.status).toBe(200)
      expect(res.headers.get("content-type")).toContain("application/json")
      expect(ids(res.body)).toEqual([newer, older])
      expect(res.body.next_cursor).toBeNull()
      const b = res.body.data[0]
      expect(b).toEqual({
        id: newer,
        confirmation_code: expect.stringMatching(/^T-/),
        status: "CONFIRMED",
        partner: { id: w.alpha, name: `Alpha Tours ${w.tag}` },
        tour: { id: null, name: "Christmas Cruise" },
        experience_date: "2026-12-24",
        start_time: "18:30",
        timezone: "Europe/Oslo",
        participants: 3,
        amount_minor: 149700,
        currency: "NOK",
        channel: "viator",
        guest: { name: "Nora Lie" },
        booked_at: "2026-10-02T10:00:01.000Z",
        created_at: "2026-10-02T10:00:00.000Z",
        updated_at: "2026-10-03T08:00:00.000Z"
      })
      expect("email" in b.guest).toBe(false)
      expect("phone" in b.guest).toBe(false)

      const withContact = yield* get("/api/v1/bookings", contact.token)
      expect(withContact.body.data[0].guest).toEqual({ name: "Nora Lie", email: "nora@example.com", phone: null })
      const detail = yield* get(`/api/v1/bookings/${newer}`, plain.token)
      expect("email" in detail.body.guest).toBe(false)
      expect((yield* get(`/api/v1/bookings/${newer}`, contact.token)).body.guest).toEqual({
        name: "Nora Lie",
        email: "nora@example.com",
        phone: null
      })
    }))

  it.effect("holds and abandoned checkouts never appear; RESERVED shows as CONFIRMED", () =>
    Effect.gen(function*() {
      const w = yield* makeWorld
      const hold = yield* insertBooking({ operatorId: w.alpha, status: "HOLD" })
      const abandoned = yield* insertBooking({ operatorId: w.alpha, status: "ABANDONED" })
      const reserved = yield* insertBooking({ operatorId: w.alpha, status: "RESERVED" })
      const key = yield* createKey({ by: w.alice, operators: [w.alpha] })
      const list = yield* get("/api/v1/bookings", key.token)
      expect(ids(list.body)).toEqual([reserved])
      expect(list.body.data[0].status).toBe("CONFIRMED")
      expect((yield* get(`/api/v1/bookings/${hold}`, key.token)).status).toBe(404)
      expect((yield* get(`/api/v1/bookings/${abandoned}`, key.token)).status).toBe(404)
      expect(ids((yield* get("/api/v1/bookings?status=CONFIRMED", key.token)).body)).toEqual([reserved])
    }))

  describe("tenant isolation", () => {
    it.effect("another operator's booking is 404 not found, or not yours; lists never leak it", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const mine = yield* insertBooking({ operatorId: w.alpha })
        const theirs = yield* insertBooking({ operatorId: w.cetus })
        const key = yield* createKey({ by: w.alice, operators: [w.alpha] })
        const res = yield* get(`/api/v1/bookings/${theirs}`, key.token)
        expect(res.status).toBe(404)
        expect(res.headers.get("content-type")).toBe("application/problem+json")
        expect(res.body.detail).toContain("not found, or not yours")
        expect((yield* get(`/api/v1/bookings/00000000-0000-4000-8000-000000000000`, key.token)).body.detail)
          .toBe(res.body.detail)
        expect(ids((yield* get("/api/v1/bookings", key.token)).body)).toEqual([mine])
        const carolKey = yield* createKey({ by: w.carol, operators: [w.cetus] })
        expect(ids((yield* get("/api/v1/bookings", carolKey.token)).body)).toEqual([theirs])
        expect((yield* get(`/api/v1/bookings/${mine}`, carolKey.token)).status).toBe(404)
      }))

    it.effect("partner_id narrows to one of the key's operators; any other id is 404", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const a = yield* insertBooking({ operatorId: w.alpha })
        const b = yield* insertBooking({ operatorId: w.beta })
        const c = yield* insertBooking({ operatorId: w.cetus })
        const key = yield* createKey({ by: w.bob, operators: [w.alpha, w.beta] })
        expect(ids((yield* get("/api/v1/bookings", key.token)).body).sort()).toEqual([a, b].sort())
        expect(ids((yield* get(`/api/v1/bookings?partner_id=${w.beta}`, key.token)).body)).toEqual([b])
        for (const other of [w.cetus, "not-a-uuid", "00000000-0000-4000-8000-000000000000"]) {
          const res = yield* get(`/api/v1/bookings?partner_id=${other}`, key.token)
          expect(res.status).toBe(404)
          expect(res.headers.get("content-type")).toBe("application/problem+json")
        }
        expect((yield* get(`/api/v1/bookings/${c}?partner_id=${w.cetus}`, key.token)).status).toBe(404)
        expect((yield* get(`/api/v1/bookings/${a}?partner_id=${w.beta}`, key.token)).status).toBe(404)
        expect((yield* get(`/api/v1/bookings/${a}?partner_id=${w.alpha}`, key.token)).status).toBe(200)
      }))
  })

  describe("filters", () => {
    it.effect("date_from and date_to are inclusive experience-date bounds", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const key = yield* createKey({ by: w.alice, operators: [w.alpha] })
        const day = (d: string) => insertBooking({ operatorId: w.alpha, experienceDate: d })
        const d30 = yield* day("2026-11-30")
        const d01 = yield* day("2026-12-01")
        const d15 = yield* day("2026-12-15")
        const d31 = yield* day("2026-12-31")
        const j01 = yield* day("2027-01-01")
        yield* insertBooking({ operatorId: w.alpha, experienceDate: null })
        const q = (s: string) => Effect.map(get(`/api/v1/bookings?${s}`, key.token), (r) => ids(r.body).sort())
        expect(yield* q("date_from=2026-12-01&date_to=2026-12-31")).toEqual([d01, d15, d31].sort())
        expect(yield* q("date_from=2026-12-31")).toEqual([d31, j01].sort())
        expect(yield* q("date_to=2026-12-01")).toEqual([d30, d01].sort())
        expect(yield* q("date_from=2026-12-15&date_to=2026-12-15")).toEqual([d15])
      }))

    it.effect("updated_since matches bookings created or changed at or after the instant, with Z or an offset", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const key = yield* createKey({ by: w.alice, operators: [w.alpha] })
        const oldUnchanged = yield* insertBooking({ operatorId: w.alpha, createdAt: new Date("2026-09-01T00:00:00Z") })
        const oldChanged = yield* insertBooking({
          operatorId: w.alpha,
          createdAt: new Date("2026-09-01T00:00:00Z"),
          updatedAt: new Date("2026-11-10T12:00:00Z")
        })
        const newOne = yield* insertBooking({ operatorId: w.alpha, createdAt: new Date("2026-11-10T12:00:00Z") })
        void oldUnchanged
        const q = (s: string) =>
          Effect.map(get(`/api/v1/bookings?updated_since=${encodeURIComponent(s)}`, key.token), (r) => {
            expect(r.status).toBe(200)
            return ids(r.body).sort()
          })
        expect(yield* q("2026-11-10T12:00:00Z")).toEqual([oldChanged, newOne].sort())
        // Same instant written with an offset: Oslo is UTC+1 in November.
        expect(yield* q("2026-11-10T13:00:00+01:00")).toEqual([oldChanged, newOne].sort())
        expect(yield* q("2026-11-10T12:00:00.001Z")).toEqual([])
        expect((yield* q("2026-08-31T23:59:59Z")).length).toBe(3)
      }))

    it.effect("status filters by CONFIRMED, CANCELLED and REFUNDED", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const key = yield* createKey({ by: w.alice, operators: [w.alpha] })
        const confirmed = yield* insertBooking({ operatorId: w.alpha, status: "CONFIRMED" })
        const cancelled = yield* insertBooking({ operatorId: w.alpha, status: "CANCELLED" })
        const refunded = yield* insertBooking({ operatorId: w.alpha, status: "REFUNDED" })
        const q = (s: string) => Effect.map(get(`/api/v1/bookings?status=${s}`, key.token), (r) => ids(r.body))
        expect(yield* q("CONFIRMED")).toEqual([confirmed])
        expect(yield* q("CANCELLED")).toEqual([cancelled])
        expect(yield* q("REFUNDED")).toEqual([refunded])
        const all = (yield* get(`/api/v1/bookings?status=CANCELLED`, key.token)).body.data[0]
        expect(all.status).toBe("CANCELLED")
      }))

    it.effect("filters combine", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const key = yield* createKey({ by: w.bob, operators: [w.alpha, w.beta] })
        const hit = yield* insertBooking({ operatorId: w.beta, status: "CANCELLED", experienceDate: "2026-12-10" })
        yield* insertBooking({ operatorId: w.alpha, status: "CANCELLED", experienceDate: "2026-12-10" })
        yield* insertBooking({ operatorId: w.beta, status: "CONFIRMED", experienceDate: "2026-12-10" })
        yield* insertBooking({ operatorId: w.beta, status: "CANCELLED", experienceDate: "2026-12-11" })
        const res = yield* get(
          `/api/v1/bookings?status=CANCELLED&date_from=2026-12-10&date_to=2026-12-10&partner_id=${w.beta}`,
          key.token
        )
        expect(ids(res.body)).toEqual([hit])
      }))
  })

  describe("pagination", () => {
    it.effect("pages cover every row exactly once while new bookings arrive between pages", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const key = yield* createKey({ by: w.bob, operators: [w.alpha, w.beta] })
        const base = Date.parse("2026-06-01T00:00:00Z")
        const expected: Array<string> = []
        for (let i = 0; i < 57; i++) {
          // Pairs share a creation instant (to the microsecond) so the id breaks ties.
          const createdAt = new Date(base + Math.floor(i / 2) * 60_000)
          expected.push(yield* insertBooking({ operatorId: i % 3 === 0 ? w.beta : w.alpha, createdAt }))
        }
        const inserted: Array<string> = []
        const seen = yield* walk("/api/v1/bookings", key.token, 10, () =>
          Effect.gen(function*() {
            // Concurrent writers: new bookings, and bookings created "in the past" of the cursor.
            inserted.push(yield* insertBooking({ operatorId: w.alpha }))
          }))
        expect(new Set(seen).size).toBe(seen.length)
        for (const id of expected) expect(seen).toContain(id)
        // Newer rows inserted while paging land before the cursor and are never duplicated.
        expect(seen.filter((id) => inserted.includes(id)).length).toBeLessThanOrEqual(1)
      }))

    it.effect("order is newest first by created_at then id, and stable across page sizes", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const key = yield* createKey({ by: w.alice, operators: [w.alpha] })
        const at = new Date("2026-07-01T00:00:00.123456Z")
        for (let i = 0; i < 12; i++) yield* insertBooking({ operatorId: w.alpha, createdAt: at })
        const one = yield* walk("/api/v1/bookings", key.token, 1)
        const five = yield* walk("/api/v1/bookings", key.token, 5)
        const all = ids((yield* get("/api/v1/bookings?limit=100", key.token)).body)
        expect(one).toEqual(all)
        expect(five).toEqual(all)
        expect([...all].sort().reverse()).toEqual(all)
      }))

    it.effect("limit defaults to 50 and accepts 1 to 100", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const key = yield* createKey({ by: w.alice, operators: [w.alpha] })
        for (let i = 0; i < 101; i++) yield* insertBooking({ operatorId: w.alpha })
        expect((yield* get("/api/v1/bookings", key.token)).body.data.length).toBe(50)
        expect((yield* get("/api/v1/bookings?limit=1", key.token)).body.data.length).toBe(1)
        const max = yield* get("/api/v1/bookings?limit=100", key.token)
        expect(max.body.data.length).toBe(100)
        expect(max.body.next_cursor).not.toBeNull()
        for (const bad of ["0", "101", "-1", "abc", "1.5", "1e2", "", "0x10", " 5"]) {
          const res = yield* get(`/api/v1/bookings?limit=${encodeURIComponent(bad)}`, key.token)
          expect(res.status, `limit=${bad}`).toBe(400)
          expect(res.body.invalid_params[0].name).toBe("limit")
          expect(res.body.detail).toContain("limit")
        }
      }))

    it.effect("a tampered, foreign, oversized or re-filtered cursor is a 400", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const key = yield* createKey({ by: w.alice, operators: [w.alpha] })
        for (let i = 0; i < 3; i++) yield* insertBooking({ operatorId: w.alpha, status: "CANCELLED" })
        const first = yield* get("/api/v1/bookings?limit=1&status=CANCELLED", key.token)
        const cursor: string = first.body.next_cursor
        expect(typeof cursor).toBe("string")
        expect((yield* get(`/api/v1/bookings?limit=1&status=CANCELLED&cursor=${cursor}`, key.token)).status).toBe(200)

        const [body, sig] = cursor.split(".") as [string, string]
        const flipped = body.slice(0, 5) + (body[5] === "A" ? "B" : "A") + body.slice(6)
        const cases = {
          tampered: `${flipped}.${sig}`,
          badSignature: `${body}.${sig.slice(0, -2)}AA`,
          garbage: "hello",
          oversized: "x".repeat(201)
        }
        for (const [name, bad] of Object.entries(cases)) {
          const res = yield* get(
            `/api/v1/bookings?limit=1&status=CANCELLED&cursor=${encodeURIComponent(bad)}`,
            key.token
          )
          expect(res.status, name).toBe(400)
          expect(res.body.invalid_params[0].name).toBe("cursor")
        }
        // The same instant spelled another way is the same filter.
        for (let i = 0; i < 2; i++) {
          yield* insertBooking({ operatorId: w.alpha, updatedAt: new Date("2026-11-10T12:30:00Z") })
        }
        const since = yield* get(`/api/v1/bookings?limit=1&updated_since=2026-11-10T12:00:00Z`, key.token)
        const sinceCursor = since.body.next_cursor
        const respelled = yield* get(
          `/api/v1/bookings?limit=1&updated_since=${
            encodeURIComponent("2026-11-10T13:00:00+01:00")
          }&cursor=${sinceCursor}`,
          key.token
        )
        expect(respelled.status).toBe(200)
        expect(respelled.body.data[0].id).not.toBe(since.body.data[0].id)
        // Reused under other filters.
        const refiltered = yield* get(`/api/v1/bookings?limit=1&status=REFUNDED&cursor=${cursor}`, key.token)
        expect(refiltered.status).toBe(400)
        expect(refiltered.body.detail).toContain("other filters")
      }))
  })

  describe("bad input", () => {
    it.effect("every malformed parameter is a 400 problem naming the field", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const key = yield* createKey({ by: w.alice, operators: [w.alpha] })
        const cases: Record<string, string> = {
          "date_from=2026-13-01": "date_from",
          "date_from=2026-02-30": "date_from",
          "date_to=21-11-2026": "date_to",
          "date_to=2026-11-21T00:00:00Z": "date_to",
          "date_from=2026-12-02&date_to=2026-12-01": "date_from",
          "updated_since=2026-11-21": "updated_since",
          "updated_since=2026-11-21T10:00:00": "updated_since",
          "updated_since=yesterday": "updated_since",
          "updated_since=2026-11-21T25:00:00Z": "updated_since",
          "status=confirmed": "status",
          "status=HOLD": "status",
          "limit=1000": "limit",
          "limit=1&limit=2": "limit"
        }
        for (const [query, field] of Object.entries(cases)) {
          const res = yield* get(`/api/v1/bookings?${query}`, key.token)
          expect(res.status, query).toBe(400)
          expect(res.headers.get("content-type")).toBe("application/problem+json")
          expect(res.body.invalid_params.map((p: any) => p.name), query).toContain(field)
          expect(res.body.request_id).toBeTruthy()
        }
        // One entry per parameter, with the rule in words.
        const status = yield* get("/api/v1/bookings?status=RESERVED&limit=0", key.token)
        expect(status.body.invalid_params).toEqual([
          { name: "status", reason: "must be one of CONFIRMED, CANCELLED, REFUNDED" }
        ])
        const notUuid = yield* get("/api/v1/bookings/12345", key.token)
        expect(notUuid.status).toBe(400)
        expect(notUuid.body.invalid_params[0].name).toBe("id")
      }))

    it.effect("unknown routes and methods are 404 problems", () =>
      Effect.gen(function*() {
        for (const path of ["/api/v1/nope", "/api/v2/bookings", "/", "/api/v1/bookings/x/y"]) {
          const res = yield* get(path)
          expect(res.status, path).toBe(404)
          expect(res.headers.get("content-type")).toBe("application/problem+json")
          expect(res.body.request_id).toBe(res.headers.get("x-request-id"))
        }
      }))
  })
})

layer(testServer(), { excludeTestServices: true, timeout: 120_000 })("GET /api/v1/bookings/{id}", (it) => {
  it.effect("shows the detail fields: provider reference, payment strategy and pay-later block, commission", () =>
    Effect.gen(function*() {
      const w = yield* makeWorld
      const key = yield* createKey({ by: w.alice, operators: [w.alpha] })
      const payLater = yield* insertBooking({
        operatorId: w.alpha,
        providerReference: "BKN-1234",
        payLater: {
          status: "upcoming",
          amountMinor: 80000,
          currency: "NOK",
          chargeAt: new Date("2026-12-01T09:00:00Z"),
          paidAt: null
        },
        commission: { amountMinor: 15000, ratePercent: 12.5, currency: "NOK", status: "pending" }
      })
      const payNow = yield* insertBooking({ operatorId: w.alpha, currency: "EUR", amountMinor: 4500 })
      const res = yield* get(`/api/v1/bookings/${payLater}`, key.token)
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({
        id: payLater,
        status: "CONFIRMED",
        provider_reference: "BKN-1234",
        payment: {
          strategy: "pay_later",
          pay_later: {
            status: "upcoming",
            amount_minor: 80000,
            currency: "NOK",
            charge_at: "2026-12-01T09:00:00.000Z",
            paid_at: null
          }
        },
        commission: { amount_minor: 15000, rate_percent: 12.5, currency: "NOK", status: "pending" }
      })
      const now = yield* get(`/api/v1/bookings/${payNow}`, key.token)
      expect(now.body).toMatchObject({
        currency: "EUR",
        amount_minor: 4500,
        provider_reference: null,
        payment: { strategy: "pay_now", pay_later: null },
        commission: null
      })
    }))
})
