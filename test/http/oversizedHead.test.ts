/**
 * A request whose line and headers pass node's 16 KiB limit (found by the contract fuzzer: a query or
 * path parameter thousands of characters long) is answered in its API's error form, 400, not with
 * node's bare 431 that no client of ours can read, also as the second request of a keep-alive
 * connection (where node closed the connection without a word); the server keeps serving. The
 * assistant's surfaces answer in theirs (JSON-RPC on /mcp, OAuth errors, a sign-in page).
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as net from "node:net"
import { call, get } from "../support/http.js"
import { TestServer, testServer } from "../support/server.js"

const LONG = "é".repeat(3_000) // 18,000 bytes once percent-encoded

/** Two requests on one keep-alive connection, the second sent once the first is answered; all that came back. */
const twoOnOneConnection = (baseUrl: string, first: string, second: string) =>
  Effect.async<string>((resume) => {
    const url = new URL(baseUrl)
    const socket = net.connect(Number(url.port), url.hostname)
    let received = ""
    let sentSecond = false
    socket.on("data", (chunk) => {
      received += chunk.toString("utf8")
      if (!sentSecond && /\r\n\r\n[\s\S]*\}$/.test(received)) {
        sentSecond = true
        socket.write(second)
      }
    })
    socket.on("close", () => resume(Effect.succeed(received)))
    socket.on("error", () => undefined)
    socket.write(first)
  })

layer(testServer(), { excludeTestServices: true })("request heads over 16 KiB", (it) => {
  it.effect("partner API: a parameter far too long is 400 problem+json invalid-request", () =>
    Effect.gen(function*() {
      for (const path of [`/api/v1/bookings?date_from=${encodeURIComponent(LONG)}`, `/api/v1/bookings/${LONG}`]) {
        const res = yield* get(path, "svc_test_whatever")
        expect(res.status, res.text).toBe(400)
        expect(res.headers.get("content-type")).toBe("application/problem+json")
        expect(res.body).toMatchObject({ status: 400, title: "Invalid request" })
        expect(res.body.type).toContain("invalid-request")
        expect(res.body.detail).toContain("16 KiB")
        expect(typeof res.body.request_id).toBe("string")
      }
      // A header far too long as well.
      const header = yield* call("/api/v1/me", { headers: { "x-padding": "x".repeat(20_000) } })
      expect(header.status).toBe(400)
      expect(header.body.status).toBe(400)
      // And the server still serves.
      expect((yield* get("/api/v1/me")).status).toBe(401)
    }))

  it.effect("quickbook: a parameter far too long is 400 {error:{code:\"invalid_request\",clerkMessage}}", () =>
    Effect.gen(function*() {
      const res = yield* get(`/api/quickbook/v1/sales/${encodeURIComponent(LONG)}`)
      expect(res.status, res.text).toBe(400)
      expect(res.headers.get("content-type")).toContain("application/json")
      expect(res.body.error.code).toBe("invalid_request")
      expect(res.body.error.clerkMessage.length).toBeGreaterThan(0)
    }))

  it.effect("the assistant's surfaces answer in their own forms: JSON-RPC on /mcp, OAuth on /oauth, a page when signing in", () =>
    Effect.gen(function*() {
      const mcp = yield* call(`/mcp?x=${encodeURIComponent(LONG)}`, { method: "POST", body: {} })
      expect(mcp.status, mcp.text).toBe(400)
      expect(mcp.body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } })
      expect(mcp.body.error.message).toContain("16 KiB")
      const token = yield* call(`/oauth/token?x=${encodeURIComponent(LONG)}`, { method: "POST", body: {} })
      expect(token.status, token.text).toBe(400)
      expect(token.body).toMatchObject({ error: "invalid_request" })
      expect(token.body.error_description).toContain("16 KiB")
      const signIn = yield* get(`/oauth/interaction/abc?x=${encodeURIComponent(LONG)}`)
      expect(signIn.status).toBe(400)
      expect(signIn.headers.get("content-type")).toContain("text/html")
      expect(signIn.text).toContain("16 KiB")
    }))

  it.effect("the second request of a keep-alive connection is answered too", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const wire = yield* twoOnOneConnection(
        baseUrl,
        "GET /api/v1/me HTTP/1.1\r\nHost: localhost\r\n\r\n",
        `GET /api/v1/bookings?date_from=${"x".repeat(20_000)} HTTP/1.1\r\nHost: localhost\r\n\r\n`
      )
      const answers = wire.split(/(?=HTTP\/1\.1 )/)
      expect(answers.map((a) => a.slice(0, 12)), wire.slice(0, 300)).toEqual(["HTTP/1.1 401", "HTTP/1.1 400"])
      expect(answers[1]).toContain("application/problem+json")
      expect(JSON.parse(answers[1]!.split("\r\n\r\n")[1]!)).toMatchObject({ status: 400, title: "Invalid request" })
    }))
})
