/**
 * Fixed-window request counting on the database clock, so every instance sharing the database
 * shares the budget. One atomic upsert both counts the request and reads the window: there is
 * no read-then-write race between instances.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export interface RateLimitDecision {
  readonly allowed: boolean
  readonly limit: number
  readonly remaining: number
  /** Seconds until the window resets (at least 1). */
  readonly resetSeconds: number
  readonly windowSeconds: number
}

export class RateLimiter extends Effect.Service<RateLimiter>()("Http/RateLimiter", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const hit = Effect.fn("RateLimiter.hit")(function*(bucket: string, limit: number, windowSeconds: number) {
      yield* Effect.annotateCurrentSpan({ bucket })
      const [row] = yield* sql<{ count: number; reset_seconds: number }>`
        INSERT INTO rate_limit_counters AS c (bucket, window_start, count)
        VALUES (${bucket}, to_timestamp(floor(extract(epoch FROM now()) / ${windowSeconds}) * ${windowSeconds}), 1)
        ON CONFLICT (bucket) DO UPDATE SET
          count = CASE WHEN c.window_start = excluded.window_start THEN c.count + 1 ELSE 1 END,
          window_start = excluded.window_start
        RETURNING count,
          ceil(extract(epoch FROM (window_start + make_interval(secs => ${windowSeconds}) - now())))::int AS reset_seconds`.pipe(
        Effect.orDie
      )
      const decision: RateLimitDecision = {
        allowed: row!.count <= limit,
        limit,
        remaining: Math.max(0, limit - row!.count),
        resetSeconds: Math.max(1, row!.reset_seconds),
        windowSeconds
      }
      return decision
    })

    return { hit } as const
  })
}) {}

/** Both header styles: IETF draft-11 structured fields and the widely read trio. */
export const rateLimitHeaders = (d: RateLimitDecision, policy = "default"): Record<string, string> => ({
  "RateLimit-Policy": `"${policy}";q=${d.limit};w=${d.windowSeconds}`,
  "RateLimit": `"${policy}";r=${d.remaining};t=${d.resetSeconds}`,
  "RateLimit-Limit": String(d.limit),
  "RateLimit-Remaining": String(d.remaining),
  "RateLimit-Reset": String(d.resetSeconds)
})
