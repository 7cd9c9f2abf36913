/**
 * The limit of POST /api/v1/collect per address and site (ANALYTICS_COLLECT_PER_MINUTE events a
 * minute), counted in this instance's memory: a fixed window of one minute on the service's clock
 * (aligned to the minute, as RateLimiter's windows are), one counter per bucket. No statement runs
 * on the request path: at 1,000 events/s the shared limiter's upsert per event was the collection's
 * only database round trip per request (bench/README.md, issue 14).
 *
 * The budget is per instance: behind a load balancer that spreads one address over N instances, an
 * address may send up to N times the limit to a site (docs/api/collect.md). The buckets are the
 * caller's keyed hashes (never an address), and the counters of a window are dropped when the next
 * window begins, so memory holds at most one minute of distinct buckets (MAX_BUCKETS at most: past
 * it, a new bucket is refused until the window turns, so a flood of distinct addresses cannot grow
 * the memory).
 */
import { Clock, Effect } from "effect"
import type { RateLimitDecision } from "../http/RateLimiter.js"
import { countRefusal } from "../observability/metrics.js"

const WINDOW_SECONDS = 60
/** Distinct buckets counted in one window at most (about 60 MB at the worst). */
export const MAX_BUCKETS = 500_000

export class CollectLimiter extends Effect.Service<CollectLimiter>()("Analytics/CollectLimiter", {
  sync: () => {
    let window = -1
    let counts = new Map<string, number>()

    /** Counts one event of `bucket` against `limit` a minute: the decision, as RateLimiter.hit gives it. */
    const hit = (bucket: string, limit: number) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const current = Math.floor(now / (WINDOW_SECONDS * 1000))
        if (current !== window) {
          window = current
          counts = new Map()
        }
        const known = counts.get(bucket)
        const count = known === undefined && counts.size >= MAX_BUCKETS ? limit + 1 : (known ?? 0) + 1
        if (count <= limit || known !== undefined) counts.set(bucket, count)
        const decision: RateLimitDecision = {
          allowed: count <= limit,
          limit,
          remaining: Math.max(0, limit - count),
          resetSeconds: Math.max(1, Math.ceil(((current + 1) * WINDOW_SECONDS * 1000 - now) / 1000)),
          windowSeconds: WINDOW_SECONDS
        }
        return decision.allowed ? Effect.succeed(decision) : Effect.as(countRefusal("collect"), decision)
      })

    return { hit } as const
  }
}) {}
