/** Every run of a scheduled job leaves a `job_runs` row: which instance ran it, when, and what it did. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import * as os from "node:os"

/** This process, as job_runs names it. */
export const instanceName = `${os.hostname()}:${process.pid}`

/**
 * Runs `job` as a recorded run: a span named after the job, a `job_runs` row that ends `ok` with
 * the job's summary or `failed` with the cause. Never fails: a scheduler must keep going.
 */
export const recordedRun = <A extends object, E, R>(name: string, job: (jobRunId: string) => Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [run] = yield* sql<{ id: string }>`
      INSERT INTO job_runs (job, instance, outcome) VALUES (${name}, ${instanceName}, 'running') RETURNING id`
    const exit = yield* Effect.exit(job(run!.id))
    if (exit._tag === "Success") {
      yield* sql`
        UPDATE job_runs SET finished_at = now(), outcome = 'ok', summary = ${JSON.stringify(exit.value)}::jsonb
        WHERE id = ${run!.id}`
    } else {
      yield* Effect.logError(`job ${name} failed`, exit.cause)
      yield* sql`
        UPDATE job_runs SET finished_at = now(), outcome = 'failed',
          summary = ${JSON.stringify({ error: String(exit.cause) })}::jsonb
        WHERE id = ${run!.id}`
    }
  }).pipe(
    Effect.catchAllCause((cause) => Effect.logError(`job ${name}: could not record its run`, cause)),
    Effect.annotateLogs({ job: name }),
    Effect.withSpan(`job.${name}`, { root: true })
  )
