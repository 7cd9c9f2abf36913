/** Spans leave over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set: checked against a fake collector. */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { call } from "../support/http.js"
import { startOtlpReceiver } from "../support/otlpReceiver.js"
import { freshDatabase, serverOn, TestServer } from "../support/server.js"

const collector = Effect.acquireRelease(Effect.promise(() => startOtlpReceiver()), (c) => Effect.promise(c.close))

describe("tracing", () => {
  it.live("each request is a server span exported with its request id", () =>
    Effect.gen(function*() {
      const otlp = yield* Effect.scoped(
        collector.pipe(Effect.tap((c) =>
          Effect.gen(function*() {
            const db = yield* freshDatabase
            // The server's scope closes before the collector's: closing flushes the exporter.
            yield* Effect.scoped(Effect.gen(function*() {
              const ctx = yield* Layer.build(serverOn(db, { OTEL_EXPORTER_OTLP_ENDPOINT: c.url }))
              const { baseUrl } = ctx.unsafeMap.get(TestServer.key) as { baseUrl: string }
              const res = yield* call("/api/v1/bookings", { baseUrl, headers: { "x-request-id": "trace-test-0001" } })
              expect(res.status).toBe(401)
            }))
          })
        ))
      )
      const spans = otlp.spans()
      const server = spans.find((s) => s.kind === 2 && JSON.stringify(s.attributes).includes("trace-test-0001"))
      expect(server, JSON.stringify(spans.map((s) => s.name))).toBeDefined()
      expect(JSON.stringify(server!.attributes)).toContain("/api/v1/bookings")
      expect(spans.some((s) => s.name === "KeyAuth.authenticate")).toBe(true)
      expect(otlp.raw()).toContain("tour-partner-service")
    }), { timeout: 60_000 })
})
