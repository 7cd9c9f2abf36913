/**
 * spanFn (src/observability/spanFn.ts): the span of `Effect.fn` when the tracer is on, a plain call
 * when it is off (`Effect.fn` would still make a no-op span named like the method), the same result
 * and failure either way.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Option } from "effect"
import { spanFn } from "../../src/observability/spanFn.js"

const double = spanFn("Test.double")(function*(n: number) {
  const span = yield* Effect.option(Effect.currentSpan)
  return { value: n * 2, spanName: Option.isSome(span) ? span.value.name : undefined }
})

const refuse = spanFn("Test.refuse")(function*(reason: string) {
  return yield* Effect.fail(reason)
})

describe("spanFn", () => {
  it.effect("makes the named span when the tracer is on", () =>
    Effect.gen(function*() {
      const result = yield* double(21)
      expect(result).toEqual({ value: 42, spanName: "Test.double" })
    }).pipe(Effect.withTracerEnabled(true)))

  it.effect("is a plain call when the tracer is off: no span, the same result", () =>
    Effect.gen(function*() {
      const result = yield* double(21)
      expect(result).toEqual({ value: 42, spanName: undefined })
    }).pipe(Effect.withTracerEnabled(false)))

  it.effect("fails the same way either way", () =>
    Effect.gen(function*() {
      expect(yield* Effect.exit(refuse("no").pipe(Effect.withTracerEnabled(true)))).toEqual(Exit.fail("no"))
      expect(yield* Effect.exit(refuse("no").pipe(Effect.withTracerEnabled(false)))).toEqual(Exit.fail("no"))
    }))
})
