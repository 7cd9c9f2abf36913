/**
 * Collected events wait here in memory and are written in batches (Contract 1: each batch one
 * INSERT in one transaction): a batch as soon as ANALYTICS_BATCH_SIZE events are waiting, the rest
 * every ANALYTICS_FLUSH_INTERVAL_MS. When the service stops (the scope of this layer closes, after
 * the HTTP server stopped taking requests) everything still waiting is written before the database
 * pool closes, so a clean stop loses no event. A batch the database refuses goes back to the front
 * and is tried again at the next flush; past MAX_WAITING_BATCHES of backlog new events are dropped
 * (and counted in the log) rather than filling the memory. SQL: SiteEventsRepo.
 */
import { Duration, Effect, Schedule } from "effect"
import { AnalyticsCollectConfig } from "./config.js"
import { monthStart, type SiteEvent } from "./events.js"
import { SiteEventsRepo } from "./SiteEventsRepo.js"

/** Batches that may wait while the database refuses them, before new events are dropped. */
export const MAX_WAITING_BATCHES = 100

export class EventBuffer extends Effect.Service<EventBuffer>()("Analytics/EventBuffer", {
  scoped: Effect.gen(function*() {
    const repo = yield* SiteEventsRepo
    const config = yield* AnalyticsCollectConfig
    const scope = yield* Effect.scope
    const waiting: Array<SiteEvent> = []
    /** Months whose partition this instance has made sure of. */
    const months = new Set<number>()
    const lock = yield* Effect.makeSemaphore(1)
    let dropped = 0

    /** Writes the first batch waiting; on failure it goes back to the front. Whether it was written. */
    const writeOne = Effect.uninterruptible(Effect.suspend(() => {
      const batch = waiting.splice(0, config.batchSize)
      if (batch.length === 0) return Effect.succeed(true)
      const missing = [...new Set(batch.map((e) => monthStart(e.at).getTime()))].filter((m) => !months.has(m))
      return repo.insertBatch(batch, missing.map((m) => new Date(m))).pipe(
        Effect.tap(() => Effect.sync(() => missing.forEach((m) => months.add(m)))),
        Effect.as(true),
        Effect.catchAllCause((cause) =>
          Effect.sync(() => waiting.unshift(...batch)).pipe(
            Effect.zipRight(Effect.logWarning(`site events: a batch of ${batch.length} was not written`, cause)),
            Effect.as(false)
          )
        )
      )
    }))

    /** Writes batches while `more()` holds and the last one was written. */
    const writeWhile = (more: () => boolean) =>
      lock.withPermits(1)(Effect.iterate(true, { while: (ok) => ok && more(), body: () => writeOne }))

    const writeFull = writeWhile(() => waiting.length >= config.batchSize)
    const writeAll = writeWhile(() => waiting.length > 0)

    yield* writeAll.pipe(
      Effect.repeat(Schedule.spaced(Duration.millis(config.flushIntervalMs))),
      Effect.forkScoped
    )

    // Runs before the timer above is stopped (finalizers run last-added first) and waits for its batch.
    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        yield* writeAll.pipe(
          Effect.zipRight(Effect.suspend(() => (waiting.length > 0 ? Effect.fail("left") : Effect.void))),
          Effect.retry(Schedule.spaced("500 millis").pipe(Schedule.intersect(Schedule.recurs(5)))),
          Effect.ignore
        )
        if (waiting.length > 0) yield* Effect.logError(`site events: ${waiting.length} not written at shutdown`)
        if (dropped > 0) yield* Effect.logWarning(`site events: ${dropped} dropped while the database refused batches`)
      })
    )

    /** Queues an event; a full batch is written right away (in the background). */
    const add = (event: SiteEvent): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (waiting.length >= config.batchSize * MAX_WAITING_BATCHES) {
          if (dropped++ % 1000 === 0) {
            return Effect.logWarning(`site events: the backlog is full; ${dropped} dropped so far`)
          }
          return Effect.void
        }
        waiting.push(event)
        return waiting.length % config.batchSize === 0 ? Effect.asVoid(Effect.forkIn(writeFull, scope)) : Effect.void
      })

    /** Writes everything waiting now (tests, and anyone who must see the rows at once). */
    const flush = writeAll.pipe(Effect.asVoid)

    return { add, flush, waiting: () => waiting.length } as const
  }),
  dependencies: [SiteEventsRepo.Default]
}) {}
