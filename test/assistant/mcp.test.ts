/**
 * The MCP endpoint as a protected resource and as an MCP server (issue 16, M1): the 401/403
 * challenges, Origin and protocol-version checks, notifications, GET/DELETE, the `me` tool, and the
 * connection's life (the person demoted, revoked by the CLI, an assistant key refused on REST).
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as http from "node:http"
import { AssistantAdmin } from "../../src/assistant/oauth/AssistantAdmin.js"
import { idHash } from "../../src/assistant/oauth/OAuthStoreRepo.js"
import { Operators } from "../../src/operators/Operators.js"
import { callMe, connectAssistant, rpc, setPassword, toolsList } from "../support/assistant.js"
import { makeWorld } from "../support/fixtures.js"
import { get } from "../support/http.js"
import { TestServer, testServer } from "../support/server.js"

const PASSWORD = "correct horse battery"

/** Bob (admin of Alpha, owner of Beta) connects for both, read scopes. */
const connected = Effect.gen(function*() {
  const w = yield* makeWorld
  const { baseUrl } = yield* TestServer
  const email = `bob-${w.tag}@example.com`
  yield* setPassword(email, PASSWORD)
  const a = yield* connectAssistant(baseUrl, { email, password: PASSWORD })
  return { w, a, baseUrl, mcp: `${baseUrl}/mcp`, token: a.tokens.access_token }
})

