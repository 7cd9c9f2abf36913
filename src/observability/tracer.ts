/**
 * What the service puts around the OTLP tracer of @effect/opentelemetry (./otlp.ts):
 * - **parent-based sampling**: a span with a parent follows its parent's decision (for a request,
 *   the caller's `traceparent` flag); a root span is kept with probability `ratio`
 *   (OTEL_TRACES_SAMPLER_ARG). A span not kept is never exported, nor are its children, and the
 *   decision travels on to the booking system and payment provider in `traceparent`.
 * - **server spans named by route**: the router annotates the request's span with `http.route`
 *   (`/api/v1/bookings/:id`); the span is then named `GET /api/v1/bookings/{id}` (OpenTelemetry's
 *   `{method} {route}`, route as a template) instead of the platform's `http.server GET`; one that
 *   reaches no route is named by its method (`GET`).
 * - **`server.address` a host**: the platform's HTTP client writes the URL's origin there
 *   (`http://127.0.0.1:3100`); the attribute gets the host name, as the convention says.
 */
import { Option, Tracer } from "effect"

/** `/api/v1/bookings/:id` → `/api/v1/bookings/{id}` (the OpenAPI form). */
export const routeTemplate = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, "{$1}")

const hostOf = (value: unknown): unknown => {
  if (typeof value !== "string" || !value.includes("://")) return value
  try {
    return new URL(value).hostname
  } catch {
    return value
  }
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

export const serviceTracer = (inner: Tracer.Tracer, ratio: number): Tracer.Tracer =>
  Tracer.make({
    span(name, parent, context, links, startTime, kind, options) {
      // A request that reaches no route (refused before routing, unknown path) is named by its
      // method alone, as OpenTelemetry names a server span without a route.
      const spanName = kind === "server" && name.startsWith("http.server ") ? name.slice("http.server ".length) : name
      const span = inner.span(spanName, parent, context, links, startTime, kind, options) as Mutable<Tracer.Span>
      const sampled = Option.isSome(parent) ? parent.value.sampled : ratio >= 1 || Math.random() < ratio
      if (!sampled) {
        span.sampled = false
        span.end = () => {}
      }
      const attribute = span.attribute
      span.attribute = function(key, value) {
        if (key === "server.address") return attribute.call(this, key, hostOf(value))
        attribute.call(this, key, value)
        if (key === "http.route" && kind === "server" && typeof value === "string") {
          span.name = `${String(span.attributes.get("http.request.method") ?? "")} ${routeTemplate(value)}`.trim()
        }
      }
      return span
    },
    context: inner.context
  })
