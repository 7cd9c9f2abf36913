import SwaggerParser from "@apidevtools/swagger-parser"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { DOCUMENT_CACHE_CONTROL } from "../../src/http/documentCaching.js"
import { RateLimiter } from "../../src/http/RateLimiter.js"
import { CLERK_MESSAGES, unknownEndpointMessage } from "../../src/quickbook/clerkMessages.js"
import { quickbookBucket } from "../../src/quickbook/limits.js"
import { QuickbookKeys } from "../../src/quickbook/terminals/QuickbookKeys.js"
import { createKey, makeWorld } from "../support/fixtures.js"
import { call, get, type Reply } from "../support/http.js"
import { expectReferenceShowsServedDocument } from "../support/openapi.js"
import { withRoomInWindow } from "../support/rateWindow.js"
import { testServer } from "../support/server.js"
import { insertTour } from "../support/tours.js"

const TOURS = "/api/quickbook/v1/tours"

const qb = (
  key: string | undefined,
  terminal: string | undefined,
  headers: Record<string, string> = {},
  path = TOURS
) => call(path, { key, headers: { ...(terminal !== undefined ? { "quickbook-terminal": terminal } : {}), ...headers } })

const expectCommonHeaders = (res: Reply) => {
  expect(res.headers.get("x-request-id")).toEqual(expect.any(String))
  expect(res.headers.get("cache-control")).toBe("no-store")
}

const expectError = (res: Reply, status: number, code: string, lang: "en" | "nb" = "en") => {
  expect(res.status, res.text).toBe(status)
  expectCommonHeaders(res)
  expect(res.headers.get("content-type")).toContain("application/json")
  expect(res.body).toEqual({ error: { code, clerkMessage: (CLERK_MESSAGES as any)[code][lang] } })
  if (status === 401) expect(res.headers.get("www-authenticate")).toBe(`Bearer realm="svc-quickbook"`)
}

/** An operator with two published tours and a draft, a terminal, a test key bound to it. */
const desk = Effect.gen(function*() {
  const w = yield* makeWorld
  const keys = yield* QuickbookKeys
  yield* insertTour({ operatorId: w.alpha, title: "Fjord Safari" })
  yield* insertTour({ operatorId: w.alpha, title: "Aurora Hunt" })
  yield* insertTour({ operatorId: w.alpha, title: "Secret Draft", status: "draft" })
  yield* insertTour({ operatorId: w.beta, title: "Other Operator's Tour" })
  const terminal = yield* keys.registerTerminal(w.alpha, "Harbour desk 1")
  const key = yield* keys.issueKey({ mode: "test", name: "Desk app", terminals: [terminal.id] })
  return { w, keys, terminal, key }
}).pipe(Effect.provide(QuickbookKeys.Default))

