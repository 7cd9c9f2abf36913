/**
 * The demo catalogue through the API: the demo dataset seeded as `npm start` seeds it, linked to a
 * Bókun sandbox as the demo links it, then read with the demo's `tours:read` key.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TourSeason } from "../../../src/catalogue/TourSeason.js"
import { setUpDemoBookingSystem } from "../../../src/demo/bookingSystem.js"
import { deskCardTerminals, setUpDemoMerchants } from "../../../src/demo/paymentProvider.js"
import { seedDemo } from "../../../src/demo/seed.js"
import { addDays, localDayAt } from "../../../src/domain/localDay.js"
import { BookingSystemAccounts } from "../../../src/operators/BookingSystemAccounts.js"
import { PublishableKeys } from "../../../src/partner/auth/PublishableKeys.js"
import { QuickbookKeys } from "../../../src/quickbook/terminals/QuickbookKeys.js"
import { startSandbox } from "../../../src/sandbox/bokun/index.js"
import { startSandbox as startPaymentSandbox } from "../../../src/sandbox/surfboard/index.js"
import { createKey } from "../../support/fixtures.js"
import { call, get } from "../../support/http.js"
import { conforms, dereferencedSpec } from "../../support/openapi.js"
import { testServer } from "../../support/server.js"
import { violations } from "../../support/xss.js"

layer(testServer(), { excludeTestServices: true, timeout: 180_000 })("demo catalogue", (it) => {
  it.effect("the demo's tours:read key reads fjordexplorer.no in English and bokmål; Lisbon in Portuguese; ids from the sandbox", () =>
    Effect.scoped(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const demo = yield* sql.withTransaction(seedDemo).pipe(
        Effect.provide([PublishableKeys.Default, QuickbookKeys.Default]),
        Effect.orDie
      )
      const sandbox = yield* startSandbox({ port: 0 })
      yield* setUpDemoBookingSystem(sandbox).pipe(Effect.provide(BookingSystemAccounts.Default), Effect.orDie)
      // Every start runs it again: nothing changes the second time.
      yield* setUpDemoBookingSystem(sandbox).pipe(Effect.provide(BookingSystemAccounts.Default), Effect.orDie)
      const spec = yield* dereferencedSpec

      const key = demo.keys.find((k) => k.name === "Demo: tours:read")!
      expect(key.scopes).toEqual(["tours:read"])
      const list = yield* get("/api/v1/tours", key.secret)
      conforms(spec, "get", "/api/v1/tours", list)
      expect(list.body.data.map((t: any) => t.title)).toEqual([
        "Oslofjord Sightseeing Cruise",
        "Fjord & Fortress Kayak",
        "Whale Safari from Tromsø",
        "Northern Lights Chase"
      ])
      const [cruise, kayak, whale] = list.body.data
      const fjord = { name: "Fjord Explorer AS", legal_name: "Fjord Explorer AS", org_number: "912345678" }
      expect(cruise).toMatchObject({
        operator: { ...fjord, is_seller: true, is_host: true },
        seller: fjord,
        locale: "en"
      })
      expect(cruise.photos[0]).toMatch(/^https:\/\/picsum\.photos\/seed\/oslofjord-1\//)
      // Resold by Fjord Explorer: Arctic Whale Safari runs it, Fjord Explorer sells it.
      expect(whale).toMatchObject({
        operator: {
          name: "Arctic Whale Safari AS",
          legal_name: "Arctic Whale Safari AS",
          org_number: "923456789",
          is_seller: false,
          is_host: false
        },
        seller: fjord,
        rating: { average: 4.8, count: 532 }
      })
      // The site's publishable key reads the same catalogue from a page on localhost:8080 (examples/).
      const pk = demo.publishable_keys.find((k) => k.site === "fjordexplorer.no")!
      expect(pk.allowed_origins).toContain("http://localhost:8080")
      const widget = yield* get(`/api/v1/tours?key=${pk.key}`, undefined, { origin: "http://localhost:8080" })
      expect(widget.body.data.map((t: any) => t.id)).toEqual(list.body.data.map((t: any) => t.id))
      expect(widget.headers.get("access-control-allow-origin")).toBe("http://localhost:8080")
      // The demo's quickbook test key and desk terminal sell Fjord Explorer's tours on its site, resold ones included.
      const desk = demo.quickbook.terminals.find((t) => t.active)!
      const deskKey = demo.quickbook.keys[0]!
      expect(deskKey.secret.startsWith("svcqb_test_")).toBe(true)
      const deskTours = yield* get("/api/quickbook/v1/tours", deskKey.secret, { "quickbook-terminal": desk.id })
      expect(deskTours.status, deskTours.text).toBe(200)
      // Its own tours on fjordexplorer.no and Arctic Whale Safari's, which it resells there.
      expect([...new Set(deskTours.body.tours.map((t: any) => t.operatorName))].sort()).toEqual(
        ["Arctic Whale Safari AS", "Fjord Explorer AS"]
      )
      expect(deskTours.body.tours.map((t: any) => t.tourName)).toContain("Whale Safari from Tromsø")
      // The demo's merchants are sandboxes and its desk takes card payments on Fjord Explorer's
      // merchant's card terminal (set at start): the desk quotes with the test key.
      const payments = yield* startPaymentSandbox({ port: 0 })
      yield* setUpDemoMerchants(payments).pipe(Effect.orDie)
      const cards = yield* deskCardTerminals(payments, demo.quickbook.terminals.map((t) => t.id)).pipe(Effect.orDie)
      const [fjordMerchant] = yield* sql<{ merchant_id: string; sandbox: boolean }>`
        SELECT a.merchant_id, a.sandbox FROM operator_payment_accounts a JOIN operators o ON o.id = a.operator_id
        WHERE o.name = 'Fjord Explorer AS'`
      expect(fjordMerchant!.sandbox).toBe(true)
      const [accounts] = yield* sql<
        { all_sandbox: boolean }
      >`SELECT bool_and(sandbox) AS all_sandbox FROM booking_system_accounts`
      expect(accounts!.all_sandbox).toBe(true)
      const card = (yield* payments.findMerchant(fjordMerchant!.merchant_id))!.terminalId
      expect(card).toEqual(expect.any(String))
      expect(cards.get(desk.id)).toBe(card)
      const deskCruise = deskTours.body.tours.find((t: any) => t.tourName === "Oslofjord Sightseeing Cruise")
      const later = addDays(localDayAt("Europe/Oslo", new Date()), 10)
      const slots = yield* get(`/api/quickbook/v1/tours/${deskCruise.activityId}/slots?date=${later}`, deskKey.secret, {
        "quickbook-terminal": desk.id
      })
      const open = slots.body.slots.find((x: any) => !x.soldOut && (x.seatsLeft === null || x.seatsLeft > 0))
      expect(open, slots.text).toBeDefined()
      const quoted = yield* call("/api/quickbook/v1/quote", {
        method: "POST",
        key: deskKey.secret,
        headers: { "quickbook-terminal": desk.id },
        body: {
          activityId: deskCruise.activityId,
          start: { date: later, time: open.time },
          guests: [{ type: open.guests[0].type, count: 1 }]
        }
      })
      expect(quoted.status, quoted.text).toBe(200)
      expect(quoted.body.cartLine.payment.merchantId).toBe(fjordMerchant!.merchant_id)
      const closed = demo.quickbook.terminals.find((t) => !t.active)!
      const closedRes = yield* get("/api/quickbook/v1/tours", deskKey.secret, { "quickbook-terminal": closed.id })
      expect(closedRes.status).toBe(403)
      expect(closedRes.body.error.code).toBe("terminal_not_registered")
      const nb = (yield* get("/api/v1/tours?locale=nb", key.secret)).body.data
      expect(nb.map((t: any) => t.locale)).toEqual(["nb", "nb", "nb", "nb"])
      expect(nb[2].title).toBe("Hvalsafari fra Tromsø")

      const products = yield* sql<{ title: string; booking_system_product_id: string | null }>`
        SELECT title, booking_system_product_id FROM tours ORDER BY created_at`
      const productOf = (title: string) => products.find((p) => p.title === title)!.booking_system_product_id
      const categories = yield* sql<{ id: number; product_id: number; title: string }>`
        SELECT id, product_id, title FROM bokun_sandbox.pricing_categories ORDER BY position, id`
      const rates = yield* sql<{ id: number; product_id: number; title: string }>`
        SELECT id, product_id, title FROM bokun_sandbox.rates ORDER BY position, id`
      for (const [locale, names] of [["en", ["Adult", "Child"]], ["nb", ["Voksen", "Barn"]]] as const) {
        const detail = yield* get(`/api/v1/tours/${cruise.id}?locale=${locale}`, key.secret)
        conforms(spec, "get", "/api/v1/tours/{id}", detail)
        const product = Number(productOf("Oslofjord Sightseeing Cruise"))
        expect(detail.body.pricing_categories.map((c: any) => [c.id, c.title])).toEqual(
          categories.filter((c) => c.product_id === product).map((c, i) => [String(c.id), names[i]])
        )
        expect(detail.body.rates.map((r: any) => r.id)).toEqual(
          rates.filter((r) => r.product_id === product).map((r) => String(r.id))
        )
        expect(detail.body.linked_products).toEqual([
          { label: "Paddle it yourself: Fjord & Fortress Kayak", language: null, tour_id: kayak.id }
        ])
        expect(detail.body.departure_times).toEqual(["09:00", "12:30", "16:00"])
        for (const field of ["description_html", "included_html", "excluded_html"]) {
          expect(violations(detail.body[field])).toEqual([])
        }
        expect(detail.body.description_html).toContain("<strong>")
      }
      // The kayak has no booking system: its own ids stay.
      expect((yield* get(`/api/v1/tours/${kayak.id}`, key.secret)).body.pricing_categories.map((c: any) => c.id))
        .toEqual(["adult"])

      const operators = new Map(demo.operators.map((o) => [o.name, o.id]))
      const joao = yield* sql<{ id: string }>`SELECT id FROM users WHERE email = 'joao@tejocruises.pt'`
      const lisboa = yield* createKey({
        by: joao[0]!.id,
        operators: [operators.get("Lisboa Tejo Cruises Lda")!],
        scopes: ["tours:read"]
      })
      const pt = (yield* get("/api/v1/tours?locale=pt-PT", lisboa.token)).body.data
      expect(pt.map((t: any) => [t.title, t.locale])).toEqual([
        ["Pôr do sol à vela no Tejo", "pt"],
        ["Observação de golfinhos em Lisboa", "pt"]
      ])
      expect(pt[0]).toMatchObject({ priced_per_booking: true, operator: { is_host: true } })
      const [draft] = yield* sql<{ id: string }>`SELECT id FROM tours WHERE status = 'draft'`
      expect((yield* get(`/api/v1/tours/${draft!.id}`, lisboa.token)).status).toBe(404)
      expect((yield* get(`/api/v1/tours/${pt[0].id}`, key.secret)).status).toBe(404)

      // The demo computes from_price and season at start, after the mirror: the linked tours show
      // the sandbox's lowest adult price and their first bookable day; the kayak has no booking system.
      const season = yield* Effect.flatMap(TourSeason, (s) => s.refresh()).pipe(
        Effect.provide(TourSeason.Default.pipe(Layer.provide(BookingSystemAccounts.Default)))
      )
      expect(season).toMatchObject({ tours: 5, known: 5, unknown: 0 })
      const priced = (yield* get("/api/v1/tours", key.secret)).body.data
      conforms(spec, "get", "/api/v1/tours", { ...list, body: { data: priced, next_cursor: null } })
      const lowestAdult = (title: string) =>
        sql<{ amount: number }>`
          SELECT min(p.amount_minor)::int AS amount FROM bokun_sandbox.prices p
          JOIN bokun_sandbox.pricing_categories c ON c.id = p.pricing_category_id AND c.is_default
          WHERE c.product_id = ${Number(productOf(title))}`.pipe(Effect.map((rows) => rows[0]!.amount))
      const today = localDayAt("Europe/Oslo", new Date())
      for (const t of priced.filter((t: any) => t.title !== "Fjord & Fortress Kayak")) {
        expect(t.from_price, t.title).toEqual({ amount_minor: yield* lowestAdult(t.title), currency: "NOK" })
        expect(t.season.known, t.title).toBe(true)
        // Today and the next three days are sold out in the demo.
        expect(t.season.next_available_date > addDays(today, 2), t.title).toBe(true)
      }
      expect(priced.find((t: any) => t.title === "Fjord & Fortress Kayak")).toMatchObject({
        from_price: null,
        season: { known: false, next_available_date: null }
      })
    })))
})
