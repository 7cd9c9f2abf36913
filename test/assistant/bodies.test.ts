/**
 * Body limits of the assistant surface (issue 17 item 12): /mcp takes what the REST APIs take
 * (BODY_LIMIT_BYTES; past it the SDK's 413 JSON-RPC error), the authorization server's endpoints and
 * the sign-in forms OAUTH_BODY_LIMIT_BYTES (413 as an OAuth error body, or a page). The partner,
 * quickbook and collect limits are tested in test/http/requestBodies.test.ts and
 * test/partner/collect/collect.test.ts.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { OAUTH_BODY_LIMIT_BYTES } from "../../src/assistant/Http.js"
import { BODY_LIMIT_BYTES } from "../../src/http/requestBody.js"
import { callMe, connectAssistant, rpc, setPassword } from "../support/assistant.js"
import { makeWorld } from "../support/fixtures.js"
import { TestServer, testServer } from "../support/server.js"

const post = (url: string, body: string, contentType: string) =>
  Effect.promise(async () => {
    const res = await fetch(url, { method: "POST", headers: { "content-type": contentType }, body })
    return { status: res.status, headers: res.headers, text: await res.text() }
  })

layer(testServer(), { excludeTestServices: true, timeout: 120_000 })("assistant body limits", (it) => {
  it.scoped("/mcp: a tool call over the REST body limit is 413; one within it is answered", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const w = yield* makeWorld
      const email = `alice-${w.tag}@example.com`
      yield* setPassword(email, "correct horse battery")
      const a = yield* connectAssistant(baseUrl, { email, password: "correct horse battery" })
      const token = a.tokens.access_token
      const padded = (bytes: number) => ({ ...callMe, params: { ...callMe.params, _meta: { pad: "x".repeat(bytes) } } })

      const within = yield* Effect.promise(() => rpc(`${baseUrl}/mcp`, token, padded(BODY_LIMIT_BYTES - 1024)))
      expect(within.status, within.text).toBe(200)
      const over = yield* Effect.promise(() => rpc(`${baseUrl}/mcp`, token, padded(BODY_LIMIT_BYTES)))
      expect(over.status, over.text).toBe(413)
      expect(over.json.error.message).toContain(String(BODY_LIMIT_BYTES))
    }))

  it.effect("/oauth/*: a body over the limit is 413, an OAuth error body on the endpoints and a page on the forms", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const form = `grant_type=client_credentials&pad=${"x".repeat(OAUTH_BODY_LIMIT_BYTES)}`
      const token = yield* post(`${baseUrl}/oauth/token`, form, "application/x-www-form-urlencoded")
      expect(token.status, token.text).toBe(413)
      expect(JSON.parse(token.text)).toEqual({
        error: "invalid_request",
        error_description: `the body is larger than ${OAUTH_BODY_LIMIT_BYTES} bytes, the most this endpoint takes`
      })
      const register = yield* post(
        `${baseUrl}/oauth/register`,
        JSON.stringify({ client_name: "x".repeat(OAUTH_BODY_LIMIT_BYTES) }),
        "application/json"
      )
      expect(register.status).toBe(413)

      const login = yield* post(
        `${baseUrl}/oauth/interaction/some-uid/login`,
        form,
        "application/x-www-form-urlencoded"
      )
      expect(login.status).toBe(413)
      expect(login.headers.get("content-type")).toContain("text/html")
      expect(login.headers.get("content-security-policy")).toContain("frame-ancestors 'none'")
      expect(login.text).toContain("too large")

      // Within the limit the endpoint answers for itself (here: no such client).
      const small = yield* post(
        `${baseUrl}/oauth/token`,
        "grant_type=client_credentials",
        "application/x-www-form-urlencoded"
      )
      expect(small.status).toBeGreaterThanOrEqual(400)
      expect(small.status).not.toBe(413)
    }))
})
