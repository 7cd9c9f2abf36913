/**
 * The SQL of the jobs' run records (`job_runs`; src/jobs/runs.ts, src/jobs/outboxSender.ts): a
 * scheduled run claims its slot (job, scheduled time) with a unique index, and ends `ok` with its
 * summary or `failed` with the cause. Typed with SqlSchema; a database error is a defect at its
 * edge (repoEdge: a span per method), once (a run that cannot be recorded is logged by its caller
 * and the scheduler carries on).
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { repoEdge } from "../db/repoEdge.js"

const Slot = Schema.Struct({ job: Schema.String, scheduledFor: Schema.NullOr(Schema.String) })

export class JobRunsRepo extends Effect.Service<JobRunsRepo>()("Jobs/JobRunsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** A `running` row for the run; None when its scheduled slot already has one (a second delivery). */
    const start = SqlSchema.findOne({
      Request: Schema.Struct({ ...Slot.fields, instance: Schema.String }),
      Result: Schema.Struct({ id: Schema.String }),
      execute: (r) =>
        sql`
          INSERT INTO job_runs (job, instance, outcome, scheduled_for)
          VALUES (${r.job}, ${r.instance}, 'running', ${r.scheduledFor})
          ON CONFLICT (job, scheduled_for) WHERE scheduled_for IS NOT NULL DO NOTHING
          RETURNING id`
    })

    /** Counts one more delivery of a slot that already ran. */
    const countDuplicate = SqlSchema.void({
      Request: Slot,
      execute: (r) =>
        sql`
          UPDATE job_runs SET duplicate_deliveries = duplicate_deliveries + 1
          WHERE job = ${r.job} AND scheduled_for = ${r.scheduledFor}`
    })

    /** Ends a run with its outcome and summary (JSON). */
    const finish = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.String, outcome: Schema.Literal("ok", "failed"), summary: Schema.String }),
      execute: (r) =>
        sql`
          UPDATE job_runs SET finished_at = now(), outcome = ${r.outcome}, summary = ${r.summary}::jsonb
          WHERE id = ${r.id}`
    })

    /** Records a finished, unscheduled run at once (the outbox sender's ticks). */
    const insertFinished = SqlSchema.void({
      Request: Schema.Struct({
        job: Schema.String,
        instance: Schema.String,
        startedAt: Schema.DateFromSelf,
        summary: Schema.String
      }),
      execute: (r) =>
        sql`
          INSERT INTO job_runs (job, instance, started_at, finished_at, outcome, summary)
          VALUES (${r.job}, ${r.instance}, ${r.startedAt}, now(), 'ok', ${r.summary}::jsonb)`
    })

    return repoEdge("JobRunsRepo", { start, countDuplicate, finish, insertFinished })
  })
}) {}
