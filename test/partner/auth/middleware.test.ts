import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Operators } from "../../../src/operators/Operators.js"
import { SCOPES } from "../../../src/partner/auth/scopes.js"
import { createKey, insertBooking, makeWorld } from "../../support/fixtures.js"
import { get, type Reply } from "../../support/http.js"
import { testServer } from "../../support/server.js"

const expectProblem = (res: Reply, status: number) => {
  expect(res.status).toBe(status)
  expect(res.headers.get("content-type")).toBe("application/problem+json")
  expect(res.body).toMatchObject({
    status,
    type: expect.any(String),
    title: expect.any(String),
    detail: expect.any(String)
  })
  expect(res.body.request_id).toBe(res.headers.get("x-request-id"))
}

layer(testServer(), { excludeTestServices: true, timeout: 120_000 })("authentication", (it) => {
  describe("401", () => {
    it.effect("missing Authorization header", () =>
      Effect.gen(function*() {
        const res = yield* get("/api/v1/me")
        expectProblem(res, 401)
        expect(res.headers.get("www-authenticate")).toBe(`Bearer realm="partner-api"`)
      }))

    it.effect("empty bearer, other schemes and malformed keys", () =>
      Effect.gen(function*() {
        for (
          const authorization of [
            "Bearer ",
            "Bearer",
            "Basic dXNlcjpwYXNz",
            "svc_live_abc",
            "Bearer svc_live_short_secret",
            "Bearer svc_test_AAAAAAAAAAAAAAAAAAAA_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"
          ]
        ) {
          const res = yield* get("/api/v1/me", undefined, { authorization })
          expectProblem(res, 401)
        }
      }))

    it.effect("unknown key id and wrong secret", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const key = yield* createKey({ by: w.alice, operators: [w.alpha] })
        expectProblem(yield* get("/api/v1/me", "svc_live_AAAAAAAAAAAAAAAAAAAA_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"), 401)
        const wrongSecret = key.token.slice(0, -1) + (key.token.endsWith("A") ? "B" : "A")
        expectProblem(yield* get("/api/v1/me", wrongSecret), 401)
        expect((yield* get("/api/v1/me", key.token)).status).toBe(200)
      }))

    it.effect("expired key", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const key = yield* createKey({ by: w.alice, operators: [w.alpha], expiresAt: new Date(Date.now() - 1000) })
        const res = yield* get("/api/v1/me", key.token)
        expectProblem(res, 401)
        expect(res.body.detail).toContain("expired")
      }))

    it.effect("revoked key", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const key = yield* createKey({ by: w.alice, operators: [w.alpha] })
        expect((yield* get("/api/v1/me", key.token)).status).toBe(200)
        yield* Effect.flatMap(Operators, (a) => a.revokeKey(key.id))
        const res = yield* get("/api/v1/me", key.token)
        expectProblem(res, 401)
        expect(res.body.detail).toContain("revoked")
      }))

    it.effect("creator no longer owner or admin of any operator on the key", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const admin = yield* Operators
        const key = yield* createKey({ by: w.bob, operators: [w.alpha] })
        expect((yield* get("/api/v1/me", key.token)).status).toBe(200)
        yield* admin.changeRole(w.alpha, w.bob, "member")
        expectProblem(yield* get("/api/v1/me", key.token), 401)
        expectProblem(yield* get("/api/v1/bookings", key.token), 401)
        // Restored rights bring the key back.
        yield* admin.changeRole(w.alpha, w.bob, "admin")
        expect((yield* get("/api/v1/me", key.token)).status).toBe(200)
        // Membership removed altogether.
        const sql = yield* SqlClient.SqlClient
        yield* sql`DELETE FROM memberships WHERE operator_id = ${w.alpha} AND user_id = ${w.bob}`
        expectProblem(yield* get("/api/v1/me", key.token), 401)
      }))

    it.effect("a bad key answers 401 before any 400 for bad parameters", () =>
      Effect.gen(function*() {
        expectProblem(yield* get("/api/v1/bookings?limit=0&status=NOPE"), 401)
      }))
  })

  describe("multi-operator keys", () => {
    it.effect("acts for the operators where the creator is still owner or admin", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const admin = yield* Operators
        const key = yield* createKey({ by: w.bob, operators: [w.alpha, w.beta] })
        const me = yield* get("/api/v1/me", key.token)
        expect(me.status).toBe(200)
        expect(me.body.partners.map((p: any) => p.id).sort()).toEqual([w.alpha, w.beta].sort())
        expect(me.body.partner).toEqual(me.body.partners[0])
        expect(me.body.partners[0].name < me.body.partners[1].name).toBe(true)

        const inAlpha = yield* insertBooking({ operatorId: w.alpha })
        const inBeta = yield* insertBooking({ operatorId: w.beta })
        const ids = (yield* get("/api/v1/bookings", key.token)).body.data.map((b: any) => b.id)
        expect(ids).toEqual(expect.arrayContaining([inAlpha, inBeta]))

        // Bob loses admin on Alpha: the key now acts for Beta only.
        yield* admin.changeRole(w.alpha, w.bob, "member")
        const after = yield* get("/api/v1/me", key.token)
        expect(after.body.partners.map((p: any) => p.id)).toEqual([w.beta])
        expect((yield* get(`/api/v1/bookings/${inAlpha}`, key.token)).status).toBe(404)
        expect((yield* get(`/api/v1/bookings/${inBeta}`, key.token)).status).toBe(200)
        expect((yield* get(`/api/v1/bookings?partner_id=${w.alpha}`, key.token)).status).toBe(404)
        yield* admin.changeRole(w.alpha, w.bob, "admin")
      }))
  })

  describe("/me", () => {
    it.effect("describes the key for any valid key, whatever its scopes", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const key = yield* createKey({
          by: w.alice,
          operators: [w.alpha],
          scopes: ["analytics:read"],
          name: "Analytics only"
        })
        const res = yield* get("/api/v1/me", key.token)
        expect(res.status).toBe(200)
        expect(res.body.key).toMatchObject({ id: key.id, name: "Analytics only", scopes: ["analytics:read"] })
        expect(Date.parse(res.body.key.created_at)).toBeGreaterThan(0)
        expect(Date.parse(res.body.key.expires_at)).toBeGreaterThan(Date.now())
        expect(res.body.partner).toEqual({ id: w.alpha, name: `Alpha Tours ${w.tag}` })
        expect(res.body.partners).toEqual([{ id: w.alpha, name: `Alpha Tours ${w.tag}` }])
        expect(res.headers.get("cache-control")).toBe("private, no-store")
      }))
  })

  describe("403 per scope", () => {
    it.effect("every bookings endpoint needs bookings:read; any other scope is 403 naming it", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const booking = yield* insertBooking({ operatorId: w.alpha })
        const full = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["bookings:read"] })
        for (const path of ["/api/v1/bookings", `/api/v1/bookings/${booking}`]) {
          expect((yield* get(path, full.token)).status).toBe(200)
          for (const scope of SCOPES.filter((s) => s !== "bookings:read")) {
            const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: [scope] })
            const res = yield* get(path, key.token)
            expectProblem(res, 403)
            expect(res.body.scope).toBe("bookings:read")
          }
        }
      }))
  })

  describe("order of checks", () => {
    it.effect("a key without the scope gets 403 before any parameter is validated", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["tours:read"] })
        const res = yield* get("/api/v1/bookings?limit=0&status=NOPE", key.token)
        expectProblem(res, 403)
        expectProblem(yield* get("/api/v1/bookings/not-a-uuid", key.token), 403)
        expect(res.headers.get("ratelimit-limit")).toBe("300")
      }))
  })

  describe("keys in the URL", () => {
    it.effect("are refused with 400 even when the header is also valid", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const key = yield* createKey({ by: w.alice, operators: [w.alpha] })
        for (const param of ["key", "api_key", "access_token", "whatever"]) {
          const res = yield* get(`/api/v1/bookings?${param}=${encodeURIComponent(key.token)}`, key.token)
          expectProblem(res, 400)
          expect(res.body.detail).toContain("URL")
        }
        expectProblem(yield* get(`/api/v1/me?key=${key.token}`), 400)
        expectProblem(yield* get(`/api/v1/bookings/${key.token}`, key.token), 400)
        expectProblem(yield* get(`/api/v1/me?key=${encodeURIComponent(key.token).replaceAll("_", "%5F")}`), 400)
      }))
  })
})
