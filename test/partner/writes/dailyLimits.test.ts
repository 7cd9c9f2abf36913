import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { DailyLimits } from "../../../src/partner/writes/DailyLimits.js"
import { createKey, makeWorld } from "../../support/fixtures.js"
import type { Reply } from "../../support/http.js"
import { auditOf, checkin, usedToday } from "../../support/manifest.js"
import { insertRows } from "../../support/mirror.js"
import { serverOn, TestServer, testServer } from "../../support/server.js"

/** Seconds from the database's now to the next UTC midnight. */
const secondsToUtcMidnight = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ s: number }>`
    SELECT extract(epoch FROM (((now() AT TIME ZONE 'UTC')::date + 1)::timestamp AT TIME ZONE 'UTC') - now())::float8 AS s`
    .pipe(Effect.map((r) => r[0]!.s), Effect.orDie))

const setLimits = (keyId: string, limits: Parameters<DailyLimits["setOverrides"]>[1]) =>
  Effect.flatMap(DailyLimits, (l) => l.setOverrides(keyId, limits)).pipe(
    Effect.provide(DailyLimits.Default),
    Effect.orDie
  )

const expectDailyLimit = (res: Reply, expectedSeconds: number) => {
  expect(res.status, res.text).toBe(429)
  expect(res.headers.get("content-type")).toBe("application/problem+json")
  expect(res.body.type).toBe("/api/v1/docs/errors.md#daily-limit-reached")
  expect(res.body.limit).toBe("checkins")
  const retryAfter = Number(res.headers.get("retry-after"))
  expect(res.body.retry_after).toBe(retryAfter)
  expect(Math.abs(retryAfter - expectedSeconds), `Retry-After ${retryAfter} vs ${expectedSeconds}`).toBeLessThanOrEqual(
    5
  )
  expect(retryAfter).toBeGreaterThanOrEqual(1)
  expect(retryAfter).toBeLessThanOrEqual(86_400)
}

const second = Effect.gen(function*() {
  const first = yield* TestServer
  const ctx = yield* Layer.build(serverOn(first.databaseUrl))
  return ctx.unsafeMap.get(TestServer.key) as { baseUrl: string }
})

