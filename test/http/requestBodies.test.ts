/**
 * How both APIs take request bodies and answer requests they cannot take (issue 11, items 4 and
 * 11), over real HTTP: every write endpoint of both APIs refuses a body that is not JSON (415), too
 * large (413, without reading past the limit), or not readable as JSON (400: truncated, not UTF-8,
 * nested too deep), each in its API's error body, with nothing recorded; a UTF-8 byte order mark is
 * dropped; GET and DELETE ignore a body; unknown paths answer 404 and known paths with another
 * method 405 with `Allow`, in the quickbook body with clerk messages in English and Norwegian; and
 * a small fuzz run never gets a 5xx.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import fc from "fast-check"
import { randomUUID } from "node:crypto"
import * as net from "node:net"
import { BODY_LIMIT_BYTES } from "../../src/http/requestBody.js"
import {
  CLERK_MESSAGE_VARIANTS,
  CLERK_MESSAGES,
  invalidFieldMessage,
  REQUEST_MESSAGES,
  unknownEndpointMessage,
  wrongMethodMessage
} from "../../src/quickbook/clerkMessages.js"
import { QuickbookKeys } from "../../src/quickbook/terminals/QuickbookKeys.js"
import { createKey, insertBooking } from "../support/fixtures.js"
import type { Reply } from "../support/http.js"
import { checkinState } from "../support/manifest.js"
import { insertRows } from "../support/mirror.js"
import { paymentsEnv } from "../support/payments.js"
import { BASE, sellingDesk } from "../support/quickbook.js"
import { rawCall, type RawRequest } from "../support/rawHttp.js"
import { TestServer } from "../support/server.js"

const env = paymentsEnv(Effect.succeed({ TOUR_AVAILABILITY_TIMEOUT_MS: "1500" }))

const JSON_TYPE = { "content-type": "application/json" }

/** Both APIs' seven writes, with a key (and terminal) that may call them, on targets of the key's operator. */
const world = Effect.gen(function*() {
  const desk = yield* sellingDesk.pipe(Effect.provide(QuickbookKeys.Default))
  const key = yield* createKey({
    by: desk.w.alice,
    operators: [desk.w.alpha],
    scopes: [
      "bookings:read",
      "checkins:write",
      "payment_links:write",
      "bookings.cancel:write",
      "bookings.reschedule:write"
    ]
  })
  const [row] = yield* insertRows(desk.w.alpha, 1)
  const booking = yield* insertBooking({ operatorId: desk.w.alpha })
  const partner = { authorization: `Bearer ${key.token}` }
  const quickbook = { authorization: `Bearer ${desk.key.token}`, ...desk.headers }
  const writes = [
    { api: "partner", path: `/api/v1/manifest/${row}/checkin`, auth: partner },
    { api: "partner", path: `/api/v1/bookings/${booking}/payment-link`, auth: partner },
    { api: "partner", path: `/api/v1/bookings/${booking}/cancel`, auth: partner },
    { api: "partner", path: `/api/v1/bookings/${booking}/reschedule`, auth: partner },
    { api: "quickbook", path: `${BASE}/quote`, auth: quickbook },
    { api: "quickbook", path: `${BASE}/reserve`, auth: quickbook },
    { api: "quickbook", path: `${BASE}/book`, auth: quickbook }
  ] as const
  /** Whatever a write leaves behind for this key and terminal. */
  const recorded = Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ idempotency: number; audit: number; limits: number; sales: number; payments: number }>`
      SELECT
        (SELECT count(*) FROM idempotency_records WHERE key_id = ${key.id})::int AS idempotency,
        (SELECT count(*) FROM write_audit WHERE key_id = ${key.id})::int AS audit,
        (SELECT coalesce(sum(used), 0) FROM daily_write_counters WHERE key_id = ${key.id})::int AS limits,
        (SELECT count(*) FROM quickbook_sales WHERE terminal_id = ${desk.terminal.id})::int AS sales,
        (SELECT count(*) FROM quickbook_payments WHERE terminal_id = ${desk.terminal.id})::int AS payments`.pipe(
        Effect.map((rows) => rows[0]!),
        Effect.orDie
      )
  )
  return { desk, key, row, booking, partner, quickbook, writes, recorded }
})

type Api = "partner" | "quickbook"

