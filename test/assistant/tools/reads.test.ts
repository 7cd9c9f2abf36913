/**
 * The assistant's read tools through the tool harness (test/support/assistantTools.ts) on the real
 * database: each answers exactly what its REST endpoint answers the same key for the same
 * parameters (the same use case), refuses a missing scope, hides other operators' data (404 "not
 * found, or not yours"), names a bad argument, and publishes JSON Schemas for input and output.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { toolJsonSchema } from "../../../src/assistant/mcp/toolSchema.js"
import { assistantTools } from "../../../src/assistant/tools/index.js"
import { callTool, problemOf, resultOf, withAssistantTools } from "../../support/assistantTools.js"
import { createKey, insertBooking, makeWorld } from "../../support/fixtures.js"
import { get } from "../../support/http.js"
import { insertAccount, insertRow } from "../../support/mirror.js"
import { testServer } from "../../support/server.js"

const READS = ["bookings:read", "manifest:read", "finance:read", "analytics:read"]

/** Alpha (alice owner) with bookings and manifest rows; Beta (bob owner) with one booking each. */
const setup = Effect.gen(function*() {
  const w = yield* makeWorld
  const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: READS })
  const bookings = yield* Effect.forEach(
    ["2026-12-01", "2026-12-02", "2026-12-03"],
    (day, i) => insertBooking({ operatorId: w.alpha, experienceDate: day, guestName: `Guest ${i}` })
  )
  const betaBooking = yield* insertBooking({ operatorId: w.beta, guestName: "Beta Guest" })
  const account = yield* insertAccount([w.alpha])
  const row = yield* insertRow({ accountId: account, operatorId: w.alpha, participants: 3, guestName: "Ola" })
  const betaAccount = yield* insertAccount([w.beta], "Beta account")
  const betaRow = yield* insertRow({ accountId: betaAccount, operatorId: w.beta })
  return { w, key, bookings, betaBooking, row, betaRow }
})

