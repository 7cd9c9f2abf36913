/**
 * The analytics limits across instances (spec §8): at most 2 analytics requests at a time per key on
 * every instance sharing the database (more: 429 with Retry-After), and a request whose statement runs
 * past the deadline answers 503 with the statement gone from the database. Requests are held inside
 * the database by a test transaction that locks a rollup table the read needs (no timing assumed: the
 * test waits until the database shows the requests waiting).
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Fiber, Layer, Schedule } from "effect"
import { insertTraffic } from "../../support/analytics.js"
import { analyticsSlots, holdTrafficTable, untilCount, waitingReads } from "../../support/analyticsLocks.js"
import { createKey, makeWorld } from "../../support/fixtures.js"
import { call, type Reply } from "../../support/http.js"
import { serverOn, TestServer, testServer } from "../../support/server.js"
import { createSite } from "../../support/tours.js"

const RANGE = "from=2026-05-01&to=2026-05-02"

/** Another instance (its own HTTP server and pool) on the first one's database. */
const instance = (env: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const first = yield* TestServer
    const ctx = yield* Layer.build(serverOn(first.databaseUrl, env))
    return (ctx.unsafeMap.get(TestServer.key) as { baseUrl: string }).baseUrl
  })

const world = Effect.gen(function*() {
  const w = yield* makeWorld
  const site = yield* createSite(w.alpha, "Limits Site")
  yield* insertTraffic(site, "2026-05-01", { visitors: 10 })
  const key = (yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["analytics:read"] })).token
  const other = (yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["analytics:read"] })).token
  return { ...w, key, other }
})

const sites = (baseUrl: string, key: string) => call(`/api/v1/analytics/sites?${RANGE}`, { key, baseUrl })

layer(testServer(), { excludeTestServices: true, timeout: 120_000 })("analytics limits", (it) => {
  it.scoped("2 requests at a time per key across two instances on one database; the third answers 429", () =>
    Effect.gen(function*() {
      const w = yield* world
      const a = (yield* TestServer).baseUrl
      const b = yield* instance()
      const release = yield* holdTrafficTable

      // One request on each instance: both take a slot of the key and wait inside the database.
      const first = yield* Effect.fork(sites(a, w.key))
      const second = yield* Effect.fork(sites(b, w.key))
      yield* untilCount(waitingReads, 2)
      expect((yield* analyticsSlots)[0]!.n).toBe(2)

      // A third on either instance: 429 at once, with Retry-After.
      for (const base of [a, b]) {
        const refused: Reply = yield* sites(base, w.key)
        expect(refused.status, refused.text).toBe(429)
        expect(refused.headers.get("retry-after")).toBe("1")
        expect(refused.headers.get("content-type")).toContain("application/problem+json")
        expect(refused.body.retry_after).toBe(1)
        expect(refused.body.detail).toContain("at most 2 at a time")
      }
      // Another key is not limited by this one (tours do not read the locked table).
      const otherKey = yield* call(`/api/v1/analytics/tours?${RANGE}`, { key: w.other, baseUrl: b })
      expect(otherKey.status, otherKey.text).toBe(200)

      yield* release
      for (const fiber of [first, second]) {
        const res = yield* Fiber.join(fiber)
        expect(res.status, res.text).toBe(200)
        expect(res.body.sites[0].traffic.visitors).toBe(10)
      }
      // The slots went with the transactions: the key reads again, on both instances.
      expect((yield* analyticsSlots)[0]!.n).toBe(0)
      expect((yield* sites(a, w.key)).status).toBe(200)
      expect((yield* sites(b, w.key)).status).toBe(200)
    }))

  it.scoped("a slot whose connection dies (an instance crashing) is free at once; nothing to expire or clean up", () =>
    Effect.gen(function*() {
      const w = yield* world
      const a = (yield* TestServer).baseUrl
      const b = yield* instance()
      const release = yield* holdTrafficTable
      const tours = (base: string) => call(`/api/v1/analytics/tours?${RANGE}`, { key: w.key, baseUrl: base })

      const first = yield* Effect.fork(sites(a, w.key))
      const second = yield* Effect.fork(sites(b, w.key))
      yield* untilCount(waitingReads, 2)
      expect((yield* tours(a)).status).toBe(429)

      // One of the two reading connections goes away, as in a crash: the database ends its session and its lock.
      const sql = yield* SqlClient.SqlClient
      const ended = yield* sql<{ ok: boolean }>`
        SELECT pg_terminate_backend(min(pid)) AS ok FROM pg_locks
        WHERE locktype = 'advisory' AND granted
          AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`
      expect(ended.map((r) => r.ok)).toEqual([true])
      yield* analyticsSlots.pipe(
        Effect.orDie,
        Effect.repeat({ until: (rows) => rows[0]!.n === 1, schedule: Schedule.spaced("20 millis") }),
        Effect.timeout("30 seconds")
      )
      // The freed slot is taken by the next request at once (tours do not read the locked table).
      const next = yield* tours(a)
      expect(next.status, next.text).toBe(200)

      yield* release
      const answers = [(yield* Fiber.join(first)).status, (yield* Fiber.join(second)).status].sort()
      // The request whose connection was killed fails as "the database did not answer" (503 with
      // Retry-After: its connection was terminated, src/db/unreachable.ts); the other answers.
      expect(answers).toEqual([200, 503])
      expect((yield* analyticsSlots)[0]!.n).toBe(0)
    }))

  it.scoped("a read past the deadline answers 503 and its statement is cancelled in the database", () =>
    Effect.gen(function*() {
      const w = yield* world
      // An instance whose deadline is 1 s (ANALYTICS_TIMEOUT_MS; 20 s by default).
      const quick = yield* instance({ ANALYTICS_TIMEOUT_MS: "1000" })
      const release = yield* holdTrafficTable

      const res = yield* sites(quick, w.key)
      expect(res.status, res.text).toBe(503)
      expect(res.headers.get("content-type")).toContain("application/problem+json")
      expect(res.body.type).toBe("/api/v1/docs/errors.md#unavailable")
      expect(res.body.detail).toContain("took longer than 1 s")
      // Nothing of the request is left in the database: no statement waiting or running, no slot held.
      expect((yield* waitingReads)[0]!.n).toBe(0)
      expect((yield* analyticsSlots)[0]!.n).toBe(0)
      const sql = yield* SqlClient.SqlClient
      const waiters = yield* sql<{ n: number }>`
        SELECT count(*)::int AS n FROM pg_locks
        WHERE NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`
      expect(waiters[0]!.n).toBe(0)

      yield* release
      const after = yield* sites(quick, w.key)
      expect(after.status, after.text).toBe(200)
    }))
})
