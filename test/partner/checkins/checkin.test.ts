import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Operators } from "../../../src/operators/Operators.js"
import { createKey, makeWorld } from "../../support/fixtures.js"
import type { Reply } from "../../support/http.js"
import { auditOf, checkin, checkinState, usedToday } from "../../support/manifest.js"
import { insertAccount, insertRow, insertRows } from "../../support/mirror.js"
import { testServer } from "../../support/server.js"

const expectProblem = (res: Reply, status: number, slug: string) => {
  expect(res.status, res.text).toBe(status)
  expect(res.headers.get("content-type")).toBe("application/problem+json")
  expect(res.body.type).toBe(`/api/v1/docs/errors.md#${slug}`)
  expect(res.body.status).toBe(status)
  expect(res.body.request_id).toBe(res.headers.get("x-request-id"))
}

const expectInvalid = (res: Reply, name: string) => {
  expectProblem(res, 400, "invalid-request")
  expect(res.body.invalid_params?.map((p: any) => p.name), res.text).toEqual([name])
}

/** Alpha (alice owner, bob admin), Beta (bob owner); a key with checkins:write over Alpha. */
const setup = Effect.gen(function*() {
  const w = yield* makeWorld
  const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["checkins:write"] })
  const account = yield* insertAccount([w.alpha])
  const row = yield* insertRow({ accountId: account, operatorId: w.alpha, participants: 4 })
  return { w, key, account, row }
})

