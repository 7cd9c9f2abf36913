/**
 * The collection's limit per address and site, counted in memory (CollectLimiter): a budget per
 * bucket in a one-minute window aligned to the minute, refused past it with the seconds to the next
 * window, a fresh budget when the window turns, and at most MAX_BUCKETS new buckets in a window.
 */
import { expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { CollectLimiter, MAX_BUCKETS } from "../../src/analytics/CollectLimiter.js"

const minute = (iso: string) => TestClock.setTime(Date.parse(iso))

it.effect("refuses past the budget until the minute turns; buckets count apart", () =>
  Effect.gen(function*() {
    const limiter = yield* CollectLimiter
    yield* minute("2031-03-01T10:00:15Z")
    for (let i = 1; i <= 3; i++) {
      const d = yield* limiter.hit("a", 3)
      expect(d).toEqual({ allowed: true, limit: 3, remaining: 3 - i, resetSeconds: 45, windowSeconds: 60 })
    }
    yield* minute("2031-03-01T10:00:59.200Z")
    const refused = yield* limiter.hit("a", 3)
    expect(refused.allowed).toBe(false)
    expect(refused.remaining).toBe(0)
    expect(refused.resetSeconds).toBe(1)
    expect((yield* limiter.hit("b", 3)).allowed).toBe(true)
    yield* minute("2031-03-01T10:01:00Z")
    const next = yield* limiter.hit("a", 3)
    expect(next.allowed).toBe(true)
    expect(next.remaining).toBe(2)
    expect(next.resetSeconds).toBe(60)
  }).pipe(Effect.provide(CollectLimiter.Default)))

it.effect(
  "a window holds at most MAX_BUCKETS buckets: a new one past them is refused, known ones still count",
  () =>
    Effect.gen(function*() {
      const limiter = yield* CollectLimiter
      yield* minute("2031-03-01T10:00:00Z")
      for (let i = 0; i < MAX_BUCKETS; i++) yield* limiter.hit(`b${i}`, 2)
      expect((yield* limiter.hit("new", 2)).allowed).toBe(false)
      expect((yield* limiter.hit("b0", 2)).allowed).toBe(true)
      expect((yield* limiter.hit("b0", 2)).allowed).toBe(false)
      yield* minute("2031-03-01T10:01:00Z")
      expect((yield* limiter.hit("new", 2)).allowed).toBe(true)
    }).pipe(Effect.provide(CollectLimiter.Default)),
  60_000
)
