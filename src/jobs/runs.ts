/**
 * Every run of a scheduled job leaves a `job_runs` row: which instance ran it, when it was
 * scheduled for, and what it did.
 *
 * A scheduled run first claims its slot (job, scheduled time) with a unique index. The cluster
 * delivers a cron run at least once; a second delivery of a slot (seen while an instance joins and
 * shards move between instances) only bumps `duplicate_deliveries` and does nothing else.
 */
import { SqlClient } from "@effect/sql"
import { DateTime, Effect, HashMap, Option } from "effect"
import * as os from "node:os"

/** This process, as job_runs names it. */
export const instanceName = `${os.hostname()}:${process.pid}`

/** The time a ClusterCron run was scheduled for (ClusterCron puts it in the log annotations), if any. */
const scheduledFor = Effect.map(Effect.logAnnotations, (annotations) =>
  HashMap.get(annotations, "dateTime").pipe(
    Option.filter(DateTime.isDateTime),
    Option.map(DateTime.formatIso),
    Option.getOrNull
  ))

/**
 * Runs `job` as a recorded run: a span named after the job, a `job_runs` row that ends `ok` with
 * the job's summary or `failed` with the cause. Never fails: a scheduler must keep going.
 */
export const recordedRun = <A extends object, E, R>(name: string, job: (jobRunId: string) => Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const scheduled = yield* scheduledFor
    const [run] = yield* sql<{ id: string }>`
      INSERT INTO job_runs (job, instance, outcome, scheduled_for)
      VALUES (${name}, ${instanceName}, 'running', ${scheduled})
      ON CONFLICT (job, scheduled_for) WHERE scheduled_for IS NOT NULL DO NOTHING
      RETURNING id`
    if (run === undefined) {
      yield* sql`
        UPDATE job_runs SET duplicate_deliveries = duplicate_deliveries + 1
        WHERE job = ${name} AND scheduled_for = ${scheduled}`
      return yield* Effect.logInfo(`job ${name}: the run scheduled for ${scheduled} already ran; skipped`)
    }
    const exit = yield* Effect.exit(job(run.id))
    if (exit._tag === "Success") {
      yield* sql`
        UPDATE job_runs SET finished_at = now(), outcome = 'ok', summary = ${JSON.stringify(exit.value)}::jsonb
        WHERE id = ${run.id}`
    } else {
      yield* Effect.logError(`job ${name} failed`, exit.cause)
      yield* sql`
        UPDATE job_runs SET finished_at = now(), outcome = 'failed',
          summary = ${JSON.stringify({ error: String(exit.cause) })}::jsonb
        WHERE id = ${run.id}`
    }
  }).pipe(
    Effect.catchAllCause((cause) => Effect.logError(`job ${name}: could not record its run`, cause)),
    Effect.annotateLogs({ job: name }),
    Effect.withSpan(`job.${name}`, { root: true })
  )
