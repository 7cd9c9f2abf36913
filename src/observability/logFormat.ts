/**
 * The log line formats of LOG_FORMAT, each one line per event and redacted (./redact.ts):
 * - `json`: newline-delimited JSON, flat: `timestamp`, `level`, `message`, then `request_id`,
 *   `trace_id` and `span_id` when the event happened inside a request or a span (trace and span ids
 *   exist only when tracing is on: OTEL_EXPORTER_OTLP_ENDPOINT), the event's annotations (`job`,
 *   `method`, `url`, `status`, `ms` …), `cause` for a failure, and `spans` for Effect log spans;
 * - `logfmt`: the same fields as `key=value`;
 * - `pretty`: Effect's terminal format, redacted.
 * docs/observability.md lists every field.
 */
import { Cause, Context, FiberRef, FiberRefs, HashMap, Inspectable, List, Logger, Option, Tracer } from "effect"
import { redactText } from "./redact.js"

type Options = Logger.Logger.Options<unknown>

/** The trace and span the event happened in, if a real (exported) tracer made one. */
const spanOf = (options: Options): Tracer.Span | undefined => {
  const context = FiberRefs.getOrDefault(options.context, FiberRef.currentContext)
  const span = Context.getOption(context, Tracer.ParentSpan)
  if (Option.isNone(span) || span.value._tag !== "Span" || span.value.traceId === "noop") return undefined
  return span.value
}

const messageText = (message: unknown): string => {
  const parts = Array.isArray(message) ? message : [message]
  return parts.map((part) => typeof part === "string" ? part : Inspectable.toStringUnknown(part, 0)).join(" ")
}

const annotationValue = (value: unknown): unknown =>
  typeof value === "string"
    ? redactText(value)
    : typeof value === "number" || typeof value === "boolean" || value === null
    ? value
    : redactText(Inspectable.toStringUnknown(Inspectable.toJSON(value), 0))

/** The fields of one event, in the order they are written. */
export const eventFields = (options: Options): Record<string, unknown> => {
  const fields: Record<string, unknown> = {
    timestamp: options.date.toISOString(),
    level: options.logLevel.label,
    message: redactText(messageText(options.message))
  }
  const requestId = HashMap.get(options.annotations, "request_id")
  if (Option.isSome(requestId)) fields.request_id = requestId.value
  const span = spanOf(options)
  if (span) {
    fields.trace_id = span.traceId
    fields.span_id = span.spanId
  }
  for (const [key, value] of options.annotations) {
    if (!(key in fields)) fields[key] = annotationValue(value)
  }
  if (!Cause.isEmpty(options.cause)) fields.cause = redactText(Cause.pretty(options.cause, { renderErrorCause: true }))
  if (List.isCons(options.spans)) {
    const now = options.date.getTime()
    const spans: Record<string, number> = {}
    for (const logSpan of options.spans) spans[logSpan.label] = now - logSpan.startTime
    fields.spans = spans
  }
  return fields
}

export const jsonLogger = Logger.make<unknown, string>((options) => JSON.stringify(eventFields(options)))

const LOGFMT_BARE = /^[^\s"=\\]+$/

export const logfmtLogger = Logger.make<unknown, string>((options) => {
  const out: Array<string> = []
  for (const [key, value] of Object.entries(eventFields(options))) {
    const text = typeof value === "string" ? value : JSON.stringify(value)
    out.push(`${key}=${LOGFMT_BARE.test(text) ? text : JSON.stringify(text)}`)
  }
  return out.join(" ")
})

/** Effect's pretty logger with messages, annotations and causes redacted. */
export const prettyLogger = (options: { readonly stderr: boolean }) =>
  Logger.mapInputOptions(Logger.prettyLogger({ stderr: options.stderr }), (input: Options) => ({
    ...input,
    message: redactText(messageText(input.message)),
    annotations: HashMap.map(input.annotations, annotationValue),
    cause: Cause.isEmpty(input.cause) ? input.cause : Cause.fail(redactText(Cause.pretty(input.cause)))
  }))
