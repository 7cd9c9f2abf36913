/**
 * The two-call write protocol (issue 16; docs/assistant.md "Confirmations") with `check_in_guests`
 * through the tool harness on the real database: the first call changes and counts nothing and
 * answers a summary and a token; the second runs the REST write once; every refusal (unknown,
 * changed arguments, another connection, expired, booking changed, reused) is the same error and
 * does nothing; concurrent second calls make one write, one audit row and count the limit once.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ConfirmationsRepo } from "../../../src/assistant/confirmations/ConfirmationsRepo.js"
import { CONFIRMATION_TTL_MS } from "../../../src/assistant/confirmations/rules.js"
import { callTool, problemOf, resultOf, type ToolReply, withAssistantTools } from "../../support/assistantTools.js"
import { createKey, makeWorld } from "../../support/fixtures.js"
import { auditOf, checkinState, usedToday } from "../../support/manifest.js"
import { insertAccount, insertRow, setCheckIn } from "../../support/mirror.js"
import { testServer } from "../../support/server.js"

/** Alpha (alice owner), a connection's key with checkins:write, a row of 3 guests (Ola) on 2026-12-01 10:00. */
const setup = Effect.gen(function*() {
  const w = yield* makeWorld
  const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["checkins:write", "manifest:read"] })
  const account = yield* insertAccount([w.alpha])
  const row = yield* insertRow({
    accountId: account,
    operatorId: w.alpha,
    participants: 3,
    guestName: "Ola Nordmann",
    productTitle: "Fjord Cruise",
    reference: "BKN-4711"
  })
  return { w, key, account, row }
})

const fullAudit = (keyId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<
        {
          outcome: string
          channel: string
          client_name: string | null
          person_email: string | null
          idempotency_key: string
        }
      >`
      SELECT outcome, channel, client_name, person_email, idempotency_key FROM write_audit WHERE key_id = ${keyId} ORDER BY id`
        .pipe(Effect.orDie)
  )

const REFUSED = (reply: ToolReply) => {
  const problem = problemOf(reply)
  expect(problem.status).toBe(400)
  expect(problem.type).toBe("/api/v1/docs/errors.md#invalid-request")
  expect(problem.invalid_params).toEqual([{ name: "confirm_token", reason: expect.any(String) }])
  return problem.detail as string
}

