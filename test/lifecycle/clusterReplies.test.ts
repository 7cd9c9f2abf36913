/**
 * The cluster's replies belong to their messages (issue 17, defect 8): a scheduled run read back
 * from the message storage is answered under its own id, marked processed, and not run again when
 * the instance restarts. The cluster's ids are int8 snowflakes past 2^53: read as JS numbers they
 * were rounded, each reply was saved under the id of no message, the message stayed unprocessed,
 * and every restart ran it again and failed on `cluster_replies_request_id_kind_key`.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { layerFromUrl } from "../../src/db/Database.js"
import { jobsInstance } from "../support/jobs.js"
import { freshDatabase } from "../support/server.js"

// Every second, so that several runs are delivered from storage (their deliver_at in the future).
const instance = (url: string) => jobsInstance(url, undefined, { QUICKBOOK_EXPIRY_CRON: "* * * * * *" })

layer(Layer.empty, { excludeTestServices: true, timeout: 120_000 })("cluster replies", (it) => {
  it.scoped("are saved under their message's id, and a restart runs nothing again", () =>
    Effect.gen(function*() {
      const url = yield* freshDatabase
      const sql = Context.get(yield* Layer.build(layerFromUrl(url, 2)), SqlClient.SqlClient)
      const runUntilStopped = Effect.gen(function*() {
        const scope = yield* Scope.make()
        yield* Layer.buildWithScope(instance(url), scope)
        yield* Effect.sleep("6 seconds")
        yield* Scope.close(scope, Exit.void)
      })
      yield* runUntilStopped
      const orphans = sql<{ n: number }>`
        SELECT count(*)::int AS n FROM cluster_replies r
        WHERE NOT EXISTS (SELECT 1 FROM cluster_messages m WHERE m.id = r.request_id)`
      const answered = sql<{ n: number }>`
        SELECT count(*)::int AS n FROM cluster_messages m
        WHERE m.entity_type = 'ClusterCron/quickbook-expiry' AND m.processed
          AND EXISTS (SELECT 1 FROM cluster_replies r WHERE r.request_id = m.id AND r.kind = 0)`
      const runs = sql<{ n: number }>`SELECT count(*)::int AS n FROM job_runs WHERE job = 'quickbook-expiry'`
      expect((yield* orphans)[0]!.n).toBe(0)
      expect((yield* answered)[0]!.n).toBeGreaterThanOrEqual(2)
      const before = (yield* runs)[0]!.n
      const slotsBefore = yield* sql<{ slot: string }>`
        SELECT entity_id AS slot FROM cluster_messages
        WHERE entity_type = 'ClusterCron/quickbook-expiry' AND processed`

      // A restart: the slots already answered are not run again (a repeat would also fail on the reply's key).
      yield* runUntilStopped
      expect((yield* orphans)[0]!.n).toBe(0)
      const repeated = yield* sql<{ n: number }>`
        SELECT count(*)::int AS n FROM cluster_messages m
        WHERE m.entity_id IN ${sql.in(slotsBefore.map((s) => s.slot))}
          AND m.entity_type = 'ClusterCron/quickbook-expiry'
          AND (SELECT count(*) FROM cluster_replies r WHERE r.request_id = m.id) <> 1`
      expect(repeated[0]!.n).toBe(0)
      expect((yield* runs)[0]!.n).toBeGreaterThan(before)
    }))
})
