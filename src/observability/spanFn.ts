/**
 * `Effect.fn(name)(body)` for the methods every request runs (key check, rate limit, the bookings
 * and manifest reads): spanned like `Effect.fn` when tracing is on (OTEL_EXPORTER_OTLP_ENDPOINT:
 * src/observability.ts), and a plain call when it is off. `Effect.fn` does its span work even with
 * the tracer disabled: a stack capture (`new Error()`) at every call, a no-op span, its exit hook and
 * a copy of the fiber's context to make it the parent; about 40 times a plain generator call
 * (bench/README.md, "Issue 18: the framework's overhead"). The choice is made per call from the
 * fiber's tracer switch, so a process that traces gets every span.
 */
import { Effect, FiberRef } from "effect"
import type { YieldWrap } from "effect/Utils"

type ErrorOf<Eff> = [Eff] extends [never] ? never
  : [Eff] extends [YieldWrap<Effect.Effect<infer _A, infer E, infer _R>>] ? E
  : never
type ContextOf<Eff> = [Eff] extends [never] ? never
  : [Eff] extends [YieldWrap<Effect.Effect<infer _A, infer _E, infer R>>] ? R
  : never

export const spanFn =
  (name: string) =>
  <Eff extends YieldWrap<Effect.Effect<unknown, unknown, unknown>>, AEff, Args extends Array<unknown>>(
    body: (...args: Args) => Generator<Eff, AEff, never>
  ): (...args: Args) => Effect.Effect<AEff, ErrorOf<Eff>, ContextOf<Eff>> => {
    const traced = Effect.fn(name)(body) as (...args: Args) => Effect.Effect<AEff, ErrorOf<Eff>, ContextOf<Eff>>
    const untraced = Effect.fnUntraced(body) as (...args: Args) => Effect.Effect<AEff, ErrorOf<Eff>, ContextOf<Eff>>
    return (...args) =>
      Effect.withFiberRuntime((fiber) =>
        fiber.getFiberRef(FiberRef.currentTracerEnabled) ? traced(...args) : untraced(...args)
      )
  }

/**
 * `Effect.annotateCurrentSpan` for code every request runs: nothing at all when tracing is off.
 * Without a span, `annotateCurrentSpan` fails internally with a `NoSuchElementException` (an `Error`,
 * its stack trace captured) and ignores it: a few percent of a booking read's CPU (bench/README.md).
 */
export const annotateSpan = (attributes: Record<string, unknown>): Effect.Effect<void> =>
  Effect.withFiberRuntime((fiber) =>
    fiber.getFiberRef(FiberRef.currentTracerEnabled) ? Effect.annotateCurrentSpan(attributes) : Effect.void
  )
