/**
 * Two effects at once, for the two SQL statements a read sends together: the first in a forked
 * fiber, the second in the caller's fiber, then the first joined. `Effect.all([a, b], { concurrency: 2 })`
 * forks both into a scope of their own, which costs several times the Node CPU of this on every
 * request of the reads that do it (bench/README.md, issue 15: the finance lists).
 *
 * The answer is the pair, as Effect.all's. When the second fails the first is interrupted; when the
 * first fails, its failure is the answer once the second is done; the forked fiber is the caller's
 * child, so interrupting the caller interrupts both.
 */
import { Effect, Fiber } from "effect"

export const both = <A, EA, RA, B, EB, RB>(
  first: Effect.Effect<A, EA, RA>,
  second: Effect.Effect<B, EB, RB>
): Effect.Effect<readonly [A, B], EA | EB, RA | RB> =>
  Effect.flatMap(Effect.fork(first), (fiber) =>
    Effect.matchCauseEffect(second, {
      onFailure: (cause) => Effect.zipRight(Fiber.interrupt(fiber), Effect.failCause(cause)),
      onSuccess: (b) => Effect.map(Fiber.join(fiber), (a) => [a, b] as const)
    }))
