/**
 * A tools/call as the server runs every tool (contract "The tool call"), with a probe tool served
 * beside `me`: the scope per tool (HTTP 403 insufficient_scope challenge), arguments decoded with
 * the tool's schema (400 problem naming the field), domain failures as the REST problem, a defect
 * as `internal`, the per-connection rate limit (429 with retry_after).
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { AssistantToolList } from "../../src/assistant/mcp/endpoint.js"
import { meTool } from "../../src/assistant/tools/me.js"
import type { AssistantTool } from "../../src/assistant/tools/tool.js"
import { NotFound } from "../../src/domain/errors.js"
import { CurrentKey } from "../../src/partner/auth/security.js"
import { connectAssistant, rpc, setPassword } from "../support/assistant.js"
import { makeWorld } from "../support/fixtures.js"
import { TestServer, testServer } from "../support/server.js"

const PASSWORD = "correct horse battery"

const ProbeInput = Schema.Struct({ id: Schema.String, count: Schema.Int })
const ProbeOutput = Schema.Struct({ id: Schema.String, count: Schema.Int, key_id: Schema.String })

const probe: AssistantTool<typeof ProbeInput.Type, typeof ProbeOutput.Type> = {
  name: "probe_write",
  title: "Probe",
  description: "A test tool needing checkins:write.",
  input: ProbeInput,
  output: ProbeOutput,
  scope: "checkins:write",
  annotations: { destructiveHint: false },
  run: ({ count, id }) =>
    count < 0
      ? Effect.fail(new NotFound({ detail: "booking not found, or not yours" }))
      : count === 13
      ? Effect.die(new Error("unlucky"))
      : Effect.map(CurrentKey, (key) => ({ id, count, key_id: key.id })),
  text: (o) => `probed ${o.id} ${o.count}`
}

const withProbe = (env: Record<string, string> = {}) =>
  testServer({ env }).pipe(Layer.provide(Layer.succeed(AssistantToolList, [meTool, probe])))

const call = (args: unknown) => ({
  jsonrpc: "2.0",
  id: 7,
  method: "tools/call",
  params: { name: "probe_write", arguments: args }
})

const connect = (scopes?: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const w = yield* makeWorld
    const { baseUrl } = yield* TestServer
    const email = `alice-${w.tag}@example.com`
    yield* setPassword(email, PASSWORD)
    const a = yield* connectAssistant(baseUrl, { email, password: PASSWORD, ...(scopes ? { scopes } : {}) })
    return { w, a, baseUrl, mcp: `${baseUrl}/mcp`, token: a.tokens.access_token }
  })

layer(withProbe(), { excludeTestServices: true, timeout: 120_000 })("MCP tools/call", (it) => {
  describe("scope per tool", () => {
    it.scoped("a tool whose scope the connection lacks: 403 insufficient_scope naming the scope", () =>
      Effect.gen(function*() {
        const { baseUrl, mcp, token } = yield* connect()
        const res = yield* Effect.promise(() => rpc(mcp, token, call({ id: "b1", count: 1 })))
        expect(res.status).toBe(403)
        const header = res.headers.get("www-authenticate") ?? ""
        expect(header).toMatch(/^Bearer /)
        expect(header).toContain(`error="insufficient_scope"`)
        expect(header).toMatch(/scope="[^"]*checkins:write[^"]*"/)
        expect(header).toContain(`resource_metadata="${baseUrl}/.well-known/oauth-protected-resource/mcp"`)
      }))
  })

  describe("with the scope", () => {
    it.scoped("success: structuredContent is the encoded output and the text its rendering", () =>
      Effect.gen(function*() {
        const { a } = yield* connect(["bookings:read", "checkins:write"])
        const result = yield* Effect.promise(() =>
          a.client.callTool({ name: "probe_write", arguments: { id: "b1", count: 2 } })
        )
        expect(result.isError).toBeFalsy()
        expect(result.structuredContent).toMatchObject({ id: "b1", count: 2 })
        expect((result.content as any)[0].text).toBe("probed b1 2")
        const listed = yield* Effect.promise(() => a.client.listTools())
        const tool = listed.tools.find((t) => t.name === "probe_write")!
        expect(tool.inputSchema.required).toEqual(["id", "count"])
        expect(tool.outputSchema?.required).toEqual(["id", "count", "key_id"])
      }))

    it.scoped("bad arguments: isError with a 400 problem naming the field; nothing runs", () =>
      Effect.gen(function*() {
        const { mcp, token } = yield* connect(["bookings:read", "checkins:write"])
        const res = yield* Effect.promise(() => rpc(mcp, token, call({ id: "b1", count: "many" })))
        expect(res.status).toBe(200)
        expect(res.json.result?.isError, res.text).toBe(true)
        expect(res.json.result.structuredContent).toMatchObject({
          type: "/api/v1/docs/errors.md#invalid-request",
          status: 400,
          invalid_params: [{ name: "count" }]
        })
        const missing = yield* Effect.promise(() => rpc(mcp, token, call({ count: 1 })))
        expect(missing.json.result.structuredContent.invalid_params).toMatchObject([{ name: "id" }])
      }))

    it.scoped("a domain failure is the REST problem; a defect is `internal` without internals", () =>
      Effect.gen(function*() {
        const { mcp, token } = yield* connect(["bookings:read", "checkins:write"])
        const missing = yield* Effect.promise(() => rpc(mcp, token, call({ id: "b1", count: -1 })))
        expect(missing.json.result.isError).toBe(true)
        expect(missing.json.result.structuredContent).toMatchObject({
          status: 404,
          detail: "booking not found, or not yours"
        })
        expect(typeof missing.json.result.structuredContent.request_id).toBe("string")
        const broken = yield* Effect.promise(() => rpc(mcp, token, call({ id: "b1", count: 13 })))
        expect(broken.json.result.structuredContent).toMatchObject({ status: 500, title: "Internal error" })
        expect(broken.text).not.toContain("unlucky")
      }))
  })
})

layer(withProbe({ RATE_LIMIT_PER_MINUTE: "2" }), { excludeTestServices: true, timeout: 120_000 })(
  "MCP tools/call rate limit",
  (it) => {
    it.scoped("the REST per-key limit counts tool calls per connection: past it, a 429 problem with retry_after", () =>
      Effect.gen(function*() {
        const { mcp, token } = yield* connect(["bookings:read", "checkins:write"])
        for (let i = 0; i < 2; i++) {
          const ok = yield* Effect.promise(() => rpc(mcp, token, call({ id: "b1", count: 1 })))
          expect(ok.json.result.isError, ok.text).toBeFalsy()
        }
        const limited = yield* Effect.promise(() => rpc(mcp, token, call({ id: "b1", count: 1 })))
        expect(limited.json.result.isError).toBe(true)
        expect(limited.json.result.structuredContent).toMatchObject({ status: 429 })
        expect(limited.json.result.structuredContent.retry_after).toBeGreaterThan(0)
      }))
  }
)
