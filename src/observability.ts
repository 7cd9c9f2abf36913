/**
 * Tracing, metrics and logging (docs/observability.md). Spans, logs and metrics are exported over
 * OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set (./observability/otlp.ts; HttpApiBuilder makes a
 * server span per request, services add their own); otherwise tracing is off and no span is built.
 * Logs are one line per event (json, logfmt) or pretty for a terminal, redacted, and carry the
 * request id (./observability/logFormat.ts). They go to stdout for the service and to stderr for
 * the admin CLI, whose stdout is its JSON output.
 */
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import { Effect, FiberRef, HashSet, Layer, Logger, Option } from "effect"
import { AppConfig } from "./config.js"
import { jsonLogger, logfmtLogger, prettyLogger } from "./observability/logFormat.js"
import { otlpLayer } from "./observability/otlp.js"

export const TracingLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Option.match(config.otlpEndpoint, {
      // No exporter: spans would only cost time (creation, stack capture, trace headers), so the
      // tracer and the HTTP server's tracing middleware are switched off.
      onNone: () =>
        Layer.mergeAll(
          Layer.setTracerEnabled(false),
          Layer.locallyScoped(HttpMiddleware.currentTracerDisabledWhen, () => true)
        ),
      onSome: (baseUrl) => otlpLayer(baseUrl, config)
    }))
)

/** The loggers `loggingTo` installed: a nested one (the service's, inside the CLI's) replaces the outer one. */
const installed = new Set<Logger.Logger<unknown, unknown>>()

/** Log lines in LOG_FORMAT at LOG_LEVEL, written to `stream`. */
export const loggingTo = (stream: "stdout" | "stderr") =>
  Layer.unwrapEffect(
    Effect.map(AppConfig, (config) => {
      const toStream = <M, O>(logger: Logger.Logger<M, O>) =>
        stream === "stderr" ? Logger.withConsoleError(logger) : Logger.withConsoleLog(logger)
      const logger = config.logFormat === "json"
        ? toStream(jsonLogger)
        : config.logFormat === "logfmt"
        ? toStream(logfmtLogger)
        : prettyLogger({ stderr: stream === "stderr" })
      installed.add(logger)
      // NodeRuntime.runMain has already put its pretty logger (stdout) in place of the default one:
      // ours replaces both, or LOG_FORMAT=json would print every line twice, once pretty on stdout.
      const replaced = Layer.scopedDiscard(Effect.locallyScopedWith(FiberRef.currentLoggers, (loggers) =>
        HashSet.add(
          HashSet.filter(
            loggers,
            (l) => l !== Logger.defaultLogger && l !== Logger.prettyLoggerDefault && !installed.has(l)
          ),
          logger
        )))
      return Layer.merge(replaced, Logger.minimumLogLevel(config.logLevel))
    })
  )

/** The service's: logs on stdout. */
export const LoggingLive = loggingTo("stdout")

export const ObservabilityLive = Layer.merge(TracingLive, LoggingLive)

/** The admin CLI's: logs on stderr, its output alone on stdout. */
export const ObservabilityForCli = Layer.merge(TracingLive, loggingTo("stderr"))
