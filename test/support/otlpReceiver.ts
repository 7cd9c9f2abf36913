/**
 * A small OTLP/HTTP (JSON) receiver for tests: accepts POST /v1/traces, /v1/metrics and /v1/logs,
 * keeps every body as sent (for scans) and parsed (for assertions), and answers 200 `{}`.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

export interface OtlpSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly name: string
  readonly kind: number
  readonly attributes: ReadonlyArray<{ readonly key: string; readonly value: Record<string, unknown> }>
  readonly links?: ReadonlyArray<{ readonly traceId: string; readonly spanId: string }>
  readonly status: { readonly code: number; readonly message?: string }
}

export interface OtlpDataPoint {
  readonly attributes: ReadonlyArray<{ readonly key: string; readonly value: Record<string, unknown> }>
  readonly asDouble?: number
  readonly asInt?: string | number
  readonly count?: string | number
}

export interface OtlpMetric {
  readonly name: string
  readonly dataPoints: ReadonlyArray<OtlpDataPoint>
}

export const startOtlpReceiver = async () => {
  const bodies: Array<{ readonly path: string; readonly text: string }> = []
  const server = createServer((req, res) => {
    let text = ""
    req.setEncoding("utf8")
    req.on("data", (chunk) => (text += chunk))
    req.on("end", () => {
      bodies.push({ path: req.url ?? "", text })
      res.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const parsed = (path: string) => bodies.filter((b) => b.path === path).map((b) => JSON.parse(b.text))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    /** Every body received, as sent. */
    raw: () => bodies.map((b) => b.text).join("\n"),
    spans: (): Array<OtlpSpan> =>
      parsed("/v1/traces").flatMap((d) =>
        d.resourceSpans.flatMap((r: { scopeSpans: Array<{ spans: Array<OtlpSpan> }> }) =>
          r.scopeSpans.flatMap((s) => s.spans)
        )
      ),
    /** The latest export of each metric (cumulative), with its data points. */
    metrics: (): Map<string, OtlpMetric> => {
      const latest = new Map<string, OtlpMetric>()
      for (const d of parsed("/v1/metrics")) {
        for (const r of d.resourceMetrics) {
          for (const s of r.scopeMetrics) {
            for (const m of s.metrics) {
              const data = m.sum ?? m.gauge ?? m.histogram ?? m.summary ?? { dataPoints: [] }
              latest.set(m.name, { name: m.name, dataPoints: data.dataPoints })
            }
          }
        }
      }
      return latest
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

export const attr = (item: { readonly attributes: OtlpSpan["attributes"] }, key: string): unknown => {
  const found = item.attributes.find((a) => a.key === key)
  return found ? Object.values(found.value)[0] : undefined
}
