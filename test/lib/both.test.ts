/** src/lib/both.ts: two effects at once, the pair as Effect.all's, failures and interruption. */
import { expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Ref } from "effect"
import { both } from "../../src/lib/both.js"

it.effect("runs both at once: the first waits for what only the second does, and the pair keeps their order", () =>
  Effect.gen(function*() {
    const handshake = yield* Deferred.make<string>()
    const first = Effect.map(Deferred.await(handshake), (s) => `first after ${s}`)
    const second = Effect.as(Deferred.succeed(handshake, "second"), 2)
    expect(yield* both(first, second)).toEqual(["first after second", 2])
  }))

it.effect("the second's failure is the answer and interrupts the first", () =>
  Effect.gen(function*() {
    const interrupted = yield* Ref.make(false)
    const started = yield* Deferred.make<void>()
    const first = Effect.zipRight(Deferred.succeed(started, undefined), Effect.never).pipe(
      Effect.onInterrupt(() => Ref.set(interrupted, true))
    )
    const second = Effect.zipRight(Deferred.await(started), Effect.fail("second failed"))
    const exit = yield* Effect.exit(both(first, second))
    expect(exit).toStrictEqual(Exit.fail("second failed"))
    expect(yield* Ref.get(interrupted)).toBe(true)
  }))

it.effect("the first's failure is the answer", () =>
  Effect.gen(function*() {
    const exit = yield* Effect.exit(both(Effect.fail("first failed"), Effect.succeed(1)))
    expect(exit).toStrictEqual(Exit.fail("first failed"))
  }))
