/**
 * Rate limits of the authorization server's open endpoints (src/assistant/oauth/endpointLimits.ts):
 * dynamic client registration and the token endpoint, per client address, on the shared database
 * counter. The counter is brought to the limit directly (as many requests as the limit would only be
 * slower); the requests before it are real ones and counted.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { OAUTH_ENDPOINT_LIMITS } from "../../src/assistant/oauth/endpointLimits.js"
import { tokenRequest } from "../support/assistant.js"
import { registerPublicClient } from "../support/oauthFlow.js"
import { TestServer, testServer } from "../support/server.js"

const register = (baseUrl: string) =>
  registerPublicClient(baseUrl, "Limit Probe").then(async (r) => ({
    status: r.status,
    headers: r.headers,
    json: await r.json() as any
  }))

const badGrant = (baseUrl: string) =>
  fetch(`${baseUrl}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: "nope", client_id: "nobody" }).toString()
  }).then(async (r) => ({ status: r.status, headers: r.headers, json: await r.json() as any }))

/** Sets the loopback address's counter of `path` to its limit in the current window. */
const fillUp = (path: keyof typeof OAUTH_ENDPOINT_LIMITS) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { bucket, limit, windowSeconds } = OAUTH_ENDPOINT_LIMITS[path]!
    const rows = yield* sql<{ bucket: string }>`
      UPDATE rate_limit_counters
      SET count = ${limit},
          window_start = to_timestamp(floor(extract(epoch FROM now()) / ${windowSeconds}) * ${windowSeconds})
      WHERE bucket LIKE ${`${bucket}:%`}
      RETURNING bucket`
    expect(rows.length).toBe(1)
  })

/**
 * The next request after filling the counter up; once more if a window boundary passed in between
 * (the counter then starts again at 1), which cannot happen twice in a row.
 */
const overTheLimit = <A extends { status: number }>(
  path: keyof typeof OAUTH_ENDPOINT_LIMITS,
  request: () => Promise<A>
) =>
  Effect.gen(function*() {
    yield* fillUp(path)
    const first = yield* Effect.promise(request)
    if (first.status === 429) return first
    yield* fillUp(path)
    return yield* Effect.promise(request)
  })

layer(testServer(), { excludeTestServices: true, timeout: 120_000 })("OAuth endpoint limits", (it) => {
  describe("per client address", () => {
    it.effect("registration: within the limit 201; past it 429 with Retry-After, and no client is made", () =>
      Effect.gen(function*() {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        for (let i = 0; i < 3; i++) {
          const ok = yield* Effect.promise(() => register(baseUrl))
          expect(ok.status).toBe(201)
        }
        const [counter] = yield* sql<{ count: number }>`
          SELECT count FROM rate_limit_counters WHERE bucket LIKE 'oauth-register:%'`
        expect(counter?.count).toBe(3)
        const refused = yield* overTheLimit("/oauth/register", () => register(baseUrl))
        expect(refused.status).toBe(429)
        expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0)
        expect(refused.json.error).toBe("temporarily_unavailable")
        expect(refused.json.client_id).toBeUndefined()
        // The authorization server's other endpoints are not counted against it.
        const metadata = yield* Effect.promise(() => fetch(`${baseUrl}/.well-known/oauth-authorization-server`))
        expect(metadata.status).toBe(200)
      }))

    it.effect("token endpoint: answered by the server within the limit; past it 429 with Retry-After", () =>
      Effect.gen(function*() {
        const { baseUrl } = yield* TestServer
        const answered = yield* Effect.promise(() =>
          tokenRequest(baseUrl, { grant_type: "refresh_token", refresh_token: "nope", client_id: "nobody" })
        )
        expect(answered.status).toBe(401)
        expect(answered.json.error).toBe("invalid_client")
        const refused = yield* overTheLimit("/oauth/token", () => badGrant(baseUrl))
        expect(refused.status).toBe(429)
        expect(refused.headers.get("cache-control")).toBe("no-store")
        expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0)
        expect(refused.json.error).toBe("temporarily_unavailable")
      }))
  })
})
