/**
 * Holding analytics reads inside the database, for the tests of the per-key concurrency limit
 * (test/partner/analytics/limits.test.ts, test/lifecycle/threeInstances.test.ts): a test transaction
 * locks a rollup table the reads need, and the test waits until the database shows them waiting
 * (no timing assumed).
 */
import { SqlClient } from "@effect/sql"
import { Deferred, Effect, Fiber, Schedule } from "effect"

/**
 * Holds ACCESS EXCLUSIVE on analytics_site_daily in a transaction of its own until `release` is
 * called: every read of site traffic waits behind it.
 */
export const holdTrafficTable = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const locked = yield* Deferred.make<void>()
  const release = yield* Deferred.make<void>()
  const fiber = yield* sql.withTransaction(
    sql`LOCK TABLE analytics_site_daily IN ACCESS EXCLUSIVE MODE`.pipe(
      Effect.zipRight(Deferred.succeed(locked, undefined)),
      Effect.zipRight(Deferred.await(release))
    )
  ).pipe(Effect.orDie, Effect.fork)
  yield* Deferred.await(locked)
  return Effect.zipRight(Deferred.succeed(release, undefined), Fiber.join(fiber))
})

/**
 * Statements of other sessions of this test's database (other test files share the PostgreSQL server)
 * that wait for a lock on analytics_site_daily (the held reads).
 */
export const waitingReads = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) =>
    sql<{ n: number }>`
      SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active'
        AND query LIKE '%FROM analytics_site_daily%'`
)
export const analyticsSlots = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) =>
    sql<{ n: number }>`
      SELECT count(*)::int AS n FROM pg_locks
      WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`
)

export const untilCount = (query: typeof waitingReads, n: number) =>
  query.pipe(
    Effect.orDie,
    Effect.map((rows) => rows[0]!.n),
    Effect.repeat({ until: (count) => count >= n, schedule: Schedule.spaced("20 millis") }),
    Effect.timeoutFail({ duration: "30 seconds", onTimeout: () => new Error(`never saw ${n}`) }),
    Effect.orDie
  )
