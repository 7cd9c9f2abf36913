/**
 * spanFn (src/observability/spanFn.ts): the span of `Effect.fn` when the tracer is on, a plain call
 * when it is off (`Effect.fn` would still make a no-op span named like the method), the same result
 * and failure either way. annotateSpan: the attributes on the current span when the tracer is on,
 * nothing at all (no exception built) when it is off.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Option } from "effect"
import { annotateSpan, spanFn } from "../../src/observability/spanFn.js"

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

  it.effect("annotateSpan sets the attributes on the current span when the tracer is on", () =>
    Effect.gen(function*() {
      const span = yield* Effect.gen(function*() {
        yield* annotateSpan({ request_id: "r-1", count: 2 })
        return yield* Effect.currentSpan
      }).pipe(Effect.withSpan("Test.annotated"))
      expect(span.attributes.get("request_id")).toBe("r-1")
      expect(span.attributes.get("count")).toBe(2)
    }).pipe(Effect.withTracerEnabled(true)))

  it.effect("annotateSpan does nothing at all when the tracer is off: no span looked up, none changed", () =>
    Effect.gen(function*() {
      // Without a span: succeeds (annotateCurrentSpan would build and drop a NoSuchElementException).
      expect(yield* Effect.exit(annotateSpan({ a: 1 }))).toEqual(Exit.void)
      // Even a span in the context is left alone (annotateCurrentSpan would annotate it).
      const span = yield* Effect.gen(function*() {
        yield* annotateSpan({ request_id: "r-2" }).pipe(Effect.withTracerEnabled(false))
        return yield* Effect.currentSpan
      }).pipe(Effect.withSpan("Test.untouched"), Effect.withTracerEnabled(true))
      expect(span.attributes.has("request_id")).toBe(false)
    }))
})