layer(testServer(), { excludeTestServices: true, timeout: 120_000 })("quickbook authentication and errors", (it) => {
  it.effect("a bound terminal with a test key is served; tours on no site and linked to no booking system are not sellable", () =>
    Effect.gen(function*() {
      const { terminal, key } = yield* desk
      const res = yield* qb(key.token, terminal.id)
      expect(res.status, res.text).toBe(200)
      expectCommonHeaders(res)
      expect(res.body.terminal).toEqual({
        id: terminal.id,
        name: "Harbour desk 1",
        operatorName: terminal.operatorName
      })
      // The listing of sellable tours (own and resold, linked to a booking system): test/quickbook/sales/sales.test.ts.
      expect(res.body.tours).toEqual([])
      expect(res.headers.get("ratelimit-limit")).toBe("300")
    }))

  it.effect("live keys work too", () =>
    Effect.gen(function*() {
      const { keys, terminal } = yield* desk
      const live = yield* keys.issueKey({ mode: "live", name: "Live desk", terminals: [terminal.id] })
      expect(live.token.startsWith("svcqb_live_")).toBe(true)
      expect((yield* qb(live.token, terminal.id)).status).toBe(200)
    }).pipe(Effect.provide(QuickbookKeys.Default)))

  describe("401 unauthorized", () => {
    it.effect("missing, malformed, unknown, wrong secret, other schemes", () =>
      Effect.gen(function*() {
        const { terminal, key } = yield* desk
        expectError(yield* qb(undefined, terminal.id), 401, "unauthorized")
        // No terminal header either: the key is checked first.
        expectError(yield* qb(undefined, undefined), 401, "unauthorized")
        for (const authorization of ["Bearer ", "Basic dXNlcjpwYXNz", key.token, "Bearer svcqb_test_short"]) {
          expectError(yield* qb(undefined, terminal.id, { authorization }), 401, "unauthorized")
        }
        expectError(
          yield* qb("svcqb_test_AAAAAAAAAAAAAAAAAAAA_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB", terminal.id),
          401,
          "unauthorized"
        )
        const wrongSecret = key.token.slice(0, -1) + (key.token.endsWith("A") ? "B" : "A")
        expectError(yield* qb(wrongSecret, terminal.id), 401, "unauthorized")
        // The right id and secret under the other mode's prefix.
        expectError(yield* qb(key.token.replace("svcqb_test_", "svcqb_live_"), terminal.id), 401, "unauthorized")
      }))

    it.effect("revoked and expired keys", () =>
      Effect.gen(function*() {
        const { keys, terminal, key } = yield* desk
        const other = yield* keys.issueKey({ mode: "test", name: "Expiring", terminals: [terminal.id] })
        yield* keys.revokeKey(key.id)
        expectError(yield* qb(key.token, terminal.id), 401, "unauthorized")
        expect((yield* qb(other.token, terminal.id)).status).toBe(200)
        yield* keys.expireKey(other.id, new Date(Date.now() - 1000))
        expectError(yield* qb(other.token, terminal.id), 401, "unauthorized")
      }))

    it.effect("a partner key is refused here", () =>
      Effect.gen(function*() {
        const { w, terminal } = yield* desk
        const partner = yield* createKey({ by: w.alice, operators: [w.alpha] })
        expect((yield* get("/api/v1/me", partner.token)).status).toBe(200)
        expectError(yield* qb(partner.token, terminal.id), 401, "unauthorized")
      }))

    it.effect("a quickbook key is refused on the partner API", () =>
      Effect.gen(function*() {
        const { key } = yield* desk
        for (const path of ["/api/v1/me", "/api/v1/bookings", "/api/v1/tours"]) {
          const res = yield* get(path, key.token)
          expect(res.status).toBe(401)
          expect(res.headers.get("content-type")).toBe("application/problem+json")
          expect(res.headers.get("www-authenticate")).toBe(`Bearer realm="partner-api"`)
          expect(res.body.detail).toContain("Quickbook API")
        }
      }))

    it.effect("a key in the URL is refused, even with a valid header", () =>
      Effect.gen(function*() {
        const { terminal, key } = yield* desk
        for (
          const path of [
            `${TOURS}?key=${key.token}`,
            `${TOURS}?access_token=${encodeURIComponent(key.token)}`,
            `${TOURS}/${key.token}`
          ]
        ) {
          expectError(yield* qb(key.token, terminal.id, {}, path), 401, "unauthorized")
        }
        const partnerLike = `${TOURS}?key=svc_live_AAAAAAAAAAAAAAAAAAAA_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB`
        expectError(yield* qb(key.token, terminal.id, {}, partnerLike), 401, "unauthorized")
        // A quickbook key in a partner API URL is refused there too (400 problem, as for partner keys).
        const res = yield* get(`/api/v1/me?key=${key.token}`)
        expect(res.status).toBe(400)
        expect(res.headers.get("content-type")).toBe("application/problem+json")
      }))
  })

  describe("terminal_not_registered", () => {
    it.effect("400 when the Quickbook-Terminal header is missing or malformed", () =>
      Effect.gen(function*() {
        const { key } = yield* desk
        expectError(yield* qb(key.token, undefined), 400, "terminal_not_registered")
        expectError(yield* qb(key.token, "desk-1"), 400, "terminal_not_registered")
        expectError(yield* qb(key.token, ""), 400, "terminal_not_registered")
      }))

    it.effect("403 when unknown, deactivated or not bound to the key", () =>
      Effect.gen(function*() {
        const { w, keys, terminal, key } = yield* desk
        expectError(yield* qb(key.token, randomUUID()), 403, "terminal_not_registered")
        const unbound = yield* keys.registerTerminal(w.alpha, "Harbour desk 2")
        expectError(yield* qb(key.token, unbound.id), 403, "terminal_not_registered")
        yield* keys.bindKey(key.id, [unbound.id])
        expect((yield* qb(key.token, unbound.id)).status).toBe(200)
        yield* keys.deactivateTerminal(terminal.id)
        expectError(yield* qb(key.token, terminal.id), 403, "terminal_not_registered")
        expect((yield* qb(key.token, unbound.id)).status).toBe(200)
        // Another operator's terminal bound to another key.
        const otherTerminal = yield* keys.registerTerminal(w.beta, "Beta desk")
        yield* keys.issueKey({ mode: "test", name: "Beta app", terminals: [otherTerminal.id] })
        expectError(yield* qb(key.token, otherTerminal.id), 403, "terminal_not_registered")
      }))
  })

  it.effect("clerk messages in Norwegian by Accept-Language, English otherwise", () =>
    Effect.gen(function*() {
      const { key } = yield* desk
      const nb = yield* qb(key.token, randomUUID(), { "accept-language": "nb-NO,nb;q=0.9,en;q=0.5" })
      expectError(nb, 403, "terminal_not_registered", "nb")
      expect(nb.headers.get("content-language")).toBe("nb")
      expect(nb.body.error.clerkMessage).toContain("terminalen")
      expectError(yield* qb(undefined, undefined, { "accept-language": "no" }), 401, "unauthorized", "nb")
      const en = yield* qb(key.token, randomUUID(), { "accept-language": "en-GB,nb;q=0.3" })
      expectError(en, 403, "terminal_not_registered", "en")
      expect(en.headers.get("content-language")).toBe("en")
    }))

  it.effect("unknown quickbook routes answer not_found in the quickbook body, naming the endpoint", () =>
    Effect.gen(function*() {
      const { terminal, key } = yield* desk
      const res = yield* qb(key.token, terminal.id, {}, "/api/quickbook/v1/nope")
      expect(res.status).toBe(404)
      expectCommonHeaders(res)
      expect(res.body).toEqual({
        error: { code: "not_found", clerkMessage: unknownEndpointMessage("GET", "/api/quickbook/v1/nope", "en") }
      })
    }))

  describe("limits", () => {
    it.effect("reads: 300 a minute per terminal, then 429 rate_limited with Retry-After; other terminals unaffected", () =>
      Effect.gen(function*() {
        const { w, keys, terminal, key } = yield* desk
        const limiter = yield* RateLimiter
        // Spend 299 of this terminal's reads directly on the shared counter, then two requests.
        yield* withRoomInWindow(15)
        for (let i = 0; i < 299; i++) yield* limiter.hit(quickbookBucket("reads", terminal.id), 300, 60)
        const last = yield* qb(key.token, terminal.id)
        expect(last.status).toBe(200)
        expect(last.headers.get("ratelimit-remaining")).toBe("0")
        const over = yield* qb(key.token, terminal.id, { "accept-language": "nb" })
        expectError(over, 429, "rate_limited", "nb")
        const retryAfter = Number(over.headers.get("retry-after"))
        expect(retryAfter).toBeGreaterThanOrEqual(1)
        expect(retryAfter).toBeLessThanOrEqual(60)
        // The writes and books budgets of the same terminal are untouched.
        const writes = yield* limiter.hit(quickbookBucket("writes", terminal.id), 60, 60)
        expect(writes.remaining).toBe(59)
        // Another terminal on the same key has its own reads budget.
        const second = yield* keys.registerTerminal(w.alpha, "Harbour desk 3")
        yield* keys.bindKey(key.id, [second.id])
        expect((yield* qb(key.token, second.id)).status).toBe(200)
      }).pipe(Effect.provide(RateLimiter.Default)))
  })

  it.effect("the OpenAPI document is served, valid OpenAPI 3.1, and documents the auth statuses", () =>
    Effect.gen(function*() {
      const res = yield* get("/api/quickbook/v1/openapi.json")
      expect(res.status).toBe(200)
      expect(res.headers.get("x-request-id")).toEqual(expect.any(String))
      // The document is not sales data: cacheable like the partner one (src/http/documentCaching.ts).
      expect(res.headers.get("cache-control")).toBe(DOCUMENT_CACHE_CONTROL)
      const doc = res.body
      expect(doc.openapi).toBe("3.1.0")
      expect(doc.info).toMatchObject({ title: "Quickbook API", version: "1.0.0" })
      yield* Effect.promise(() => SwaggerParser.validate(structuredClone(doc)))
      const op = doc.paths["/api/quickbook/v1/tours"].get
      expect(Object.keys(op.responses).sort()).toEqual(["200", "400", "401", "403", "429", "500"])
      expect(op.parameters.map((p: any) => p.name)).toContain("Quickbook-Terminal")
      expect(op.responses["401"].content["application/json"].schema.$ref).toBe("#/components/schemas/QuickbookError")
      expect(doc.components.schemas.QuickbookError).toBeDefined()
      // The RateLimit headers it lists are the ones a keyed answer carries; a 401 (decided before the
      // limiter counts) lists and carries none.
      const { key, terminal } = yield* desk
      const served = yield* qb(key.token, terminal.id)
      expect(served.status).toBe(200)
      const documented = Object.keys(op.responses["200"].headers).filter((h) => h.startsWith("RateLimit"))
      expect(documented.sort()).toEqual(
        ["RateLimit", "RateLimit-Limit", "RateLimit-Policy", "RateLimit-Remaining", "RateLimit-Reset"]
      )
      for (const header of documented) expect(served.headers.get(header), header).toEqual(expect.any(String))
      expect(served.headers.get("RateLimit-Policy")).toBe(`"reads";q=300;w=60`)
      expect(Object.keys(op.responses["401"].headers).some((h) => h.startsWith("RateLimit"))).toBe(false)
      const refused = yield* qb("svcqb_test_nope", terminal.id)
      expect(refused.status).toBe(401)
      expect(refused.headers.get("RateLimit")).toBeNull()
      // The partner document does not list quickbook paths.
      const partner = (yield* get("/api/v1/openapi.json")).body
      expect(Object.keys(partner.paths).some((p) => p.includes("quickbook"))).toBe(false)
    }))

  it.effect("the interactive reference shows that document, without a key", () =>
    Effect.gen(function*() {
      const { document, page } = yield* expectReferenceShowsServedDocument(
        "/api/quickbook/v1/docs",
        "/api/quickbook/v1/openapi.json"
      )
      expect(page.text).toContain("<title>Quickbook API</title>")
      // The finished document: the terminal header is in it.
      expect(document.paths["/api/quickbook/v1/book"].post.parameters.map((p: any) => p.name)).toContain(
        "Quickbook-Terminal"
      )
    }))
})
