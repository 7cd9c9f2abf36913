/**
 * Every run of a scheduled job leaves a `job_runs` row: which instance ran it, when it was
 * scheduled for, and what it did.
 *
 * A scheduled run first claims its slot (job, scheduled time) with a unique index. The cluster
 * delivers a cron run at least once; a second delivery of a slot (seen while an instance joins and
 * shards move between instances) only bumps `duplicate_deliveries` and does nothing else. SQL:
 * JobRunsRepo.
 */
import { DateTime, Effect, HashMap, Option } from "effect"
import * as os from "node:os"
import { recordJobRun } from "../observability/metrics.js"
import { JobRunsRepo } from "./JobRunsRepo.js"

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
 * the job's summary or `failed` with the cause, and the `job.runs`/`job.duration` metrics. Never
 * fails: a scheduler must keep going.
 */
export const recordedRun = <A extends object, E, R>(name: string, job: (jobRunId: string) => Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const runs = yield* JobRunsRepo
    const scheduled = yield* scheduledFor
    const started = yield* runs.start({ job: name, instance: instanceName, scheduledFor: scheduled })
    if (Option.isNone(started)) {
      yield* runs.countDuplicate({ job: name, scheduledFor: scheduled })
      yield* recordJobRun(name, "skipped")
      return yield* Effect.logInfo(`job ${name}: the run scheduled for ${scheduled} already ran; skipped`)
    }
    const run = started.value
    const startedAt = performance.now()
    const exit = yield* Effect.exit(job(run.id))
    yield* recordJobRun(name, exit._tag === "Success" ? "ok" : "failed", (performance.now() - startedAt) / 1000)
    if (exit._tag === "Success") {
      yield* runs.finish({ id: run.id, outcome: "ok", summary: JSON.stringify(exit.value) })
    } else {
      yield* Effect.logError(`job ${name} failed`, exit.cause)
      yield* runs.finish({ id: run.id, outcome: "failed", summary: JSON.stringify({ error: String(exit.cause) }) })
    }
  }).pipe(
    Effect.provide(JobRunsRepo.Default),
    Effect.catchAllCause((cause) => Effect.logError(`job ${name}: could not record its run`, cause)),
    Effect.annotateLogs({ job: name }),
    Effect.withSpan(`job.${name}`, { root: true })
  )
