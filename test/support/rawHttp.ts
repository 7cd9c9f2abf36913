/**
 * Requests with exact control over the wire (node:http, no fetch defaults): any bytes as body, no
 * Content-Type unless given, a declared Content-Length that is never sent, or a body left open
 * (`holdOpen`: the request never ends, so an answer proves the server did not wait for the rest;
 * a POST body is then sent chunked).
 */
import { Effect } from "effect"
import * as http from "node:http"
import type { Reply } from "./http.js"
import { TestServer } from "./server.js"

export interface RawRequest {
  readonly method?: string
  readonly headers?: Record<string, string>
  readonly body?: string | Uint8Array
  /** Do not end the request after the body: the server must answer without the rest. */
  readonly holdOpen?: boolean
}

export const rawCall = (path: string, o: RawRequest = {}) =>
  Effect.gen(function*() {
    const { baseUrl } = yield* TestServer
    const url = new URL(baseUrl)
    const headers = { ...o.headers }
    const framed = Object.keys(headers).some((h) => ["content-length", "transfer-encoding"].includes(h.toLowerCase()))
    // A complete body says its length (a GET or DELETE body would not be chunked by default).
    if (o.body !== undefined && !o.holdOpen && !framed) headers["content-length"] = String(Buffer.byteLength(o.body))
    return yield* Effect.async<Reply>((resume) => {
      let settled = false
      const req = http.request({
        host: url.hostname,
        port: url.port,
        path,
        method: o.method ?? "POST",
        headers,
        agent: false
      }, (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () => {
          settled = true
          const text = Buffer.concat(chunks).toString("utf8")
          const headers = new Headers()
          for (const [k, v] of Object.entries(res.headers)) if (typeof v === "string") headers.set(k, v)
          const type = headers.get("content-type") ?? ""
          resume(
            Effect.succeed({
              status: res.statusCode!,
              headers,
              text,
              body: type.includes("json") && text ? JSON.parse(text) : text
            })
          )
          req.destroy()
        })
      })
      // Writing into a connection the server closed after answering is expected with holdOpen.
      req.on("error", (e) => {
        if (!settled) resume(Effect.die(e))
      })
      // The head goes out now even when no body byte follows (node:http otherwise waits for one).
      req.flushHeaders()
      if (o.body !== undefined) req.write(o.body)
      if (!o.holdOpen) req.end()
      return Effect.sync(() => req.destroy())
    })
  })