layer(testServer(), { excludeTestServices: true, timeout: 120_000 })("POST /api/v1/manifest/{id}/checkin", (it) => {
  describe("each status", () => {
    it.effect("checked_in (everyone, then a head count), no_show, clear; stored only in manifest_checkins", () =>
      Effect.gen(function*() {
        const { key, row, w } = yield* setup
        const sql = yield* SqlClient.SqlClient
        const before = yield* sql`SELECT * FROM manifest_rows WHERE id = ${row}`

        const everyone = yield* checkin(row, { status: "checked_in" }, { key: key.token })
        expect(everyone.status, everyone.text).toBe(200)
        expect(everyone.headers.get("content-type")).toContain("application/json")
        expect(everyone.body).toEqual({ id: row, check_in: { status: "checked_in", present: null } })
        expect(everyone.headers.get("idempotent-replayed")).toBeNull()
        expect(yield* checkinState(row)).toMatchObject({ status: "checked_in", present: null, updated_by_key: key.id })

        const some = yield* checkin(row, { status: "checked_in", present: 2 }, { key: key.token })
        expect(some.body).toEqual({ id: row, check_in: { status: "checked_in", present: 2 } })
        expect(yield* checkinState(row)).toMatchObject({ status: "checked_in", present: 2 })

        const nullPresent = yield* checkin(row, { status: "checked_in", present: null }, { key: key.token })
        expect(nullPresent.body).toEqual({ id: row, check_in: { status: "checked_in", present: null } })

        const noShow = yield* checkin(row, { status: "no_show" }, { key: key.token })
        expect(noShow.body).toEqual({ id: row, check_in: { status: "no_show", present: null } })
        expect(yield* checkinState(row)).toMatchObject({ status: "no_show", present: null })

        const cleared = yield* checkin(row, { status: "clear" }, { key: key.token })
        expect(cleared.status).toBe(200)
        expect(cleared.body).toEqual({ id: row, check_in: { status: null, present: null } })
        expect(yield* checkinState(row)).toBeNull()

        // Nothing else changed: the mirror row is untouched.
        expect(yield* sql`SELECT * FROM manifest_rows WHERE id = ${row}`).toEqual(before)
        // Every change counted, and audited with the operator.
        expect(yield* usedToday(key.id)).toBe(5)
        const audit = yield* auditOf(key.id)
        expect(audit.map((a) => a.outcome)).toEqual(["done", "done", "done", "done", "done"])
        expect(audit.every((a) => a.operator_id === w.alpha && a.target_id === row && a.action === "checkins")).toBe(
          true
        )
      }))

    it.effect("present from 0 up to the row's participants; an uppercase id is the same row", () =>
      Effect.gen(function*() {
        const { key, row } = yield* setup
        expect((yield* checkin(row, { status: "checked_in", present: 0 }, { key: key.token })).body.check_in)
          .toEqual({ status: "checked_in", present: 0 })
        const upper = yield* checkin(row.toUpperCase(), { status: "checked_in", present: 4 }, { key: key.token })
        expect(upper.status).toBe(200)
        expect(upper.body).toEqual({ id: row, check_in: { status: "checked_in", present: 4 } })
      }))

    it.effect("setting the state the row already has is a no-op: 200, not counted, audited as noop", () =>
      Effect.gen(function*() {
        const { key, row, account, w } = yield* setup
        expect((yield* checkin(row, { status: "checked_in", present: 3 }, { key: key.token })).status).toBe(200)
        const again = yield* checkin(row, { present: 3, status: "checked_in" }, { key: key.token })
        expect(again.status).toBe(200)
        expect(again.body).toEqual({ id: row, check_in: { status: "checked_in", present: 3 } })
        expect(again.headers.get("idempotent-replayed")).toBeNull()
        const fresh = yield* insertRow({ accountId: account, operatorId: w.alpha })
        expect((yield* checkin(fresh, { status: "clear" }, { key: key.token })).body.check_in).toEqual({
          status: null,
          present: null
        })
        expect(yield* usedToday(key.id)).toBe(1)
        expect((yield* auditOf(key.id)).map((a) => a.outcome)).toEqual(["done", "noop", "noop"])
      }))
  })

  describe("validation (400)", () => {
    it.effect("every body rule names its field", () =>
      Effect.gen(function*() {
        const { key, row } = yield* setup
        const cases: Array<[unknown, string]> = [
          [{}, "status"],
          [{ status: "arrived" }, "status"],
          [{ status: 1 }, "status"],
          [{ status: "checked_in", present: -1 }, "present"],
          [{ status: "checked_in", present: 1.5 }, "present"],
          [{ status: "checked_in", present: "2" }, "present"],
          [{ status: "no_show", present: 1 }, "present"],
          [{ status: "clear", present: 0 }, "present"]
        ]
        for (const [body, field] of cases) {
          const res = yield* checkin(row, body, { key: key.token })
          expectInvalid(res, field)
        }
        // Past the document's maximum (2^31 - 1, a PostgreSQL integer): refused by the body's schema.
        const huge = yield* checkin(row, { status: "checked_in", present: 2 ** 31 }, { key: key.token })
        expectInvalid(huge, "present")
        expect(huge.text).toContain("must be a whole number from 0 to the row's participants")
        // More than the party: decided against the row, after the key is claimed.
        const tooMany = yield* checkin(row, { status: "checked_in", present: 5 }, { key: key.token })
        expectInvalid(tooMany, "present")
        expect(tooMany.body.detail).toContain("at most the row's participants (4)")
        expect(yield* checkinState(row)).toBeNull()
        expect(yield* usedToday(key.id)).toBe(0)
      }))

    it.effect("no body, a body that is not JSON, and an id that is not a UUID", () =>
      Effect.gen(function*() {
        const { key, row } = yield* setup
        const noBody = yield* checkin(row, undefined, { key: key.token })
        expectProblem(noBody, 400, "invalid-request")
        const notJson = yield* checkin(row, undefined, {
          key: key.token,
          headers: { "content-type": "application/json" }
        })
        expectProblem(notJson, 400, "invalid-request")
        expectInvalid(yield* checkin("row-1", { status: "checked_in" }, { key: key.token }), "id")
      }))

    it.effect("a missing or malformed Idempotency-Key names the header", () =>
      Effect.gen(function*() {
        const { key, row } = yield* setup
        const missing = yield* checkin(row, { status: "checked_in" }, { key: key.token, idempotencyKey: null })
        expectInvalid(missing, "Idempotency-Key")
        expect(missing.body.detail).toContain("required")
        expectInvalid(
          yield* checkin(row, { status: "checked_in" }, { key: key.token, idempotencyKey: "short" }),
          "Idempotency-Key"
        )
        expect(yield* checkinState(row)).toBeNull()
      }))
  })

  describe("isolation", () => {
    it.effect("another operator's row, an unknown row, and a row of an operator no longer on the key answer 404", () =>
      Effect.gen(function*() {
        const { key, w } = yield* setup
        const [betaRow] = yield* insertRows(w.beta, 1)
        const foreign = yield* checkin(betaRow!, { status: "checked_in" }, { key: key.token })
        expectProblem(foreign, 404, "not-found")
        expect(foreign.body.detail).toBe("manifest row not found, or not yours")
        expect(yield* checkinState(betaRow!)).toBeNull()
        expectProblem(
          yield* checkin("00000000-0000-4000-8000-000000000000", { status: "no_show" }, { key: key.token }),
          404,
          "not-found"
        )

        // Bob's key covers Alpha (admin) and Beta (owner); demoted on Alpha, Alpha's rows are no longer his.
        const admin = yield* Operators
        const both = yield* createKey({ by: w.bob, operators: [w.alpha, w.beta], scopes: ["checkins:write"] })
        const [alphaRow] = yield* insertRows(w.alpha, 1)
        expect((yield* checkin(alphaRow!, { status: "checked_in" }, { key: both.token })).status).toBe(200)
        expect((yield* checkin(betaRow!, { status: "checked_in" }, { key: both.token })).status).toBe(200)
        yield* admin.changeRole(w.alpha, w.bob, "member")
        expectProblem(yield* checkin(alphaRow!, { status: "no_show" }, { key: both.token }), 404, "not-found")
        expect((yield* checkinState(alphaRow!))?.status).toBe("checked_in")
        expect((yield* checkin(betaRow!, { status: "no_show" }, { key: both.token })).status).toBe(200)
        // 404s do not count and are audited without an operator.
        expect(yield* usedToday(key.id)).toBe(0)
        expect((yield* auditOf(key.id)).map((a) => [a.outcome, a.status, a.reason, a.operator_id])).toEqual([
          ["refused", 404, "not-found", null],
          ["refused", 404, "not-found", null]
        ])
      }))

    it.effect("without checkins:write: 403 before the body or the header is looked at; without a key: 401", () =>
      Effect.gen(function*() {
        const { w, row } = yield* setup
        const reader = yield* createKey({
          by: w.alice,
          operators: [w.alpha],
          scopes: ["manifest:read", "bookings:read"]
        })
        const res = yield* checkin(row, { status: "bogus" }, { key: reader.token, idempotencyKey: null })
        expectProblem(res, 403, "missing-scope")
        expect(res.body.scope).toBe("checkins:write")
        expectProblem(yield* checkin(row, { status: "checked_in" }), 401, "unauthorized")
        expect(yield* checkinState(row)).toBeNull()
        expect(yield* auditOf(reader.id)).toEqual([])
      }))
  })

  describe("cancelled rows", () => {
    it.effect("cannot be checked in or marked no-show (422, not counted); clear is accepted", () =>
      Effect.gen(function*() {
        const { key, account, w } = yield* setup
        const sql = yield* SqlClient.SqlClient
        const row = yield* insertRow({ accountId: account, operatorId: w.alpha })
        expect((yield* checkin(row, { status: "checked_in" }, { key: key.token })).status).toBe(200)
        yield* sql`UPDATE manifest_rows SET status = 'CANCELLED', cancelled_at = now() WHERE id = ${row}`
        for (const status of ["checked_in", "no_show"]) {
          const res = yield* checkin(row, { status }, { key: key.token })
          expectProblem(res, 422, "not-possible")
          expect(res.body.detail).toContain("cancelled")
        }
        expect((yield* checkinState(row))?.status).toBe("checked_in")
        const cleared = yield* checkin(row, { status: "clear" }, { key: key.token })
        expect(cleared.status).toBe(200)
        expect(yield* checkinState(row)).toBeNull()
        expect(yield* usedToday(key.id)).toBe(2)
        const audit = yield* auditOf(key.id)
        expect(audit.map((a) => [a.outcome, a.reason, a.operator_id])).toEqual([
          ["done", null, w.alpha],
          ["refused", "not-possible", w.alpha],
          ["refused", "not-possible", w.alpha],
          ["done", null, w.alpha]
        ])
      }))
  })
})
