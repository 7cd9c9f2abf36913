/**
 * A trace context kept for later (an outbox row, src/email/): the current span as a W3C
 * `traceparent`, and back as a span to link to. Only real spans count: with tracing off there is
 * nothing to keep.
 */
import { Headers, HttpTraceContext } from "@effect/platform"
import { Effect, Option, type Tracer } from "effect"

/** The current span's `traceparent`, or null (no span, or tracing off). */
export const currentTraceparent: Effect.Effect<string | null> = Effect.map(
  Effect.option(Effect.currentSpan),
  (span) =>
    Option.isSome(span) && span.value.traceId !== "noop"
      ? HttpTraceContext.toHeaders(span.value).traceparent ?? null
      : null
)

/** The span a stored `traceparent` names, as links for a span made now (none when absent or malformed). */
export const linksTo = (traceparent: string | null): ReadonlyArray<Tracer.SpanLink> => {
  if (traceparent === null) return []
  const span = HttpTraceContext.fromHeaders(Headers.fromInput({ traceparent }))
  return Option.isSome(span) ? [{ _tag: "SpanLink", span: span.value, attributes: { "link.kind": "enqueued_by" } }] : []
}