layer(testServer(), { excludeTestServices: true, timeout: 120_000 })("daily write limits", (it) => {
  it.scoped("exact under concurrency: limit 20, 50 parallel check-ins over two instances: 20 × 200, 30 × 429", () =>
    Effect.gen(function*() {
      const w = yield* makeWorld
      const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["checkins:write"] })
      yield* setLimits(key.id, { checkins: 20 })
      const rows = yield* insertRows(w.alpha, 50)
      const b = yield* second
      const results = yield* Effect.all(
        rows.map((row, i) =>
          checkin(row, { status: "checked_in" }, { key: key.token, ...(i % 2 ? { baseUrl: b.baseUrl } : {}) })
        ),
        { concurrency: "unbounded" }
      )
      const toMidnight = yield* secondsToUtcMidnight
      expect(results.filter((r) => r.status === 200)).toHaveLength(20)
      const refused = results.filter((r) => r.status !== 200)
      expect(refused).toHaveLength(30)
      for (const r of refused) expectDailyLimit(r, toMidnight)
      expect(yield* usedToday(key.id)).toBe(20)
      const sql = yield* SqlClient.SqlClient
      const [{ n }] = yield* sql<{ n: number }>`
        SELECT count(*)::int AS n FROM manifest_checkins WHERE row_id IN ${sql.in(rows)}`
      expect(n).toBe(20)
      const audit = yield* auditOf(key.id)
      expect(audit.filter((a) => a.outcome === "done")).toHaveLength(20)
      expect(audit.filter((a) => a.outcome === "refused" && a.reason === "daily-limit-reached" && a.status === 429))
        .toHaveLength(30)
      // Other keys and other actions have their own budgets.
      const other = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["checkins:write"] })
      expect((yield* checkin(rows[0]!, { status: "no_show" }, { key: other.token })).status).toBe(200)
      expect(yield* usedToday(key.id, "cancels")).toBe(0)
    }))

  it.effect("refusals and no-ops do not count; past the limit even a would-be no-op answers 429", () =>
    Effect.gen(function*() {
      const w = yield* makeWorld
      const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["checkins:write"] })
      yield* setLimits(key.id, { checkins: 2 })
      const [a, b, c] = yield* insertRows(w.alpha, 3, { participants: 2 })
      const [foreign] = yield* insertRows(w.beta, 1)
      const [cancelled] = yield* insertRows(w.alpha, 1, { status: "CANCELLED" })

      expect((yield* checkin(foreign!, { status: "checked_in" }, { key: key.token })).status).toBe(404)
      expect((yield* checkin(cancelled!, { status: "no_show" }, { key: key.token })).status).toBe(422)
      expect((yield* checkin(a!, { status: "checked_in", present: 3 }, { key: key.token })).status).toBe(400)
      expect((yield* checkin(a!, { status: "bogus" }, { key: key.token })).status).toBe(400)
      expect((yield* checkin(a!, { status: "clear" }, { key: key.token })).status).toBe(200) // nothing to clear
      expect(yield* usedToday(key.id)).toBe(0)

      expect((yield* checkin(a!, { status: "checked_in" }, { key: key.token })).status).toBe(200)
      expect((yield* checkin(a!, { status: "checked_in" }, { key: key.token })).status).toBe(200) // no-op
      expect(yield* usedToday(key.id)).toBe(1)
      const lastId = randomUUID()
      const last = yield* checkin(b!, { status: "no_show" }, { key: key.token, idempotencyKey: lastId })
      expect(last.status).toBe(200)
      expect(yield* usedToday(key.id)).toBe(2)
      // At the limit, a replay still answers the stored response: it takes no slot.
      const replay = yield* checkin(b!, { status: "no_show" }, { key: key.token, idempotencyKey: lastId })
      expect(replay.status).toBe(200)
      expect(replay.headers.get("idempotent-replayed")).toBe("true")
      expect(replay.text).toBe(last.text)
      expect(yield* usedToday(key.id)).toBe(2)

      const toMidnight = yield* secondsToUtcMidnight
      const id = randomUUID()
      expectDailyLimit(yield* checkin(c!, { status: "checked_in" }, { key: key.token, idempotencyKey: id }), toMidnight)
      expectDailyLimit(yield* checkin(a!, { status: "checked_in" }, { key: key.token }), toMidnight)
      expect(yield* usedToday(key.id)).toBe(2)

      // A 429 is not the key's final answer: once the limit allows, the same key runs.
      yield* setLimits(key.id, { checkins: 3 })
      const retry = yield* checkin(c!, { status: "checked_in" }, { key: key.token, idempotencyKey: id })
      expect(retry.status).toBe(200)
      expect(retry.headers.get("idempotent-replayed")).toBeNull()
      expect(yield* usedToday(key.id)).toBe(3)
    }))

  it.effect("limit 0 refuses every check-in; counters are per UTC day of the database clock", () =>
    Effect.gen(function*() {
      const w = yield* makeWorld
      const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["checkins:write"] })
      const [row] = yield* insertRows(w.alpha, 1)
      const sql = yield* SqlClient.SqlClient
      // Yesterday's writes do not count today.
      yield* sql`
        INSERT INTO daily_write_counters (key_id, action, day, used)
        VALUES (${key.id}, 'checkins', (now() AT TIME ZONE 'UTC')::date - 1, 2000)`
      expect((yield* checkin(row!, { status: "checked_in" }, { key: key.token })).status).toBe(200)
      const [today] = yield* sql<{ day: string }>`
        SELECT day::text AS day FROM daily_write_counters WHERE key_id = ${key.id} AND used = 1`
      const [db] = yield* sql<{ day: string }>`SELECT ((now() AT TIME ZONE 'UTC')::date)::text AS day`
      expect(today!.day).toBe(db!.day)

      yield* setLimits(key.id, { checkins: 0 })
      expectDailyLimit(yield* checkin(row!, { status: "no_show" }, { key: key.token }), yield* secondsToUtcMidnight)
    }))

  it.effect("defaults: 2000 check-ins, 50 payment links, 20 cancels, 20 reschedules; overrides per key", () =>
    Effect.gen(function*() {
      const w = yield* makeWorld
      const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["checkins:write"] })
      const limits = yield* Effect.provide(DailyLimits, DailyLimits.Default)
      expect(yield* limits.statusOf(key.id)).toEqual([
        { action: "checkins", limit: 2000, overridden: false, used_today: 0 },
        { action: "payment_links", limit: 50, overridden: false, used_today: 0 },
        { action: "cancels", limit: 20, overridden: false, used_today: 0 },
        { action: "reschedules", limit: 20, overridden: false, used_today: 0 }
      ])
      yield* limits.setOverrides(key.id, { cancels: 5 })
      expect((yield* limits.statusOf(key.id))[2]).toEqual({
        action: "cancels",
        limit: 5,
        overridden: true,
        used_today: 0
      })
      yield* limits.clearOverrides(key.id)
      expect((yield* limits.statusOf(key.id))[2]).toEqual({
        action: "cancels",
        limit: 20,
        overridden: false,
        used_today: 0
      })
      expect((yield* Effect.flip(limits.setOverrides(key.id, { cancels: -1 })))._tag).toBe("InvalidRequest")
      expect((yield* Effect.flip(limits.setOverrides("NoSuchKeyAAAAAAAAAAA", { cancels: 1 })))._tag).toBe("NotFound")
    }))
})
