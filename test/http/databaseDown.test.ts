/**
 * The database goes down under a running server (issue 17, defect 3): its pool points at a proxy
 * (../support/dbProxy.ts) whose port is then closed and whose connections are cut. Every API answers
 * 503 with `Retry-After` in its own form (partner problem+json `unavailable`, quickbook
 * `provider_unavailable`, MCP the problem as JSON, the sign-in pages a 503 page), `/readyz` fails, and
 * once the database is back a write retried with the same key is applied once. A SQL error that is a
 * bug stays a defect (500).
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Cause, Effect, Exit } from "effect"
import { randomUUID } from "node:crypto"
import { isDatabaseUnreachable } from "../../src/db/unreachable.js"
import { CLERK_MESSAGE_VARIANTS } from "../../src/quickbook/clerkMessages.js"
import { QuickbookKeys } from "../../src/quickbook/terminals/QuickbookKeys.js"
import { callMe, connectAssistant, REDIRECT_URL, rpc, setPassword } from "../support/assistant.js"
import { DbProxy } from "../support/dbProxy.js"
import { createKey, makeWorld } from "../support/fixtures.js"
import { call, get, type Reply } from "../support/http.js"
import { auditOf, checkin, usedToday } from "../support/manifest.js"
import { insertAccount, insertRow } from "../support/mirror.js"
import { paymentsEnv } from "../support/payments.js"
import { BASE, sellingDesk } from "../support/quickbook.js"
import { TestServer } from "../support/server.js"

const proxy = new DbProxy()
const env = paymentsEnv(Effect.succeed({}), proxy.front)

/** The database is down while `body` runs, and back afterwards (also when `body` fails). */
const whileDown = <A, E, R>(body: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(Effect.promise(proxy.stop), () => body, () => Effect.promise(proxy.resume))

const expectUnavailableProblem = (res: Reply) => {
  expect(res.status, res.text).toBe(503)
  expect(res.headers.get("content-type")).toBe("application/problem+json")
  expect(res.headers.get("retry-after")).toBe("5")
  expect(res.body).toMatchObject({
    type: "/api/v1/docs/errors.md#unavailable",
    status: 503,
    retry_after: 5,
    request_id: res.headers.get("x-request-id")
  })
  // Nothing of the driver's message reaches the client.
  expect(res.text).not.toMatch(/ECONNREFUSED|acquire|SqlError|127\.0\.0\.1/)
}

layer(env, { excludeTestServices: true, timeout: 180_000 })("the database down", (it) => {
  it.effect("partner API: a read and a write answer 503 unavailable, /readyz 503; the write retried with its key is applied once", () =>
    Effect.gen(function*() {
      const world = yield* sellingDesk.pipe(Effect.provide(QuickbookKeys.Default))
      const w = world.w
      const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["bookings:read", "checkins:write"] })
      const account = yield* insertAccount([w.alpha])
      const row = yield* insertRow({ accountId: account, operatorId: w.alpha, participants: 4 })
      const idempotencyKey = randomUUID()
      expect((yield* get("/readyz")).status).toBe(200)

      yield* whileDown(Effect.gen(function*() {
        expectUnavailableProblem(yield* get("/api/v1/bookings?limit=2", key.token))
        expectUnavailableProblem(yield* checkin(row, { status: "checked_in" }, { key: key.token, idempotencyKey }))
        const ready = yield* get("/readyz")
        expect(ready.status).toBe(503)
      }))

      expect((yield* get("/readyz")).status).toBe(200)
      expect((yield* get("/api/v1/bookings?limit=2", key.token)).status).toBe(200)
      const done = yield* checkin(row, { status: "checked_in" }, { key: key.token, idempotencyKey })
      expect(done.status, done.text).toBe(200)
      expect(done.headers.get("idempotent-replayed")).toBeNull()
      const replay = yield* checkin(row, { status: "checked_in" }, { key: key.token, idempotencyKey })
      expect(replay.status).toBe(200)
      expect(replay.headers.get("idempotent-replayed")).toBe("true")
      expect(replay.body).toEqual(done.body)
      expect(yield* usedToday(key.id)).toBe(1)
      // Done once; the retry is a replay of that answer.
      expect((yield* auditOf(key.id)).map((a) => a.outcome)).toEqual(["done", "replayed"])
    }))

  it.effect("quickbook: a read and a write answer 503 provider_unavailable (en, nb); the hold retried with its key is made once", () =>
    Effect.gen(function*() {
      const s = yield* sellingDesk.pipe(Effect.provide(QuickbookKeys.Default))
      const q = yield* s.quote(2)
      const idempotencyKey = randomUUID()
      const reserve = () =>
        call(`${BASE}/reserve`, {
          method: "POST",
          key: s.key.token,
          headers: s.headers,
          body: { reference: q.reference, idempotencyKey }
        })

      yield* whileDown(Effect.gen(function*() {
        const read = yield* call(`${BASE}/sales/${q.reference}`, {
          key: s.key.token,
          headers: { ...s.headers, "accept-language": "nb" }
        })
        expect(read.status, read.text).toBe(503)
        expect(read.headers.get("retry-after")).toBe("5")
        expect(read.body).toEqual({
          error: { code: "provider_unavailable", clerkMessage: CLERK_MESSAGE_VARIANTS.database.nb }
        })
        const write = yield* reserve()
        expect(write.status, write.text).toBe(503)
        expect(write.headers.get("retry-after")).toBe("5")
        expect(write.body.error).toEqual({
          code: "provider_unavailable",
          clerkMessage: CLERK_MESSAGE_VARIANTS.database.en
        })
      }))

      const held = yield* reserve()
      expect(held.status, held.text).toBe(200)
      const again = yield* reserve()
      expect(again.status, again.text).toBe(200)
      expect(again.body.holdRef).toBe(held.body.holdRef)
      // One hold of 2 seats in the booking system (10 seats), not two.
      expect(yield* s.seatsLeft).toBe(8)
    }))

  it.scoped("MCP: a tool call answers 503 with the problem, a sign-in page a 503 page; both work again after", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const w = yield* makeWorld
      const email = `alice-${w.tag}@example.com`
      const password = "correct horse battery"
      yield* setPassword(email, password)
      const a = yield* connectAssistant(baseUrl, { email, password })
      const token = a.tokens.access_token

      yield* whileDown(Effect.gen(function*() {
        const res = yield* Effect.promise(() => rpc(`${baseUrl}/mcp`, token, callMe))
        expect(res.status, res.text).toBe(503)
        expect(res.headers.get("retry-after")).toBe("5")
        expect(res.json).toMatchObject({ type: "/api/v1/docs/errors.md#unavailable", status: 503 })
        const page = yield* Effect.promise(() =>
          fetch(
            `${baseUrl}/oauth/authorize?client_id=${encodeURIComponent(a.clientId)}&response_type=code` +
              `&redirect_uri=${encodeURIComponent(REDIRECT_URL)}&code_challenge=${"x".repeat(43)}` +
              `&code_challenge_method=S256`,
            { redirect: "manual" }
          )
        )
        expect(page.status).toBe(503)
        expect(page.headers.get("retry-after")).toBe("5")
        expect(page.headers.get("content-type")).toContain("text/html")
        expect(yield* Effect.promise(() => page.text())).toContain("Temporarily unavailable")
        // The token endpoint (JSON): 503 with the OAuth error form, not the provider's 500 server_error.
        // The JSON endpoints (the token endpoint behind our rate limit, revocation the provider's
        // alone): 503 in the OAuth error form, not the provider's 500 server_error.
        const form = (path: string, fields: Record<string, string>) =>
          Effect.promise(() =>
            fetch(`${baseUrl}${path}`, {
              method: "POST",
              headers: { "content-type": "application/x-www-form-urlencoded" },
              body: new URLSearchParams(fields).toString()
            }).then(async (r) => ({ status: r.status, headers: r.headers, json: await r.json() }))
          )
        const refresh = a.tokens.refresh_token!
        for (
          const answer of [
            yield* form("/oauth/token", { grant_type: "refresh_token", refresh_token: refresh, client_id: a.clientId }),
            yield* form("/oauth/revoke", { token: refresh, client_id: a.clientId })
          ]
        ) {
          expect(answer.status, JSON.stringify(answer.json)).toBe(503)
          expect(answer.headers.get("retry-after")).toBe("5")
          expect(answer.json).toMatchObject({ error: "temporarily_unavailable" })
        }
      }))

      const back = yield* Effect.promise(() => rpc(`${baseUrl}/mcp`, token, callMe))
      expect(back.status, back.text).toBe(200)
      expect(back.json.result.isError).toBeFalsy()
    }))

  it.effect("a SQL error that is a bug is not the database being down; a refused connection is", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const bug = yield* Effect.exit(sql`SELEC 1`)
      expect(Exit.isFailure(bug) && isDatabaseUnreachable(bug.cause)).toBe(false)
      const missing = yield* Effect.exit(sql`SELECT * FROM no_such_table`)
      expect(Exit.isFailure(missing) && isDatabaseUnreachable(missing.cause)).toBe(false)
      const down = yield* whileDown(Effect.exit(sql`SELECT 1`))
      expect(Exit.isFailure(down) && isDatabaseUnreachable(down.cause)).toBe(true)
      // As a defect at a repository's edge too.
      const died = yield* whileDown(Effect.exit(Effect.orDie(sql`SELECT 1`)))
      expect(Exit.isFailure(died) && Cause.isDie(died.cause) && isDatabaseUnreachable(died.cause)).toBe(true)
    }))
})
