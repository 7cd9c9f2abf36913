/**
 * The tools through the real MCP endpoint with the official client after the OAuth flow (issue 16):
 * a read tool answers the REST body, another operator's booking is "not found, or not yours", a tool
 * whose scope was not granted is refused, and `check_in_guests` takes two calls: the first changes
 * nothing and answers a summary and a token; the second, with the same arguments and the token,
 * checks the guests in once (audited as channel `mcp` with the client and the person); a replay of
 * it writes nothing more; the token with other arguments is refused.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { connectAssistant, setPassword } from "../support/assistant.js"
import { makeWorld } from "../support/fixtures.js"
import { get } from "../support/http.js"
import { checkinState } from "../support/manifest.js"
import { insertAccount, insertRow } from "../support/mirror.js"
import { TestServer, testServer } from "../support/server.js"

const PASSWORD = "correct horse battery"

const call =
  (client: { callTool: (p: { name: string; arguments: Record<string, unknown> }) => Promise<unknown> }) =>
  (name: string, args: Record<string, unknown>) =>
    Effect.promise(() => client.callTool({ name, arguments: args }) as Promise<any>)

layer(testServer(), { excludeTestServices: true, timeout: 120_000 })("MCP: the tools end to end", (it) => {
  describe("reads and a two-call write over MCP", () => {
    it.scoped("manifest read, tenancy, scope, and check_in_guests confirmed once", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const account = yield* insertAccount([w.alpha, w.cetus])
        const row = yield* insertRow({
          accountId: account,
          operatorId: w.alpha,
          participants: 3,
          guestName: "Ola Nordmann",
          reference: "BKN-4711"
        })
        const others = yield* insertRow({ accountId: account, operatorId: w.cetus, participants: 2 })
        const email = `alice-${w.tag}@example.com`
        yield* setPassword(email, PASSWORD)

        // Read scopes only: the manifest reads, the check-in tool is refused for its scope.
        const reader = yield* connectAssistant(baseUrl, { email, password: PASSWORD, operatorIds: [w.alpha] })
        const manifest = yield* call(reader.client)("get_manifest", { date: "2026-12-01" })
        expect(manifest.isError, JSON.stringify(manifest)).toBeFalsy()
        const rows = manifest.structuredContent.departures.flatMap((d: any) => d.bookings)
        expect(rows.map((r: any) => r.id)).toEqual([row])
        expect(rows.map((r: any) => r.id)).not.toContain(others)
        const refused = yield* Effect.promise(() =>
          reader.client.callTool({ name: "check_in_guests", arguments: { id: row, status: "checked_in" } })
            .then((r) => ({ ok: true as const, r }), (e: unknown) => ({ ok: false as const, e: String(e) }))
        )
        // The server answers 403 insufficient_scope (test/assistant/mcp.test.ts checks the header); the
        // official client takes it as "ask the person for more" and stops with UnauthorizedError.
        expect(refused.ok).toBe(false)
        expect(refused.ok ? "" : refused.e).toMatch(/Unauthorized|insufficient_scope/)
        expect(yield* checkinState(row)).toBeNull()

        // A connection with checkins:write: two calls.
        const writer = yield* connectAssistant(baseUrl, {
          email,
          password: PASSWORD,
          operatorIds: [w.alpha],
          scopes: ["manifest:read", "checkins:write"]
        })
        const notMine = yield* call(writer.client)("check_in_guests", { id: others, status: "checked_in" })
        expect(notMine.isError).toBe(true)
        expect(notMine.structuredContent.status).toBe(404)

        const first = yield* call(writer.client)("check_in_guests", { id: row, status: "checked_in", present: 2 })
        expect(first.isError, JSON.stringify(first)).toBeFalsy()
        expect(first.structuredContent).toMatchObject({ requires_confirmation: true })
        expect(first.structuredContent.summary).toContain("Ola Nordmann")
        expect(yield* checkinState(row)).toBeNull()

        const token = first.structuredContent.confirm_token
        const other = yield* call(writer.client)("check_in_guests", {
          id: row,
          status: "checked_in",
          present: 3,
          confirm_token: token
        })
        expect(other.isError).toBe(true)
        expect(other.structuredContent.status).toBe(400)
        expect(yield* checkinState(row)).toBeNull()

        const args = { id: row, status: "checked_in", present: 2, confirm_token: token }
        const second = yield* call(writer.client)("check_in_guests", args)
        expect(second.isError, JSON.stringify(second)).toBeFalsy()
        expect(second.structuredContent.requires_confirmation).toBeUndefined()
        expect(yield* checkinState(row)).toMatchObject({ status: "checked_in", present: 2 })
        const replay = yield* call(writer.client)("check_in_guests", args)
        expect(replay.structuredContent).toEqual(second.structuredContent)

        const audit = yield* sql<{ channel: string; client_name: string | null; person_email: string | null }>`
          SELECT channel, client_name, person_email FROM write_audit WHERE target_id = ${row}`
        expect(audit).toEqual([{ channel: "mcp", client_name: expect.any(String), person_email: email }])

        // The same read over REST is not possible with the connection's token (it is not an API key).
        const rest = yield* get(`/api/v1/manifest?date=2026-12-01`, writer.tokens.access_token)
        expect(rest.status).toBe(401)
      }))
  })
})
