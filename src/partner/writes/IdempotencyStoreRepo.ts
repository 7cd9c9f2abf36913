/**
 * The SQL of the idempotency records (IdempotencyStore; `idempotency_records`), one per (API key,
 * Idempotency-Key): the claim as one atomic upsert, the record as it stands, and every later change
 * fenced on the claim token. A database error is a defect here, once.
 *
 * Every write runs a claim, its completion or abandonment, and maybe a renewal (the check-in measured by
 * `npm run bench` among them): those statements keep plain `sql<Row>` typed rows and have no spans
 * of their own (`repoEdge.untraced`: IdempotencyStore's and the driver's cover them); a Schema pass on each of the
 * statements a write runs cost about 4% of the check-in's Node CPU in that benchmark. The cleanup
 * job's purge is typed with SqlSchema.
 */
import { SqlClient, SqlSchema, type Statement } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { repoEdge, theRow } from "../../db/repoEdge.js"
import { toPgArray } from "../../db/sql.js"
import { type AuditEntry, auditInsert } from "./AuditRepo.js"
import type { Slot } from "./DailyLimits.js"
import { resetSeconds, slotCtes } from "./DailyLimitsRepo.js"
import { IDEMPOTENCY_WINDOW_HOURS, type WriteAction } from "./rules.js"

export interface ExistingRecord {
  readonly fingerprint: string
  readonly action: string
  readonly state: "running" | "done"
  /** Its lease has not run out. */
  readonly live: boolean
  /** Its 24-hour window has not passed. */
  readonly current: boolean
  readonly response_status: number | null
  readonly response_content_type: string | null
  readonly response_headers: Record<string, string> | null
  readonly response_body: string | null
}

export interface ClaimAttempt {
  readonly keyId: string
  readonly idempotencyKey: string
  readonly action: WriteAction
  readonly fingerprint: string
  readonly token: string
  readonly leaseSeconds: number
  /** Take today's daily-limit slot with the claim of a new key (the writes that count before they act). */
  readonly slot?: { readonly defaultLimit: number } | undefined
}

export interface ClaimRow {
  readonly claimed: boolean
  readonly slot_day: string | null
  readonly reserved_day: string | null
  readonly slot_tried: boolean
  readonly daily_limit: number
  readonly reset_seconds: number
}

export interface Completion {
  readonly token: string
  /** The slot to give back with the answer (a refusal or a no-op), if any. */
  readonly giveBack: Slot | null
  /** The attempt's audit entry. */
  readonly audit: AuditEntry
  /** Append the entry even when the claim is no longer ours (a refusal is audited whatever happens). */
  readonly auditAnyway: boolean
  readonly status: number
  readonly contentType: string
  /** The headers as JSON. */
  readonly headers: string
  readonly body: string
  /** The write's own change, made by this statement too (WriteDone `change`); inside the write's transaction. */
  readonly change?: Statement.Fragment | undefined
}

/** What an attempt without a final answer leaves behind (`abandon`). */
export interface Abandonment {
  readonly token: string
  /** The slot the claim held, given back when the claim was still ours. */
  readonly giveBack: Slot | null
  /** The attempt's audit entry, appended whatever happens. */
  readonly audit: AuditEntry
}

