import SwaggerParser from "@apidevtools/swagger-parser"
import { describe, expect, it, layer } from "@effect/vitest"
import addFormats from "ajv-formats"
import Ajv2020 from "ajv/dist/2020.js"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { partnerOpenApi } from "../../src/partner/openapi.js"
import { DailyLimits } from "../../src/partner/writes/DailyLimits.js"
import { createKey, insertBooking, makeWorld } from "../support/fixtures.js"
import { get, type Reply } from "../support/http.js"
import { checkin } from "../support/manifest.js"
import { insertRows } from "../support/mirror.js"
import { conforms, dereferencedSpec } from "../support/openapi.js"
import { testServer } from "../support/server.js"

layer(testServer(), { excludeTestServices: true, timeout: 120_000 })("OpenAPI document", (it) => {
  it.effect("is valid OpenAPI 3.1 titled Partner API 1.0.0 and lists every endpoint with its statuses", () =>
    Effect.gen(function*() {
      const res = yield* get("/api/v1/openapi.json")
      expect(res.status).toBe(200)
      const doc = res.body
      expect(doc.openapi).toBe("3.1.0")
      expect(doc.info).toMatchObject({ title: "Partner API", version: "1.0.0" })
      yield* Effect.promise(() => SwaggerParser.validate(structuredClone(doc)))

      const expected: Record<string, Array<string>> = {
        "get /api/v1/me": ["200", "400", "401", "429", "500"],
        "get /api/v1/bookings": ["200", "400", "401", "403", "404", "429", "500"],
        "get /api/v1/bookings/{id}": ["200", "400", "401", "403", "404", "429", "500"],
        "get /api/v1/manifest": ["200", "400", "401", "403", "404", "429", "500"],
        "post /api/v1/manifest/{id}/checkin": [
          "200",
          "400",
          "401",
          "403",
          "404",
          "409",
          "413",
          "415",
          "422",
          "429",
          "500",
          "503"
        ],
        "get /api/v1/bookings/{id}/reschedule-options": ["200", "400", "401", "403", "404", "429", "500", "503"],
        "post /api/v1/bookings/{id}/reschedule": [
          "200",
          "400",
          "401",
          "403",
          "404",
          "409",
          "413",
          "415",
          "422",
          "429",
          "500",
          "503"
        ],
        "post /api/v1/bookings/{id}/payment-link": [
          "200",
          "400",
          "401",
          "403",
          "404",
          "409",
          "413",
          "415",
          "422",
          "429",
          "500",
          "503"
        ],
        "post /api/v1/bookings/{id}/cancel": [
          "200",
          "400",
          "401",
          "403",
          "404",
          "409",
          "413",
          "415",
          "422",
          "429",
          "500",
          "503"
        ],
        "get /api/v1/tours": ["200", "400", "401", "403", "404", "429", "500"],
        "get /api/v1/tours/{id}": ["200", "400", "401", "403", "404", "429", "500"],
        "get /api/v1/tours/{id}/availability": ["200", "400", "401", "403", "404", "429", "500"],
        "get /api/v1/sales": ["200", "400", "401", "403", "404", "429", "500"],
        "post /api/v1/collect": ["202", "400", "404", "413", "415", "429", "500"],
        "get /api/v1/analytics/tours": ["200", "400", "401", "403", "404", "429", "500", "503"],
        "get /api/v1/analytics/sites": ["200", "400", "401", "403", "404", "429", "500", "503"],
        "get /api/v1/finance/statements": ["200", "400", "401", "403", "404", "429", "500"],
        "get /api/v1/finance/pay-later": ["200", "400", "401", "403", "404", "429", "500"],
        "get /api/v1/finance/payouts": ["200", "400", "401", "403", "404", "429", "500"],
        "get /api/v1/finance/chargebacks": ["200", "400", "401", "403", "404", "429", "500"],
        "get /api/v1/finance/invoices": ["200", "400", "401", "403", "404", "429", "500"],
        "get /api/v1/finance/invoice-files/{file}": ["200", "400", "404", "500"]
      }
      const scopeOf: Record<string, Array<string>> = {
        "get /api/v1/me": [],
        "get /api/v1/manifest": ["manifest:read"],
        "post /api/v1/manifest/{id}/checkin": ["checkins:write"],
        "get /api/v1/bookings/{id}/reschedule-options": ["bookings.reschedule:write"],
        "post /api/v1/bookings/{id}/reschedule": ["bookings.reschedule:write"],
        "post /api/v1/bookings/{id}/payment-link": ["payment_links:write"],
        "post /api/v1/bookings/{id}/cancel": ["bookings.cancel:write"],
        "get /api/v1/tours": ["tours:read"],
        "get /api/v1/tours/{id}": ["tours:read"],
        "get /api/v1/tours/{id}/availability": ["tours:read"],
        "get /api/v1/sales": ["finance:read"],
        "get /api/v1/analytics/tours": ["analytics:read"],
        "get /api/v1/analytics/sites": ["analytics:read"],
        "get /api/v1/finance/statements": ["finance:read"],
        "get /api/v1/finance/pay-later": ["finance:read"],
        "get /api/v1/finance/payouts": ["finance:read"],
        "get /api/v1/finance/chargebacks": ["finance:read"],
        "get /api/v1/finance/invoices": ["finance:read"]
      }
      const listed = Object.entries<any>(doc.paths).flatMap(([path, item]) =>
        Object.keys(item).map((m) => `${m} ${path}`)
      )
      expect(listed.sort()).toEqual(Object.keys(expected).sort())
      for (const [key, statuses] of Object.entries(expected)) {
        const [method, path] = key.split(" ") as [string, string]
        const op = doc.paths[path][method]
        expect(Object.keys(op.responses).sort(), key).toEqual(statuses.sort())
        // The public collect endpoint takes no key (checked below).
        if (key === "post /api/v1/collect") continue
        // A commission document's file opens with its signed link alone (docs/api/invoices.md).
        if (key === "get /api/v1/finance/invoice-files/{file}") {
          expect(op.security ?? []).toEqual([])
          continue
        }
        const bearer = { bearer: scopeOf[key] ?? ["bookings:read"] }
        // The catalogue also takes a publishable key (query `key`).
        expect(op.security, key).toEqual(path.startsWith("/api/v1/tours") ? [bearer, { publishable: [] }] : [bearer])
        for (const status of statuses.filter((s) => Number(s) >= 400)) {
          expect(Object.keys(op.responses[status].content), `${key} ${status}`).toEqual(["application/problem+json"])
        }
        expect(op.responses["200"].headers["RateLimit-Policy"]).toBeDefined()
        expect(op.responses["429"].headers["Retry-After"]).toBeDefined()
        expect(op.responses["401"].headers["RateLimit-Policy"]).toBeUndefined()
        expect(op.responses["401"].headers["WWW-Authenticate"]).toBeDefined()
      }
      expect(doc.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" })
      const collect = doc.paths["/api/v1/collect"].post
      expect(collect.security ?? []).toEqual([])
      expect(collect.responses["202"].content).toBeUndefined()
      expect(Object.keys(collect.requestBody.content).sort()).toEqual(["application/json", "text/plain"])
      for (const status of ["400", "404", "413", "415", "429"]) {
        expect(Object.keys(collect.responses[status].content), status).toEqual(["application/problem+json"])
      }
      const params = doc.paths["/api/v1/bookings"].get.parameters.map((p: any) => p.name).sort()
      expect(params).toEqual(["cursor", "date_from", "date_to", "limit", "partner_id", "status", "updated_since"])
      const tourParams = doc.paths["/api/v1/tours"].get.parameters.map((p: any) => p.name).sort()
      expect(tourParams).toEqual(["cursor", "limit", "locale", "partner_id"])
      expect(doc.paths["/api/v1/tours/{id}"].get.parameters.map((p: any) => p.name).sort()).toEqual([
        "id",
        "locale",
        "partner_id"
      ])
      const limit = doc.paths["/api/v1/tours"].get.parameters.find((p: any) => p.name === "limit")
      expect(limit.schema).toMatchObject({ type: "integer", minimum: 1, maximum: 100 })
      const availability = doc.paths["/api/v1/tours/{id}/availability"].get.parameters
      expect(availability.map((p: any) => p.name).sort()).toEqual(["from", "id", "partner_id", "pax", "to"])
      const param = (name: string) => availability.find((p: any) => p.name === name)
      expect([param("from").required, param("to").required, param("pax").required ?? false]).toEqual([
        true,
        true,
        false
      ])
      expect(param("from").schema.allOf).toEqual([{ $ref: "#/components/schemas/Date" }])
      expect(doc.components.schemas.Date).toMatchObject({ type: "string", format: "date" })
      expect(param("pax").schema).toMatchObject({ type: "integer", minimum: 1, maximum: 100 })
      const analyticsParams = (path: string) => doc.paths[path].get.parameters.map((p: any) => p.name).sort()
      expect(analyticsParams("/api/v1/analytics/tours")).toEqual([
        "from",
        "granularity",
        "partner_id",
        "surface",
        "to",
        "tour_id"
      ])
      expect(analyticsParams("/api/v1/analytics/sites")).toEqual(["from", "partner_id", "site", "to"])
      const body = doc.components.schemas.TourAvailability
      expect(Object.keys(body.properties).sort()).toEqual(
        ["currency", "days", "departures", "from", "known", "pax", "timezone", "to", "tour_id"]
      )
    }))

  it.effect("live responses match the document: successes, problems and headers", () =>
    Effect.gen(function*() {
      const spec = yield* dereferencedSpec
      const w = yield* makeWorld
      const booking = yield* insertBooking({
        operatorId: w.alpha,
        payLater: { status: "upcoming", amountMinor: 1000, currency: "NOK", chargeAt: new Date(), paidAt: null },
        commission: { amountMinor: 100, ratePercent: 10, currency: "NOK", status: "pending" }
      })
      yield* insertBooking({
        operatorId: w.alpha,
        experienceDate: null,
        startTime: null,
        participants: null,
        guestName: null,
        bookedAt: null
      })
      const contact = yield* createKey({
        by: w.alice,
        operators: [w.alpha],
        scopes: ["bookings:read", "guests.contact:read"]
      })
      const plain = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["bookings:read"] })
      const noScope = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["tours:read"] })

      const cases: Array<[string, string, string | undefined]> = [
        ["/api/v1/me", "/api/v1/me", contact.token],
        ["/api/v1/me", "/api/v1/me", undefined],
        ["/api/v1/bookings", "/api/v1/bookings", contact.token],
        ["/api/v1/bookings", "/api/v1/bookings?limit=1", plain.token],
        ["/api/v1/bookings", "/api/v1/bookings?limit=0", plain.token],
        ["/api/v1/bookings", "/api/v1/bookings", noScope.token],
        ["/api/v1/bookings", `/api/v1/bookings?partner_id=${w.beta}`, plain.token],
        ["/api/v1/bookings/{id}", `/api/v1/bookings/${booking}`, contact.token],
        ["/api/v1/bookings/{id}", `/api/v1/bookings/${booking}`, plain.token],
        ["/api/v1/bookings/{id}", "/api/v1/bookings/00000000-0000-4000-8000-000000000000", plain.token],
        ["/api/v1/bookings/{id}", "/api/v1/bookings/nope", plain.token],
        ["/api/v1/bookings/{id}", `/api/v1/bookings/${booking}`, noScope.token]
      ]
      const statuses = new Set<number>()
      for (const [template, path, key] of cases) {
        const res = yield* get(path, key)
        statuses.add(res.status)
        conforms(spec, "get", template, res)
      }
      expect([...statuses].sort()).toEqual([200, 400, 401, 403, 404])
    }))
})

