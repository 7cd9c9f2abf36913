/**
 * The authorization server (issue 16, M1): RFC 8414 metadata, registration, PKCE S256 only, exact
 * redirect URIs, `iss` in the response, rotating refresh tokens (reuse revokes the family),
 * revocation, hashes only in storage; the sign-in and consent pages (same answer for an unknown
 * email and a wrong password, rate limit, CSRF, no framing, escaping, operators and scopes offered).
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { OAuthStoreRepo } from "../../src/assistant/oauth/OAuthStoreRepo.js"
import { Operators } from "../../src/operators/Operators.js"
import {
  actionOf,
  browse,
  callMe,
  checkedValues,
  connectAssistant,
  CookieJar,
  csrfOf,
  REDIRECT_URL,
  rpc,
  setPassword,
  signInAndConsent,
  tokenRequest
} from "../support/assistant.js"
import { makeWorld } from "../support/fixtures.js"
import { TestServer, testServer } from "../support/server.js"

const PASSWORD = "correct horse battery"

const b64url = (b: Buffer) => b.toString("base64url")

/** A client registered by hand and an authorization URL with PKCE S256. */
const registered = (name = "Hand Client") =>
  Effect.gen(function*() {
    const { baseUrl } = yield* TestServer
    const reg = yield* Effect.promise(() =>
      fetch(`${baseUrl}/oauth/register`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          client_name: name,
          redirect_uris: [REDIRECT_URL],
          grant_types: ["authorization_code", "refresh_token"],
          response_types: ["code"],
          token_endpoint_auth_method: "none"
        })
      }).then(async (r) => ({ status: r.status, json: await r.json() as any }))
    )
    expect(reg.status, JSON.stringify(reg.json)).toBe(201)
    const verifier = b64url(randomBytes(32))
    const challenge = b64url(createHash("sha256").update(verifier).digest())
    const authorize = (overrides: Record<string, string | undefined> = {}) => {
      const url = new URL(`${baseUrl}/oauth/authorize`)
      const params: Record<string, string | undefined> = {
        client_id: reg.json.client_id,
        response_type: "code",
        redirect_uri: REDIRECT_URL,
        code_challenge: challenge,
        code_challenge_method: "S256",
        state: "s1",
        resource: `${baseUrl}/mcp`,
        ...overrides
      }
      for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v)
      return url
    }
    return { baseUrl, clientId: reg.json.client_id as string, verifier, authorize }
  })

const person = Effect.gen(function*() {
  const w = yield* makeWorld
  const email = `bob-${w.tag}@example.com`
  yield* setPassword(email, PASSWORD)
  return { w, email }
})

