/**
 * Preloaded (`node --import tsx --import ./bench/httpTiming.ts`) into the processes of
 * `npm run bench:changes` (the service and both sandboxes) to time their HTTP exchanges without
 * touching their code, from Node's diagnostics channels:
 *
 * - `server`: every request this process answers, from `http.server.request.start` to
 *   `http.server.response.finish` (the last byte handed to the socket);
 * - `client`: every request this process sends through undici (the service's adapters use
 *   `NodeHttpClient.layerUndici`), from `undici:request:create` (queued in the dispatcher, before
 *   a connection is free) to `undici:request:trailers` (the answer's body fully received) or
 *   `undici:request:error`.
 *
 * Each exchange becomes one JSON line in the file named by BENCH_HTTP_TIMING:
 * `{k: "server"|"client", t: start (epoch ms), d: duration (ms), m: method, u: path (server) or
 * origin + path (client), without the query string, s: status (0: error or no answer)}`.
 * Lines are buffered and appended every 100 ms (and at exit), so the cost in the measured process
 * is a few microseconds per exchange. Timestamps are `performance.timeOrigin + performance.now()`,
 * comparable between processes on one machine.
 */
import { subscribe } from "node:diagnostics_channel"
import { appendFile, appendFileSync } from "node:fs"
import type { IncomingMessage, ServerResponse } from "node:http"

const file = process.env.BENCH_HTTP_TIMING

if (file) {
  let buffer: Array<string> = []
  const now = () => performance.now()
  const epoch = (t: number) => Math.round((performance.timeOrigin + t) * 1000) / 1000
  const record = (k: "server" | "client", start: number, m: string, u: string, s: number) => {
    const d = Math.round((now() - start) * 1000) / 1000
    buffer.push(JSON.stringify({ k, t: epoch(start), d, m, u, s }))
  }
  const flush = () => {
    if (buffer.length === 0) return
    const lines = buffer.join("\n") + "\n"
    buffer = []
    appendFile(file, lines, () => {})
  }
  setInterval(flush, 100).unref()
  process.on("exit", () => {
    if (buffer.length > 0) appendFileSync(file, buffer.join("\n") + "\n")
  })

  // Server side.
  const served = new WeakMap<IncomingMessage, number>()
  subscribe("http.server.request.start", (message) => {
    const { request } = message as { request: IncomingMessage }
    served.set(request, now())
  })
  subscribe("http.server.response.finish", (message) => {
    const { request, response } = message as { request: IncomingMessage; response: ServerResponse }
    const start = served.get(request)
    if (start === undefined) return
    served.delete(request)
    record("server", start, request.method ?? "", (request.url ?? "").split("?")[0]!, response.statusCode)
  })

  // Client side (undici).
  interface UndiciRequest {
    readonly origin?: string | URL
    readonly path?: string
    readonly method?: string
  }
  const sent = new WeakMap<object, { start: number; status: number }>()
  subscribe("undici:request:create", (message) => {
    const { request } = message as { request: UndiciRequest }
    sent.set(request, { start: now(), status: 0 })
  })
  subscribe("undici:request:headers", (message) => {
    const { request, response } = message as { request: UndiciRequest; response: { statusCode: number } }
    const entry = sent.get(request)
    if (entry) entry.status = response.statusCode
  })
  const done = (request: UndiciRequest, failed: boolean) => {
    const entry = sent.get(request)
    if (entry === undefined) return
    sent.delete(request)
    const origin = String(request.origin ?? "").replace(/\/$/, "")
    record(
      "client",
      entry.start,
      request.method ?? "",
      origin + (request.path ?? "").split("?")[0],
      failed ? 0 : entry.status
    )
  }
  subscribe("undici:request:trailers", (message) => done((message as { request: UndiciRequest }).request, false))
  subscribe("undici:request:error", (message) => done((message as { request: UndiciRequest }).request, true))
}
