/** Minimal HTTP client for tests: real requests over loopback, the body parsed when it is JSON. */
import { Effect } from "effect"
import * as http from "node:http"
import * as zlib from "node:zlib"
import { TestServer } from "./server.js"

export interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly body: any
  readonly text: string
}

export const call = (
  path: string,
  options: {
    key?: string | undefined
    headers?: Record<string, string>
    method?: string
    body?: unknown
    baseUrl?: string
  } = {}
) =>
  Effect.gen(function*() {
    const server = yield* Effect.serviceOption(TestServer)
    const base = options.baseUrl ?? (server._tag === "Some" ? server.value.baseUrl : "http://no-base-url")
    return yield* Effect.promise(async (): Promise<Reply> => {
      const headers: Record<string, string> = { ...options.headers }
      if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`
      if (options.body !== undefined) headers["content-type"] = "application/json"
      const res = await fetch(base + path, {
        method: options.method ?? "GET",
        headers,
        ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {})
      })
      const text = await res.text()
      const type = res.headers.get("content-type") ?? ""
      return {
        status: res.status,
        headers: res.headers,
        text,
        body: type.includes("json") && text ? JSON.parse(text) : text
      }
    })
  })

/** GET with a key. */
export const get = (path: string, key?: string, headers?: Record<string, string>) =>
  call(path, { key, ...(headers ? { headers } : {}) })

/** An answer as it came off the wire (node:http: fetch would decode a compressed body silently). */
export interface Wire {
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  readonly bytes: Buffer
}

/** GET `path` of the test server with `headers`, read off the wire. */
export const onWire = (path: string, headers: Record<string, string> = {}) =>
  Effect.flatMap(TestServer, ({ baseUrl }) =>
    Effect.async<Wire>((resume) => {
      const req = http.get(`${baseUrl}${path}`, { headers, agent: false }, (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () =>
          resume(Effect.succeed({ status: res.statusCode!, headers: res.headers, bytes: Buffer.concat(chunks) })))
      })
      req.on("error", (e) =>
        resume(Effect.die(e)))
    }))

/** The body of `wire` decoded from its Content-Encoding (br, gzip or none). */
export const decoded = (wire: Wire) =>
  wire.headers["content-encoding"] === "br"
    ? zlib.brotliDecompressSync(wire.bytes)
    : wire.headers["content-encoding"] === "gzip"
    ? zlib.gunzipSync(wire.bytes)
    : wire.bytes
