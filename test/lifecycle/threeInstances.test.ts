/**
 * Three instances on one database (issue 17, deliverable 13), each with its HTTP server, pool and job
 * runner: every scheduled run happens once, the per-key rate limit and the analytics limit (2 at a
 * time per key) are exact across the three, and one instance shut down under load (the same drain
 * as SIGTERM: src/http/lifecycle/nodeServer.ts, then its jobs and pools) answers every request it
 * accepted while the other two take over its jobs.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Context, Effect, Exit, Fiber, Layer, Schedule, Scope } from "effect"
import { QUICKBOOK_EXPIRY } from "../../src/jobs/quickbookExpiry.js"
import { insertTraffic } from "../support/analytics.js"
import { holdTrafficTable, untilCount, waitingReads } from "../support/analyticsLocks.js"
import { createKey, makeWorld } from "../support/fixtures.js"
import { call } from "../support/http.js"
import { jobsInstance } from "../support/jobs.js"
import { withRoomInWindow } from "../support/rateWindow.js"
import { serverOn, TestServer, testServer } from "../support/server.js"
import { createSite } from "../support/tours.js"

const LIMIT = 9
const ENV = { RATE_LIMIT_PER_MINUTE: String(LIMIT) }
const JOBS_ENV = { QUICKBOOK_EXPIRY_CRON: "* * * * * *" }

/** A second or third instance on the first one's database: HTTP on top of its jobs, as src/app.ts builds it. */
const instance = (databaseUrl: string) =>
  serverOn(databaseUrl, ENV).pipe(Layer.provideMerge(jobsInstance(databaseUrl, undefined, JOBS_ENV)))

const baseUrlOf = (ctx: Context.Context<TestServer>) => Context.get(ctx, TestServer).baseUrl

const count = <E>(query: Effect.Effect<ReadonlyArray<{ readonly n: number }>, E>) =>
  Effect.map(Effect.orDie(query), (rows) => rows[0]!.n)

type Outcome = { readonly status: number } | { readonly refused: true } | { readonly error: string }

/** One GET; a refused connection (the listener closed) is told apart from any other failure. */
const attempt = (url: string, key: string): Promise<Outcome> =>
  fetch(url, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(30_000) }).then(
    async (res) => {
      await res.text()
      return { status: res.status }
    },
    (e: Error & { cause?: { code?: string } }) =>
      e.cause?.code === "ECONNREFUSED" ? { refused: true } : { error: `${e.name}: ${e.cause?.code ?? e.message}` }
  )