layer(withAssistantTools(testServer()), { excludeTestServices: true, timeout: 120_000 })("read tools", (it) => {
  it.effect("list_bookings answers what GET /bookings answers, page by page, with the same cursor", () =>
    Effect.gen(function*() {
      const { bookings, key } = yield* setup
      const firstCall = yield* callTool("list_bookings", { limit: 2 }, { key: key.token })
      const first = resultOf(firstCall)
      const rest = yield* get("/api/v1/bookings?limit=2", key.token)
      expect(rest.status).toBe(200)
      expect(first).toEqual(rest.body)
      expect(first.data).toHaveLength(2)
      expect(first.next_cursor).toEqual(expect.any(String))
      // The text is a short summary (the rows are in structuredContent), with the cursor for text-only clients.
      expect(firstCall.kind === "result" && firstCall.text)
        .toBe(`2 bookings (2 CONFIRMED); each in structuredContent. More: cursor ${first.next_cursor}`)
      const second = resultOf(
        yield* callTool("list_bookings", { limit: 2, cursor: first.next_cursor }, { key: key.token })
      )
      expect(second).toEqual(
        (yield* get(`/api/v1/bookings?limit=2&cursor=${encodeURIComponent(first.next_cursor)}`, key.token)).body
      )
      expect([...first.data, ...second.data].map((b: any) => b.id).sort()).toEqual([...bookings].sort())
      // Filters have the REST names.
      const filtered = resultOf(
        yield* callTool("list_bookings", { date_from: "2026-12-02", date_to: "2026-12-02" }, { key: key.token })
      )
      expect(filtered.data.map((b: any) => b.id)).toEqual([bookings[1]])
      // No contact scope: no email or phone, as over REST.
      expect(filtered.data[0].guest).toEqual({ name: "Guest 1" })
    }))

  it.effect("list_bookings: the REST rules on the arguments (names the field)", () =>
    Effect.gen(function*() {
      const { key } = yield* setup
      const cases: Array<[unknown, string]> = [
        [{ limit: 0 }, "limit"],
        [{ limit: 101 }, "limit"],
        [{ limit: "10" }, "limit"],
        [{ date_from: "2026-13-01" }, "date_from"],
        [{ status: "PENDING" }, "status"],
        [{ date_from: "2026-12-03", date_to: "2026-12-01" }, "date_from"]
      ]
      for (const [args, field] of cases) {
        const problem = problemOf(yield* callTool("list_bookings", args, { key: key.token }))
        expect(problem.status, JSON.stringify(args)).toBe(400)
        expect(problem.type).toBe("/api/v1/docs/errors.md#invalid-request")
        expect(problem.invalid_params?.[0]?.name, JSON.stringify(problem)).toBe(field)
      }
    }))

  it.effect("get_booking: the REST detail; another operator's booking is not found, or not yours", () =>
    Effect.gen(function*() {
      const { betaBooking, bookings, key, w } = yield* setup
      const one = resultOf(yield* callTool("get_booking", { id: bookings[0] }, { key: key.token }))
      expect(one).toEqual((yield* get(`/api/v1/bookings/${bookings[0]}`, key.token)).body)
      expect(one.partner.id).toBe(w.alpha)

      const theirs = problemOf(yield* callTool("get_booking", { id: betaBooking }, { key: key.token }))
      expect(theirs.status).toBe(404)
      expect(theirs.type).toBe("/api/v1/docs/errors.md#not-found")
      expect(theirs.detail).toContain("not yours")
      const narrowed = problemOf(
        yield* callTool("get_booking", { id: bookings[0], partner_id: w.beta }, { key: key.token })
      )
      expect(narrowed.status).toBe(404)
      expect(problemOf(yield* callTool("get_booking", { id: "nope" }, { key: key.token })).invalid_params)
        .toEqual([{ name: "id", reason: expect.any(String) }])
    }))

  it.effect("get_manifest: the REST manifest of the day, only the connection's operators' rows", () =>
    Effect.gen(function*() {
      const { betaRow, key, row } = yield* setup
      const dayCall = yield* callTool("get_manifest", { date: "2026-12-01" }, { key: key.token })
      const day = resultOf(dayCall)
      expect(dayCall.kind === "result" && dayCall.text).toMatch(
        /^Manifest of 2026-12-01: 1 departures, 3 guests, 0 checked in, 0 no-show; the departures and rows/
      )
      expect(day).toEqual((yield* get("/api/v1/manifest?date=2026-12-01", key.token)).body)
      const ids = day.departures.flatMap((d: any) => d.bookings.map((r: any) => r.id))
      expect(ids).toContain(row)
      expect(ids).not.toContain(betaRow)
      const missing = problemOf(yield* callTool("get_manifest", {}, { key: key.token }))
      expect(missing.invalid_params?.[0]?.name).toBe("date")
    }))

  it.effect("get_sales, get_tour_analytics, get_site_analytics: the REST bodies and range rules", () =>
    Effect.gen(function*() {
      const { key } = yield* setup
      const range = { from: "2026-11-01", to: "2026-11-30" }
      const sales = yield* callTool("get_sales", range, { key: key.token })
      expect(resultOf(sales)).toEqual((yield* get("/api/v1/sales?from=2026-11-01&to=2026-11-30", key.token)).body)
      expect(sales.kind === "result" && sales.text).toContain("Sales 2026-11-01 to 2026-11-30.")
      expect(resultOf(yield* callTool("get_tour_analytics", range, { key: key.token })))
        .toEqual((yield* get("/api/v1/analytics/tours?from=2026-11-01&to=2026-11-30", key.token)).body)
      expect(resultOf(yield* callTool("get_site_analytics", range, { key: key.token })))
        .toEqual((yield* get("/api/v1/analytics/sites?from=2026-11-01&to=2026-11-30", key.token)).body)
      const backwards = { from: "2026-11-30", to: "2026-11-01" }
      for (const tool of ["get_sales", "get_tour_analytics", "get_site_analytics"]) {
        const problem = problemOf(yield* callTool(tool, backwards, { key: key.token }))
        expect(problem.status, tool).toBe(400)
        expect(problem).toEqual(
          expect.objectContaining({ type: "/api/v1/docs/errors.md#invalid-request", status: 400 })
        )
      }
    }))

  it.effect("a tool whose scope the connection lacks is refused (insufficient_scope), whatever the arguments", () =>
    Effect.gen(function*() {
      const { w } = yield* setup
      const bookingsOnly = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["bookings:read"] })
      expect(yield* callTool("get_manifest", { date: "2026-12-01" }, { key: bookingsOnly.token }))
        .toEqual({ kind: "insufficient_scope", scope: "manifest:read" })
      expect(yield* callTool("get_sales", {}, { key: bookingsOnly.token }))
        .toEqual({ kind: "insufficient_scope", scope: "finance:read" })
      expect(yield* callTool("get_reschedule_options", {}, { key: bookingsOnly.token }))
        .toEqual({ kind: "insufficient_scope", scope: "bookings.reschedule:write" })
      expect(yield* callTool("check_in_guests", {}, { key: bookingsOnly.token }))
        .toEqual({ kind: "insufficient_scope", scope: "checkins:write" })
      expect(yield* callTool("list_bookings", {}, { key: "svc_live_nothing_here" })).toEqual({ kind: "unauthorized" })
    }))

  describe("the tool list", () => {
    it("the names, scopes and annotations of issue 16; JSON Schemas for every input and output", () => {
      expect(assistantTools.map((t) => [t.name, t.scope])).toEqual([
        ["me", null],
        ["list_bookings", "bookings:read"],
        ["get_booking", "bookings:read"],
        ["get_manifest", "manifest:read"],
        ["get_sales", "finance:read"],
        ["get_tour_analytics", "analytics:read"],
        ["get_site_analytics", "analytics:read"],
        ["get_reschedule_options", "bookings.reschedule:write"],
        ["check_in_guests", "checkins:write"],
        ["send_balance_payment_link", "payment_links:write"],
        ["cancel_booking", "bookings.cancel:write"],
        ["reschedule_booking", "bookings.reschedule:write"]
      ])
      for (const tool of assistantTools) {
        const reads = tool.name === "me" || tool.name.startsWith("get_") || tool.name.startsWith("list_")
        expect(tool.annotations.readOnlyHint, tool.name).toBe(reads)
        expect(tool.annotations.destructiveHint ?? false, tool.name).toBe(tool.name === "cancel_booking")
        const input = toolJsonSchema(tool.input) as any
        expect(input.type, tool.name).toBe("object")
        // MCP 2025-11-25 wants an object root for outputSchema too (a write tool's union of two objects).
        expect(toolJsonSchema(tool.output).type, tool.name).toBe("object")
        const output = toolJsonSchema(tool.output)
        if (!reads) {
          expect(JSON.stringify(input), tool.name).toContain("confirm_token")
          expect(JSON.stringify(output), tool.name).toContain("requires_confirmation")
        }
      }
      const listBookings = assistantTools.find((t) => t.name === "list_bookings")!
      const list = toolJsonSchema(listBookings.input) as any
      expect(toolJsonSchema(listBookings.output)).toMatchObject({
        type: "object",
        required: ["data", "next_cursor"],
        $defs: expect.any(Object)
      })
      // `limit` is a JSON integer for a tool (a string of digits in a URL).
      const limit = JSON.stringify(list.properties.limit)
      for (const part of ["\"type\":\"integer\"", "\"minimum\":1", "\"maximum\":100"]) expect(limit).toContain(part)
      expect(Object.keys(list.properties).sort()).toEqual(
        ["cursor", "date_from", "date_to", "limit", "partner_id", "status", "updated_since"]
      )
    })
  })
})