layer(testServer(), { excludeTestServices: true, timeout: 120_000 })("OpenAPI document: writes", (it) => {
  it.effect("the check-in declares the Idempotency-Key header and Idempotent-Replayed on replayable answers", () =>
    Effect.gen(function*() {
      const doc = (yield* get("/api/v1/openapi.json")).body
      const op = doc.paths["/api/v1/manifest/{id}/checkin"].post
      const header = op.parameters.find((p: any) => p.in === "header")
      expect(header).toMatchObject({ name: "Idempotency-Key", required: true })
      for (const status of ["200", "400", "404", "422"]) {
        expect(op.responses[status].headers["Idempotent-Replayed"], status).toBeDefined()
      }
      expect(op.responses["409"].headers["Idempotent-Replayed"]).toBeUndefined()
      expect(op.responses["429"].headers["Retry-After"]).toBeDefined()
      expect(op.requestBody.required).toBe(true)
    }))

  it.effect("the payment link declares the Idempotency-Key header, an empty body and its result", () =>
    Effect.gen(function*() {
      const raw = (yield* get("/api/v1/openapi.json")).body
      const doc = yield* Effect.promise(() => SwaggerParser.dereference(structuredClone(raw)))
      const op = (doc as any).paths["/api/v1/bookings/{id}/payment-link"].post
      expect(op.parameters.find((p: any) => p.in === "header")).toMatchObject({
        name: "Idempotency-Key",
        required: true
      })
      for (const status of ["200", "400", "404", "422"]) {
        expect(op.responses[status].headers["Idempotent-Replayed"], status).toBeDefined()
      }
      const result = op.responses["200"].content["application/json"].schema
      expect(Object.keys(result.properties).sort()).toEqual([
        "amount_minor",
        "currency",
        "emailed",
        "id",
        "kind",
        "url"
      ])
      expect(result.required.sort()).toEqual(["amount_minor", "currency", "emailed", "id", "kind", "url"])
      expect(result.properties.kind.enum.sort()).toEqual(["deferred_balance", "provider_balance"])
      expect(op.requestBody.required).toBe(true)
      // A JSON object (members ignored), not "any value but null".
      expect(op.requestBody.content["application/json"].schema.type).toBe("object")
    }))

  it.effect("live check-in answers match the document", () =>
    Effect.gen(function*() {
      const raw = (yield* get("/api/v1/openapi.json")).body
      const spec = yield* Effect.promise(() => SwaggerParser.dereference(structuredClone(raw)))
      const w = yield* makeWorld
      const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["checkins:write"] })
      const reader = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["bookings:read"] })
      const limited = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["checkins:write"] })
      yield* Effect.flatMap(DailyLimits, (l) => l.setOverrides(limited.id, { checkins: 0 })).pipe(
        Effect.provide(DailyLimits.Default),
        Effect.orDie
      )
      const [row, other] = yield* insertRows(w.alpha, 2)
      const [cancelled] = yield* insertRows(w.alpha, 1, { status: "CANCELLED" })
      const id = randomUUID()
      const replies: Array<Reply> = [
        yield* checkin(row!, { status: "checked_in", present: 1 }, { key: key.token, idempotencyKey: id }),
        yield* checkin(row!, { status: "checked_in", present: 1 }, { key: key.token, idempotencyKey: id }),
        yield* checkin(row!, { status: "clear" }, { key: key.token }),
        yield* checkin(row!, { status: "checked_in" }, { key: key.token, idempotencyKey: null }),
        yield* checkin(row!, { status: "maybe" }, { key: key.token }),
        yield* checkin(row!, { status: "checked_in" }),
        yield* checkin(row!, { status: "checked_in" }, { key: reader.token }),
        yield* checkin(randomUUID(), { status: "checked_in" }, { key: key.token }),
        yield* checkin(other!, { status: "no_show" }, { key: key.token, idempotencyKey: id }),
        yield* checkin(cancelled!, { status: "no_show" }, { key: key.token }),
        yield* checkin(other!, { status: "no_show" }, { key: limited.token })
      ]
      for (const res of replies) conforms(spec, "post", "/api/v1/manifest/{id}/checkin", res)
      expect([...new Set(replies.map((r) => r.status))].sort()).toEqual([200, 400, 401, 403, 404, 422, 429])
    }))
})

