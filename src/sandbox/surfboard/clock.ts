/**
 * The sandbox's time: Effect's Clock (so a test may run the sandbox under a clock of its own) plus
 * an offset that tests and the admin endpoints move, to place a payment at 22:59 UTC or to let a
 * day pass before a void, without waiting. Everything the sandbox dates (orders, payments, the
 * void cut-off, settlement, page expiry) reads `now`.
 */
import { Clock, Duration, Effect, Ref } from "effect"

export const makeSandboxClock = Effect.gen(function*() {
  const offset = yield* Ref.make(0)
  const now = Effect.zipWith(Clock.currentTimeMillis, Ref.get(offset), (real, shift) => new Date(real + shift))
  return {
    now,
    /** From now on the sandbox's time reads `at`, and runs on from there. */
    set: (at: Date) => Effect.flatMap(Clock.currentTimeMillis, (real) => Ref.set(offset, at.getTime() - real)),
    advance: (by: Duration.DurationInput) => Ref.update(offset, (shift) => shift + Duration.toMillis(by)),
    /** Back to the real time. */
    reset: Ref.set(offset, 0)
  }
})

export type SandboxClock = Effect.Effect.Success<typeof makeSandboxClock>
