/**
 * Two instances on one database, each running the job scheduler on its own cluster runner: every
 * scheduled run of the mirror refresh happens once, on one of them (and the other jobs run too).
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Schedule, Scope } from "effect"
import { layerFromUrl } from "../../src/db/Database.js"
import { IDEMPOTENCY_CLEANUP } from "../../src/jobs/idempotencyCleanup.js"
import { MIRROR_NEAR_TERM } from "../../src/jobs/mirrorRefresh.js"
import { PAYMENT_LINK_WATCH } from "../../src/jobs/paymentLinkWatch.js"
import { freePort } from "../support/globalSetup.js"
import { jobsInstance } from "../support/jobs.js"
import { freshDatabase } from "../support/server.js"

const instance = (databaseUrl: string, clusterPort: number) =>
  jobsInstance(databaseUrl, clusterPort, {
    MIRROR_NEAR_TERM_CRON: "*/2 * * * * *",
    IDEMPOTENCY_CLEANUP_CRON: "*/3 * * * * *",
    PAYMENT_LINK_WATCH_CRON: "*/3 * * * * *"
  })

layer(Layer.empty, { excludeTestServices: true, timeout: 120_000 })("scheduled jobs", (it) => {
  it.scoped("run once per schedule across two instances on one database", () =>
    Effect.gen(function*() {
      const url = yield* freshDatabase
      const [portA, portB] = yield* Effect.promise(() => Promise.all([freePort(), freePort()]))
      const sql = Context.get(yield* Layer.build(layerFromUrl(url, 2)), SqlClient.SqlClient)
      // An idempotency record past its 24 hours and one still inside them.
      const [user] = yield* sql<
        { id: string }
      >`INSERT INTO users (email, name) VALUES ('jobs@example.com', 'Jobs') RETURNING id`
      yield* sql`
        INSERT INTO api_keys (id, secret_hash, name, scopes, created_by, expires_at)
        VALUES ('jobskey0000000000000', '\\x00', 'jobs', '{}', ${user!.id}, now() + interval '1 day')`
      for (
        const [key, expires] of [["old", "now() - interval '1 minute'"], [
          "fresh",
          "now() + interval '1 hour'"
        ]] as const
      ) {
        yield* sql`
          INSERT INTO idempotency_records (key_id, idempotency_key, action, fingerprint, state, claim_token, lease_until, expires_at)
          VALUES ('jobskey0000000000000', ${key}, 'checkins', 'x', 'running', gen_random_uuid(), now(), ${
          sql.literal(expires)
        })`
      }

      const instances = yield* Scope.make()
      yield* Layer.buildWithScope(instance(url, portA!), instances)
      yield* Layer.buildWithScope(instance(url, portB!), instances)
      yield* Effect.sleep("12 seconds")

      // The cluster's storage runs on pools of its own (3 connections per instance by default), and
      // the shard locks are held there, not on the connections the service's requests use.
      const pools = yield* sql<{ app: string; connections: number; locks: number }>`
        SELECT a.application_name AS app, count(DISTINCT a.pid)::int AS connections,
          count(l.pid)::int AS locks
        FROM pg_stat_activity a LEFT JOIN pg_locks l ON l.pid = a.pid AND l.locktype = 'advisory' AND l.granted
        WHERE a.datname = current_database() AND a.pid <> pg_backend_pid()
        GROUP BY a.application_name`
      const cluster = pools.find((p) => p.app === "tour-partner-service/cluster")
      const service = pools.find((p) => p.app === "tour-partner-service")
      expect(cluster?.connections, JSON.stringify(pools)).toBeGreaterThanOrEqual(2)
      expect(cluster!.connections, JSON.stringify(pools)).toBeLessThanOrEqual(6)
      expect(cluster!.locks, JSON.stringify(pools)).toBeGreaterThan(0)
      expect(service?.locks ?? 0, JSON.stringify(pools)).toBe(0)

      const runs = yield* sql<{ scheduled_for: Date | null; duplicates: number; outcome: string; instance: string }>`
        SELECT scheduled_for, duplicate_deliveries AS duplicates, outcome, instance
        FROM job_runs WHERE job = ${MIRROR_NEAR_TERM} ORDER BY scheduled_for`
      // About 6 slots of 2 s passed, each run once (one row per slot: the unique index on the slot).
      expect(runs.length, JSON.stringify(runs)).toBeGreaterThanOrEqual(3)
      expect(runs.every((r) => r.scheduled_for !== null)).toBe(true)
      // The cluster schedules each slot on one instance: a second delivery of a slot is rare (an
      // instance joining moves shards). Had each instance scheduled the job itself, every slot
      // would have been delivered twice.
      const duplicates = runs.reduce((n, r) => n + r.duplicates, 0)
      expect(duplicates, JSON.stringify(runs)).toBeLessThanOrEqual(Math.floor(runs.length / 3))
      // Every finished run succeeded (the latest slot's may still be running while we read).
      expect(runs.filter((r) => r.outcome !== "running").every((r) => r.outcome === "ok"), JSON.stringify(runs)).toBe(
        true
      )
      expect(runs.filter((r) => r.outcome === "ok").length, JSON.stringify(runs)).toBeGreaterThanOrEqual(2)

      // The hourly clean-up (every 3 s here) ran too, once per slot, and removed only the expired record.
      const cleanups = yield* sql<{ scheduled_for: Date }>`
        SELECT scheduled_for FROM job_runs WHERE job = ${IDEMPOTENCY_CLEANUP} AND outcome = 'ok'`
      expect(cleanups.length).toBeGreaterThanOrEqual(2)
      const left = yield* sql<{ idempotency_key: string }>`SELECT idempotency_key FROM idempotency_records`
      expect(left.map((r) => r.idempotency_key)).toEqual(["fresh"])

      // The payment-link watch (every 3 s here) is scheduled too; with no link it asks the provider nothing.
      const watches = yield* sql<{ summary: { checked: number; taken_over: number } }>`
        SELECT summary FROM job_runs WHERE job = ${PAYMENT_LINK_WATCH} AND outcome = 'ok'`
      expect(watches.length).toBeGreaterThanOrEqual(2)
      expect(watches.every((r) => r.summary.checked === 0 && r.summary.taken_over === 0)).toBe(true)

      // Stopping the instances closes the cluster's pools with them.
      yield* Scope.close(instances, Exit.void)
      const clusterConnections = sql<{ n: number }>`
        SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = 'tour-partner-service/cluster'`.pipe(
        Effect.map(([row]) => row!.n)
      )
      const remaining = yield* clusterConnections.pipe(
        // The pools drain as their last statements finish; once in CI one connection was still open
        // after 5 s and once after 15 s, closing just after (cause not pinned down), so allow 30 s and name
        // what is still open if any.
        Effect.repeat({ schedule: Schedule.spaced("200 millis"), until: (n) => n === 0, times: 150 })
      )
      const stillOpen = yield* sql<{ state: string; query: string }>`
        SELECT state, query FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = 'tour-partner-service/cluster'`
      expect(remaining, JSON.stringify(stillOpen)).toBe(0)
    }))
})
