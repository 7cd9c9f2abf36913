/**
 * The analytics limits (spec §8; docs/api/analytics.md "Limits"): at most ANALYTICS_CONCURRENCY_PER_KEY
 * analytics requests at a time per key across every instance (more answer 429 with `Retry-After`),
 * and at most ANALYTICS_TIMEOUT_MS of database work per request (past it 503, the statement cancelled
 * by PostgreSQL itself).
 *
 * A request's reads run in one transaction. Its first statement takes one of the key's slots, a
 * transaction-level advisory lock (`pg_try_advisory_xact_lock`, never waiting): the lock is held by
 * the very connection doing the reads and released with the transaction, so it cannot outlive the
 * request. A crashed instance's connection closes and its locks go with it; a stalled one loses its
 * transaction after `idle_in_transaction_session_timeout` (the timeout plus 10 s). No table, no clean-up.
 *
 * The deadline: before each statement (`step`) the transaction's `statement_timeout` is set to the
 * time left, so PostgreSQL cancels a statement that runs past the deadline (SQLSTATE 57014) and
 * nothing is left running; a statement due after the deadline is not sent. The request itself is
 * never interrupted from the outside: @effect/sql-pg answers an interruption with pg_cancel_backend,
 * which can land on the next statement of a pooled connection (src/http/apiApp.ts).
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option, Predicate } from "effect"
import { transactionAtEdge } from "../../db/repoEdge.js"
import { RateLimited, Unavailable } from "../../domain/errors.js"
import { AnalyticsRepo } from "./AnalyticsRepo.js"
import { AnalyticsReadsConfig } from "./config.js"
import { CONCURRENCY_RETRY_AFTER_SECONDS } from "./rules.js"

/** PostgreSQL's query_canceled: a statement stopped by statement_timeout. */
const QUERY_CANCELED = "57014"

const isQueryCanceled = (e: unknown) =>
  Predicate.isTagged(e, "SqlError") && Predicate.hasProperty(e, "cause") &&
  Predicate.hasProperty(e.cause, "code") && e.cause.code === QUERY_CANCELED

/** Runs `effect` (a statement, or a service that runs some) within the request's deadline. */
export type Step = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | Unavailable, R>

export class AnalyticsLimits extends Effect.Service<AnalyticsLimits>()("Partner/AnalyticsLimits", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* AnalyticsRepo
    const config = yield* AnalyticsReadsConfig
    const inTransaction = transactionAtEdge(sql)
    const idleMs = config.timeoutMs + 10_000
    const seconds = Math.round(config.timeoutMs / 100) / 10
    const timedOut = new Unavailable({
      detail: `the analytics read took longer than ${seconds} s and was stopped; retry, or ask for a shorter range`
    })

    /**
     * Runs `body` as one analytics request of `keyId`: in one transaction holding one of the key's
     * slots (RateLimited when none is free), each of its statements run through `step` (Unavailable
     * once the deadline has passed).
     */
    const run = <A, E, R>(keyId: string, body: (step: Step) => Effect.Effect<A, E, R>) =>
      inTransaction(Effect.gen(function*() {
        const deadline = (yield* Clock.currentTimeMillis) + config.timeoutMs
        yield* repo.limitStatements(config.timeoutMs, idleMs)
        const slot = yield* repo.takeSlot(keyId, config.concurrencyPerKey)
        if (slot === null) {
          return yield* new RateLimited({
            detail: `this key already has ${config.concurrencyPerKey} analytics requests running; at most ` +
              `${config.concurrencyPerKey} at a time`,
            retryAfterSeconds: CONCURRENCY_RETRY_AFTER_SECONDS
          })
        }
        const step: Step = <X, E2, R2>(effect: Effect.Effect<X, E2, R2>) =>
          Effect.flatMap(Clock.currentTimeMillis, (now): Effect.Effect<X, E2 | Unavailable, R2> =>
            deadline - now < 1
              ? Effect.fail(timedOut)
              : Effect.zipRight(repo.limitStatements(deadline - now, idleMs), effect))
        return yield* body(step)
      })).pipe(
        // A statement cancelled by statement_timeout reaches here as a defect (the repository edge).
        Effect.catchSomeDefect((defect) =>
          isQueryCanceled(defect) ? Option.some(Effect.fail(timedOut)) : Option.none()
        ),
        Effect.withSpan("AnalyticsLimits.run")
      )

    return { run } as const
  }),
  dependencies: [AnalyticsRepo.Default]
}) {}
