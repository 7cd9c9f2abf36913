import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Deferred, Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { requestFingerprint } from "../../../src/partner/writes/rules.js"
import { createKey, makeWorld } from "../../support/fixtures.js"
import { call, type Reply } from "../../support/http.js"
import { auditOf, checkin, checkinState, usedToday } from "../../support/manifest.js"
import { insertRows } from "../../support/mirror.js"
import { serverOn, TestServer, testServer } from "../../support/server.js"

const expectProblem = (res: Reply, status: number, slug: string) => {
  expect(res.status, res.text).toBe(status)
  expect(res.headers.get("content-type")).toBe("application/problem+json")
  expect(res.body.type).toBe(`/api/v1/docs/errors.md#${slug}`)
}

const path = (rowId: string) => `/api/v1/manifest/${rowId}/checkin`

/** A key with checkins:write over Alpha and `n` of Alpha's rows. */
const setup = (n = 1) =>
  Effect.gen(function*() {
    const w = yield* makeWorld
    const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["checkins:write"] })
    const rows = yield* insertRows(w.alpha, n)
    return { w, key, rows, row: rows[0]! }
  })

/** A second instance (own HTTP server and pool) on the first one's database, for the scope. */
const second = Effect.gen(function*() {
  const first = yield* TestServer
  const ctx = yield* Layer.build(serverOn(first.databaseUrl))
  return ctx.unsafeMap.get(TestServer.key) as { baseUrl: string }
})

/** Leaves a record as a request that claimed the key and then died would (its process gone). */
const deadClaim = (
  keyId: string,
  idempotencyKey: string,
  fingerprint: string,
  lease: "lapsed" | "live",
  slotToday = false
) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`
      INSERT INTO idempotency_records (
        key_id, idempotency_key, action, fingerprint, state, claim_token, lease_until, slot_day, created_at, expires_at)
      VALUES (
        ${keyId}, ${idempotencyKey}, 'checkins', ${fingerprint}, 'running', ${randomUUID()}::uuid,
        now() + ${lease === "live" ? "30 seconds" : "-1 second"}::interval,
        ${slotToday ? sql`(now() AT TIME ZONE 'UTC')::date` : null},
        now() - interval '1 minute', now() + interval '23 hours')`.pipe(Effect.orDie))

/**
 * Holds these manifest rows' locks from another transaction for `seconds`, returning once they are
 * held: a check-in of one of them waits in its action (its row lock) while it holds its claim, as a
 * slow action would. (The check-in's change itself runs in the write's final statement, which holds
 * the idempotency record's row lock: a slow change would block the lease renewal and any takeover.)
 */
const lockRowsFor = (rows: ReadonlyArray<string>, seconds: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const held = yield* Deferred.make<void>()
    yield* Effect.forkDaemon(
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`SELECT 1 FROM manifest_rows WHERE id IN ${sql.in(rows)} FOR UPDATE`
        yield* Deferred.succeed(held, undefined)
        yield* sql`SELECT pg_sleep(${seconds})`
      })).pipe(Effect.orDie)
    )
    yield* Deferred.await(held)
  })

const recordOf = (keyId: string, idempotencyKey: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ state: string; response_status: number | null }>`
      SELECT state, response_status FROM idempotency_records
      WHERE key_id = ${keyId} AND idempotency_key = ${idempotencyKey}`.pipe(
      Effect.map((r) => r[0] ?? null),
      Effect.orDie
    ))