layer(withAssistantTools(testServer()), { excludeTestServices: true, timeout: 120_000 })(
  "check_in_guests, two calls",
  (it) => {
    it.effect("the first call changes and counts nothing; the second checks in once; a retry replays it", () =>
      Effect.gen(function*() {
        const { key, row, w } = yield* setup
        const sql = yield* SqlClient.SqlClient
        const args = { id: row, status: "checked_in", present: 2 }
        const before = Date.now()
        const first = resultOf(yield* callTool("check_in_guests", args, { key: key.token }))
        expect(first.requires_confirmation).toBe(true)
        expect(first.summary).toContain("Check in 2 of 3 guests")
        expect(first.summary).toContain("Ola Nordmann")
        expect(first.summary).toContain("BKN-4711")
        expect(first.summary).toContain("Fjord Cruise, 2026-12-01 at 10:00 (Europe/Oslo)")
        expect(first.summary).toContain(`Alpha Tours ${w.tag}`)
        expect(first.summary).toContain("no money moves")
        expect(first.confirm_token).toMatch(/^cfm_[A-Za-z0-9_-]{43}$/)
        const expires = Date.parse(first.expires_at)
        expect(expires).toBeGreaterThanOrEqual(before + CONFIRMATION_TTL_MS)
        expect(expires).toBeLessThanOrEqual(Date.now() + CONFIRMATION_TTL_MS)

        // Nothing changed, nothing counted, nothing audited; the token is kept only as a hash.
        expect(yield* checkinState(row)).toBeNull()
        expect(yield* usedToday(key.id)).toBe(0)
        expect(yield* auditOf(key.id)).toEqual([])
        const stored = yield* sql<{ row: string }>`
        SELECT row_to_json(c)::text AS row FROM assistant_confirmations c WHERE connection_id = ${key.id}`
        expect(stored).toHaveLength(1)
        expect(stored[0]!.row).not.toContain(first.confirm_token)
        expect(stored[0]!.row).not.toContain(first.confirm_token.slice(4))

        const second = yield* callTool("check_in_guests", { ...args, confirm_token: first.confirm_token }, {
          key: key.token
        })
        expect(resultOf(second)).toEqual({ id: row, check_in: { status: "checked_in", present: 2 } })
        expect(second.kind === "result" && second.text).toContain("checked_in")
        expect(yield* checkinState(row)).toMatchObject({ status: "checked_in", present: 2, updated_by_key: key.id })
        expect(yield* usedToday(key.id)).toBe(1)
        const audit = yield* fullAudit(key.id)
        expect(audit).toEqual([{
          outcome: "done",
          channel: "mcp",
          client_name: "Test Assistant",
          person_email: "person@example.com",
          idempotency_key: expect.stringMatching(/^mcp:[0-9a-f-]{36}$/)
        }])

        // A retried second call (same token, same arguments) replays the one result: no write, no count, no audit.
        const retried = yield* callTool("check_in_guests", { ...args, confirm_token: first.confirm_token }, {
          key: key.token
        })
        expect(resultOf(retried)).toEqual(resultOf(second))
        expect(yield* usedToday(key.id)).toBe(1)
        expect(yield* fullAudit(key.id)).toHaveLength(1)
        // `present: null` is the same as no `present`, as over REST.
        const everyone = resultOf(
          yield* callTool("check_in_guests", { id: row, status: "checked_in", present: null }, {
            key: key.token
          })
        )
        const confirmed = yield* callTool("check_in_guests", {
          id: row.toUpperCase(),
          status: "checked_in",
          confirm_token: everyone.confirm_token
        }, { key: key.token })
        expect(resultOf(confirmed)).toEqual({ id: row, check_in: { status: "checked_in", present: null } })
      }))

    it.effect("every refusal is the same error and does nothing: unknown, changed arguments, another connection, expired, booking changed, reused", () =>
      Effect.gen(function*() {
        const { key, row, w } = yield* setup
        const args = { id: row, status: "checked_in" }
        const ask = () =>
          Effect.map(callTool("check_in_guests", args, { key: key.token }), (r) => resultOf(r).confirm_token)
        const details: Array<string> = []

        details.push(
          REFUSED(yield* callTool("check_in_guests", { ...args, confirm_token: "cfm_unknown" }, { key: key.token }))
        )

        const token = yield* ask()
        // Changed arguments: another status, a head count, another row.
        details.push(REFUSED(
          yield* callTool("check_in_guests", { ...args, status: "no_show", confirm_token: token }, {
            key: key.token
          })
        ))
        details.push(REFUSED(
          yield* callTool("check_in_guests", { ...args, present: 1, confirm_token: token }, {
            key: key.token
          })
        ))
        const otherRow = yield* insertRow({ accountId: yield* insertAccount([w.alpha]), operatorId: w.alpha })
        details.push(REFUSED(
          yield* callTool("check_in_guests", { ...args, id: otherRow, confirm_token: token }, {
            key: key.token
          })
        ))
        // Another connection (another grant of the same person, same scopes).
        const other = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["checkins:write"] })
        details.push(
          REFUSED(yield* callTool("check_in_guests", { ...args, confirm_token: token }, { key: other.token }))
        )
        // Expired: 5 minutes and 1 second later on the service's clock.
        details.push(REFUSED(
          yield* callTool("check_in_guests", { ...args, confirm_token: token }, {
            key: key.token,
            clockOffsetMs: CONFIRMATION_TTL_MS + 1000
          })
        ))
        expect(yield* checkinState(row)).toBeNull()

        // The booking changed after the summary (someone marked it no-show): refused.
        const changedToken = yield* ask()
        yield* setCheckIn(row, "no_show")
        details.push(REFUSED(
          yield* callTool("check_in_guests", { ...args, confirm_token: changedToken }, {
            key: key.token
          })
        ))
        expect(yield* checkinState(row)).toMatchObject({ status: "no_show" })

        // Still within 5 minutes and unchanged: the token works once.
        const fresh = yield* ask()
        expect(resultOf(
          yield* callTool("check_in_guests", { ...args, confirm_token: fresh }, {
            key: key.token,
            clockOffsetMs: 299_000
          })
        )).toEqual({ id: row, check_in: { status: "checked_in", present: null } })
        // Reused for anything else: refused.
        details.push(REFUSED(
          yield* callTool("check_in_guests", { ...args, status: "clear", confirm_token: fresh }, {
            key: key.token
          })
        ))
        expect(yield* checkinState(row)).toMatchObject({ status: "checked_in", present: null })

        // One error for every refusal; only the one confirmed write counted and audited.
        expect(new Set(details).size).toBe(1)
        expect(details[0]).toContain("Call the tool again without confirm_token")
        expect(yield* usedToday(key.id)).toBe(1)
        expect((yield* auditOf(key.id)).map((a) => a.outcome)).toEqual(["done"])
        expect(yield* auditOf(other.id)).toEqual([])
      }))

    it.effect("two concurrent second calls: one write, one audit row, the limit counted once; both answer the result", () =>
      Effect.gen(function*() {
        const { key, row } = yield* setup
        const args = { id: row, status: "checked_in", present: 3 }
        const token = resultOf(yield* callTool("check_in_guests", args, { key: key.token })).confirm_token
        const replies = yield* Effect.all(
          Array.from(
            { length: 4 },
            () => callTool("check_in_guests", { ...args, confirm_token: token }, { key: key.token })
          ),
          { concurrency: "unbounded" }
        )
        for (const reply of replies) {
          expect(resultOf(reply)).toEqual({ id: row, check_in: { status: "checked_in", present: 3 } })
        }
        expect(yield* usedToday(key.id)).toBe(1)
        expect((yield* auditOf(key.id)).map((a) => a.outcome)).toEqual(["done"])
      }))

    describe("the first call checks what the REST write checks", () => {
      it.effect("another operator's row: 404; a cancelled row: 422; a no-op says nothing will change", () =>
        Effect.gen(function*() {
          const { key, row, w } = yield* setup
          const betaRow = yield* insertRow({ accountId: yield* insertAccount([w.beta]), operatorId: w.beta })
          const theirs = problemOf(
            yield* callTool("check_in_guests", { id: betaRow, status: "checked_in" }, {
              key: key.token
            })
          )
          expect(theirs).toMatchObject({ status: 404, type: "/api/v1/docs/errors.md#not-found" })
          const cancelled = yield* insertRow({
            accountId: yield* insertAccount([w.alpha]),
            operatorId: w.alpha,
            status: "CANCELLED"
          })
          expect(
            problemOf(yield* callTool("check_in_guests", { id: cancelled, status: "no_show" }, { key: key.token }))
          )
            .toMatchObject({ status: 422, type: "/api/v1/docs/errors.md#not-possible" })
          expect(problemOf(
            yield* callTool("check_in_guests", { id: row, status: "checked_in", present: 4 }, {
              key: key.token
            })
          )).toMatchObject({ status: 400, invalid_params: [{ name: "present", reason: expect.any(String) }] })
          expect(problemOf(
            yield* callTool("check_in_guests", { id: row, status: "no_show", present: 1 }, {
              key: key.token
            })
          )).toMatchObject({ status: 400, invalid_params: [{ name: "present", reason: expect.any(String) }] })
          const noop = resultOf(yield* callTool("check_in_guests", { id: row, status: "clear" }, { key: key.token }))
          expect(noop.summary).toContain("nothing will change")
          expect(yield* auditOf(key.id)).toEqual([])
        }))

      it.effect("the daily limit's room: none left refuses the first call (429); a second call that meets the limit frees its token", () =>
        Effect.gen(function*() {
          const { key, row } = yield* setup
          const sql = yield* SqlClient.SqlClient
          const args = { id: row, status: "no_show" }
          const token = resultOf(yield* callTool("check_in_guests", args, { key: key.token })).confirm_token
          yield* sql`INSERT INTO api_key_daily_limits (key_id, action, daily_limit) VALUES (${key.id}, 'checkins', 0)`
          const limited = problemOf(yield* callTool("check_in_guests", args, { key: key.token }))
          expect(limited).toMatchObject({ status: 429, limit: "checkins", retry_after: expect.any(Number) })
          // The second call meets the limit: 429, nothing done, the token is not spent.
          expect(problemOf(yield* callTool("check_in_guests", { ...args, confirm_token: token }, { key: key.token })))
            .toMatchObject({ status: 429, limit: "checkins" })
          expect(yield* checkinState(row)).toBeNull()
          // Room again: the same token carries the write out.
          yield* sql`UPDATE api_key_daily_limits SET daily_limit = 5 WHERE key_id = ${key.id}`
          expect(resultOf(yield* callTool("check_in_guests", { ...args, confirm_token: token }, { key: key.token })))
            .toEqual({ id: row, check_in: { status: "no_show", present: null } })
          expect(yield* usedToday(key.id)).toBe(1)
          expect((yield* auditOf(key.id)).map((a) => a.outcome)).toEqual(["refused", "done"])
        }))
    })

    it.effect("the cleanup job's purge deletes confirmations a day past their expiry, and only those", () =>
      Effect.gen(function*() {
        const { key, row } = yield* setup
        const sql = yield* SqlClient.SqlClient
        const old = resultOf(yield* callTool("check_in_guests", { id: row, status: "no_show" }, { key: key.token }))
        const recent = resultOf(
          yield* callTool("check_in_guests", { id: row, status: "checked_in" }, { key: key.token })
        )
        expect(old.confirm_token).not.toBe(recent.confirm_token)
        yield* sql`
          UPDATE assistant_confirmations SET expires_at = now() - interval '25 hours'
          WHERE connection_id = ${key.id} AND summary LIKE 'Mark as no-show%'`
        const deleted = yield* Effect.flatMap(ConfirmationsRepo, (repo) => repo.purgeExpired()).pipe(
          Effect.provide(ConfirmationsRepo.Default)
        )
        expect(deleted).toBeGreaterThanOrEqual(1)
        const left = yield* sql<{ summary: string }>`
          SELECT summary FROM assistant_confirmations WHERE connection_id = ${key.id}`
        expect(left.map((r) => r.summary.slice(0, 8))).toEqual(["Check in"])
        // The purged token is unknown now: refused like any other.
        REFUSED(
          yield* callTool("check_in_guests", { id: row, status: "no_show", confirm_token: old.confirm_token }, {
            key: key.token
          })
        )
      }))
  }
)
