/**
 * The outbox sender (docs/email.md): every OUTBOX_CRON tick (10 s by default) it sends the emails
 * that are due, batch after batch, on one instance of the cluster.
 *
 * A cluster `Singleton` whose fiber follows the cron schedule, rather than a `ClusterCron`: a
 * ClusterCron run is a persisted message (and reply) in the cluster's tables that stays there, a
 * row pair every 10 seconds for ever. Running twice at once would be harmless anyway: senders
 * claim messages with `FOR UPDATE SKIP LOCKED`, so each message goes to one of them.
 *
 * A tick that sent or tried something leaves a `job_runs` row with its counts; idle ticks leave
 * nothing (8,640 empty rows a day would drown the other jobs' history), and count in the `job.runs`
 * metric only when they sent or tried something, or failed.
 */
import { Singleton } from "@effect/cluster"
import { Effect, Schedule } from "effect"
import { Outbox } from "../email/Outbox.js"
import { recordJobRun } from "../observability/metrics.js"
import { annotateSpan } from "../observability/spanFn.js"
import type { JobsConfig } from "./config.js"
import { JobRunsRepo } from "./JobRunsRepo.js"
import { instanceName } from "./runs.js"

export const OUTBOX_SENDER = "outbox-sender"

/** Batches one tick sends at most before waiting for the next tick. */
const MAX_BATCHES_PER_TICK = 20

/** One tick: send what is due. Never fails (a scheduler must keep going). */
export const outboxTick = Effect.gen(function*() {
  const outbox = yield* Outbox
  const runs = yield* JobRunsRepo
  const startedAt = new Date()
  const summary = yield* outbox.flush({ maxBatches: MAX_BATCHES_PER_TICK }).pipe(
    Effect.tapErrorCause(() => recordJobRun(OUTBOX_SENDER, "failed", (Date.now() - startedAt.getTime()) / 1000))
  )
  if (summary.claimed === 0) return
  yield* recordJobRun(OUTBOX_SENDER, "ok", (Date.now() - startedAt.getTime()) / 1000)
  yield* annotateSpan({ ...summary })
  yield* Effect.logInfo(`outbox: ${summary.sent} sent, ${summary.retried} to retry, ${summary.failed} failed`)
  yield* runs.insertFinished({
    job: OUTBOX_SENDER,
    instance: instanceName,
    startedAt,
    summary: JSON.stringify(summary)
  })
}).pipe(
  Effect.provide(JobRunsRepo.Default),
  Effect.catchAllCause((cause) => Effect.logError(`job ${OUTBOX_SENDER} failed`, cause)),
  Effect.annotateLogs({ job: OUTBOX_SENDER }),
  Effect.withSpan(`job.${OUTBOX_SENDER}`, { root: true })
)

export const outboxSenderJob = (config: Pick<JobsConfig, "outboxCron">) =>
  Singleton.make(OUTBOX_SENDER, Effect.repeat(outboxTick, Schedule.cron(config.outboxCron)).pipe(Effect.asVoid))
