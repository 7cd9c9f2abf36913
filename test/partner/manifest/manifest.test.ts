import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Operators } from "../../../src/operators/Operators.js"
import { createKey, insertBooking, makeWorld } from "../../support/fixtures.js"
import { get } from "../../support/http.js"
import { insertAccount, insertRow, markSynced, setCheckIn } from "../../support/mirror.js"
import { conforms, dereferencedSpec } from "../../support/openapi.js"
import { testServer } from "../../support/server.js"

const manifest = (date: string, key: string, partnerId?: string) =>
  Effect.map(get(`/api/v1/manifest?date=${date}${partnerId ? `&partner_id=${partnerId}` : ""}`, key), (res) => {
    expect(res.status, res.text).toBe(200)
    return res.body
  })

const guestsOf = (departure: any): Array<string> => departure.bookings.map((r: any) => r.guest.name)
const allRowIds = (body: any): Array<string> =>
  [...body.departures.flatMap((d: any) => d.bookings), ...body.cancelled].map((r: any) => r.id)

layer(testServer(), { excludeTestServices: true, timeout: 120_000 })("GET /api/v1/manifest", (it) => {
  it.effect("shows every row field and groups live rows into departures with passenger totals", () =>
    Effect.gen(function*() {
      const w = yield* makeWorld
      const account = yield* insertAccount([w.alpha])
      const day = "2026-12-01"
      const sold = yield* insertBooking({ operatorId: w.alpha, experienceDate: day })
      const [{ code }] = yield* Effect.flatMap(
        SqlClient.SqlClient,
        (sql) =>
          sql<{ code: string }>`SELECT confirmation_code AS code FROM bookings WHERE id = ${sold}`.pipe(Effect.orDie)
      )
      const row = (input: Omit<Parameters<typeof insertRow>[0], "accountId" | "operatorId" | "date">) =>
        insertRow({ accountId: account, operatorId: w.alpha, date: day, ...input })

      const nora = yield* row({
        guestName: "Nora Lie",
        guestEmail: "nora@example.com",
        guestPhone: null,
        participants: 3,
        pax: [{ pricingCategoryId: "11", title: "Adult", quantity: 2 }, {
          pricingCategoryId: "12",
          title: "Child",
          quantity: 1
        }],
        reference: "BKN-1001",
        serviceBookingId: sold,
        externalReference: code,
        channel: { class: "service", source: "fjordexplorer.no", title: "Our checkout" },
        pickupPlace: "Hotel Continental",
        pickupTime: "09:40",
        paymentStatus: "PAID"
      })
      const ola = yield* row({
        guestName: "Ola Nordmann",
        participants: 2,
        externalReference: "GYG-77",
        reference: "BKN-1002",
        channel: { class: "ota", source: "getyourguide", title: "GetYourGuide" },
        pax: null,
        paymentStatus: null
      })
      const kari = yield* row({
        guestName: "Kari",
        participants: 4,
        externalReference: null,
        status: "RESERVED",
        pickupTime: "09:30"
      })
      const family = yield* row({ guestName: "Family", participants: 5, rateId: "r-2", rateTitle: "Family" })
      const sunset = yield* row({
        guestName: "Sunset",
        participants: 1,
        startTime: "18:00",
        productId: "p-2",
        productTitle: "Sunset Cruise"
      })
      const gone = yield* row({ guestName: "Gone", participants: 6, status: "CANCELLED" })
      yield* setCheckIn(nora, "checked_in", 2)
      yield* setCheckIn(ola, "no_show")
      yield* setCheckIn(family, "checked_in")
      yield* setCheckIn(gone, "checked_in")
      const key = yield* createKey({
        by: w.alice,
        operators: [w.alpha],
        scopes: ["manifest:read", "guests.contact:read"]
      })

      const body = yield* manifest(day, key.token)
      expect(body.date).toBe(day)
      expect(body.timezone).toBe("Europe/Oslo")
      expect(body.totals).toEqual({ departures: 3, bookings: 5, passengers: 15, checked_in: 7, no_show: 2 })
      expect(body.departures.map((d: any) => ({ ...d, bookings: guestsOf(d) }))).toEqual([
        {
          start_time: "10:00",
          timezone: "Europe/Oslo",
          product_title: "Fjord Cruise",
          rate_title: "Family",
          passengers: 5,
          checked_in: 5,
          no_show: 0,
          bookings: ["Family"]
        },
        {
          start_time: "10:00",
          timezone: "Europe/Oslo",
          product_title: "Fjord Cruise",
          rate_title: "Standard",
          passengers: 9,
          checked_in: 2,
          no_show: 2,
          bookings: ["Kari", "Nora Lie", "Ola Nordmann"]
        },
        {
          start_time: "18:00",
          timezone: "Europe/Oslo",
          product_title: "Sunset Cruise",
          rate_title: "Standard",
          passengers: 1,
          checked_in: 0,
          no_show: 0,
          bookings: ["Sunset"]
        }
      ])
      const [k, n, o] = body.departures[1].bookings
      expect(n).toEqual({
        id: nora,
        reference: "BKN-1001",
        confirmation_code: code,
        status: "CONFIRMED",
        partner: { id: w.alpha, name: `Alpha Tours ${w.tag}` },
        channel: { class: "service", source: "fjordexplorer.no", title: "Our checkout" },
        participants: 3,
        pax_breakdown: [{ title: "Adult", quantity: 2 }, { title: "Child", quantity: 1 }],
        guest: { name: "Nora Lie", email: "nora@example.com", phone: null },
        pickup: { place: "Hotel Continental", time: "09:40" },
        payment_status: "PAID",
        check_in: { status: "checked_in", present: 2 }
      })
      expect(o).toMatchObject({
        id: ola,
        confirmation_code: "GYG-77",
        pax_breakdown: null,
        pickup: null,
        payment_status: null,
        channel: { class: "ota", source: "getyourguide", title: "GetYourGuide" },
        check_in: { status: "no_show", present: null }
      })
      expect(k).toMatchObject({
        id: kari,
        status: "RESERVED",
        confirmation_code: null,
        pickup: { place: null, time: "09:30" },
        check_in: { status: null, present: null }
      })
      expect(body.departures[0].bookings[0].check_in).toEqual({ status: "checked_in", present: null })
      expect(body.departures[2].bookings[0].id).toBe(sunset)
      expect(body.cancelled.map((r: any) => r.id)).toEqual([gone])
      expect(body.cancelled[0]).toMatchObject({
        status: "CANCELLED",
        participants: 6,
        check_in: { status: "checked_in" }
      })
      // Our own booking's code wins over the seller's reference on a row the service sold.
      yield* Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql`UPDATE manifest_rows SET external_reference = 'SELLER-REF' WHERE id = ${nora}`.pipe(Effect.orDie)
      )
      expect((yield* manifest(day, key.token)).departures[1].bookings[1].confirmation_code).toBe(code)
    }))

  it.effect("guest email and phone keys are present only with guests.contact:read", () =>
    Effect.gen(function*() {
      const w = yield* makeWorld
      const account = yield* insertAccount([w.alpha])
      yield* insertRow({
        accountId: account,
        operatorId: w.alpha,
        date: "2026-12-02",
        guestName: "Mia",
        guestEmail: "mia@example.com",
        guestPhone: "+4740000000"
      })
      yield* insertRow({
        accountId: account,
        operatorId: w.alpha,
        date: "2026-12-02",
        guestName: "Nils",
        guestEmail: null,
        guestPhone: null
      })
      yield* insertRow({
        accountId: account,
        operatorId: w.alpha,
        date: "2026-12-02",
        guestName: "Old",
        status: "CANCELLED"
      })
      const plain = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["manifest:read"] })
      const contact = yield* createKey({
        by: w.alice,
        operators: [w.alpha],
        scopes: ["manifest:read", "guests.contact:read"]
      })

      const raw = yield* get("/api/v1/manifest?date=2026-12-02", plain.token)
      const rows = [...raw.body.departures[0].bookings, ...raw.body.cancelled]
      expect(rows).toHaveLength(3)
      for (const r of rows) expect(Object.keys(r.guest)).toEqual(["name"])
      expect(raw.text).not.toContain("example.com")
      expect(raw.text).not.toContain("+47")

      const withContact = yield* manifest("2026-12-02", contact.token)
      expect(withContact.departures[0].bookings.map((r: any) => r.guest)).toEqual([
        { name: "Mia", email: "mia@example.com", phone: "+4740000000" },
        { name: "Nils", email: null, phone: null }
      ])
      expect(withContact.cancelled[0].guest).toEqual({ name: "Old", email: "guest@example.com", phone: "+4712345678" })
    }))

  describe("local departure days", () => {
    it.effect("spring forward (2026-03-29 Europe/Oslo): 01:30, 02:30 and 03:00 are labels that sort and group as written", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const account = yield* insertAccount([w.alpha])
        const at = (date: string, startTime: string, guestName: string) =>
          insertRow({ accountId: account, operatorId: w.alpha, date, startTime, guestName })
        yield* at("2026-03-29", "03:00", "C")
        yield* at("2026-03-29", "02:30", "B2") // does not exist on the wall clock that night
        yield* at("2026-03-29", "01:30", "A")
        yield* at("2026-03-29", "02:30", "B1")
        yield* at("2026-03-28", "23:30", "day before")
        yield* at("2026-03-30", "00:30", "day after")
        const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["manifest:read"] })
        const body = yield* manifest("2026-03-29", key.token)
        expect(body.departures.map((d: any) => [d.start_time, guestsOf(d)])).toEqual([
          ["01:30", ["A"]],
          ["02:30", ["B1", "B2"]],
          ["03:00", ["C"]]
        ])
        expect(body.totals).toMatchObject({ departures: 3, bookings: 4, passengers: 8 })
      }))

    it.effect("fall back (2026-10-25 Europe/Oslo): the ambiguous 02:30 is one departure per product, in label order", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const account = yield* insertAccount([w.alpha])
        const at = (startTime: string, productId: string, productTitle: string, guestName: string) =>
          insertRow({
            accountId: account,
            operatorId: w.alpha,
            date: "2026-10-25",
            startTime,
            productId,
            productTitle,
            guestName
          })
        yield* at("03:00", "p-1", "Fjord Cruise", "D")
        yield* at("02:30", "p-2", "Night Kayak", "C")
        yield* at("02:30", "p-1", "Fjord Cruise", "B")
        yield* at("01:30", "p-1", "Fjord Cruise", "A")
        yield* at("02:30", "p-1", "Fjord Cruise", "B0")
        const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["manifest:read"] })
        const body = yield* manifest("2026-10-25", key.token)
        expect(body.departures.map((d: any) => [d.start_time, d.product_title, guestsOf(d)])).toEqual([
          ["01:30", "Fjord Cruise", ["A"]],
          ["02:30", "Fjord Cruise", ["B", "B0"]],
          ["02:30", "Night Kayak", ["C"]],
          ["03:00", "Fjord Cruise", ["D"]]
        ])
      }))

    it.effect("near midnight, in each operator's own zone (Europe/Lisbon and Europe/Oslo on one key)", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const admin = yield* Operators
        yield* admin.setMembership(w.cetus, w.alice, "admin").pipe(Effect.orDie)
        const oslo = yield* insertAccount([w.alpha], "Oslo account")
        const lisbon = yield* insertAccount([w.cetus], "Lisbon account")
        const d = "2026-12-05"
        const o = (date: string, startTime: string, guestName: string) =>
          insertRow({ accountId: oslo, operatorId: w.alpha, date, startTime, guestName, timezone: "Europe/Oslo" })
        const l = (date: string, startTime: string, guestName: string) =>
          insertRow({
            accountId: lisbon,
            operatorId: w.cetus,
            date,
            startTime,
            guestName,
            timezone: "Europe/Lisbon",
            productId: "lx-1",
            productTitle: "Tejo Cruise"
          })
        yield* o(d, "23:59", "Oslo 23:59")
        yield* o("2026-12-06", "00:00", "Oslo next day 00:00")
        yield* o("2026-12-04", "23:59", "Oslo day before 23:59")
        yield* l(d, "00:00", "Lisbon 00:00")
        yield* l(d, "23:59", "Lisbon 23:59")
        yield* l("2026-12-06", "00:00", "Lisbon next day 00:00")
        yield* l(d, "10:00", "Lisbon 10:00")
        yield* o(d, "10:00", "Oslo 10:00")
        const key = yield* createKey({ by: w.alice, operators: [w.alpha, w.cetus], scopes: ["manifest:read"] })

        const body = yield* manifest(d, key.token)
        // Alpha Tours is the first operator by name.
        expect(body.timezone).toBe("Europe/Oslo")
        expect(body.departures.map((x: any) => [x.start_time, x.timezone, guestsOf(x)])).toEqual([
          ["00:00", "Europe/Lisbon", ["Lisbon 00:00"]],
          ["10:00", "Europe/Oslo", ["Oslo 10:00"]],
          ["10:00", "Europe/Lisbon", ["Lisbon 10:00"]],
          ["23:59", "Europe/Oslo", ["Oslo 23:59"]],
          ["23:59", "Europe/Lisbon", ["Lisbon 23:59"]]
        ])
        const lisbonOnly = yield* manifest(d, key.token, w.cetus)
        expect(lisbonOnly.timezone).toBe("Europe/Lisbon")
        expect(lisbonOnly.departures.flatMap(guestsOf)).toEqual(["Lisbon 00:00", "Lisbon 10:00", "Lisbon 23:59"])
        const next = yield* manifest("2026-12-06", key.token)
        expect(next.departures.flatMap(guestsOf)).toEqual(["Oslo next day 00:00", "Lisbon next day 00:00"])
      }))
  })

  describe("visibility", () => {
    it.effect("another operator's rows never appear; partner_id outside the key is 404", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const mine = yield* insertAccount([w.alpha])
        const theirs = yield* insertAccount([w.cetus])
        const a = yield* insertRow({ accountId: mine, operatorId: w.alpha, date: "2026-12-03" })
        const c = yield* insertRow({ accountId: theirs, operatorId: w.cetus, date: "2026-12-03" })
        const c2 = yield* insertRow({ accountId: theirs, operatorId: w.cetus, date: "2026-12-03", status: "CANCELLED" })
        const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["manifest:read"] })
        expect(allRowIds(yield* manifest("2026-12-03", key.token))).toEqual([a])
        const carol = yield* createKey({ by: w.carol, operators: [w.cetus], scopes: ["manifest:read"] })
        expect(allRowIds(yield* manifest("2026-12-03", carol.token)).sort()).toEqual([c, c2].sort())
        for (const other of [w.cetus, "not-a-uuid", "00000000-0000-4000-8000-000000000000"]) {
          const res = yield* get(`/api/v1/manifest?date=2026-12-03&partner_id=${other}`, key.token)
          expect(res.status).toBe(404)
          expect(res.headers.get("content-type")).toBe("application/problem+json")
          expect(res.body.detail).toContain("not found, or not yours")
        }
      }))

    it.effect("a key over several operators shows all of them; partner_id narrows to one", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const alphaAccount = yield* insertAccount([w.alpha])
        const betaAccount = yield* insertAccount([w.beta])
        const a = yield* insertRow({ accountId: alphaAccount, operatorId: w.alpha, date: "2026-12-04", guestName: "A" })
        const b = yield* insertRow({ accountId: betaAccount, operatorId: w.beta, date: "2026-12-04", guestName: "B" })
        const key = yield* createKey({ by: w.bob, operators: [w.alpha, w.beta], scopes: ["manifest:read"] })
        const both = yield* manifest("2026-12-04", key.token)
        expect(both.departures).toHaveLength(2)
        expect(allRowIds(both).sort()).toEqual([a, b].sort())
        expect(both.departures.map((d: any) => d.bookings[0].partner.id).sort()).toEqual([w.alpha, w.beta].sort())
        expect(allRowIds(yield* manifest("2026-12-04", key.token, w.beta))).toEqual([b])
        expect(allRowIds(yield* manifest("2026-12-04", key.token, w.alpha))).toEqual([a])
      }))

    it.effect("rows of an account shared by several operators appear once", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const shared = yield* insertAccount([w.alpha, w.beta], "shared")
        const a = yield* insertRow({ accountId: shared, operatorId: w.alpha, date: "2026-12-07", participants: 3 })
        const b = yield* insertRow({
          accountId: shared,
          operatorId: w.beta,
          date: "2026-12-07",
          participants: 4,
          productId: "p-9",
          productTitle: "Whale Safari"
        })
        yield* markSynced(shared, "2026-12-07", new Date("2026-12-06T20:00:00Z"))
        const key = yield* createKey({ by: w.bob, operators: [w.alpha, w.beta], scopes: ["manifest:read"] })
        const body = yield* manifest("2026-12-07", key.token)
        expect(allRowIds(body).sort()).toEqual([a, b].sort())
        expect(body.totals).toMatchObject({ departures: 2, bookings: 2, passengers: 7 })
        expect(body.synced_at).toBe("2026-12-06T20:00:00.000Z")
        // Each row belongs to the operator of its product.
        expect(allRowIds(yield* manifest("2026-12-07", key.token, w.beta))).toEqual([b])
      }))
  })

  it.effect("synced_at is the oldest refresh of the day over the accounts in view, null when one never refreshed it", () =>
    Effect.gen(function*() {
      const w = yield* makeWorld
      const key = yield* createKey({ by: w.bob, operators: [w.alpha, w.beta], scopes: ["manifest:read"] })
      const day = "2026-12-08"
      const syncedAt = (partnerId?: string) => Effect.map(manifest(day, key.token, partnerId), (b) => b.synced_at)
      // No account at all: nothing was ever mirrored.
      expect(yield* syncedAt()).toBeNull()
      const alphaAccount = yield* insertAccount([w.alpha])
      const betaAccount = yield* insertAccount([w.beta])
      expect(yield* syncedAt()).toBeNull()
      yield* markSynced(alphaAccount, day, new Date("2026-12-08T06:00:00Z"))
      yield* markSynced(betaAccount, "2026-12-09", new Date("2026-12-08T07:00:00Z"))
      expect(yield* syncedAt()).toBeNull()
      expect(yield* syncedAt(w.alpha)).toBe("2026-12-08T06:00:00.000Z")
      yield* markSynced(betaAccount, day, new Date("2026-12-08T04:00:00Z"))
      expect(yield* syncedAt()).toBe("2026-12-08T04:00:00.000Z")
      expect(yield* syncedAt(w.alpha)).toBe("2026-12-08T06:00:00.000Z")
      // Another operator's account never counts.
      const cetusAccount = yield* insertAccount([w.cetus])
      yield* markSynced(cetusAccount, day, new Date("2026-12-01T00:00:00Z"))
      expect(yield* syncedAt()).toBe("2026-12-08T04:00:00.000Z")
    }))

  describe("errors", () => {
    it.effect("date is required and must be a real YYYY-MM-DD day: 400 naming the rule", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["manifest:read"] })
        const cases: Array<[string, string]> = [
          ["", "is required"],
          ["?partner_id=" + w.alpha, "is required"],
          ["?date=", "YYYY-MM-DD"],
          ["?date=2026-12-1", "YYYY-MM-DD"],
          ["?date=tomorrow", "YYYY-MM-DD"],
          ["?date=2026-02-30", "real calendar date"],
          ["?date=2026-12-01T00:00:00Z", "YYYY-MM-DD"]
        ]
        for (const [query, rule] of cases) {
          const res = yield* get(`/api/v1/manifest${query}`, key.token)
          expect(res.status, query).toBe(400)
          expect(res.headers.get("content-type")).toBe("application/problem+json")
          expect(res.body.invalid_params, query).toEqual([{ name: "date", reason: expect.stringContaining(rule) }])
        }
      }))

    it.effect("403 without manifest:read, 401 without a key", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const key = yield* createKey({
          by: w.alice,
          operators: [w.alpha],
          scopes: ["bookings:read", "guests.contact:read"]
        })
        const res = yield* get("/api/v1/manifest?date=2026-12-01", key.token)
        expect(res.status).toBe(403)
        expect(res.body.scope).toBe("manifest:read")
        expect((yield* get("/api/v1/manifest?date=2026-12-01")).status).toBe(401)
      }))
  })

  it.effect("live responses match the OpenAPI document", () =>
    Effect.gen(function*() {
      const spec = yield* dereferencedSpec
      const w = yield* makeWorld
      const account = yield* insertAccount([w.alpha])
      const day = "2026-12-10"
      const sold = yield* insertBooking({ operatorId: w.alpha, experienceDate: day })
      const r1 = yield* insertRow({
        accountId: account,
        operatorId: w.alpha,
        date: day,
        serviceBookingId: sold,
        pickupPlace: "Pier 3"
      })
      const r2 = yield* insertRow({
        accountId: account,
        operatorId: w.alpha,
        date: day,
        startTime: null,
        productTitle: null,
        rateId: null,
        rateTitle: null,
        guestName: null,
        pax: null
      })
      yield* insertRow({ accountId: account, operatorId: w.alpha, date: day, status: "CANCELLED", guestEmail: null })
      yield* insertRow({
        accountId: account,
        operatorId: w.alpha,
        date: day,
        status: "RESERVED",
        participants: 0,
        pax: []
      })
      yield* setCheckIn(r1, "checked_in", 1)
      yield* setCheckIn(r2, "no_show")
      yield* markSynced(account, day, new Date())
      const contact = yield* createKey({
        by: w.alice,
        operators: [w.alpha],
        scopes: ["manifest:read", "guests.contact:read"]
      })
      const plain = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["manifest:read"] })
      const noScope = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["bookings:read"] })

      const cases: Array<[string, string | undefined, number]> = [
        [`?date=${day}`, contact.token, 200],
        [`?date=${day}`, plain.token, 200],
        [`?date=2026-12-11`, plain.token, 200],
        [`?date=${day}&partner_id=${w.alpha}`, plain.token, 200],
        ["", plain.token, 400],
        ["?date=2026-13-01", plain.token, 400],
        [`?date=${day}`, noScope.token, 403],
        [`?date=${day}&partner_id=${w.cetus}`, plain.token, 404],
        [`?date=${day}`, undefined, 401]
      ]
      for (const [query, key, status] of cases) {
        const res = yield* get(`/api/v1/manifest${query}`, key)
        expect(res.status, query).toBe(status)
        conforms(spec, "get", "/api/v1/manifest", res)
      }
    }))
})
