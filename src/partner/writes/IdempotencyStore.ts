/**
 * Idempotency records in PostgreSQL, one per (API key, Idempotency-Key), shared by every instance.
 *
 * A request claims its key with one atomic upsert (no read-then-write race): it gets the claim when
 * the key is new, when the record's 24-hour window has passed, or when an earlier attempt at the
 * same request died holding it (its lease lapsed). Otherwise it learns what the record holds: a
 * finished response to replay, a different request (mismatch), or a request still running.
 *
 * Every later change is fenced on the claim token, so an attempt that lost its claim can never
 * overwrite the outcome of the one that took over.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { AppConfig } from "../../config.js"
import { IDEMPOTENCY_WINDOW_HOURS } from "./rules.js"

/** A response as replayed: status, content type, the headers worth repeating, exact body text. */
export interface StoredResponse {
  readonly status: number
  readonly contentType: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

export interface ClaimRequest {
  readonly keyId: string
  readonly idempotencyKey: string
  readonly action: string
  readonly fingerprint: string
}

export type Claim =
  | {
    readonly _tag: "Claimed"
    readonly token: string
    /** The UTC day (YYYY-MM-DD) whose daily-limit slot a dead earlier attempt already reserved, if today. */
    readonly slotDay: string | null
  }
  | { readonly _tag: "Replay"; readonly response: StoredResponse }
  | { readonly _tag: "InProgress" }
  | { readonly _tag: "Mismatch"; readonly action: string }

interface ExistingRow {
  readonly fingerprint: string
  readonly action: string
  readonly state: "running" | "done"
  readonly live: boolean
  readonly current: boolean
  readonly response_status: number | null
  readonly response_content_type: string | null
  readonly response_headers: Record<string, string> | null
  readonly response_body: string | null
}

/** Attempts before giving up on a key whose record keeps changing under us (answered as in progress). */
const CLAIM_ATTEMPTS = 5

export class IdempotencyStore extends Effect.Service<IdempotencyStore>()("Partner/IdempotencyStore", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { idempotencyLeaseSeconds: leaseSeconds } = yield* AppConfig

    const tryClaim = (r: ClaimRequest, token: string) =>
      sql<{ slot_day: string | null }>`
        INSERT INTO idempotency_records AS r (
          key_id, idempotency_key, action, fingerprint, state, claim_token, lease_until, created_at, expires_at)
        VALUES (
          ${r.keyId}, ${r.idempotencyKey}, ${r.action}, ${r.fingerprint}, 'running', ${token}::uuid,
          now() + make_interval(secs => ${leaseSeconds}), now(),
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
        RETURNING CASE WHEN slot_day = (now() AT TIME ZONE 'UTC')::date THEN slot_day::text END AS slot_day`.pipe(
        Effect.orDie
      )

    const existing = (r: ClaimRequest) =>
      sql<ExistingRow>`
        SELECT fingerprint, action, state, lease_until > now() AS live, expires_at > now() AS current,
          response_status, response_content_type, response_headers, response_body
        FROM idempotency_records
        WHERE key_id = ${r.keyId} AND idempotency_key = ${r.idempotencyKey}`.pipe(Effect.orDie)

    /** Claims the key, or says why not. */
    const claim = Effect.fn("IdempotencyStore.claim")(function*(r: ClaimRequest) {
      yield* Effect.annotateCurrentSpan({ action: r.action })
      const token = randomUUID()
      for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
        const [claimed] = yield* tryClaim(r, token)
        if (claimed) return { _tag: "Claimed", token, slotDay: claimed.slot_day } satisfies Claim as Claim
        const [row] = yield* existing(r)
        // Gone (released) or lapsed since the upsert looked: try again.
        if (!row || !row.current) continue
        if (row.fingerprint !== r.fingerprint) return { _tag: "Mismatch", action: row.action } satisfies Claim as Claim
        if (row.state === "done") {
          return {
            _tag: "Replay",
            response: {
              status: row.response_status!,
              contentType: row.response_content_type ?? "application/json",
              headers: row.response_headers ?? {},
              body: row.response_body!
            }
          } satisfies Claim as Claim
        }
        if (row.live) return { _tag: "InProgress" } satisfies Claim as Claim
      }
      return { _tag: "InProgress" } satisfies Claim as Claim
    })

    /** Extends the lease of a running claim; false when the claim is no longer ours. */
    const renew = Effect.fn("IdempotencyStore.renew")((token: string) =>
      sql`
        UPDATE idempotency_records SET lease_until = now() + make_interval(secs => ${leaseSeconds})
        WHERE claim_token = ${token}::uuid AND state = 'running'
        RETURNING 1 AS ok`.pipe(
        Effect.orDie,
        Effect.map((rows) => rows.length > 0)
      ))

    /** Notes the daily-limit slot the claim holds, so that a retry after a crash reuses it. */
    const holdSlot = Effect.fn("IdempotencyStore.holdSlot")((token: string, day: string) =>
      sql`
        UPDATE idempotency_records SET slot_day = ${day}::date
        WHERE claim_token = ${token}::uuid AND state = 'running'`.pipe(
        Effect.orDie,
        Effect.asVoid
      ))

    /** Stores the final response; false when the claim is no longer ours (nothing stored). */
    const complete = Effect.fn("IdempotencyStore.complete")(function*(token: string, response: StoredResponse) {
      yield* Effect.annotateCurrentSpan({ status: response.status })
      const rows = yield* sql`
        UPDATE idempotency_records SET
          state = 'done',
          response_status = ${response.status},
          response_content_type = ${response.contentType},
          response_headers = ${JSON.stringify(response.headers)}::jsonb,
          response_body = ${response.body},
          completed_at = now()
        WHERE claim_token = ${token}::uuid AND state = 'running'
        RETURNING 1 AS ok`.pipe(Effect.orDie)
      return rows.length > 0
    })

    /** Frees the key at once for a retry (the attempt failed without a final answer); false when no longer ours. */
    const release = Effect.fn("IdempotencyStore.release")((token: string) =>
      sql`
        DELETE FROM idempotency_records WHERE claim_token = ${token}::uuid AND state = 'running'
        RETURNING 1 AS ok`.pipe(
        Effect.orDie,
        Effect.map((rows) => ({ released: rows.length > 0 }))
      ))

    /** Deletes records whose window has passed (for a cleanup job); returns how many. */
    const purgeExpired = Effect.fn("IdempotencyStore.purgeExpired")(() =>
      sql<{ n: number }>`
        WITH gone AS (DELETE FROM idempotency_records WHERE expires_at <= now() RETURNING 1)
        SELECT count(*)::int AS n FROM gone`.pipe(
        Effect.orDie,
        Effect.map((rows) => rows[0]?.n ?? 0)
      ))

    return { leaseSeconds, claim, renew, holdSlot, complete, release, purgeExpired } as const
  })
}) {}
