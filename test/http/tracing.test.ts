/** Spans leave over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set: checked against a fake collector. */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { call } from "../support/http.js"
import { freshDatabase, serverOn, TestServer } from "../support/server.js"

const collector = () =>
  Effect.acquireRelease(
    Effect.async<{ url: string; bodies: Array<any> }>((resume) => {
      const bodies: Array<any> = []
      const server = createServer((req, res) => {
        let body = ""
        req.on("data", (c) => (body += c))
        req.on("end", () => {
          if (req.url === "/v1/traces") bodies.push(JSON.parse(body))
          res.writeHead(200, { "content-type": "application/json" }).end("{}")
        })
      })
      server.listen(0, "127.0.0.1", () =>
        resume(
          Effect.succeed({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies, server } as any)
        ))
    }),
    (c: any) => Effect.sync(() => c.server.close())
  )

const spansOf = (bodies: Array<any>) =>
  bodies.flatMap((b) => b.resourceSpans ?? []).flatMap((r: any) => r.scopeSpans ?? []).flatMap((s: any) =>
    s.spans ?? []
  )

describe("tracing", () => {
  it.live("each request is a server span exported with its request id", () =>
    Effect.gen(function*() {
      const otlp = yield* Effect.scoped(
        collector().pipe(Effect.tap((c) =>
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
      const spans = spansOf(otlp.bodies)
      const server = spans.find((s: any) => s.kind === 2 && JSON.stringify(s.attributes).includes("trace-test-0001"))
      expect(server, JSON.stringify(spans.map((s: any) => s.name))).toBeDefined()
      expect(JSON.stringify(server.attributes)).toContain("/api/v1/bookings")
      expect(spans.some((s: any) => s.name === "KeyAuth.authenticate")).toBe(true)
      const resource = otlp.bodies[0].resourceSpans[0].resource.attributes
      expect(JSON.stringify(resource)).toContain("tour-partner-service")
    }), { timeout: 60_000 })
})