layer(testServer(), { excludeTestServices: true, timeout: 120_000 })("Idempotency-Key on writes", (it) => {
  describe("the header", () => {
    it.effect("missing or malformed: 400 naming the header; nothing happens; the refusal is audited", () =>
      Effect.gen(function*() {
        const { key, row } = yield* setup()
        const bad = [
          null,
          "",
          "   ",
          "short",
          "has space in it",
          "x".repeat(256),
          "\"unbalanced-quote",
          "\"\"",
          "\"in\"side\"",
          "ümlaut-key-1234",
          "a,b-comma-list"
        ]
        for (const value of bad) {
          const res = yield* checkin(row, { status: "checked_in" }, { key: key.token, idempotencyKey: value })
          expectProblem(res, 400, "invalid-request")
          expect(res.body.invalid_params, String(value)).toEqual([{ name: "Idempotency-Key", reason: res.body.detail }])
        }
        expect(yield* checkinState(row)).toBeNull()
        expect(yield* usedToday(key.id)).toBe(0)
        const audit = yield* auditOf(key.id)
        expect(audit).toHaveLength(bad.length)
        expect(audit[0]).toMatchObject({
          outcome: "refused",
          status: 400,
          reason: "invalid-request",
          idempotency_key: null,
          target_id: row
        })
      }))

    it.effect("accepted bare and as the IETF draft writes it (a quoted string): both are the same key", () =>
      Effect.gen(function*() {
        const { key, row } = yield* setup()
        const id = randomUUID()
        const quoted = yield* checkin(row, { status: "checked_in" }, { key: key.token, idempotencyKey: `"${id}"` })
        expect(quoted.status).toBe(200)
        expect(quoted.headers.get("idempotent-replayed")).toBeNull()
        const bare = yield* checkin(row, { status: "checked_in" }, { key: key.token, idempotencyKey: id })
        expect(bare.status).toBe(200)
        expect(bare.headers.get("idempotent-replayed")).toBe("true")
        for (const ok of ["12345678", "x".repeat(255), "base64+/=", "01HF8Z3Q9V6K2J7M4N5P0R8S1T", "a.b_c~d:e-f"]) {
          const res = yield* checkin(row, { status: "checked_in" }, {
            key: key.token,
            idempotencyKey: ok.length < 8 ? ok + "0000" : ok
          })
          expect(res.status, ok).toBe(200)
        }
      }))
  })

  describe("replay", () => {
    it.effect("the same key and request replays status, body and headers with Idempotent-Replayed: true; runs once", () =>
      Effect.gen(function*() {
        const { key, row } = yield* setup()
        const id = randomUUID()
        const first = yield* checkin(row, { status: "checked_in", present: 2 }, { key: key.token, idempotencyKey: id })
        expect(first.status).toBe(200)
        const stored = yield* checkinState(row)
        // A different spelling of the same body (member order, present: null elsewhere) is the same request.
        const again = yield* call(path(row), {
          method: "POST",
          key: key.token,
          headers: { "Idempotency-Key": id, "X-Request-Id": "replay-check-0001" },
          body: { present: 2, status: "checked_in" }
        })
        expect(again.status).toBe(200)
        expect(again.headers.get("idempotent-replayed")).toBe("true")
        expect(again.text).toBe(first.text)
        expect(again.headers.get("content-type")).toBe(first.headers.get("content-type"))
        expect(again.headers.get("x-request-id")).toBe("replay-check-0001")
        expect(again.headers.get("ratelimit-policy")).not.toBeNull()
        // Not run again: the stored state is the first one's, and the limit counted once.
        expect(yield* checkinState(row)).toEqual(stored)
        expect(yield* usedToday(key.id)).toBe(1)
        expect((yield* auditOf(key.id)).map((a) => [a.outcome, a.status, a.idempotency_key])).toEqual([
          ["done", 200, id],
          ["replayed", 200, id]
        ])
      }))

    it.effect("a refusal is the key's final answer too: a 404 and a 422 replay as they were", () =>
      Effect.gen(function*() {
        const { key, w } = yield* setup()
        const sql = yield* SqlClient.SqlClient
        const [foreign] = yield* insertRows(w.beta, 1)
        const id = randomUUID()
        const notFound = yield* checkin(foreign!, { status: "no_show" }, { key: key.token, idempotencyKey: id })
        expectProblem(notFound, 404, "not-found")
        const replayed = yield* checkin(foreign!, { status: "no_show" }, { key: key.token, idempotencyKey: id })
        expectProblem(replayed, 404, "not-found")
        expect(replayed.headers.get("idempotent-replayed")).toBe("true")
        expect(replayed.text).toBe(notFound.text)

        const [cancelled] = yield* insertRows(w.alpha, 1, { status: "CANCELLED" })
        const id2 = randomUUID()
        const refused = yield* checkin(cancelled!, { status: "checked_in" }, { key: key.token, idempotencyKey: id2 })
        expectProblem(refused, 422, "not-possible")
        // Even once the row is live again, the key keeps its answer: a new attempt takes a new key.
        yield* sql`UPDATE manifest_rows SET status = 'CONFIRMED' WHERE id = ${cancelled!}`
        const replay2 = yield* checkin(cancelled!, { status: "checked_in" }, { key: key.token, idempotencyKey: id2 })
        expect(replay2.status).toBe(422)
        expect(replay2.headers.get("idempotent-replayed")).toBe("true")
        expect((yield* checkin(cancelled!, { status: "checked_in" }, { key: key.token })).status).toBe(200)
      }))

    it.effect("the same key with a different body or another row answers 422; nothing happens", () =>
      Effect.gen(function*() {
        const { key, rows } = yield* setup(2)
        const id = randomUUID()
        expect((yield* checkin(rows[0]!, { status: "checked_in" }, { key: key.token, idempotencyKey: id })).status)
          .toBe(200)
        const otherBody = yield* checkin(rows[0]!, { status: "no_show" }, { key: key.token, idempotencyKey: id })
        expectProblem(otherBody, 422, "idempotency-key-reused")
        expect(otherBody.headers.get("idempotent-replayed")).toBeNull()
        const otherRow = yield* checkin(rows[1]!, { status: "checked_in" }, { key: key.token, idempotencyKey: id })
        expectProblem(otherRow, 422, "idempotency-key-reused")
        expect((yield* checkinState(rows[0]!))?.status).toBe("checked_in")
        expect(yield* checkinState(rows[1]!)).toBeNull()
        expect(yield* usedToday(key.id)).toBe(1)
        expect((yield* auditOf(key.id)).map((a) => [a.outcome, a.reason])).toEqual([
          ["done", null],
          ["refused", "idempotency-key-reused"],
          ["refused", "idempotency-key-reused"]
        ])
      }))

    it.effect("keys are scoped per API key: the same Idempotency-Key under another API key is independent", () =>
      Effect.gen(function*() {
        const { key, w, rows } = yield* setup(1)
        const other = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["checkins:write"] })
        const id = randomUUID()
        const a = yield* checkin(rows[0]!, { status: "checked_in" }, { key: key.token, idempotencyKey: id })
        const b = yield* checkin(rows[0]!, { status: "no_show" }, { key: other.token, idempotencyKey: id })
        expect(a.status).toBe(200)
        expect(b.status).toBe(200)
        expect(b.headers.get("idempotent-replayed")).toBeNull()
        expect(b.body.check_in.status).toBe("no_show")
        expect((yield* checkinState(rows[0]!))?.status).toBe("no_show")
      }))

    it.effect("after 24 hours the key is free again", () =>
      Effect.gen(function*() {
        const { key, row } = yield* setup()
        const sql = yield* SqlClient.SqlClient
        const id = randomUUID()
        expect((yield* checkin(row, { status: "checked_in" }, { key: key.token, idempotencyKey: id })).status).toBe(200)
        yield* sql`UPDATE idempotency_records SET expires_at = now() - interval '1 second' WHERE idempotency_key = ${id}`
        // Even for a different request: the old answer is gone.
        const res = yield* checkin(row, { status: "no_show" }, { key: key.token, idempotencyKey: id })
        expect(res.status).toBe(200)
        expect(res.headers.get("idempotent-replayed")).toBeNull()
        expect((yield* checkinState(row))?.status).toBe("no_show")
      }))
  })

  describe("concurrency", () => {
    it.effect("many identical requests at once: exactly one runs, the others answer 409 or replay it", () =>
      Effect.gen(function*() {
        const { key, row } = yield* setup()
        const id = randomUUID()
        const results = yield* Effect.all(
          Array.from(
            { length: 25 },
            () => checkin(row, { status: "checked_in", present: 1 }, { key: key.token, idempotencyKey: id })
          ),
          { concurrency: "unbounded" }
        )
        const executed = results.filter((r) => r.status === 200 && r.headers.get("idempotent-replayed") === null)
        const replayed = results.filter((r) => r.status === 200 && r.headers.get("idempotent-replayed") === "true")
        const conflicts = results.filter((r) => r.status === 409)
        expect(executed).toHaveLength(1)
        expect(replayed.length + conflicts.length).toBe(24)
        for (const r of replayed) expect(r.text).toBe(executed[0]!.text)
        for (const r of conflicts) expectProblem(r, 409, "idempotency-in-progress")
        expect(yield* usedToday(key.id)).toBe(1)
        const audit = yield* auditOf(key.id)
        expect(audit.filter((a) => a.outcome === "done")).toHaveLength(1)
        expect(audit).toHaveLength(25)
      }))

    it.scoped("two instances on one database share the records: replay and 409 across instances", () =>
      Effect.gen(function*() {
        const { key, rows } = yield* setup(2)
        const b = yield* second
        const id = randomUUID()
        const onA = yield* checkin(rows[0]!, { status: "no_show" }, { key: key.token, idempotencyKey: id })
        const onB = yield* checkin(rows[0]!, { status: "no_show" }, {
          key: key.token,
          idempotencyKey: id,
          baseUrl: b.baseUrl
        })
        expect(onA.status).toBe(200)
        expect(onB.status).toBe(200)
        expect(onB.headers.get("idempotent-replayed")).toBe("true")
        expect(onB.text).toBe(onA.text)
        expectProblem(
          yield* checkin(rows[0]!, { status: "checked_in" }, {
            key: key.token,
            idempotencyKey: id,
            baseUrl: b.baseUrl
          }),
          422,
          "idempotency-key-reused"
        )

        const id2 = randomUUID()
        const burst = yield* Effect.all(
          Array.from(
            { length: 20 },
            (_, i) =>
              checkin(rows[1]!, { status: "checked_in" }, {
                key: key.token,
                idempotencyKey: id2,
                ...(i % 2 ? { baseUrl: b.baseUrl } : {})
              })
          ),
          { concurrency: "unbounded" }
        )
        expect(burst.filter((r) => r.status === 200 && r.headers.get("idempotent-replayed") === null)).toHaveLength(1)
        expect(burst.every((r) => r.status === 200 || r.status === 409)).toBe(true)
        expect(yield* usedToday(key.id)).toBe(2)
      }))
  })

  describe("a request that died half-way", () => {
    it.effect("its claim lapses: a retry with the same key and request runs; while the lease is live it answers 409", () =>
      Effect.gen(function*() {
        const { key, row } = yield* setup()
        const body = { status: "checked_in" }
        const fingerprint = requestFingerprint("POST", path(row), body)

        const live = randomUUID()
        yield* deadClaim(key.id, live, fingerprint, "live")
        expectProblem(
          yield* checkin(row, body, { key: key.token, idempotencyKey: live }),
          409,
          "idempotency-in-progress"
        )

        const lapsed = randomUUID()
        yield* deadClaim(key.id, lapsed, fingerprint, "lapsed")
        const retry = yield* checkin(row, body, { key: key.token, idempotencyKey: lapsed })
        expect(retry.status, retry.text).toBe(200)
        expect(retry.headers.get("idempotent-replayed")).toBeNull()
        expect((yield* checkinState(row))?.status).toBe("checked_in")
        expect(yield* recordOf(key.id, lapsed)).toEqual({ state: "done", response_status: 200 })
        // A lapsed claim of a *different* request is still that request's key.
        const other = randomUUID()
        yield* deadClaim(key.id, other, requestFingerprint("POST", path(row), { status: "no_show" }), "lapsed")
        expectProblem(
          yield* checkin(row, body, { key: key.token, idempotencyKey: other }),
          422,
          "idempotency-key-reused"
        )
      }))

    it.effect("a retry that takes over a dead claim reuses the daily-limit slot it had reserved today", () =>
      Effect.gen(function*() {
        const { key, row } = yield* setup()
        const sql = yield* SqlClient.SqlClient
        const body = { status: "no_show" }
        const id = randomUUID()
        // The dead attempt had reserved today's slot.
        yield* sql`
          INSERT INTO daily_write_counters (key_id, action, day, used)
          VALUES (${key.id}, 'checkins', (now() AT TIME ZONE 'UTC')::date, 1)`
        yield* deadClaim(key.id, id, requestFingerprint("POST", path(row), body), "lapsed", true)
        expect((yield* checkin(row, body, { key: key.token, idempotencyKey: id })).status).toBe(200)
        expect(yield* usedToday(key.id)).toBe(1)
      }))

    it.effect("a crash inside the action frees the key at once and gives the slot back; the retry runs", () =>
      Effect.gen(function*() {
        const { key, row } = yield* setup()
        const sql = yield* SqlClient.SqlClient
        // Fault injection: the check-in's write fails inside the transaction (a defect: 500).
        yield* sql.unsafe(`
          CREATE OR REPLACE FUNCTION fail_checkin() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN RAISE EXCEPTION 'injected failure'; END $$;
          CREATE TRIGGER fail_checkin BEFORE INSERT ON manifest_checkins
            FOR EACH ROW WHEN (NEW.row_id = '${row}'::uuid) EXECUTE FUNCTION fail_checkin();`)
        const id = randomUUID()
        const crashed = yield* checkin(row, { status: "checked_in" }, { key: key.token, idempotencyKey: id })
        expectProblem(crashed, 500, "internal")
        expect(crashed.text).not.toContain("injected")
        expect(yield* recordOf(key.id, id)).toBeNull()
        expect(yield* usedToday(key.id)).toBe(0)
        expect(yield* checkinState(row)).toBeNull()
        const failed = (yield* auditOf(key.id)).at(-1)!
        expect(failed).toMatchObject({ outcome: "failed", status: 500, reason: "internal", idempotency_key: id })
        expect(failed.detail).toContain("injected failure")

        yield* sql.unsafe(`DROP TRIGGER fail_checkin ON manifest_checkins`)
        const retry = yield* checkin(row, { status: "checked_in" }, { key: key.token, idempotencyKey: id })
        expect(retry.status).toBe(200)
        expect(retry.headers.get("idempotent-replayed")).toBeNull()
        expect(yield* usedToday(key.id)).toBe(1)
        expect((yield* checkinState(row))?.status).toBe("checked_in")
      }))
  })
})

