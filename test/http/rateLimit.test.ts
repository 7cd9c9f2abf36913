import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { createKey, makeWorld } from "../support/fixtures.js"
import { call, get } from "../support/http.js"
import { withRoomInWindow } from "../support/rateWindow.js"
import { serverOn, TestServer, testServer } from "../support/server.js"

const LIMIT = 7

/** Second instance: its own HTTP server and pool on the first one's database. */
const second = Effect.gen(function*() {
  const first = yield* TestServer
  const ctx = yield* Layer.build(serverOn(first.databaseUrl, { RATE_LIMIT_PER_MINUTE: String(LIMIT) }))
  return ctx.unsafeMap.get(TestServer.key) as { baseUrl: string }
})

const parseDraft = (value: string | null) => {
  const m = /^"default";r=(\d+);t=(\d+)$/.exec(value ?? "")
  expect(m, `RateLimit: ${value}`).not.toBeNull()
  return { remaining: Number(m![1]), reset: Number(m![2]) }
}

layer(testServer({ env: { RATE_LIMIT_PER_MINUTE: String(LIMIT) } }), { excludeTestServices: true, timeout: 120_000 })(
  "rate limit",
  (it) => {
    it.scoped("is shared by every instance on one database, with both header styles and Retry-After on 429", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const key = yield* createKey({ by: w.alice, operators: [w.alpha] })
        const other = yield* createKey({ by: w.alice, operators: [w.alpha] })
        const b = yield* second

        // Requests alternate between the two instances; the budget is one.
        yield* withRoomInWindow(20)
        const remaining: Array<number> = []
        for (let i = 0; i < LIMIT; i++) {
          const res = i % 2 === 0
            ? yield* get("/api/v1/me", key.token)
            : yield* call("/api/v1/me", { key: key.token, baseUrl: b.baseUrl })
          expect(res.status).toBe(200)
          expect(res.headers.get("ratelimit-policy")).toBe(`"default";q=${LIMIT};w=60`)
          expect(res.headers.get("ratelimit-limit")).toBe(String(LIMIT))
          const draft = parseDraft(res.headers.get("ratelimit"))
          expect(res.headers.get("ratelimit-remaining")).toBe(String(draft.remaining))
          expect(res.headers.get("ratelimit-reset")).toBe(String(draft.reset))
          expect(draft.reset).toBeGreaterThanOrEqual(1)
          expect(draft.reset).toBeLessThanOrEqual(60)
          remaining.push(draft.remaining)
        }
        expect(remaining).toEqual(Array.from({ length: LIMIT }, (_, i) => LIMIT - 1 - i))

        for (const target of [undefined, b.baseUrl]) {
          const res = yield* call("/api/v1/bookings", { key: key.token, ...(target ? { baseUrl: target } : {}) })
          expect(res.status).toBe(429)
          expect(res.headers.get("content-type")).toBe("application/problem+json")
          const retry = Number(res.headers.get("retry-after"))
          expect(retry).toBeGreaterThanOrEqual(1)
          expect(retry).toBeLessThanOrEqual(60)
          expect(res.body.retry_after).toBe(retry)
          expect(parseDraft(res.headers.get("ratelimit")).remaining).toBe(0)
          expect(res.headers.get("ratelimit-remaining")).toBe("0")
        }
        // Another key has its own budget.
        expect((yield* get("/api/v1/me", other.token)).status).toBe(200)
      }))

    it.effect("concurrent requests through both instances never exceed the limit", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const key = yield* createKey({ by: w.alice, operators: [w.alpha] })
        // Start the burst early in a window so that it stays inside it.
        yield* withRoomInWindow(10)
        const probe = yield* get("/api/v1/me", key.token)
        const used = LIMIT - parseDraft(probe.headers.get("ratelimit")).remaining
        const results = yield* Effect.scoped(Effect.gen(function*() {
          const s = yield* second
          return yield* Effect.all(
            Array.from({ length: 30 }, (_, i) =>
              call("/api/v1/me", { key: key.token, ...(i % 2 ? { baseUrl: s.baseUrl } : {}) })),
            { concurrency: 30 }
          )
        }))
        expect(
          results.filter((r) =>
            r.status === 200
          ).length
        ).toBe(LIMIT - used)
        expect(results.filter((r) => r.status === 429).length).toBe(30 - (LIMIT - used))
      }))

    it.effect("unauthenticated requests carry no rate-limit headers", () =>
      Effect.gen(function*() {
        const res = yield* get("/api/v1/me")
        expect(res.status).toBe(401)
        expect(res.headers.get("ratelimit")).toBeNull()
      }))
  }
)
