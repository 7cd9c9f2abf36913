/**
 * Fixed-window request counting on the database clock, so every instance sharing the database
 * shares the budget. One atomic upsert both counts the request and reads the window: there is
 * no read-then-write race between instances. SQL: RateLimiterRepo.
 */
import { Effect } from "effect"
import { countRefusal } from "../observability/metrics.js"
import { annotateSpan, spanFn } from "../observability/spanFn.js"
import { RateLimiterRepo } from "./RateLimiterRepo.js"

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
    const repo = yield* RateLimiterRepo

    const hit = spanFn("RateLimiter.hit")(function*(bucket: string, limit: number, windowSeconds: number) {
      // The kind only: a bucket names a key, a terminal, an address or a sign-in email.
      const kind = bucketKind(bucket)
      yield* annotateSpan({ "rate_limit.bucket": kind })
      const row = yield* repo.count({ bucket, windowSeconds })
      const decision: RateLimitDecision = {
        allowed: row.count <= limit,
        limit,
        remaining: Math.max(0, limit - row.count),
        resetSeconds: Math.max(1, row.reset_seconds),
        windowSeconds
      }
      if (!decision.allowed) yield* countRefusal(kind)
      return decision
    })

    return { hit } as const
  }),
  dependencies: [RateLimiterRepo.Default]
}) {}

/**
 * What a bucket counts, without whose: `partner`, `publishable`, `collect`, `signin`, `quickbook:reads` …
 * (the prefix before the id; a quickbook bucket keeps its budget).
 */
export const bucketKind = (bucket: string) => {
  const parts = bucket.split(":")
  return parts[0] === "quickbook" && parts.length > 2 ? `${parts[0]}:${parts[1]}` : parts[0]!
}

/** Both header styles: IETF draft-11 structured fields and the widely read trio. */
export const rateLimitHeaders = (d: RateLimitDecision, policy = "default"): Record<string, string> => ({
  "RateLimit-Policy": `"${policy}";q=${d.limit};w=${d.windowSeconds}`,
  "RateLimit": `"${policy}";r=${d.remaining};t=${d.resetSeconds}`,
  "RateLimit-Limit": String(d.limit),
  "RateLimit-Remaining": String(d.remaining),
  "RateLimit-Reset": String(d.resetSeconds)
})
