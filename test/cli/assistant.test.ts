/**
 * The assistant CLI end to end (real processes on the test server's database): a password set by
 * the CLI signs a person in through the real OAuth flow; the connection is listed, revoked, and its
 * token then answers 401; a short password and an unknown connection are refused.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { callMe, connectAssistant, rpc } from "../support/assistant.js"
import { cli, json } from "../support/cli.js"
import { makeWorld } from "../support/fixtures.js"
import { TestServer, testServer } from "../support/server.js"

layer(testServer(), { excludeTestServices: true, timeout: 180_000 })("assistant CLI", (it) => {
  it.scoped("set-password, connections, revoke", () =>
    Effect.gen(function*() {
      const w = yield* makeWorld
      const { baseUrl, databaseUrl } = yield* TestServer
      const email = `alice-${w.tag}@example.com`
      const set = json(yield* Effect.promise(() => cli(databaseUrl, "assistant", "set-password", "--user", email)))
      expect(set.user).toBe(email)
      expect(set.password.length).toBeGreaterThanOrEqual(20)
      const a = yield* connectAssistant(baseUrl, { email, password: set.password })
      const listed = json(yield* Effect.promise(() => cli(databaseUrl, "assistant", "connections", "--user", email)))
      expect(listed).toHaveLength(1)
      expect(listed[0]).toMatchObject({ user: email, client: "Test Assistant", operators: [w.alpha], revoked_at: null })
      expect(JSON.stringify(listed)).not.toContain(a.tokens.access_token)
      yield* Effect.promise(() => cli(databaseUrl, "assistant", "revoke", "--connection", listed[0].id))
      const after = yield* Effect.promise(() => rpc(`${baseUrl}/mcp`, a.tokens.access_token, callMe))
      expect(after.status).toBe(401)
      const again = yield* Effect.promise(() =>
        cli(databaseUrl, "assistant", "revoke", "--connection", listed[0].id).then(() => "ok", (e: Error) => e.message)
      )
      expect(again).toContain("no active connection")
      const short = yield* Effect.promise(() =>
        cli(databaseUrl, "assistant", "set-password", "--user", email, "--password", "short").then(
          () => "ok",
          (e: Error) => e.message
        )
      )
      expect(short).toContain("at least 10 characters")
    }))
})