/** A problem of the partner API, or the quickbook error body with its English clerk message. */
const expectRefusal = (
  api: Api,
  res: Reply,
  status: number,
  expected: { readonly slug: string; readonly detail?: RegExp; readonly clerkMessage: string },
  what: string
) => {
  expect(res.status, `${what}: ${res.text}`).toBe(status)
  expect(res.headers.get("x-request-id"), what).toEqual(expect.any(String))
  if (api === "partner") {
    expect(res.headers.get("content-type"), what).toBe("application/problem+json")
    expect(res.body, what).toMatchObject({
      type: `/api/v1/docs/errors.md#${expected.slug}`,
      status,
      request_id: expect.any(String)
    })
    if (expected.detail) expect(res.body.detail, what).toMatch(expected.detail)
    if (status === 400) expect(res.body.invalid_params, what).toEqual([{ name: "body", reason: expect.any(String) }])
  } else {
    expect(res.headers.get("content-type"), what).toContain("application/json")
    expect(res.headers.get("cache-control"), what).toBe("no-store")
    expect(res.body, what).toEqual({ error: { code: "invalid_request", clerkMessage: expected.clerkMessage } })
  }
  if (status === 413) expect(res.headers.get("connection"), what).toBe("close")
}

interface BodyCase extends RawRequest {
  readonly name: string
  readonly status: 400 | 413 | 415
  readonly slug: string
  readonly detail: RegExp
  readonly clerk: keyof typeof REQUEST_MESSAGES
}

const NOT_JSON = { status: 415, slug: "unsupported-media-type", clerk: "body_not_json_type" } as const
const TOO_LARGE = {
  status: 413,
  slug: "payload-too-large",
  detail: /larger than 65536 bytes/,
  clerk: "body_too_large"
} as const

const CASES: ReadonlyArray<BodyCase> = [
  {
    name: "a truncated body",
    headers: JSON_TYPE,
    body: "{",
    status: 400,
    slug: "invalid-request",
    detail: /not valid JSON/,
    clerk: "body_not_json"
  },
  {
    name: "a byte order mark before a truncated body",
    headers: JSON_TYPE,
    body: "\uFEFF{\"status\":",
    status: 400,
    slug: "invalid-request",
    detail: /not valid JSON/,
    clerk: "body_not_json"
  },
  {
    name: "bytes that are not UTF-8",
    headers: JSON_TYPE,
    body: Uint8Array.of(0x7b, 0x22, 0xff, 0xfe, 0x00, 0x01, 0x22, 0x7d),
    status: 400,
    slug: "invalid-request",
    detail: /not valid UTF-8/,
    clerk: "body_not_utf8"
  },
  {
    name: "arrays nested 5,000 deep",
    headers: JSON_TYPE,
    body: "[".repeat(5000) + "]".repeat(5000),
    status: 400,
    slug: "invalid-request",
    detail: /more than 32 levels deep/,
    clerk: "body_too_deep"
  },
  {
    name: "objects nested 5,000 deep",
    headers: JSON_TYPE,
    body: "{\"a\":".repeat(5000) + "1" + "}".repeat(5000),
    status: 400,
    slug: "invalid-request",
    detail: /more than 32 levels deep/,
    clerk: "body_too_deep"
  },
  {
    name: "a form-encoded body",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: "status=checked_in&reason=changed%20plans",
    detail: /application\/x-www-form-urlencoded/,
    ...NOT_JSON
  },
  {
    name: "a JSON body without Content-Type",
    headers: {},
    body: "{\"status\":\"checked_in\"}",
    detail: /no Content-Type/,
    ...NOT_JSON
  },
  {
    name: "a text/plain body",
    headers: { "content-type": "text/plain" },
    body: "{}",
    detail: /text\/plain/,
    ...NOT_JSON
  },
  {
    name: "a multipart body",
    headers: { "content-type": "multipart/form-data; boundary=b" },
    body: "--b\r\nContent-Disposition: form-data; name=\"status\"\r\n\r\nchecked_in\r\n--b--\r\n",
    detail: /multipart/,
    ...NOT_JSON
  },
  {
    name: "JSON in Latin-1",
    headers: { "content-type": "application/json; charset=iso-8859-1" },
    body: "{}",
    detail: /charset=iso-8859-1/,
    ...NOT_JSON
  },
  // Never sent, never ended: an answer proves the server read nothing (it would wait for 100 MB).
  {
    name: "a declared Content-Length of 100 MB",
    headers: { ...JSON_TYPE, "content-length": String(100 * 1024 * 1024) },
    holdOpen: true,
    ...TOO_LARGE
  },
  // Chunked, one byte past the limit and never ended: an answer proves the server stopped at the limit.
  {
    name: "a chunked body one byte past the limit",
    headers: JSON_TYPE,
    body: " ".repeat(BODY_LIMIT_BYTES + 1),
    holdOpen: true,
    ...TOO_LARGE
  }
]