export class IdempotencyStoreRepo extends Effect.Service<IdempotencyStoreRepo>()("Partner/IdempotencyStoreRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** The key has no record in its window (as this statement's snapshot sees it). */
    const newKey = (r: ClaimAttempt) =>
      sql`NOT EXISTS (
            SELECT 1 FROM idempotency_records
            WHERE key_id = ${r.keyId} AND idempotency_key = ${r.idempotencyKey} AND expires_at > now())`

    /**
     * Claims the key when it is new, its window has passed, or an earlier attempt at the same request
     * died holding it (its lease lapsed). `slot_day`: the daily-limit slot (today's) the claim holds,
     * either the one that dead attempt had reserved or, with `slot`, one taken in this statement.
     *
     * With `slot`, a key that is new (or whose window has passed) also takes today's daily-limit slot
     * in this statement, recorded on the claim (one round trip instead of claim, reservation and
     * holdSlot; a crash can no longer separate the slot from its claim). `reserved_day`: the day of a
     * slot this statement took (then the caller owns it, also when `claimed` is false because a
     * concurrent request with the same key won the claim: it must give it back); `slot_tried`: a slot
     * was to be taken (claimed, `slot_tried` and no `slot_day`: the limit is used up, `daily_limit`
     * and `reset_seconds` say which and until when).
     */
    const tryClaim = (r: ClaimAttempt) =>
      Effect.flatMap(
        sql<ClaimRow>`
        WITH ${
          slotCtes(
            sql,
            { keyId: r.keyId, action: r.action, defaultLimit: r.slot?.defaultLimit ?? 0 },
            r.slot === undefined ? sql`false` : newKey(r)
          )
        }, claim AS (
          INSERT INTO idempotency_records AS r (
            key_id, idempotency_key, action, fingerprint, state, claim_token, lease_until, slot_day, created_at,
            expires_at)
          VALUES (
            ${r.keyId}, ${r.idempotencyKey}, ${r.action}, ${r.fingerprint}, 'running', ${r.token}::uuid,
            now() + make_interval(secs => ${r.leaseSeconds}), (SELECT day FROM slot), now(),
            now() + make_interval(hours => ${IDEMPOTENCY_WINDOW_HOURS}))
          ON CONFLICT (key_id, idempotency_key) DO UPDATE SET
            action = excluded.action,
            fingerprint = excluded.fingerprint,
            state = 'running',
            claim_token = excluded.claim_token,
            lease_until = excluded.lease_until,
            created_at = CASE WHEN r.expires_at <= now() THEN excluded.created_at ELSE r.created_at END,
            expires_at = CASE WHEN r.expires_at <= now() THEN excluded.expires_at ELSE r.expires_at END,
            slot_day = CASE WHEN r.expires_at <= now() THEN excluded.slot_day ELSE r.slot_day END,
            response_status = NULL, response_content_type = NULL, response_headers = NULL, response_body = NULL,
            completed_at = NULL
          WHERE r.expires_at <= now()
            OR (r.state = 'running' AND r.lease_until <= now() AND r.fingerprint = excluded.fingerprint)
          RETURNING CASE WHEN slot_day = (now() AT TIME ZONE 'UTC')::date THEN slot_day::text END AS slot_day
        )
        SELECT EXISTS (SELECT 1 FROM claim) AS claimed, (SELECT slot_day FROM claim) AS slot_day,
          (SELECT day::text FROM slot) AS reserved_day, ${r.slot === undefined ? sql`false` : newKey(r)} AS slot_tried,
          lim.value AS daily_limit, ${resetSeconds(sql)} AS reset_seconds
        FROM lim`,
        theRow
      )

    /** The record a claim did not get, as it stands. */
    const existing = (key: { readonly keyId: string; readonly idempotencyKey: string }) =>
      Effect.map(
        sql<ExistingRecord>`
        SELECT fingerprint, action, state, lease_until > now() AS live, expires_at > now() AS current,
          response_status, response_content_type, response_headers, response_body
        FROM idempotency_records
        WHERE key_id = ${key.keyId} AND idempotency_key = ${key.idempotencyKey}`,
        (rows) => Option.fromNullable(rows[0])
      )

    /** Extends the leases of these running claims; answers the tokens still ours. */
    const renewAll = (tokens: ReadonlyArray<string>, leaseSeconds: number) =>
      Effect.map(
        sql<{ token: string }>`
        UPDATE idempotency_records SET lease_until = now() + make_interval(secs => ${leaseSeconds})
        WHERE claim_token = ANY(${toPgArray(tokens)}::uuid[]) AND state = 'running'
        RETURNING claim_token::text AS token`,
        (rows) => rows.map((row) => row.token)
      )

    /** Notes the daily-limit slot a running claim holds. */
    const holdSlot = (token: string, day: string) =>
      Effect.asVoid(sql`
        UPDATE idempotency_records SET slot_day = ${day}::date
        WHERE claim_token = ${token}::uuid AND state = 'running'`)

    /** Gives `slot` back when `when` holds (a CTE of `complete` and `abandon`). */
    const giveBackWhen = (slot: Slot | null, when: Statement.Fragment) =>
      slot === null
        ? sql`SELECT`
        : sql`
          UPDATE daily_write_counters SET used = used - 1
          WHERE key_id = ${slot.keyId} AND action = ${slot.action} AND day = ${slot.day}::date
            AND used > 0 AND ${when}`

    /**
     * Stores the final response of a running claim, gives the slot back (`giveBack`) and appends the
     * audit entry, in one statement (with the write's own `change` when it has one); false when the
     * claim is no longer ours (then nothing is stored or given back, and the entry is appended only
     * with `auditAnyway`; a `change` is made anyway, and the write's transaction rolls it back).
     */
    const complete = (c: Completion) =>
      Effect.flatMap(
        sql<{ ok: boolean }>`
        WITH ${c.change === undefined ? sql`` : sql`change AS (${c.change}), `}done AS (
          UPDATE idempotency_records SET
            state = 'done',
            response_status = ${c.status},
            response_content_type = ${c.contentType},
            response_headers = ${c.headers}::jsonb,
            response_body = ${c.body},
            completed_at = now()
          WHERE claim_token = ${c.token}::uuid AND state = 'running'
          RETURNING 1
        ), back AS (${giveBackWhen(c.giveBack, sql`EXISTS (SELECT 1 FROM done)`)}), audit AS (${
          auditInsert(sql, c.audit, c.auditAnyway ? sql`true` : sql`EXISTS (SELECT 1 FROM done)`)
        })
        SELECT EXISTS (SELECT 1 FROM done) AS ok`,
        (rows) => Effect.map(theRow(rows), (row) => row.ok)
      )

    /**
     * Frees a running claim's key, gives its slot back (when it was still ours: a claim taken over
     * took its slot with it) and appends the audit entry, in one statement; false when the claim was
     * no longer ours.
     */
    const abandon = (a: Abandonment) =>
      Effect.flatMap(
        sql<{ released: boolean }>`
        WITH gone AS (
          DELETE FROM idempotency_records WHERE claim_token = ${a.token}::uuid AND state = 'running'
          RETURNING 1
        ), back AS (${giveBackWhen(a.giveBack, sql`EXISTS (SELECT 1 FROM gone)`)}),
        audit AS (${auditInsert(sql, a.audit, sql`true`)})
        SELECT EXISTS (SELECT 1 FROM gone) AS released`,
        (rows) => Effect.map(theRow(rows), (row) => row.released)
      )

    /** Deletes the records whose window has passed; answers how many. */
    const purgeExpired = SqlSchema.single({
      Request: Schema.Void,
      Result: Schema.Struct({ n: Schema.Number }),
      execute: () =>
        sql`
            WITH gone AS (DELETE FROM idempotency_records WHERE expires_at <= now() RETURNING 1)
            SELECT count(*)::int AS n FROM gone`
    })

    return {
      ...repoEdge.untraced({ tryClaim, existing, renewAll, holdSlot, complete, abandon }),
      ...repoEdge("IdempotencyStoreRepo", { purgeExpired: () => purgeExpired(undefined) })
    }
  })
}) {}