/** The five finance reads and the answer their 200 documents. */
const FINANCE_READS = [
  "/api/v1/finance/payouts",
  "/api/v1/finance/chargebacks",
  "/api/v1/finance/pay-later",
  "/api/v1/finance/statements",
  "/api/v1/finance/invoices"
]

describe("OpenAPI document: finance examples (issue 15)", () => {
  const doc: any = partnerOpenApi()
  const schemas: Record<string, any> = doc.components.schemas
  const refName = (s: any): string | undefined => {
    const ref = s?.$ref ?? (Array.isArray(s?.allOf) && s.allOf.length === 1 ? s.allOf[0].$ref : undefined)
    return typeof ref === "string" ? ref.replace("#/components/schemas/", "") : undefined
  }
  // `examples` (JSON Schema 2020-12), the house style: a bare `example` is DateString's generic day, not the field's.
  const hasOwnExample = (s: any) => Array.isArray(s?.examples) && s.examples.length > 0
  /** Every object schema the five 200 answers reach (by name, or a path for an inline object). */
  const reached = new Map<string, any>()
  const walk = (s: any, at: string) => {
    const name = refName(s)
    if (name !== undefined) {
      if (reached.has(name)) return
      const target = schemas[name]
      if (target?.type === "object") reached.set(name, target)
      return walk(target, name)
    }
    if (s?.type === "object" && s.properties) {
      if (!reached.has(at)) reached.set(at, s)
      for (const [key, prop] of Object.entries<any>(s.properties)) walk(prop, `${at}.${key}`)
    }
    if (s?.items) walk(s.items, `${at}[]`)
    for (const branch of s?.anyOf ?? []) walk(branch, at)
  }
  for (const path of FINANCE_READS) {
    walk(doc.paths[path].get.responses["200"].content["application/json"].schema, `${path} 200`)
  }
  /** A property's example: its own, or the whole example of the schema it refers to (or lists). */
  const exampleOf = (prop: any): boolean => {
    if (hasOwnExample(prop)) return true
    const name = refName(prop) ?? refName(prop?.items)
    return name !== undefined && hasOwnExample(schemas[name])
  }

  it("reaches every finance schema from the five 200 answers", () => {
    expect([...reached.keys()].filter((k) => !k.includes(" ") && !k.includes(".")).sort()).toEqual(
      expect.arrayContaining([
        "Chargeback",
        "ChargebackPage",
        "ChargebackSettlement",
        "CommissionInvoice",
        "FinanceBooking",
        "InvoiceBooking",
        "InvoiceBuyer",
        "InvoiceFiles",
        "InvoiceLine",
        "InvoicePage",
        "InvoicePeriod",
        "InvoiceReference",
        "InvoiceSeller",
        "Partner",
        "PayLaterCharge",
        "PayLaterPage",
        "PayLaterTotal",
        "Payout",
        "PayoutAdjustment",
        "PayoutPage",
        "Statement",
        "StatementEntry",
        "StatementSection",
        "StatementsResponse"
      ])
    )
  })

  it("gives every property of every finance schema an example, and every schema a whole example", () => {
    const missing: Array<string> = []
    for (const [name, schema] of reached) {
      if (!hasOwnExample(schema)) missing.push(`${name} (whole)`)
      for (const [key, prop] of Object.entries<any>(schema.properties)) {
        if (!exampleOf(prop)) missing.push(`${name}.${key}`)
      }
    }
    expect(missing).toEqual([])
  })

  it("documents a whole example of each 200 answer that validates against its schema", async () => {
    const deref: any = await SwaggerParser.dereference(structuredClone(doc))
    const ajv = new (Ajv2020 as any)({ strict: false, allErrors: true })
    ;(addFormats as any)(ajv)
    for (const path of FINANCE_READS) {
      const schema = deref.paths[path].get.responses["200"].content["application/json"].schema
      expect(schema.examples?.length, path).toBeGreaterThan(0)
      const validate = ajv.compile(schema)
      for (const example of schema.examples) {
        expect(validate(example), `${path}: ${JSON.stringify(validate.errors)}`).toBe(true)
      }
    }
    // Each property's own examples fit the property too.
    const bad: Array<string> = []
    const check = (s: any, at: string) => {
      if (s?.type === "object" && s.properties) {
        for (const [key, prop] of Object.entries<any>(s.properties)) {
          if (Array.isArray(prop.examples)) {
            const validate = ajv.compile(prop)
            for (const e of prop.examples) if (!validate(e)) bad.push(`${at}.${key}: ${JSON.stringify(e)}`)
          }
          check(prop, `${at}.${key}`)
        }
      }
      if (s?.items) check(s.items, `${at}[]`)
      for (const branch of s?.anyOf ?? []) check(branch, at)
    }
    for (const path of FINANCE_READS) {
      check(deref.paths[path].get.responses["200"].content["application/json"].schema, path)
    }
    expect(bad).toEqual([])
  })

  it("tells one story: the amounts of the examples add up", () => {
    const [payout] = schemas.Payout.examples
    const adjustments = payout.adjustments.reduce((sum: number, a: any) => sum + a.net_minor, 0)
    for (const a of payout.adjustments) expect(a.net_minor).toBe(a.credit_minor - a.debit_minor)
    expect(payout.sales_minor + payout.refunds_minor - payout.fees_minor - payout.fee_vat_minor + adjustments).toBe(
      payout.payout_minor
    )
    const [chargeback] = schemas.Chargeback.examples
    expect(payout.adjustments.find((a: any) => a.type === "chargeback").debit_minor).toBe(
      chargeback.settled.amount_minor
    )
    expect(payout.adjustments.find((a: any) => a.type === "chargeback_fee").debit_minor).toBe(
      chargeback.settled.fee_minor
    )
    expect(payout.settlement_date).toBe(chargeback.settled_on)

    const [page] = schemas.InvoicePage.examples
    for (const invoice of page.data) {
      const sum = (field: string) => invoice.lines.reduce((s: number, l: any) => s + l[field], 0)
      for (const line of invoice.lines) expect(line.net_minor + line.vat_minor).toBe(line.gross_minor)
      for (const field of ["net_minor", "vat_minor", "gross_minor", "deducted_from_payouts_minor"]) {
        expect(invoice[field], field).toBe(sum(field))
      }
      expect(invoice.net_minor + invoice.vat_minor).toBe(invoice.gross_minor)
      expect(invoice.gross_minor - invoice.deducted_from_payouts_minor).toBe(invoice.payable_minor)
    }

    const [statements] = schemas.StatementsResponse.examples
    for (const statement of statements.statements) {
      for (const section of statement.sections) {
        const sum = (field: string) => section.entries.reduce((s: number, e: any) => s + e[field], 0)
        for (const field of ["gross_minor", "commission_minor", "reserve_fee_minor"]) {
          expect(section[field], field).toBe(sum(field))
        }
        const count = (type: string) => section.entries.filter((e: any) => e.type === type).length
        expect([section.sales, section.cancellations, section.differences]).toEqual([
          count("sale"),
          count("cancellation"),
          count("difference")
        ])
        expect(section.entries_total).toBe(section.entries.length)
      }
    }

    const [payLater] = schemas.PayLaterPage.examples
    for (const total of payLater.totals) {
      const rows = payLater.data.filter((c: any) => c.state === total.state && c.currency === total.currency)
      expect(total.charges).toBe(rows.length)
      expect(total.amount_minor).toBe(rows.reduce((s: number, c: any) => s + c.amount_minor, 0))
    }
    // The same booking across the reads.
    const code = chargeback.booking.confirmation_code
    expect(page.data[0].lines[0].booking.confirmation_code).toBe(code)
    expect(statements.statements[0].sections[0].entries.map((e: any) => e.confirmation_code)).toContain(code)
    expect(payLater.data.map((c: any) => c.booking.confirmation_code)).toContain(code)
  })
})
