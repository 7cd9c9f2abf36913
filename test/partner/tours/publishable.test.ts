/**
 * The catalogue with a publishable key (`?key=pk_widget_...`) through the real server: its own
 * site only, the public cache headers of spec §8, CORS for the key's allowed origins (preflight
 * included), the 1200-per-minute limit, refusal everywhere else, and the CLI that makes the keys.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { PUBLIC_CACHE_CONTROL } from "../../../src/partner/auth/publishableKey.js"
import { PublishableKeys } from "../../../src/partner/auth/PublishableKeys.js"
import { cli, json } from "../../support/cli.js"
import { createKey, makeWorld } from "../../support/fixtures.js"
import { call, type Reply } from "../../support/http.js"
import { conforms, dereferencedSpec } from "../../support/openapi.js"
import { withRoomInWindow } from "../../support/rateWindow.js"
import { TestServer, testServer } from "../../support/server.js"
import { addToSite, createSite, insertTour } from "../../support/tours.js"

const env = PublishableKeys.Default.pipe(Layer.provideMerge(testServer()))

const seen: Array<{ path: string; res: Reply }> = []
const read = (path: string, headers: Record<string, string> = {}) =>
  call(path, { headers }).pipe(Effect.tap((res) => Effect.sync(() => seen.push({ path, res }))))

/**
 * Alpha's site with Alpha's tour and Beta's tour (Beta added to it), Beta's own site with another
 * tour, a draft on Alpha's site; a publishable key for Alpha's site allowed from two origins.
 */
const setup = Effect.gen(function*() {
  const w = yield* makeWorld
  const alphaSite = yield* createSite(w.alpha, "Alpha")
  const betaSite = yield* createSite(w.beta, "Beta")
  yield* addToSite(alphaSite, w.beta)
  const own = yield* insertTour({ operatorId: w.alpha, title: "Alpha Harbour", sites: [alphaSite] })
  const resold = yield* insertTour({ operatorId: w.beta, title: "Beta Kayak", sites: [alphaSite] })
  const elsewhere = yield* insertTour({ operatorId: w.beta, title: "Beta Elsewhere", sites: [betaSite] })
  const draft = yield* insertTour({ operatorId: w.alpha, title: "Alpha Draft", status: "draft", sites: [alphaSite] })
  const keys = yield* PublishableKeys
  const created = yield* keys.create({
    siteId: alphaSite,
    createdBy: w.alice,
    name: "Widgets",
    origins: ["alpha-tours.example", "*.alpha-tours.example", "http://localhost:8080"]
  }).pipe(Effect.orDie)
  return { w, alphaSite, betaSite, own, resold, elsewhere, draft, pk: created.key, pkId: created.id }
})

const ALLOWED = "https://www.alpha-tours.example"

const pkGet = (path: string, pk: string, origin?: string) =>
  read(`${path}${path.includes("?") ? "&" : "?"}key=${pk}`, origin ? { origin } : {})

const ids = (res: Reply): Array<string> => res.body.data.map((t: any) => t.id)