layer(testServer({ env: { IDEMPOTENCY_LEASE_SECONDS: "2" } }), { excludeTestServices: true, timeout: 120_000 })(
  "Idempotency-Key leases (2-second lease)",
  (it) => {
    it.effect("a request running longer than the lease keeps renewing it: a duplicate meanwhile answers 409, later a replay", () =>
      Effect.gen(function*() {
        const { key, row } = yield* setup()
        const sql = yield* SqlClient.SqlClient
        // The check-in's action takes 3.5 s (longer than the lease): its row is locked meanwhile.
        yield* lockRowsFor([row], 3.5)
        const id = randomUUID()
        const body = { status: "checked_in" }
        const slow = yield* Effect.fork(checkin(row, body, { key: key.token, idempotencyKey: id }))
        yield* Effect.sleep("2500 millis")
        const [record] = yield* sql<{ state: string; lease_left: number }>`
          SELECT state, extract(epoch FROM lease_until - now())::float8 AS lease_left
          FROM idempotency_records WHERE idempotency_key = ${id}`
        expect(record!.state).toBe("running")
        expect(record!.lease_left).toBeGreaterThan(0)
        expectProblem(yield* checkin(row, body, { key: key.token, idempotencyKey: id }), 409, "idempotency-in-progress")
        const first = yield* slow.await.pipe(Effect.flatten)
        expect(first.status).toBe(200)
        expect(first.headers.get("idempotent-replayed")).toBeNull()
        const replay = yield* checkin(row, body, { key: key.token, idempotencyKey: id })
        expect(replay.headers.get("idempotent-replayed")).toBe("true")
        expect(yield* usedToday(key.id)).toBe(1)
      }))

    it.effect("two requests running longer than the lease at once: the one renewal of this instance keeps both claims", () =>
      Effect.gen(function*() {
        const { key, rows } = yield* setup(2)
        const sql = yield* SqlClient.SqlClient
        yield* lockRowsFor(rows, 3.5)
        const ids = [randomUUID(), randomUUID()]
        const slow = yield* Effect.all(
          rows.map((row, i) =>
            Effect.fork(checkin(row, { status: "checked_in" }, { key: key.token, idempotencyKey: ids[i]! }))
          )
        )
        yield* Effect.sleep("2500 millis")
        const records = yield* sql<{ state: string; lease_left: number; slot_day: string | null }>`
          SELECT state, extract(epoch FROM lease_until - now())::float8 AS lease_left, slot_day::text AS slot_day
          FROM idempotency_records WHERE key_id = ${key.id} ORDER BY idempotency_key`
        expect(records).toHaveLength(2)
        for (const record of records) {
          expect(record.state).toBe("running")
          expect(record.lease_left).toBeGreaterThan(0)
          // The claim took its daily-limit slot in the same statement and holds it.
          expect(record.slot_day).not.toBeNull()
        }
        expect(yield* usedToday(key.id)).toBe(2)
        for (const [i, row] of rows.entries()) {
          expectProblem(
            yield* checkin(row, { status: "checked_in" }, { key: key.token, idempotencyKey: ids[i]! }),
            409,
            "idempotency-in-progress"
          )
        }
        for (const fiber of slow) expect((yield* fiber.await.pipe(Effect.flatten)).status).toBe(200)
        expect(yield* usedToday(key.id)).toBe(2)
        expect((yield* auditOf(key.id)).map((a) => a.outcome).sort()).toEqual(["done", "done", "refused", "refused"])
      }))

    it.effect("a request whose claim was taken over meanwhile stores nothing: its check-in rolls back and it answers 409", () =>
      Effect.gen(function*() {
        const { key, row } = yield* setup()
        const sql = yield* SqlClient.SqlClient
        yield* lockRowsFor([row], 1.5)
        const id = randomUUID()
        const slow = yield* Effect.fork(checkin(row, { status: "no_show" }, { key: key.token, idempotencyKey: id }))
        yield* Effect.sleep("500 millis")
        // Another attempt takes the claim over (as after a lapsed lease).
        const taken = yield* sql`
          UPDATE idempotency_records SET claim_token = ${randomUUID()}::uuid
          WHERE key_id = ${key.id} AND idempotency_key = ${id} AND state = 'running' RETURNING 1 AS ok`
        expect(taken).toHaveLength(1)
        const res = yield* slow.await.pipe(Effect.flatten)
        expectProblem(res, 409, "idempotency-in-progress")
        expect(yield* checkinState(row)).toBeNull()
        expect(yield* recordOf(key.id, id)).toEqual({ state: "running", response_status: null })
      }))

    it.effect("a request that fails after its claim was taken over leaves the claim and its slot to the taker; it is audited", () =>
      Effect.gen(function*() {
        const { key, row } = yield* setup()
        const sql = yield* SqlClient.SqlClient
        // Fault injection: the check-in's change fails (a defect: 500), after the takeover below.
        yield* sql.unsafe(`
          CREATE OR REPLACE FUNCTION fail_checkin4() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN RAISE EXCEPTION 'injected failure'; END $$;
          CREATE TRIGGER fail_checkin4 BEFORE INSERT ON manifest_checkins
            FOR EACH ROW WHEN (NEW.row_id = '${row}'::uuid) EXECUTE FUNCTION fail_checkin4();`)
        yield* lockRowsFor([row], 1.5)
        const id = randomUUID()
        const slow = yield* Effect.fork(checkin(row, { status: "checked_in" }, { key: key.token, idempotencyKey: id }))
        yield* Effect.sleep("500 millis")
        const taken = yield* sql`
          UPDATE idempotency_records SET claim_token = ${randomUUID()}::uuid
          WHERE key_id = ${key.id} AND idempotency_key = ${id} AND state = 'running' RETURNING 1 AS ok`
        expect(taken).toHaveLength(1)
        expectProblem(yield* slow.await.pipe(Effect.flatten), 500, "internal")
        yield* sql.unsafe(`DROP TRIGGER fail_checkin4 ON manifest_checkins`)
        // Not freed (no longer ours), and the slot the claim took stays with it.
        expect(yield* recordOf(key.id, id)).toEqual({ state: "running", response_status: null })
        expect(yield* usedToday(key.id)).toBe(1)
        expect(yield* checkinState(row)).toBeNull()
        expect((yield* auditOf(key.id)).at(-1)).toMatchObject({ outcome: "failed", status: 500, idempotency_key: id })
      }))
  }
)