layer(testServer(), { excludeTestServices: true, timeout: 120_000 })("MCP endpoint", (it) => {
  describe("the protected resource (RFC 9728, RFC 6750)", () => {
    it.effect("no token: 401 with resource_metadata; the metadata names the resource and the authorization server", () =>
      Effect.gen(function*() {
        const { baseUrl } = yield* TestServer
        const res = yield* Effect.promise(() => rpc(`${baseUrl}/mcp`, undefined, toolsList))
        expect(res.status).toBe(401)
        const metadataUrl = `${baseUrl}/.well-known/oauth-protected-resource/mcp`
        expect(res.headers.get("www-authenticate")).toBe(`Bearer resource_metadata="${metadataUrl}"`)
        const doc = yield* Effect.promise(() => fetch(metadataUrl).then((r) => r.json() as Promise<any>))
        expect(doc.resource).toBe(`${baseUrl}/mcp`)
        expect(doc.authorization_servers).toEqual([baseUrl])
        expect(doc.scopes_supported).toContain("bookings:read")
      }))

    it.effect("a token that is not ours: 401 invalid_token", () =>
      Effect.gen(function*() {
        const { baseUrl } = yield* TestServer
        const res = yield* Effect.promise(() => rpc(`${baseUrl}/mcp`, "not-a-token", toolsList))
        expect(res.status).toBe(401)
        expect(res.headers.get("www-authenticate")).toMatch(
          /^Bearer error="invalid_token", error_description="[^"]+", resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp"$/
        )
        expect(res.json.error).toBe("invalid_token")
        const basic = yield* Effect.promise(() =>
          rpc(`${baseUrl}/mcp`, undefined, toolsList, { authorization: "Basic abc" })
        )
        expect(basic.status).toBe(401)
      }))
  })

  describe("the protocol", () => {
    it.scoped("tools/list shows me with its schemas; me answers the REST GET /me body", () =>
      Effect.gen(function*() {
        const { a, w } = yield* connected
        const tools = yield* Effect.promise(() => a.client.listTools())
        const me = tools.tools.find((t) => t.name === "me")!
        expect(me.annotations?.readOnlyHint).toBe(true)
        expect(me.inputSchema.type).toBe("object")
        expect(me.outputSchema?.type).toBe("object")
        expect(Object.keys(me.outputSchema?.properties ?? {})).toEqual(["key", "partner", "partners"])
        const result = yield* Effect.promise(() => a.client.callTool({ name: "me", arguments: {} }))
        const body = result.structuredContent as any
        expect(body.partners.map((p: any) => p.id).sort()).toEqual([w.alpha, w.beta].sort())
        expect(body.key.scopes).toEqual([
          "bookings:read",
          "manifest:read",
          "guests.contact:read",
          "finance:read",
          "analytics:read",
          "tours:read"
        ])
        expect((result.content as any)[0].text).toContain(body.key.id)
      }))

    it.scoped("capabilities: tools without listChanged (the tool list never changes), in both revisions", () =>
      Effect.gen(function*() {
        const { a, mcp, token } = yield* connected
        expect(a.client.getServerCapabilities()?.tools).toEqual({ listChanged: false })
        const discover = yield* Effect.promise(() =>
          rpc(mcp, token, {
            jsonrpc: "2.0",
            id: 7,
            method: "server/discover",
            params: {
              _meta: {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": { name: "probe", version: "1.0.0" },
                "io.modelcontextprotocol/clientCapabilities": {}
              }
            }
          }, { "mcp-protocol-version": "2026-07-28", "mcp-method": "server/discover" })
        )
        expect(discover.status, discover.text).toBe(200)
        expect(discover.json.result.capabilities.tools?.listChanged ?? false).toBe(false)
        expect(discover.json.result.capabilities.tools).toBeDefined()
      }))

    it.scoped("Origin not allowed: 403; the service's own origin is fine", () =>
      Effect.gen(function*() {
        const { baseUrl, mcp, token } = yield* connected
        const evil = yield* Effect.promise(() => rpc(mcp, token, toolsList, { origin: "https://evil.example" }))
        expect(evil.status).toBe(403)
        const own = yield* Effect.promise(() => rpc(mcp, token, toolsList, { origin: baseUrl }))
        expect(own.status).toBe(200)
        const none = yield* Effect.promise(() => rpc(mcp, undefined, toolsList, { origin: "https://evil.example" }))
        expect(none.status).toBe(403)
      }))

    it.scoped("the stateless 2026-07-28 revision: a client pinned to it lists and calls the same tools", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const { baseUrl } = yield* TestServer
        const email = `alice-${w.tag}@example.com`
        yield* setPassword(email, PASSWORD)
        const a = yield* connectAssistant(baseUrl, { email, password: PASSWORD }, {
          versionNegotiation: { mode: { pin: "2026-07-28" } }
        })
        expect(a.client.getNegotiatedProtocolVersion()).toBe("2026-07-28")
        const tools = yield* Effect.promise(() => a.client.listTools())
        expect(tools.tools.map((t) => t.name)).toContain("me")
        const me = yield* Effect.promise(() => a.client.callTool({ name: "me", arguments: {} }))
        expect((me.structuredContent as any).partners.map((p: any) => p.id)).toEqual([w.alpha])
      }))

    it.effect("a Host that is not the service's: 403 (DNS rebinding)", () =>
      Effect.gen(function*() {
        const { baseUrl } = yield* TestServer
        const url = new URL(`${baseUrl}/mcp`)
        const status = yield* Effect.promise(() =>
          new Promise<number>((resolve, reject) => {
            const req = http.request({
              host: url.hostname,
              port: url.port,
              path: "/mcp",
              method: "POST",
              headers: { host: "attacker.example", "content-type": "application/json" }
            }, (res) => {
              res.resume()
              resolve(res.statusCode ?? 0)
            })
            req.on("error", reject)
            req.end(JSON.stringify(toolsList))
          })
        )
        expect(status).toBe(403)
      }))

    it.effect("a browser client on an allowed origin: CORS preflight, and the 401 challenge readable", () =>
      Effect.gen(function*() {
        const { baseUrl } = yield* TestServer
        const origin = "http://localhost:6274" // the MCP Inspector's, allowed while the service is on loopback
        const preflight = yield* Effect.promise(() =>
          fetch(`${baseUrl}/mcp`, {
            method: "OPTIONS",
            headers: {
              origin,
              "access-control-request-method": "POST",
              "access-control-request-headers": "authorization, content-type, mcp-protocol-version"
            }
          })
        )
        expect(preflight.status).toBe(204)
        expect(preflight.headers.get("access-control-allow-origin")).toBe(origin)
        expect(preflight.headers.get("access-control-allow-headers")).toContain("Authorization")
        const challenged = yield* Effect.promise(() => rpc(`${baseUrl}/mcp`, undefined, toolsList, { origin }))
        expect(challenged.status).toBe(401)
        expect(challenged.headers.get("access-control-allow-origin")).toBe(origin)
        expect(challenged.headers.get("access-control-expose-headers")).toContain("WWW-Authenticate")
        const refused = yield* Effect.promise(() =>
          fetch(`${baseUrl}/mcp`, { method: "OPTIONS", headers: { origin: "https://evil.example" } })
        )
        expect(refused.status).toBe(403)
        expect(refused.headers.get("access-control-allow-origin")).toBeNull()
      }))

    it.scoped("an unsupported MCP-Protocol-Version: 400; notifications: 202; GET and DELETE: 405", () =>
      Effect.gen(function*() {
        const { mcp, token } = yield* connected
        const bad = yield* Effect.promise(() => rpc(mcp, token, toolsList, { "mcp-protocol-version": "1999-01-01" }))
        expect(bad.status).toBe(400)
        const note = yield* Effect.promise(() =>
          rpc(mcp, token, { jsonrpc: "2.0", method: "notifications/initialized" })
        )
        expect(note.status).toBe(202)
        for (const method of ["GET", "DELETE"]) {
          const res = yield* Effect.promise(() =>
            fetch(mcp, { method, headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" } })
          )
          expect(res.status, method).toBe(405)
        }
      }))
    it.scoped("the body: not JSON is a parse error; over 4 MiB is 413, declared or not; a 2025-era answer is one whole event stream", () =>
      Effect.gen(function*() {
        const { mcp, token } = yield* connected
        const post = (body: string | ReadableStream<Uint8Array>, init: Record<string, unknown> = {}) =>
          Effect.promise(async () => {
            const res = await fetch(mcp, {
              method: "POST",
              headers: {
                authorization: `Bearer ${token}`,
                "content-type": "application/json",
                accept: "application/json, text/event-stream",
                "mcp-protocol-version": "2025-11-25"
              },
              body,
              ...init
            })
            return { status: res.status, text: await res.text() }
          })
        const notJson = yield* post("{not json")
        expect(notJson.status).toBe(400)
        expect(notJson.text).toContain("-32700")
        const big = JSON.stringify({
          ...callMe,
          params: { name: "me", arguments: { pad: "x".repeat(4 * 1024 * 1024) } }
        })
        expect((yield* post(big)).status).toBe(413)
        const chunked = new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode(big))
            controller.close()
          }
        })
        expect((yield* post(chunked, { duplex: "half" })).status).toBe(413)
        const me = yield* Effect.promise(() => rpc(mcp, token, callMe))
        expect(me.status).toBe(200)
        expect(me.headers.get("content-type")).toContain("text/event-stream")
        expect(me.headers.get("content-length")).toBe(String(Buffer.byteLength(me.text)))
        expect(me.json.result.structuredContent.partners).toHaveLength(2)
      }))
  })

  describe("the connection acts as a key", () => {
    it.scoped("a person demoted from admin loses that operator; with none left the token answers 401", () =>
      Effect.gen(function*() {
        const { mcp, token, w } = yield* connected
        const admin = yield* Operators
        yield* admin.changeRole(w.alpha, w.bob, "member")
        const one = yield* Effect.promise(() => rpc(mcp, token, callMe))
        expect(one.json.result.structuredContent.partners.map((p: any) => p.id)).toEqual([w.beta])
        yield* admin.changeRole(w.beta, w.bob, "member")
        const none = yield* Effect.promise(() => rpc(mcp, token, callMe))
        expect(none.status).toBe(401)
        expect(none.headers.get("www-authenticate")).toContain(`error="invalid_token"`)
      }))

    it.scoped("revoked with the admin CLI: 401; it is listed as revoked", () =>
      Effect.gen(function*() {
        const { mcp, token, w } = yield* connected
        const admin = yield* Effect.provide(AssistantAdmin, AssistantAdmin.Default)
        const mine = yield* admin.listConnections(`bob-${w.tag}@example.com`)
        expect(mine).toHaveLength(1)
        expect(mine[0]!.client_name).toBe("Test Assistant")
        expect(mine[0]!.revoked_at).toBeNull()
        yield* admin.revokeConnection(mine[0]!.id)
        const res = yield* Effect.promise(() => rpc(mcp, token, callMe))
        expect(res.status).toBe(401)
        const after = yield* admin.listConnections(`bob-${w.tag}@example.com`)
        expect(after[0]!.revoked_at).not.toBeNull()
      }).pipe(Effect.provide(AssistantAdmin.Default)))

    // The token, its connection and the connection's key are read in one statement on every call
    // (src/assistant/mcp/BearerRepo.ts): each of its rules is checked on the call right after a change.
    it.scoped("read fresh on every call: the key revoked, the key expired, the token expired, a scope taken", () =>
      Effect.gen(function*() {
        const { mcp, token } = yield* connected
        const sql = yield* SqlClient.SqlClient
        const me = yield* Effect.promise(() => rpc(mcp, token, callMe))
        expect(me.status).toBe(200)
        const keyId: string = me.json.result.structuredContent.key.id
        const refusedWith = (description: string) =>
          Effect.promise(() => rpc(mcp, token, callMe)).pipe(Effect.map((res) => {
            expect(res.status).toBe(401)
            expect(res.headers.get("www-authenticate")).toContain(`error="invalid_token"`)
            expect(res.json.error_description).toBe(description)
          }))
        const ok = Effect.map(Effect.promise(() => rpc(mcp, token, callMe)), (res) => expect(res.status).toBe(200))

        // The key row alone revoked (its tokens still stored): 401 at once.
        yield* sql`UPDATE api_keys SET revoked_at = now() WHERE id = ${keyId}`
        yield* refusedWith("the key has been revoked")
        yield* sql`UPDATE api_keys SET revoked_at = NULL WHERE id = ${keyId}`
        yield* ok

        yield* sql`UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = ${keyId}`
        yield* refusedWith("the key has expired")
        yield* sql`UPDATE api_keys SET expires_at = now() + interval '1 day' WHERE id = ${keyId}`
        yield* ok

        // A scope taken from the connection: the next call of a tool needing it is refused.
        const bookings = {
          jsonrpc: "2.0",
          id: 3,
          method: "tools/call",
          params: { name: "list_bookings", arguments: {} }
        }
        expect((yield* Effect.promise(() => rpc(mcp, token, bookings))).status).toBe(200)
        yield* sql`UPDATE api_keys SET scopes = array_remove(scopes, 'bookings:read') WHERE id = ${keyId}`
        const lacking = yield* Effect.promise(() => rpc(mcp, token, bookings))
        expect(lacking.status).toBe(403)
        expect(lacking.headers.get("www-authenticate")).toContain(`error="insufficient_scope"`)

        // The token's stored entry past its expiry: not valid.
        yield* sql`UPDATE oauth_store SET expires_at = now() - interval '1 second'
          WHERE model = 'AccessToken' AND grant_id = (SELECT grant_id FROM assistant_connections WHERE key_id = ${keyId})`
        yield* refusedWith("the access token is not valid")
      }))

    it.scoped("the provider's check of a token is kept for its entry as stored only: the entry changed, checked again", () =>
      Effect.gen(function*() {
        const { mcp, token } = yield* connected
        const sql = yield* SqlClient.SqlClient
        // Checked once, then served from the kept verdict.
        expect((yield* Effect.promise(() => rpc(mcp, token, callMe))).status).toBe(200)
        expect((yield* Effect.promise(() => rpc(mcp, token, callMe))).status).toBe(200)
        // The entry's own expiry (in its payload) moved into the past, the row's expires_at left as it is: only
        // the provider's check sees it, so a verdict kept past a changed entry would still answer 200.
        yield* sql`UPDATE oauth_store
          SET payload = jsonb_set(payload, '{exp}', to_jsonb(extract(epoch FROM now())::bigint - 1))
          WHERE model = 'AccessToken' AND id_hash = ${idHash(token)}`
        const res = yield* Effect.promise(() => rpc(mcp, token, callMe))
        expect(res.status).toBe(401)
        expect(res.json.error_description).toBe("the access token is not valid")
      }))

    it.scoped("a token whose grant has no connection: 401", () =>
      Effect.gen(function*() {
        const { mcp, token } = yield* connected
        const sql = yield* SqlClient.SqlClient
        const me = yield* Effect.promise(() => rpc(mcp, token, callMe))
        const keyId: string = me.json.result.structuredContent.key.id
        yield* sql`DELETE FROM assistant_connections WHERE key_id = ${keyId}`
        const res = yield* Effect.promise(() => rpc(mcp, token, callMe))
        expect(res.status).toBe(401)
        expect(res.json.error_description).toBe("the connection does not exist")
      }))

    it.scoped("the connection's key id is refused as a REST bearer", () =>
      Effect.gen(function*() {
        const { a } = yield* connected
        const me = yield* Effect.promise(() => a.client.callTool({ name: "me", arguments: {} }))
        const id = (me.structuredContent as any).key.id
        const rest = yield* get("/api/v1/me", `svc_live_${id}_${"a".repeat(32)}`)
        expect(rest.status).toBe(401)
      }))
  })
})