layer(env, { excludeTestServices: true, timeout: 180_000 })("the catalogue with a publishable key", (it) => {
  it.effect("reads its own site only: own and resold tours, no draft, nothing from another site (404)", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const list = yield* pkGet("/api/v1/tours", s.pk)
      expect(list.status, list.text).toBe(200)
      expect(ids(list).sort()).toEqual([s.own, s.resold].sort())
      expect((yield* pkGet(`/api/v1/tours/${s.resold}`, s.pk)).body).toMatchObject({
        id: s.resold,
        title: "Beta Kayak"
      })
      for (const other of [s.elsewhere, s.draft]) {
        const res = yield* pkGet(`/api/v1/tours/${other}`, s.pk)
        expect(res.status).toBe(404)
        expect(res.headers.get("cache-control")).toBe("no-store")
      }
      // partner_id is for secret keys.
      const narrowed = yield* pkGet(`/api/v1/tours?partner_id=${s.w.alpha}`, s.pk)
      expect(narrowed.status).toBe(400)
      expect(narrowed.text).toContain("partner_id")
    }))

  it.effect("answers are public with exactly the cache headers of §8; the secret key's stay private", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const list = yield* pkGet("/api/v1/tours", s.pk)
      expect(list.headers.get("cache-control")).toBe(PUBLIC_CACHE_CONTROL.list)
      expect(list.headers.get("vary")).toContain("Origin")
      const detail = yield* pkGet(`/api/v1/tours/${s.own}`, s.pk)
      expect(detail.headers.get("cache-control")).toBe(PUBLIC_CACHE_CONTROL.detail)
      const availability = yield* pkGet(
        `/api/v1/tours/${s.own}/availability?from=2026-12-01&to=2026-12-03`,
        s.pk,
        ALLOWED
      )
      expect(availability.status, availability.text).toBe(200)
      expect(availability.body).toMatchObject({ tour_id: s.own, known: false })
      expect(availability.headers.get("cache-control")).toBe(PUBLIC_CACHE_CONTROL.availability)
      expect(availability.headers.get("access-control-allow-origin")).toBe(ALLOWED)
      expect((yield* pkGet(`/api/v1/tours/${s.elsewhere}/availability?from=2026-12-01&to=2026-12-03`, s.pk)).status)
        .toBe(404)
      const secret = yield* createKey({ by: s.w.alice, operators: [s.w.alpha], scopes: ["tours:read"] })
      const viaSecret = yield* call("/api/v1/tours", { key: secret.token })
      expect(viaSecret.status).toBe(200)
      expect(viaSecret.headers.get("cache-control")).toBe("private, no-store")
      expect(viaSecret.headers.get("access-control-allow-origin")).toBeNull()
    }))

  it.effect("CORS: an allowed origin (exact or subdomain) may read; another origin gets no CORS headers", () =>
    Effect.gen(function*() {
      const s = yield* setup
      for (const origin of [ALLOWED, "https://alpha-tours.example", "http://localhost:8080"]) {
        const res = yield* pkGet("/api/v1/tours", s.pk, origin)
        expect(res.headers.get("access-control-allow-origin"), origin).toBe(origin)
        expect(res.headers.get("access-control-expose-headers")).toContain("X-Request-Id")
      }
      for (
        const origin of [
          "https://evil.example",
          "http://alpha-tours.example",
          "https://alpha-tours.example.evil.example",
          "null"
        ]
      ) {
        const res = yield* pkGet("/api/v1/tours", s.pk, origin)
        expect(res.status).toBe(200)
        expect(res.headers.get("access-control-allow-origin"), origin).toBeNull()
      }
    }))

  it.effect("preflight: an allowed origin gets GET, the headers a page may send and a max age; others nothing", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const preflight = (path: string, origin: string, key = s.pk) =>
        call(`${path}?key=${key}`, {
          method: "OPTIONS",
          headers: {
            origin,
            "access-control-request-method": "GET",
            "access-control-request-headers": "accept-language, x-evil"
          }
        })
      for (const path of ["/api/v1/tours", `/api/v1/tours/${s.own}`, `/api/v1/tours/${s.own}/availability`]) {
        const ok = yield* preflight(path, ALLOWED)
        expect(ok.status, path).toBe(204)
        expect(ok.headers.get("access-control-allow-origin")).toBe(ALLOWED)
        expect(ok.headers.get("access-control-allow-methods")).toBe("GET")
        expect(ok.headers.get("access-control-allow-headers")).toBe("accept-language")
        expect(ok.headers.get("access-control-max-age")).toBe("600")
        const refused = yield* preflight(path, "https://evil.example")
        expect(refused.status).toBe(204)
        expect(refused.headers.get("access-control-allow-origin")).toBeNull()
        const badKey = yield* preflight(path, ALLOWED, "pk_widget_AAAAAAAAAAAAAAAAAAAAAAAA")
        expect(badKey.headers.get("access-control-allow-origin")).toBeNull()
      }
    }))

  it.effect("refused: unknown, malformed, revoked keys (401); a key with a bearer too (401); every other endpoint (401)", () =>
    Effect.gen(function*() {
      const s = yield* setup
      for (const key of ["pk_widget_AAAAAAAAAAAAAAAAAAAAAAAA", "pk_widget_short", "pk_live_AAAAAAAAAAAAAAAAAAAAAAAA"]) {
        const res = yield* pkGet("/api/v1/tours", key)
        expect(res.status, key).toBe(401)
        expect(res.headers.get("content-type")).toBe("application/problem+json")
      }
      const secret = yield* createKey({
        by: s.w.alice,
        operators: [s.w.alpha],
        scopes: ["tours:read", "bookings:read"]
      })
      const both = yield* call(`/api/v1/tours?key=${s.pk}`, { key: secret.token })
      expect(both.status).toBe(401)
      expect(both.body.detail).toContain("not both")
      for (const path of ["/api/v1/me", "/api/v1/bookings", "/api/v1/manifest?date=2026-12-01"]) {
        const res = yield* read(`${path}${path.includes("?") ? "&" : "?"}key=${s.pk}`)
        expect(res.status, path).toBe(401)
        expect(res.body.detail).toContain("only the tours endpoints")
      }
      yield* Effect.flatMap(PublishableKeys, (k) => k.revoke(s.pk)).pipe(Effect.orDie)
      const revoked = yield* pkGet("/api/v1/tours", s.pk)
      expect(revoked.status).toBe(401)
      expect(revoked.body.detail).toContain("revoked")
    }))

  it.effect("1200 requests a minute per key: past it 429 with Retry-After (readable by an allowed origin)", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const sql = yield* SqlClient.SqlClient
      // The window's count as if 1200 requests had come in (the counter is the database's).
      yield* withRoomInWindow(10)
      yield* pkGet("/api/v1/tours", s.pk)
      yield* sql`UPDATE rate_limit_counters SET count = 1200 WHERE bucket = ${`publishable:${s.pkId}`}`.pipe(
        Effect.orDie
      )
      // (Another query: the first answer is held by the service and would not count.)
      const limited = yield* pkGet("/api/v1/tours?locale=nb", s.pk, ALLOWED)
      expect(limited.status).toBe(429)
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0)
      expect(limited.headers.get("ratelimit-limit")).toBe("1200")
      expect(limited.headers.get("cache-control")).toBe("no-store")
      expect(limited.headers.get("access-control-allow-origin")).toBe(ALLOWED)
      // Another key's budget is its own.
      const other = yield* Effect.flatMap(
        PublishableKeys,
        (k) => k.create({ siteId: s.alphaSite, createdBy: s.w.alice, name: "Other", origins: ["alpha-tours.example"] })
      ).pipe(Effect.orDie)
      expect((yield* pkGet("/api/v1/tours", other.key)).status).toBe(200)
    }))

  it.effect("a repeated request is answered from the service's copy (X-Cache: HIT), not counted; a secret key never is", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const sql = yield* SqlClient.SqlClient
      const used = sql<
        { count: number }
      >`SELECT count FROM rate_limit_counters WHERE bucket = ${`publishable:${s.pkId}`}`.pipe(
        Effect.map((rows) => rows[0]?.count ?? 0),
        Effect.orDie
      )
      const first = yield* pkGet(`/api/v1/tours/${s.own}?locale=nb`, s.pk, ALLOWED)
      expect(first.headers.get("x-cache")).toBe("MISS")
      expect(yield* used).toBe(1)
      // The same request (parameters in another order, another allowed origin): the same answer, not counted.
      const again = yield* read(`/api/v1/tours/${s.own}?key=${s.pk}&locale=nb`, {
        origin: "https://alpha-tours.example"
      })
      expect(again.headers.get("x-cache")).toBe("HIT")
      expect(again.text).toBe(first.text)
      expect(again.headers.get("cache-control")).toBe(PUBLIC_CACHE_CONTROL.detail)
      expect(again.headers.get("access-control-allow-origin")).toBe("https://alpha-tours.example")
      expect(again.headers.get("ratelimit-limit")).toBeNull()
      expect(yield* used).toBe(1)
      // Another query is another answer.
      expect((yield* pkGet(`/api/v1/tours/${s.own}`, s.pk)).headers.get("x-cache")).toBe("MISS")
      expect(yield* used).toBe(2)
      // Held per key: another key of the site computes its own.
      const other = yield* Effect.flatMap(
        PublishableKeys,
        (k) => k.create({ siteId: s.alphaSite, createdBy: s.w.alice, name: "Other", origins: ["alpha-tours.example"] })
      ).pipe(Effect.orDie)
      expect((yield* pkGet(`/api/v1/tours/${s.own}?locale=nb`, other.key)).headers.get("x-cache")).toBe("MISS")
      const secret = yield* createKey({ by: s.w.alice, operators: [s.w.alpha], scopes: ["tours:read"] })
      for (let i = 0; i < 2; i++) {
        expect((yield* call(`/api/v1/tours/${s.own}?locale=nb`, { key: secret.token })).headers.get("x-cache"))
          .toBeNull()
      }
    }))

  it.effect("the CLI makes, lists and revokes keys for a site; only its owner's owners and admins may", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const { databaseUrl } = yield* TestServer
      const sql = yield* SqlClient.SqlClient
      const [user] = yield* sql<{ email: string }>`SELECT email FROM users WHERE id = ${s.w.alice}`.pipe(Effect.orDie)
      const [dave] = yield* sql<{ email: string }>`SELECT email FROM users WHERE id = ${s.w.dave}`.pipe(Effect.orDie)
      const made = json(
        yield* Effect.promise(() =>
          cli(
            databaseUrl,
            "keys",
            "publishable",
            "create",
            "--site",
            s.alphaSite,
            "--user",
            user!.email,
            "--origin",
            "Shop.Alpha-Tours.example/",
            "--origin",
            "http://localhost:3000"
          )
        )
      )
      expect(made.key).toMatch(/^pk_widget_[A-Za-z0-9]{24}$/)
      expect(made.allowedOrigins).toEqual(["https://shop.alpha-tours.example", "http://localhost:3000"])
      expect(
        (yield* pkGet("/api/v1/tours", made.key, "https://shop.alpha-tours.example")).headers.get(
          "access-control-allow-origin"
        )
      )
        .toBe("https://shop.alpha-tours.example")
      const listed = json(
        yield* Effect.promise(() => cli(databaseUrl, "keys", "publishable", "list", "--site", s.alphaSite))
      )
      expect(listed.map((k: any) => k.key)).toContain(made.key)
      yield* Effect.promise(() => cli(databaseUrl, "keys", "publishable", "revoke", made.key))
      expect((yield* pkGet("/api/v1/tours", made.key)).status).toBe(401)
      // A member may not; a URL with a path is not an origin.
      yield* Effect.promise(() =>
        expect(
          cli(
            databaseUrl,
            "keys",
            "publishable",
            "create",
            "--site",
            s.alphaSite,
            "--user",
            dave!.email,
            "--origin",
            "alpha-tours.example"
          )
        )
          .rejects.toThrow(/not owner or admin/)
      )
      yield* Effect.promise(() =>
        expect(
          cli(
            databaseUrl,
            "keys",
            "publishable",
            "create",
            "--site",
            s.alphaSite,
            "--user",
            user!.email,
            "--origin",
            "https://alpha-tours.example/shop"
          )
        )
          .rejects.toThrow(/must be an origin/)
      )
    }))

  it.effect("answers match the OpenAPI document, which offers either key on the tours endpoints", () =>
    Effect.gen(function*() {
      const spec: any = yield* dereferencedSpec
      for (const path of ["/api/v1/tours", "/api/v1/tours/{id}", "/api/v1/tours/{id}/availability"]) {
        expect(spec.paths[path].get.security).toEqual([{ bearer: ["tours:read"] }, { publishable: [] }])
      }
      expect(spec.components.securitySchemes.publishable).toMatchObject({ type: "apiKey", in: "query", name: "key" })
      for (const { path, res } of seen.filter((x) => x.path.startsWith("/api/v1/tours") && x.res.status !== 404)) {
        const template = path.split("?")[0]!.replace(/\/tours\/[0-9a-f-]{36}/, "/tours/{id}")
        conforms(spec, "get", template, res)
      }
    }))
})
