/**
 * Export over OTLP/HTTP (JSON) to OTEL_EXPORTER_OTLP_ENDPOINT: spans (`/v1/traces`, through
 * ./tracer.ts: sampling, route names), logs (`/v1/logs`) and Effect metrics (`/v1/metrics`, those of
 * ./metrics.ts among them). Every string of every batch passes through `redactDeep` on its way out
 * (./redact.ts): attribute values, span and exception messages, log bodies, metric labels.
 * The exporter's modules are loaded only when an endpoint is configured.
 */
import { Duration, Effect, Layer } from "effect"
import type { AppConfig } from "../config.js"
import { redactDeep } from "./redact.js"
import { serviceTracer } from "./tracer.js"

export const otlpLayer = (baseUrl: string, config: AppConfig) =>
  Layer.unwrapEffect(Effect.promise(async () => {
    const [{ Otlp, OtlpSerialization }, { FetchHttpClient }] = await Promise.all([
      import("@effect/opentelemetry"),
      import("@effect/platform")
    ])
    const redacting = Layer.effect(
      OtlpSerialization.OtlpSerialization,
      Effect.map(OtlpSerialization.OtlpSerialization, (json) => ({
        traces: (data: unknown) => json.traces(redactDeep(data)),
        metrics: (data: unknown) => json.metrics(redactDeep(data)),
        logs: (data: unknown) => json.logs(redactDeep(data))
      }))
    ).pipe(Layer.provide(OtlpSerialization.layerJson))
    const spanInterval = Duration.millis(config.spanExportIntervalMs)
    const exporters = Otlp.layer({
      baseUrl,
      resource: { serviceName: "tour-partner-service" },
      tracerExportInterval: spanInterval,
      loggerExportInterval: spanInterval,
      metricsExportInterval: Duration.millis(config.metricExportIntervalMs)
    }).pipe(Layer.provide([FetchHttpClient.layer, redacting]))
    // The OTLP tracer in place, then wrapped (sampling, route names).
    const wrapped = Layer.unwrapEffect(
      Effect.map(Effect.tracer, (inner) => Layer.setTracer(serviceTracer(inner, config.traceSampleRatio)))
    )
    return Layer.provideMerge(wrapped, exporters)
  }))