layer(env, { excludeTestServices: true, timeout: 240_000 })("request bodies and unknown requests (both APIs)", (it) => {
  describe("bodies every write refuses", () => {
    it.effect("each malformed body on each of the seven writes: the right 4xx in the API's body, nothing recorded", () =>
      Effect.gen(function*() {
        const w = yield* world
        for (const write of w.writes) {
          for (const c of CASES) {
            const res = yield* rawCall(write.path, {
              ...c,
              headers: { ...write.auth, "idempotency-key": randomUUID(), ...c.headers }
            })
            expectRefusal(write.api, res, c.status, {
              slug: c.slug,
              detail: c.detail,
              clerkMessage: REQUEST_MESSAGES[c.clerk].en
            }, `${write.path} ${c.name}`)
          }
        }
        // No idempotency record, no audit entry, no daily limit used, no sale, no payment.
        expect(yield* w.recorded).toEqual({ idempotency: 0, audit: 0, limits: 0, sales: 0, payments: 0 })
        expect(yield* checkinState(w.row)).toBeNull()
      }))

    it.effect("payment-link takes a JSON object only: a number, an array, a string or null is 400 before anything runs", () =>
      Effect.gen(function*() {
        const w = yield* world
        for (const body of ["5", "[]", "[{}]", "\"{}\"", "null", "true"]) {
          const res = yield* rawCall(`/api/v1/bookings/${w.booking}/payment-link`, {
            headers: { ...w.partner, ...JSON_TYPE, "idempotency-key": randomUUID() },
            body
          })
          expectRefusal("partner", res, 400, { slug: "invalid-request", clerkMessage: "" }, body)
          expect(res.body.invalid_params, body).toEqual([{ name: "body", reason: "must be a JSON object (`{}`)" }])
        }
        expect(yield* w.recorded).toEqual({ idempotency: 0, audit: 0, limits: 0, sales: 0, payments: 0 })
      }))

    it.effect("the clerk reads why in Norwegian when the desk asks for it", () =>
      Effect.gen(function*() {
        const w = yield* world
        const nb = { ...w.quickbook, "accept-language": "nb" }
        const res = yield* rawCall(`${BASE}/quote`, { headers: { ...nb, ...JSON_TYPE }, body: "{" })
        expectRefusal("quickbook", res, 400, { slug: "", clerkMessage: REQUEST_MESSAGES.body_not_json.nb }, "nb")
        expect(res.headers.get("content-language")).toBe("nb")
        const form = yield* rawCall(`${BASE}/book`, {
          headers: { ...nb, "content-type": "application/x-www-form-urlencoded" },
          body: "a=b"
        })
        expectRefusal(
          "quickbook",
          form,
          415,
          { slug: "", clerkMessage: REQUEST_MESSAGES.body_not_json_type.nb },
          "nb form"
        )
      }))

    it.effect("the route, the key and the scope are checked before the body", () =>
      Effect.gen(function*() {
        const w = yield* world
        const bad = { headers: { ...JSON_TYPE, "idempotency-key": randomUUID() }, body: "{" }
        expect(
          (yield* rawCall(`/api/v1/bookings/${w.booking}/nope`, { ...bad, headers: { ...bad.headers, ...w.partner } }))
            .status
        ).toBe(404)
        expect((yield* rawCall(`/api/v1/bookings/${w.booking}/cancel`, bad)).status).toBe(401)
        expect((yield* rawCall(`${BASE}/quote`, bad)).status).toBe(401)
        const readOnly = yield* createKey({
          by: w.desk.w.alice,
          operators: [w.desk.w.alpha],
          scopes: ["bookings:read"]
        })
        const forbidden = yield* rawCall(`/api/v1/bookings/${w.booking}/cancel`, {
          ...bad,
          headers: { ...bad.headers, authorization: `Bearer ${readOnly.token}` }
        })
        expect(forbidden.status).toBe(403)
      }))
  })

  describe("bodies that are taken", () => {
    it.effect("a leading UTF-8 byte order mark is dropped: the body is read as without it (partner and quickbook)", () =>
      Effect.gen(function*() {
        const w = yield* world
        const res = yield* rawCall(`/api/v1/manifest/${w.row}/checkin`, {
          headers: { ...w.partner, ...JSON_TYPE, "idempotency-key": randomUUID() },
          body: "\uFEFF{\"status\":\"checked_in\",\"present\":1}"
        })
        expect(res.status, res.text).toBe(200)
        expect(res.body.check_in).toEqual({ status: "checked_in", present: 1 })
        expect(yield* checkinState(w.row)).toMatchObject({ status: "checked_in", present: 1 })
        const quote = yield* rawCall(`${BASE}/quote`, {
          headers: { ...w.quickbook, "content-type": "application/json; charset=utf-8" },
          body: "\uFEFF" +
            JSON.stringify({
              activityId: w.desk.own,
              start: { date: w.desk.day, time: "10:00" },
              guests: [{ type: "adult", count: 1 }]
            })
        })
        expect(quote.status, quote.text).toBe(200)
        expect(quote.body.reference).toMatch(/^SVC-/)
      }))

    it.effect("a body of exactly the limit is read; one byte more is refused before it is read", () =>
      Effect.gen(function*() {
        const w = yield* world
        const json = "{\"status\":\"no_show\"}"
        const exact = json + " ".repeat(BODY_LIMIT_BYTES - json.length)
        const res = yield* rawCall(`/api/v1/manifest/${w.row}/checkin`, {
          headers: {
            ...w.partner,
            ...JSON_TYPE,
            "idempotency-key": randomUUID(),
            "content-length": String(BODY_LIMIT_BYTES)
          },
          body: exact
        })
        expect(res.status, res.text).toBe(200)
        expect(yield* checkinState(w.row)).toMatchObject({ status: "no_show" })
        const over = yield* rawCall(`/api/v1/manifest/${w.row}/checkin`, {
          headers: {
            ...w.partner,
            ...JSON_TYPE,
            "idempotency-key": randomUUID(),
            "content-length": String(BODY_LIMIT_BYTES + 1)
          },
          body: json,
          holdOpen: true
        })
        expectRefusal("partner", over, 413, { slug: "payload-too-large", clerkMessage: "" }, "one byte over")
      }))

    it.effect("GET and DELETE ignore a body: not read, not refused", () =>
      Effect.gen(function*() {
        const w = yield* world
        const junk = { ...JSON_TYPE, "content-length": String(100 * 1024 * 1024) }
        // A declared 100 MB body, never sent: answered without reading it.
        const me = yield* rawCall("/api/v1/me", { method: "GET", headers: { ...w.partner, ...junk }, holdOpen: true })
        expect(me.status, me.text).toBe(200)
        const tours = yield* rawCall(`${BASE}/tours`, {
          method: "GET",
          headers: { ...w.quickbook, ...JSON_TYPE },
          body: "{"
        })
        expect(tours.status, tours.text).toBe(200)
        // DELETE /reserve/{holdRef} answers the same with a broken body as with none.
        const q = yield* w.desk.quote(1)
        const plain = yield* rawCall(`${BASE}/reserve/${q.reference}`, { method: "DELETE", headers: w.quickbook })
        expect(plain.status, plain.text).toBe(200)
        const broken = yield* rawCall(`${BASE}/reserve/${q.reference}`, {
          method: "DELETE",
          headers: { ...w.quickbook, "content-type": "text/plain" },
          body: Uint8Array.of(0xff, 0x00, 0x7b)
        })
        expect(broken.status, broken.text).toBe(200)
        expect(broken.body).toEqual(plain.body)
      }))
  })

  describe("unknown paths and methods", () => {
    it.effect("quickbook: an unknown path is 404 not_found naming the endpoint; another method is 405 with Allow (en, nb)", () =>
      Effect.gen(function*() {
        const w = yield* world
        for (const lang of ["en", "nb"] as const) {
          const headers = { ...w.quickbook, "accept-language": lang }
          const nope = yield* rawCall(`${BASE}/nope?x=1`, { method: "GET", headers })
          expect(nope.status).toBe(404)
          expect(nope.body).toEqual({
            error: { code: "not_found", clerkMessage: unknownEndpointMessage("GET", `${BASE}/nope`, lang) }
          })
          expect(nope.body.error.clerkMessage).not.toBe(CLERK_MESSAGES.not_found[lang])
          const post = yield* rawCall(`${BASE}/tours`, {
            method: "POST",
            headers: { ...headers, ...JSON_TYPE },
            body: "{}"
          })
          expect(post.status).toBe(405)
          expect(post.headers.get("allow")).toBe("GET, HEAD")
          expect(post.body).toEqual({
            error: {
              code: "invalid_request",
              clerkMessage: wrongMethodMessage("POST", `${BASE}/tours`, ["GET", "HEAD"], lang)
            }
          })
          const get = yield* rawCall(`${BASE}/book`, { method: "GET", headers })
          expect(get.status).toBe(405)
          expect(get.headers.get("allow")).toBe("POST")
          expect(get.headers.get("cache-control")).toBe("no-store")
        }
        // A path too long to quote is cut in the message.
        const long = yield* rawCall(`${BASE}/${"x".repeat(5000)}`, { method: "GET", headers: w.quickbook })
        expect(long.status).toBe(404)
        expect(long.body.error.clerkMessage.length).toBeLessThan(300)
      }))

    it.effect("partner: an unknown path is 404 not-found; another method is 405 method-not-allowed with Allow", () =>
      Effect.gen(function*() {
        const w = yield* world
        const nope = yield* rawCall("/api/v1/nope", { method: "GET", headers: w.partner })
        expect(nope.status).toBe(404)
        expect(nope.body).toMatchObject({
          type: "/api/v1/docs/errors.md#not-found",
          detail: "no endpoint GET /api/v1/nope"
        })
        const post = yield* rawCall("/api/v1/me", {
          method: "POST",
          headers: { ...w.partner, ...JSON_TYPE },
          body: "{}"
        })
        expect(post.status).toBe(405)
        expect(post.headers.get("content-type")).toBe("application/problem+json")
        expect(post.headers.get("allow")).toBe("GET, HEAD")
        expect(post.body).toMatchObject({
          type: "/api/v1/docs/errors.md#method-not-allowed",
          title: "Method not allowed",
          status: 405,
          detail: "POST is not allowed on /api/v1/me; it takes GET, HEAD"
        })
        const del = yield* rawCall(`/api/v1/bookings/${w.booking}/cancel`, { method: "GET", headers: w.partner })
        expect(del.status).toBe(405)
        expect(del.headers.get("allow")).toBe("POST")
        const long = yield* rawCall(`/api/v1/${"y".repeat(5000)}`, { method: "GET", headers: w.partner })
        expect(long.status).toBe(404)
        expect(long.body.detail.length).toBeLessThan(200)
      }))

    it.effect("a path parameter longer than 100 characters reaches its endpoint (400 not a UUID; quickbook: sale not found)", () =>
      Effect.gen(function*() {
        const w = yield* world
        const booking = yield* rawCall(`/api/v1/bookings/${"9".repeat(5000)}`, { method: "GET", headers: w.partner })
        expect(booking.status, booking.text).toBe(400)
        expect(booking.body.invalid_params).toEqual([{ name: "id", reason: "must be a UUID" }])
        const sale = yield* rawCall(`${BASE}/sales/${"S".repeat(5000)}`, { method: "GET", headers: w.quickbook })
        expect(sale.status, sale.text).toBe(404)
        expect(sale.body).toEqual({ error: { code: "not_found", clerkMessage: CLERK_MESSAGES.not_found.en } })
      }))
  })

  describe("quickbook 400s name what is wrong, in the clerk's language", () => {
    it.effect("a query parameter, a body field (missing or not valid) and the guest limits", () =>
      Effect.gen(function*() {
        const w = yield* world
        const clerk = (res: Reply) => {
          expect(res.status, res.text).toBe(400)
          expect(res.body.error.code).toBe("invalid_request")
          return res.body.error.clerkMessage as string
        }
        expect(clerk(yield* rawCall(`${BASE}/tours?date=tomorrow`, { method: "GET", headers: w.quickbook })))
          .toBe(invalidFieldMessage("date", false, "en"))
        expect(invalidFieldMessage("date", false, "en")).toBe(
          "The date (date) is not valid. Use YYYY-MM-DD. Check the details and try again."
        )
        const quote = (body: unknown, lang: "en" | "nb") =>
          rawCall(`${BASE}/quote`, {
            headers: { ...w.quickbook, ...JSON_TYPE, "accept-language": lang },
            body: JSON.stringify(body)
          })
        const good = {
          activityId: w.desk.own,
          start: { date: w.desk.day, time: "10:00" },
          guests: [{ type: "adult", count: 1 }]
        }
        expect(clerk(yield* quote({ ...good, start: { date: "2026-13-01", time: "10:00" } }, "nb")))
          .toBe("Datoen (start.date) er ugyldig. Bruk ÅÅÅÅ-MM-DD. Sjekk opplysningene og prøv igjen.")
        expect(clerk(yield* quote({ ...good, guests: [{ type: "adult", count: 0 }] }, "en")))
          .toBe(invalidFieldMessage("guests.0.count", false, "en"))
        const { activityId: _, ...noTour } = good
        expect(clerk(yield* quote(noTour, "en"))).toBe(
          "The tour (activityId) is missing. Check the details and try again."
        )
        expect(
          clerk(
            yield* quote({ ...good, guests: Array.from({ length: 11 }, () => ({ type: "adult", count: 1 })) }, "nb")
          )
        )
          .toBe(CLERK_MESSAGE_VARIANTS.too_many_guest_entries.nb)
        expect(
          clerk(yield* quote({ ...good, guests: [{ type: "adult", count: 30 }, { type: "adult", count: 30 }] }, "en"))
        )
          .toBe(CLERK_MESSAGE_VARIANTS.too_many_guests.en)
        const book = yield* rawCall(`${BASE}/book`, {
          headers: { ...w.quickbook, ...JSON_TYPE, "accept-language": "nb" },
          body: JSON.stringify({
            reference: "SVC-AAAAAAAAAA",
            payment: { provider: "payprovider", orderId: "o-1", paymentId: "p-1" },
            customer: { firstName: "Kari", lastName: "Nordmann", email: "kari@example.com", phone: "004791234567" }
          })
        })
        expect(clerk(book)).toBe(
          "Gjestens telefonnummer (customer.phone) er ugyldig. Bruk internasjonalt format, f.eks. +4791234567. Sjekk opplysningene og prøv igjen."
        )
        expect(yield* w.recorded).toMatchObject({ sales: 0, payments: 0 })
      }))
  })

  describe("fuzz", () => {
    it.effect("random bodies, content types and Idempotency-Keys on a write of each API never answer 5xx", () =>
      Effect.gen(function*() {
        const w = yield* world
        const headerValue = fc.string({
          unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
          maxLength: 300
        })
        const body = fc.oneof(
          fc.jsonValue().map((v) => JSON.stringify(v) ?? ""),
          fc.string({ maxLength: 200 }),
          fc.uint8Array({ maxLength: 200 }),
          fc.constantFrom(
            "{",
            "[",
            "\uFEFF",
            "\uFEFF{}",
            "{\"status\":\"checked_in\"}",
            "null",
            "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]"
          )
        )
        const contentType = fc.constantFrom(
          undefined,
          "application/json",
          "application/json; charset=utf-8",
          "application/json; charset=utf-16",
          "text/plain",
          "application/x-www-form-urlencoded",
          "multipart/form-data",
          "application/jsonp",
          "*/*",
          ""
        )
        const targets = [w.writes[0], w.writes[4]]
        const samples = fc.sample(
          fc.record({ target: fc.constantFrom(...targets), body, contentType, key: headerValue }),
          { numRuns: 120, seed: 11 }
        )
        for (const s of samples) {
          const headers: Record<string, string> = { ...s.target.auth, "idempotency-key": s.key }
          if (s.contentType !== undefined) headers["content-type"] = s.contentType
          const res = yield* rawCall(s.target.path, { headers, body: s.body })
          expect(res.status, `${s.target.path} ${JSON.stringify(s)}: ${res.text}`).toBeLessThan(500)
        }
      }))

    it.effect("random query strings on the reads and random path ids on reads and writes of both APIs never answer 5xx", () =>
      Effect.gen(function*() {
        const w = yield* world
        const value = fc.oneof(
          fc.string({ maxLength: 40 }).map(encodeURIComponent),
          fc.constantFrom("", "%", "%E0%A4%A", "2026-02-30", "0000-01-01", "-1", "1e309", "NaN", "x".repeat(2000))
        )
        const query = fc.array(
          fc.tuple(
            fc.constantFrom("date", "cursor", "limit", "status", "from", "to", "pax", "locale", "partner_id", "lang"),
            value
          ),
          { maxLength: 4 }
        )
          .map((pairs) => pairs.map(([k, v]) => `${k}=${v}`).join("&"))
        const reads = [
          { path: "/api/v1/bookings", auth: w.partner },
          { path: `/api/v1/bookings/${w.booking}`, auth: w.partner },
          { path: "/api/v1/manifest", auth: w.partner },
          { path: `/api/v1/bookings/${w.booking}/reschedule-options`, auth: w.partner },
          { path: `${BASE}/sales/SVC-AAAAAAAAAA`, auth: w.quickbook },
          { path: `${BASE}/sales/SVC-AAAAAAAAAA/ticket`, auth: w.quickbook }
        ]
        const samples = fc.sample(fc.record({ read: fc.constantFrom(...reads), query }), { numRuns: 80, seed: 7 })
        for (const s of samples) {
          const res = yield* rawCall(`${s.read.path}?${s.query}`, { method: "GET", headers: s.read.auth })
          expect(res.status, `${s.read.path}?${s.query}: ${res.text}`).toBeLessThan(500)
        }
        // Path ids that are not UUIDs (or not references), of any length up to what Node takes.
        const id = fc.oneof(
          fc.string({ minLength: 1, maxLength: 60 }).map(encodeURIComponent),
          fc.constantFrom("%E0%A4%A", "..", "9".repeat(5000), "%00")
        )
        const paths = [
          (x: string) => ({ path: `/api/v1/bookings/${x}`, auth: w.partner, method: "GET" }),
          (x: string) => ({
            path: `/api/v1/tours/${x}/availability?from=2026-01-01&to=2026-01-02`,
            auth: w.partner,
            method: "GET"
          }),
          (x: string) => ({ path: `/api/v1/bookings/${x}/cancel`, auth: w.partner, method: "POST" }),
          (x: string) => ({ path: `${BASE}/sales/${x}/ticket`, auth: w.quickbook, method: "GET" }),
          (x: string) => ({ path: `${BASE}/reserve/${x}`, auth: w.quickbook, method: "DELETE" })
        ]
        for (const s of fc.sample(fc.tuple(fc.constantFrom(...paths), id), { numRuns: 60, seed: 5 })) {
          const target = s[0](s[1])
          const res = yield* rawCall(target.path, {
            method: target.method,
            headers: { ...target.auth, ...JSON_TYPE, "idempotency-key": randomUUID() },
            ...(target.method === "POST" ? { body: "{\"reason\":\"Storm warning\"}" } : {})
          })
          expect(res.status, `${target.method} ${target.path.slice(0, 100)}: ${res.text.slice(0, 300)}`).toBeLessThan(
            500
          )
        }
      }))

    it.effect("headers: a 10,000-character Idempotency-Key is 400 naming it; control characters are refused by the HTTP parser (400)", () =>
      Effect.gen(function*() {
        const w = yield* world
        const long = yield* rawCall(`/api/v1/manifest/${w.row}/checkin`, {
          headers: { ...w.partner, ...JSON_TYPE, "idempotency-key": "k".repeat(10_000) },
          body: "{\"status\":\"checked_in\"}"
        })
        expect(long.status, long.text).toBe(400)
        expect(long.body.invalid_params).toEqual([{ name: "Idempotency-Key", reason: long.body.detail }])
        expect(long.text.length).toBeLessThan(1000)
        // node:http will not send a control character in a header; write the request by hand.
        const { baseUrl } = yield* TestServer
        const url = new URL(baseUrl)
        const answer = yield* Effect.async<string>((resume) => {
          const socket = net.connect(Number(url.port), url.hostname, () => {
            socket.write(
              `POST /api/v1/manifest/${w.row}/checkin HTTP/1.1\r\nHost: x\r\nAuthorization: ${w.partner.authorization}\r\n` +
                `Idempotency-Key: abc\u0001defgh\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`
            )
          })
          let text = ""
          socket.on("data", (d) => (text += d.toString("latin1")))
          socket.on("close", () => resume(Effect.succeed(text)))
          socket.on("error", () => resume(Effect.succeed(text)))
          return Effect.sync(() => socket.destroy())
        })
        expect(answer.split("\r\n")[0]).toBe("HTTP/1.1 400 Bad Request")
        expect(yield* w.recorded).toMatchObject({ idempotency: 0, limits: 0 })
        expect(yield* checkinState(w.row)).toBeNull()
      }))
  })
})