layer(testServer({ env: ENV }), { excludeTestServices: true, timeout: 240_000 })("three instances", (it) => {
  it.scoped("share jobs, rate limit and analytics limit exactly; one stops under load and the others take over", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const { baseUrl: a, databaseUrl } = yield* TestServer
      yield* Layer.build(jobsInstance(databaseUrl, undefined, JOBS_ENV)) // the first instance's jobs
      const b = baseUrlOf(yield* Layer.build(instance(databaseUrl)))
      const cScope = yield* Scope.make()
      const c = baseUrlOf(yield* Layer.buildWithScope(instance(databaseUrl), cScope))
      const runners = count(sql<{ n: number }>`SELECT count(*)::int AS n FROM cluster_runners WHERE healthy`)
      yield* runners.pipe(Effect.repeat({ until: (n) => n === 3, schedule: Schedule.spaced("200 millis") }))

      const w = yield* makeWorld
      const limited = (yield* createKey({ by: w.alice, operators: [w.alpha] })).token
      const loadKey = (yield* createKey({ by: w.alice, operators: [w.alpha] })).token
      const analyticsKey = (yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["analytics:read"] })).token
      const site = yield* createSite(w.alpha, "Three Instances")
      yield* insertTraffic(site, "2026-05-01", { visitors: 3 })

      // The rate limit: 30 requests at once, spread over the three, get exactly LIMIT answers.
      yield* withRoomInWindow(20)
      const statuses = yield* Effect.all(
        Array.from({ length: 30 }, (_, i) => call("/api/v1/me", { key: limited, baseUrl: [a, b, c][i % 3]! })),
        { concurrency: 30 }
      ).pipe(Effect.map((replies) => replies.map((r) => r.status)))
      expect(statuses.filter((s) => s === 200)).toHaveLength(LIMIT)
      expect(statuses.filter((s) => s === 429)).toHaveLength(30 - LIMIT)

      // The analytics limit: 2 per instance at once for one key; exactly 2 run (held in the database), 4 answer 429.
      const release = yield* holdTrafficTable
      const reads = yield* Effect.forEach(
        [a, a, b, b, c, c],
        (base) =>
          Effect.fork(
            call("/api/v1/analytics/sites?from=2026-05-01&to=2026-05-02", { key: analyticsKey, baseUrl: base })
          ),
        { concurrency: "unbounded" }
      )
      yield* untilCount(waitingReads, 2)
      // The four others answer while the two are held.
      const polled = Effect.forEach(reads, (fiber) => Fiber.poll(fiber))
      let done = yield* polled
      while (done.filter((p) => p._tag === "Some").length < 4) {
        yield* Effect.sleep("50 millis")
        done = yield* polled
      }
      const early = done.flatMap((p) => p._tag === "Some" && Exit.isSuccess(p.value) ? [p.value.value.status] : [])
      expect(early).toEqual([429, 429, 429, 429])
      yield* release
      const readStatuses = (yield* Effect.forEach(reads, Fiber.join)).map((r) => r.status).sort()
      expect(readStatuses).toEqual([200, 200, 429, 429, 429, 429])

      // Load on the third instance while it shuts down: every request it accepted is answered.
      const before = yield* count(
        sql<{ n: number }>`SELECT count(*)::int AS n FROM job_runs WHERE job = ${QUICKBOOK_EXPIRY}`
      )
      let stop = false
      const outcomes: Array<Outcome> = []
      const load = Effect.promise(() =>
        Promise.all(Array.from({ length: 6 }, async (_, i) => {
          while (!stop) outcomes.push(await attempt(`${c}${i % 2 ? "/readyz" : "/api/v1/bookings?limit=1"}`, loadKey))
        }))
      )
      const loading = yield* Effect.fork(load)
      yield* Effect.sleep("1 second")
      yield* Scope.close(cScope, Exit.void)
      stop = true
      yield* Fiber.join(loading)
      const answered = outcomes.filter((o) => "status" in o)
      expect(outcomes.filter((o) => "error" in o)).toEqual([])
      expect(answered.length).toBeGreaterThan(0)
      expect(answered.every((o) => "status" in o && [200, 429, 503].includes(o.status))).toBe(true)
      expect(outcomes.filter((o) => "refused" in o).length).toBeGreaterThan(0) // the load outlived the listener

      // Its runner left the cluster; the scheduled runs go on, on the other two, each slot once.
      expect(yield* runners).toBe(2)
      yield* count(sql<{ n: number }>`SELECT count(*)::int AS n FROM job_runs WHERE job = ${QUICKBOOK_EXPIRY}`).pipe(
        Effect.repeat({ until: (n) => n >= before + 5, schedule: Schedule.spaced("500 millis") }),
        Effect.timeout("60 seconds")
      )
      const slots = yield* sql<{ slot: string; runs: number; outcome: string; duplicates: number }>`
        SELECT scheduled_for::text AS slot, count(*)::int AS runs, min(outcome) AS outcome,
          max(duplicate_deliveries)::int AS duplicates
        FROM job_runs WHERE job = ${QUICKBOOK_EXPIRY} GROUP BY scheduled_for`
      expect(slots.length).toBeGreaterThanOrEqual(before + 5)
      expect(slots.filter((s) => s.runs !== 1 || s.outcome !== "ok")).toEqual([])
      // The cluster delivered every run once (a second delivery would only be counted, not run).
      expect(slots.filter((s) => s.duplicates > 0)).toEqual([])
    }))
})