layer(testServer(), { excludeTestServices: true, timeout: 120_000 })("OAuth authorization server", (it) => {
  describe("metadata and the code flow", () => {
    it.effect("RFC 8414 metadata: code + PKCE S256 only, registration, revocation, iss parameter", () =>
      Effect.gen(function*() {
        const { baseUrl } = yield* TestServer
        const doc = yield* Effect.promise(() =>
          fetch(`${baseUrl}/.well-known/oauth-authorization-server`).then((r) => r.json() as Promise<any>)
        )
        expect(doc.issuer).toBe(baseUrl)
        expect(doc.authorization_endpoint).toBe(`${baseUrl}/oauth/authorize`)
        expect(doc.token_endpoint).toBe(`${baseUrl}/oauth/token`)
        expect(doc.registration_endpoint).toBe(`${baseUrl}/oauth/register`)
        expect(doc.revocation_endpoint).toBe(`${baseUrl}/oauth/revoke`)
        expect(doc.response_types_supported).toEqual(["code"])
        expect(doc.code_challenge_methods_supported).toEqual(["S256"])
        expect(doc.authorization_response_iss_parameter_supported).toBe(true)
      }))

    it.effect("the code comes back with iss and state; it is exchanged once, with the verifier, for the MCP resource", () =>
      Effect.gen(function*() {
        const { email } = yield* person
        const c = yield* registered()
        const { stoppedAt } = yield* Effect.promise(() =>
          signInAndConsent(c.authorize(), { email, password: PASSWORD })
        )
        const back = new URL(stoppedAt.url)
        expect(back.origin + back.pathname).toBe(REDIRECT_URL)
        expect(back.searchParams.get("iss")).toBe(c.baseUrl)
        expect(back.searchParams.get("state")).toBe("s1")
        const code = back.searchParams.get("code")!
        const exchange = (verifier: string) =>
          tokenRequest(c.baseUrl, {
            grant_type: "authorization_code",
            code,
            redirect_uri: REDIRECT_URL,
            client_id: c.clientId,
            code_verifier: verifier,
            resource: `${c.baseUrl}/mcp`
          })
        const wrong = yield* Effect.promise(() => exchange(b64url(randomBytes(32))))
        expect(wrong.status).toBe(400)
        expect(wrong.json.error).toBe("invalid_grant")
        // A wrong verifier is refused (and the code is spent); a new flow with the right verifier gets tokens.
        const again = yield* Effect.promise(() => signInAndConsent(c.authorize(), { email, password: PASSWORD }))
        const code2 = new URL(again.stoppedAt.url).searchParams.get("code")!
        const ok = yield* Effect.promise(() =>
          tokenRequest(c.baseUrl, {
            grant_type: "authorization_code",
            code: code2,
            redirect_uri: REDIRECT_URL,
            client_id: c.clientId,
            code_verifier: c.verifier,
            resource: `${c.baseUrl}/mcp`
          })
        )
        expect(ok.status, JSON.stringify(ok.json)).toBe(200)
        expect(ok.json.token_type).toBe("Bearer")
        expect(typeof ok.json.refresh_token).toBe("string")
        const me = yield* Effect.promise(() => rpc(`${c.baseUrl}/mcp`, ok.json.access_token, callMe))
        expect(me.status).toBe(200)
        const replay = yield* Effect.promise(() =>
          tokenRequest(c.baseUrl, {
            grant_type: "authorization_code",
            code: code2,
            redirect_uri: REDIRECT_URL,
            client_id: c.clientId,
            code_verifier: c.verifier
          })
        )
        expect(replay.status).toBe(400)
      }))

    it.effect("client ID metadata documents: advertised; an https client_id is read as one, never from a private address", () =>
      Effect.gen(function*() {
        const c = yield* registered()
        const doc = yield* Effect.promise(() =>
          fetch(`${c.baseUrl}/.well-known/oauth-authorization-server`).then((r) => r.json() as Promise<any>)
        )
        expect(doc.client_id_metadata_document_supported).toBe(true)
        // A document on a loopback (special-use) address is never fetched (SSRF protection): the
        // client is unknown, the person is not asked to sign in, and nothing is sent to the redirect URI.
        for (const clientId of ["https://127.0.0.1:9/client.json", "https://localhost:9/client.json"]) {
          const page = yield* Effect.promise(() =>
            browse(new CookieJar(), c.authorize({ client_id: clientId }).toString())
          )
          expect(page.status, clientId).toBe(400)
          expect(page.url.startsWith(REDIRECT_URL)).toBe(false)
          expect(page.html).not.toContain("/login")
          expect(page.html).toContain("invalid_client: client_id metadata document fetch failed")
        }
        // Only https URLs are metadata documents: an http one is just an unknown client_id.
        const http = yield* Effect.promise(() =>
          browse(new CookieJar(), c.authorize({ client_id: "http://client.example/client.json" }).toString())
        )
        expect(http.status).toBe(400)
        expect(http.html).toContain("invalid_client")
        expect(http.html).not.toContain("metadata document")
        // The registered client still signs in as before.
        const ok = yield* Effect.promise(() => browse(new CookieJar(), c.authorize().toString()))
        expect(ok.status).toBe(200)
        expect(ok.html).toContain("/login")
      }))

    it.effect("PKCE is required and only S256; the redirect URI must match exactly; tokens only for the MCP resource", () =>
      Effect.gen(function*() {
        const c = yield* registered()
        const jar = new CookieJar()
        const noPkce = yield* Effect.promise(() =>
          browse(jar, c.authorize({ code_challenge: undefined, code_challenge_method: undefined }).toString())
        )
        expect(new URL(noPkce.url).searchParams.get("error")).toBe("invalid_request")
        const plain = yield* Effect.promise(() =>
          browse(jar, c.authorize({ code_challenge_method: "plain" }).toString())
        )
        expect(new URL(plain.url).searchParams.get("error")).toBe("invalid_request")
        const otherRedirect = yield* Effect.promise(() =>
          browse(jar, c.authorize({ redirect_uri: `${REDIRECT_URL}/other` }).toString())
        )
        expect(otherRedirect.url.startsWith(REDIRECT_URL)).toBe(false)
        expect(otherRedirect.status).toBe(400)
        const otherResource = yield* Effect.promise(() =>
          browse(jar, c.authorize({ resource: "https://elsewhere.example/api" }).toString())
        )
        expect(new URL(otherResource.url).searchParams.get("error")).toBe("invalid_target")
      }))
  })

  describe("refresh, reuse and revocation", () => {
    it.scoped("refresh tokens rotate; reusing an old one revokes the family and the connection", () =>
      Effect.gen(function*() {
        const { email } = yield* person
        const { baseUrl } = yield* TestServer
        const a = yield* connectAssistant(baseUrl, { email, password: PASSWORD })
        const first = a.tokens.refresh_token!
        const refresh = (token: string) =>
          tokenRequest(baseUrl, {
            grant_type: "refresh_token",
            refresh_token: token,
            client_id: a.clientId,
            resource: `${baseUrl}/mcp`
          })
        const rotated = yield* Effect.promise(() => refresh(first))
        expect(rotated.status, JSON.stringify(rotated.json)).toBe(200)
        expect(rotated.json.refresh_token).not.toBe(first)
        const fresh = yield* Effect.promise(() => rpc(`${baseUrl}/mcp`, rotated.json.access_token, callMe))
        expect(fresh.status).toBe(200)
        const reuse = yield* Effect.promise(() => refresh(first))
        expect(reuse.status).toBe(400)
        expect(reuse.json.error).toBe("invalid_grant")
        const family = yield* Effect.promise(() => refresh(rotated.json.refresh_token))
        expect(family.status).toBe(400)
        const after = yield* Effect.promise(() => rpc(`${baseUrl}/mcp`, rotated.json.access_token, callMe))
        expect(after.status).toBe(401)
        const sql = yield* SqlClient.SqlClient
        // The grant's revocation reaches the connection (an event of the provider: wait for it).
        let revoked: ReadonlyArray<{ revoked_at: Date | null }> = []
        for (let i = 0; i < 200; i++) {
          revoked = yield* sql<{ revoked_at: Date | null }>`
            SELECT k.revoked_at FROM api_keys k JOIN assistant_connections c ON c.key_id = k.id
            JOIN users u ON u.id = c.user_id WHERE u.email = ${email}`
          if (revoked[0]?.revoked_at) break
          yield* Effect.sleep("20 millis")
        }
        expect(revoked[0]?.revoked_at).not.toBeNull()
      }))

    it.scoped("the revocation endpoint: a revoked access token answers 401", () =>
      Effect.gen(function*() {
        const { email } = yield* person
        const { baseUrl } = yield* TestServer
        const a = yield* connectAssistant(baseUrl, { email, password: PASSWORD })
        // Used first, so that the endpoint has checked it (and kept the provider's verdict on its entry).
        const before = yield* Effect.promise(() => rpc(`${baseUrl}/mcp`, a.tokens.access_token, callMe))
        expect(before.status).toBe(200)
        const res = yield* Effect.promise(() =>
          fetch(`${baseUrl}/oauth/revoke`, {
            method: "POST",
            headers: { "content-type": "application/x-www-form-urlencoded" },
            body: new URLSearchParams({ token: a.tokens.access_token, client_id: a.clientId }).toString()
          })
        )
        expect(res.status).toBe(200)
        const after = yield* Effect.promise(() => rpc(`${baseUrl}/mcp`, a.tokens.access_token, callMe))
        expect(after.status).toBe(401)
      }))

    it.scoped("storage keeps hashes only: no token appears in oauth_store, its SHA-256 does", () =>
      Effect.gen(function*() {
        const { email } = yield* person
        const { baseUrl } = yield* TestServer
        const a = yield* connectAssistant(baseUrl, { email, password: PASSWORD })
        const sql = yield* SqlClient.SqlClient
        for (const token of [a.tokens.access_token, a.tokens.refresh_token!]) {
          const leaks = yield* sql`SELECT 1 FROM oauth_store WHERE payload::text LIKE ${"%" + token + "%"}`
          expect(leaks).toHaveLength(0)
          const hashed = yield* sql`SELECT model FROM oauth_store
            WHERE id_hash = ${createHash("sha256").update(token).digest()}`
          expect(hashed).toHaveLength(1)
        }
      }))
  })

  describe("storage upkeep", () => {
    it.effect("the cleanup deletes what expired more than a day ago, and only that", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const old = randomBytes(32)
        const fresh = randomBytes(32)
        yield* sql`INSERT INTO oauth_store (model, id_hash, payload, expires_at) VALUES
          ('AccessToken', ${old}, '{}'::jsonb, now() - interval '2 days'),
          ('AccessToken', ${fresh}, '{}'::jsonb, now() - interval '1 hour')`
        const store = yield* Effect.provide(OAuthStoreRepo, OAuthStoreRepo.Default)
        expect(yield* store.deleteExpired()).toBeGreaterThanOrEqual(1)
        const left = yield* sql<{ id_hash: Uint8Array }>`SELECT id_hash FROM oauth_store
          WHERE id_hash IN (${old}, ${fresh})`
        expect(left.map((r) => Buffer.from(r.id_hash).toString("hex"))).toEqual([fresh.toString("hex")])
      }))
  })

  describe("the sign-in and consent pages", () => {
    it.effect("same answer for an unknown email and a wrong password; CSRF checked; no framing; names escaped", () =>
      Effect.gen(function*() {
        const { email } = yield* person
        const c = yield* registered("<script>alert(1)</script> Bot")
        const jar = new CookieJar()
        const page = yield* Effect.promise(() => browse(jar, c.authorize().toString()))
        expect(page.status).toBe(200)
        expect(page.html).not.toContain("<script>")
        expect(page.html).toContain("&lt;script&gt;alert(1)&lt;/script&gt; Bot")
        expect(page.html).toContain("127.0.0.1:9")
        expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'")
        expect(page.headers.get("x-frame-options")).toBe("DENY")
        const post = (form: Record<string, string>) =>
          browse(jar, c.baseUrl + actionOf(page.html, "login"), { method: "POST", form: new URLSearchParams(form) })
        const csrf = csrfOf(page.html)
        const unknown = yield* Effect.promise(() => post({ csrf, email: "nobody@example.com", password: PASSWORD }))
        const wrong = yield* Effect.promise(() => post({ csrf, email, password: "wrong password!" }))
        expect(unknown.status).toBe(401)
        expect(wrong.status).toBe(401)
        const message = (html: string) => /role="alert">([^<]*)</.exec(html)?.[1]
        expect(message(unknown.html)).toBe("Wrong email or password.")
        expect(message(wrong.html)).toBe(message(unknown.html))
        const forged = yield* Effect.promise(() => post({ csrf: "forged", email, password: PASSWORD }))
        expect(forged.status).toBe(403)
        // Another browser (no interaction cookie) cannot post into this sign-in.
        const stranger = yield* Effect.promise(() =>
          browse(new CookieJar(), c.baseUrl + actionOf(page.html, "login"), {
            method: "POST",
            form: new URLSearchParams({ csrf, email, password: PASSWORD })
          })
        )
        expect(stranger.status).toBe(400)
      }))

    it.effect("Deny sends the person back to the client with access_denied; no connection is made", () =>
      Effect.gen(function*() {
        const { email } = yield* person
        const c = yield* registered()
        const jar = new CookieJar()
        const page = yield* Effect.promise(() => browse(jar, c.authorize().toString()))
        const consent = yield* Effect.promise(() =>
          browse(jar, c.baseUrl + actionOf(page.html, "login"), {
            method: "POST",
            form: new URLSearchParams({ csrf: csrfOf(page.html), email, password: PASSWORD })
          })
        )
        const denied = yield* Effect.promise(() =>
          browse(jar, c.baseUrl + actionOf(consent.html, "abort"), {
            method: "POST",
            form: new URLSearchParams({ csrf: csrfOf(consent.html) })
          })
        )
        const back = new URL(denied.url)
        expect(back.origin + back.pathname).toBe(REDIRECT_URL)
        expect(back.searchParams.get("error")).toBe("access_denied")
        expect(back.searchParams.get("iss")).toBe(c.baseUrl)
        const sql = yield* SqlClient.SqlClient
        const made = yield* sql`SELECT 1 FROM assistant_connections c JOIN users u ON u.id = c.user_id
          WHERE u.email = ${email}`
        expect(made).toHaveLength(0)
      }))

    it.effect("a connection that no longer acts (the person demoted) is not reused: the person is asked again", () =>
      Effect.gen(function*() {
        const { email, w } = yield* person
        const c = yield* registered()
        const jar = new CookieJar()
        const first = yield* Effect.promise(() =>
          signInAndConsent(c.authorize(), { email, password: PASSWORD, operatorIds: [w.alpha] }, jar)
        )
        expect(first.stoppedAt.url.startsWith(REDIRECT_URL)).toBe(true)
        // Same browser, connection still good: straight back to the client (no second consent).
        const again = yield* Effect.promise(() => browse(jar, c.authorize().toString()))
        expect(again.url.startsWith(REDIRECT_URL)).toBe(true)
        const admin = yield* Operators
        yield* admin.changeRole(w.alpha, w.bob, "member")
        const asked = yield* Effect.promise(() => browse(jar, c.authorize().toString()))
        expect(asked.status).toBe(200)
        expect(asked.html).toContain("/consent")
        expect(checkedValues(asked.html, "operator")).toEqual([w.beta])
      }))

    it.effect("consent offers the operators the person owns or administers; read scopes ticked, write off", () =>
      Effect.gen(function*() {
        const { email, w } = yield* person
        const c = yield* registered()
        const jar = new CookieJar()
        const page = yield* Effect.promise(() => browse(jar, c.authorize().toString()))
        const consent = yield* Effect.promise(() =>
          browse(jar, c.baseUrl + actionOf(page.html, "login"), {
            method: "POST",
            form: new URLSearchParams({ csrf: csrfOf(page.html), email, password: PASSWORD })
          })
        )
        expect(consent.status).toBe(200)
        expect(checkedValues(consent.html, "operator").sort()).toEqual([w.alpha, w.beta].sort())
        expect(consent.html).not.toContain(w.cetus)
        const ticked = checkedValues(consent.html, "scope")
        expect(ticked.every((s) => s.endsWith(":read"))).toBe(true)
        expect(ticked).toContain("bookings:read")
        expect(consent.html).toContain(`value="checkins:write">`)
        // An operator the person does not manage is refused, nothing is created.
        const bad = yield* Effect.promise(() =>
          browse(jar, c.baseUrl + actionOf(consent.html, "consent"), {
            method: "POST",
            form: new URLSearchParams([["csrf", csrfOf(consent.html)], ["operator", w.cetus], [
              "scope",
              "bookings:read"
            ]])
          })
        )
        expect(bad.status).toBe(400)
        expect(bad.html).toContain("Pick at least one of your operators.")
      }))
  })
})

layer(testServer(), { excludeTestServices: true, timeout: 120_000 })("OAuth sign-in rate limit", (it) => {
  it.effect("past 10 attempts for one email in 15 minutes: 429 with Retry-After, even with the right password", () =>
    Effect.gen(function*() {
      const { email } = yield* person
      const c = yield* registered()
      const jar = new CookieJar()
      const page = yield* Effect.promise(() => browse(jar, c.authorize().toString()))
      const post = (password: string) =>
        browse(jar, c.baseUrl + actionOf(page.html, "login"), {
          method: "POST",
          form: new URLSearchParams({ csrf: csrfOf(page.html), email, password })
        })
      for (let i = 0; i < 10; i++) {
        const res = yield* Effect.promise(() => post("wrong password!"))
        expect(res.status).toBe(401)
      }
      const limited = yield* Effect.promise(() => post(PASSWORD))
      expect(limited.status).toBe(429)
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0)
    }))
})
