/**
 * The SQL of the idempotency records (IdempotencyStore; `idempotency_records`), one per (API key,
 * Idempotency-Key): the claim as one atomic upsert, the record as it stands, and every later change
 * fenced on the claim token. Typed with SqlSchema and the row schema below; a database error or a
 * row that does not decode is a defect here, once.
 *
 * Every write runs a claim, its completion or release, and maybe a renewal (the check-in measured by
 * `npm run bench` among them): those statements have no spans of their own (IdempotencyStore's and
 * the driver's cover them).
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { IDEMPOTENCY_WINDOW_HOURS } from "./rules.js"

export const ExistingRecord = Schema.Struct({
  fingerprint: Schema.String,
  action: Schema.String,
  state: Schema.Literal("running", "done"),
  /** Its lease has not run out. */
  live: Schema.Boolean,
  /** Its 24-hour window has not passed. */
  current: Schema.Boolean,
  response_status: Schema.NullOr(Schema.Number),
  response_content_type: Schema.NullOr(Schema.String),
  response_headers: Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.String })),
  response_body: Schema.NullOr(Schema.String)
})
export type ExistingRecord = typeof ExistingRecord.Type

const Key = Schema.Struct({ keyId: Schema.String, idempotencyKey: Schema.String })

const ClaimRequest = Schema.Struct({
  ...Key.fields,
  action: Schema.String,
  fingerprint: Schema.String,
  token: Schema.String,
  leaseSeconds: Schema.Number
})

const Completion = Schema.Struct({
  token: Schema.String,
  status: Schema.Number,
  contentType: Schema.String,
  /** The headers as JSON. */
  headers: Schema.String,
  body: Schema.String
})

const Ok = Schema.Struct({ ok: Schema.Number })

export class IdempotencyStoreRepo extends Effect.Service<IdempotencyStoreRepo>()("Partner/IdempotencyStoreRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const upsertClaim = SqlSchema.findOne({
      Request: ClaimRequest,
      Result: Schema.Struct({ slot_day: Schema.NullOr(Schema.String) }),
      execute: (r) =>
        sql`
          INSERT INTO idempotency_records AS r (
            key_id, idempotency_key, action, fingerprint, state, claim_token, lease_until, created_at, expires_at)
          VALUES (
            ${r.keyId}, ${r.idempotencyKey}, ${r.action}, ${r.fingerprint}, 'running', ${r.token}::uuid,
            now() + make_interval(secs => ${r.leaseSeconds}), now(),
            now() + make_interval(hours => ${IDEMPOTENCY_WINDOW_HOURS}))
          ON CONFLICT (key_id, idempotency_key) DO UPDATE SET
            action = excluded.action,
            fingerprint = excluded.fingerprint,
            state = 'running',
            claim_token = excluded.claim_token,
            lease_until = excluded.lease_until,
            created_at = CASE WHEN r.expires_at <= now() THEN excluded.created_at ELSE r.created_at END,
            expires_at = CASE WHEN r.expires_at <= now() THEN excluded.expires_at ELSE r.expires_at END,
            slot_day = CASE WHEN r.expires_at <= now() THEN NULL ELSE r.slot_day END,
            response_status = NULL, response_content_type = NULL, response_headers = NULL, response_body = NULL,
            completed_at = NULL
          WHERE r.expires_at <= now()
            OR (r.state = 'running' AND r.lease_until <= now() AND r.fingerprint = excluded.fingerprint)
          RETURNING CASE WHEN slot_day = (now() AT TIME ZONE 'UTC')::date THEN slot_day::text END AS slot_day`
    })

    /**
     * Claims the key when it is new, its window has passed, or an earlier attempt at the same request
     * died holding it (its lease lapsed); None otherwise. `slot_day`: the daily-limit slot (today's)
     * that attempt had reserved. On every write: see above.
     */
    const tryClaim = Effect.fnUntraced(function*(request: typeof ClaimRequest.Type) {
      return yield* upsertClaim(request)
    }, Effect.orDie)

    const selectRecord = SqlSchema.findOne({
      Request: Key,
      Result: ExistingRecord,
      execute: (k) =>
        sql`
          SELECT fingerprint, action, state, lease_until > now() AS live, expires_at > now() AS current,
            response_status, response_content_type, response_headers, response_body
          FROM idempotency_records
          WHERE key_id = ${k.keyId} AND idempotency_key = ${k.idempotencyKey}`
    })

    /** The record a claim did not get, as it stands. */
    const existing = Effect.fnUntraced(function*(key: typeof Key.Type) {
      return yield* selectRecord(key)
    }, Effect.orDie)

    const extendLease = SqlSchema.findAll({
      Request: Schema.Struct({ token: Schema.String, leaseSeconds: Schema.Number }),
      Result: Ok,
      execute: ({ leaseSeconds, token }) =>
        sql`
          UPDATE idempotency_records SET lease_until = now() + make_interval(secs => ${leaseSeconds})
          WHERE claim_token = ${token}::uuid AND state = 'running'
          RETURNING 1 AS ok`
    })

    /** Extends a running claim's lease; no rows when the claim is no longer ours. */
    const renew = Effect.fnUntraced(function*(token: string, leaseSeconds: number) {
      return yield* extendLease({ token, leaseSeconds })
    }, Effect.orDie)

    const noteSlot = SqlSchema.void({
      Request: Schema.Struct({ token: Schema.String, day: Schema.String }),
      execute: ({ day, token }) =>
        sql`
          UPDATE idempotency_records SET slot_day = ${day}::date
          WHERE claim_token = ${token}::uuid AND state = 'running'`
    })

    /** Notes the daily-limit slot a running claim holds. */
    const holdSlot = Effect.fnUntraced(function*(token: string, day: string) {
      yield* noteSlot({ token, day })
    }, Effect.orDie)

    const storeResponse = SqlSchema.findAll({
      Request: Completion,
      Result: Ok,
      execute: (c) =>
        sql`
          UPDATE idempotency_records SET
            state = 'done',
            response_status = ${c.status},
            response_content_type = ${c.contentType},
            response_headers = ${c.headers}::jsonb,
            response_body = ${c.body},
            completed_at = now()
          WHERE claim_token = ${c.token}::uuid AND state = 'running'
          RETURNING 1 AS ok`
    })

    /** Stores the final response of a running claim; no rows when the claim is no longer ours. */
    const complete = Effect.fnUntraced(function*(completion: typeof Completion.Type) {
      return yield* storeResponse(completion)
    }, Effect.orDie)

    const deleteClaim = SqlSchema.findAll({
      Request: Schema.String,
      Result: Ok,
      execute: (token) =>
        sql`
          DELETE FROM idempotency_records WHERE claim_token = ${token}::uuid AND state = 'running'
          RETURNING 1 AS ok`
    })

    /** Frees a running claim's key; no rows when the claim is no longer ours. */
    const release = Effect.fnUntraced(function*(token: string) {
      return yield* deleteClaim(token)
    }, Effect.orDie)

    /** Deletes the records whose window has passed; answers how many. */
    const purgeExpired = Effect.fn("IdempotencyStoreRepo.purgeExpired")(
      SqlSchema.single({
        Request: Schema.Void,
        Result: Schema.Struct({ n: Schema.Number }),
        execute: () =>
          sql`
            WITH gone AS (DELETE FROM idempotency_records WHERE expires_at <= now() RETURNING 1)
            SELECT count(*)::int AS n FROM gone`
      }),
      Effect.orDie
    )

    return { tryClaim, existing, renew, holdSlot, complete, release, purgeExpired } as const
  })
}) {}
