/**
 * Tracing and logging. Spans are exported over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set
 * (HttpApiBuilder makes a server span per request; services add their own); otherwise tracing is off.
 * Logs are structured (json or logfmt) or pretty for a terminal, and carry the request id.
 */
import { Otlp, OtlpSerialization } from "@effect/opentelemetry"
import { FetchHttpClient, HttpMiddleware } from "@effect/platform"
import { Effect, Layer, Logger, Option } from "effect"
import { AppConfig } from "./config.js"

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
      onSome: (baseUrl) =>
        Otlp.layer({ baseUrl, resource: { serviceName: "tour-partner-service" } }).pipe(
          Layer.provide([FetchHttpClient.layer, OtlpSerialization.layerJson])
        )
    }))
)

export const LoggingLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Layer.merge(
      config.logFormat === "json"
        ? Logger.json
        : config.logFormat === "logfmt"
        ? Logger.logFmt
        : Logger.pretty,
      Logger.minimumLogLevel(config.logLevel)
    ))
)

export const ObservabilityLive = Layer.merge(TracingLive, LoggingLive)
