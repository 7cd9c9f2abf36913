/**
 * The outbox sender job as the service runs it (JobsLive: a cluster singleton on the cron
 * schedule), on two instances sharing one database: enqueued emails go out within a few ticks,
 * each once, and ticks that did something leave a job_runs row.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { Outbox } from "../../src/email/Outbox.js"
import { OUTBOX_SENDER } from "../../src/jobs/outboxSender.js"
import { freePort } from "../support/globalSetup.js"
import { jobsInstance } from "../support/jobs.js"
import { cancelledGuest, mailboxCount, outboxOn } from "../support/outbox.js"
import { freshDatabase } from "../support/server.js"

const instance = (databaseUrl: string, clusterPort: number) =>
  jobsInstance(databaseUrl, clusterPort, { OUTBOX_CRON: "* * * * * *" })

const sent = (sql: SqlClient.SqlClient) =>
  sql<{ n: number }>`SELECT count(*)::int AS n FROM email_outbox WHERE status = 'sent'`.pipe(Effect.map((r) => r[0]!.n))

const waitForSent = (sql: SqlClient.SqlClient, n: number) =>
  Effect.gen(function*() {
    for (let i = 0; i < 60; i++) {
      if ((yield* sent(sql)) >= n) return
      yield* Effect.sleep("500 millis")
    }
  })

layer(Layer.empty, { excludeTestServices: true, timeout: 120_000 })("outbox sender job", (it) => {
  it.scoped("sends what is enqueued within a few ticks, each message once, across two instances", () =>
    Effect.gen(function*() {
      const url = yield* freshDatabase
      const context = yield* Layer.build(outboxOn(url))
      const sql = Context.get(context, SqlClient.SqlClient)
      const outbox = Context.get(context, Outbox)
      const [portA, portB] = yield* Effect.promise(() => Promise.all([freePort(), freePort()]))

      const early = yield* Effect.forEach(["JOB-1", "JOB-2", "JOB-3"], (ref) => outbox.enqueue(cancelledGuest(ref)))
      yield* Layer.build(instance(url, portA!))
      yield* Layer.build(instance(url, portB!))
      yield* waitForSent(sql, 3)
      const late = yield* Effect.forEach(["JOB-4", "JOB-5"], (ref) => outbox.enqueue(cancelledGuest(ref)))
      yield* waitForSent(sql, 5)
      // Some more ticks with nothing to do.
      yield* Effect.sleep("3 seconds")

      const count = (messageId?: string) =>
        mailboxCount(messageId).pipe(Effect.provideService(SqlClient.SqlClient, sql))
      for (const q of [...early, ...late]) expect(yield* count(q.messageId), q.messageId).toBe(1)
      expect(yield* count()).toBe(5)
      const runs = yield* sql<{ outcome: string; summary: { claimed: number; sent: number } }>`
        SELECT outcome, summary FROM job_runs WHERE job = ${OUTBOX_SENDER} ORDER BY started_at`
      // Only ticks that sent something are recorded: at least one for each group, at most one per message.
      expect(runs.length).toBeGreaterThanOrEqual(2)
      expect(runs.length).toBeLessThanOrEqual(5)
      expect(runs.every((r) => r.outcome === "ok")).toBe(true)
      expect(runs.reduce((n, r) => n + r.summary.sent, 0)).toBe(5)
    }))
})
