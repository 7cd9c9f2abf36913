/**
 * The SQL of what oidc-provider keeps (`oauth_store`, migration 0034), keyed by the SHA-256 of each
 * id so that no token, code or session id is stored in the clear; and the authorization server's
 * shared secrets (`service_secrets`: the cookie keys and the signing key, created once). A database
 * error is a defect here, once (repoEdge).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { createHash } from "node:crypto"
import { repoEdge, theRow } from "../../db/repoEdge.js"

export const idHash = (id: string): Buffer => createHash("sha256").update(id).digest()

export interface StoredRow {
  readonly payload: Record<string, unknown>
  readonly consumed_at: Date | null
}

export class OAuthStoreRepo extends Effect.Service<OAuthStoreRepo>()("Assistant/OAuthStoreRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const upsert = (row: {
      model: string
      id: string
      payload: Record<string, unknown>
      grantId: string | null
      uid: string | null
      userCode: string | null
      expiresAt: Date | null
    }) =>
      sql`
        INSERT INTO oauth_store (model, id_hash, payload, grant_id, uid_hash, user_code_hash, expires_at)
        VALUES (${row.model}, ${idHash(row.id)}, ${JSON.stringify(row.payload)}::jsonb, ${row.grantId},
          ${row.uid === null ? null : idHash(row.uid)}, ${row.userCode === null ? null : idHash(row.userCode)},
          ${row.expiresAt})
        ON CONFLICT (model, id_hash) DO UPDATE SET payload = excluded.payload, grant_id = excluded.grant_id,
          uid_hash = excluded.uid_hash, user_code_hash = excluded.user_code_hash, expires_at = excluded.expires_at`
        .pipe(Effect.asVoid)

    const first = (rows: ReadonlyArray<StoredRow>) => Option.fromNullable(rows[0])

    const find = (model: string, id: string) =>
      Effect.map(
        sql<StoredRow>`
          SELECT payload, consumed_at FROM oauth_store
          WHERE model = ${model} AND id_hash = ${idHash(id)} AND (expires_at IS NULL OR expires_at > now())`,
        first
      )

    const findByUid = (model: string, uid: string) =>
      Effect.map(
        sql<StoredRow>`
          SELECT payload, consumed_at FROM oauth_store
          WHERE model = ${model} AND uid_hash = ${idHash(uid)} AND (expires_at IS NULL OR expires_at > now())`,
        first
      )

    const findByUserCode = (model: string, userCode: string) =>
      Effect.map(
        sql<StoredRow>`
          SELECT payload, consumed_at FROM oauth_store
          WHERE model = ${model} AND user_code_hash = ${idHash(userCode)}
            AND (expires_at IS NULL OR expires_at > now())`,
        first
      )

    const consume = (model: string, id: string) =>
      sql`UPDATE oauth_store SET consumed_at = now() WHERE model = ${model} AND id_hash = ${idHash(id)}`.pipe(
        Effect.asVoid
      )

    const destroy = (model: string, id: string) =>
      sql`DELETE FROM oauth_store WHERE model = ${model} AND id_hash = ${idHash(id)}`.pipe(Effect.asVoid)

    /** Every code and token of a grant (and the grant itself): a revoked connection or a reused refresh token. */
    const revokeByGrantId = (grantId: string) =>
      sql`DELETE FROM oauth_store WHERE grant_id = ${grantId} OR (model = 'Grant' AND id_hash = ${idHash(grantId)})`
        .pipe(Effect.asVoid)

    /** Entries a day past their expiry (kept out of every read already); how many. */
    const deleteExpired = Effect.map(
      sql<{ n: number }>`
        WITH gone AS (DELETE FROM oauth_store WHERE expires_at < now() - interval '1 day' RETURNING 1)
        SELECT count(*)::int AS n FROM gone`,
      (rows) => rows[0]?.n ?? 0
    )

    /**
     * A shared secret by name, created (random, `size` bytes, or `make()`) by the first instance that
     * asks: every instance signs cookies and tokens with the same keys.
     */
    const sharedSecret = (name: string, make: () => Uint8Array) =>
      Effect.gen(function*() {
        yield* sql`INSERT INTO service_secrets (name, value) VALUES (${name}, ${make()}) ON CONFLICT (name) DO NOTHING`
        const row = yield* Effect.flatMap(
          sql<{ value: Uint8Array }>`SELECT value FROM service_secrets WHERE name = ${name}`,
          theRow
        )
        return row.value
      })

    return repoEdge("OAuthStoreRepo", {
      upsert,
      find,
      findByUid,
      findByUserCode,
      consume,
      destroy,
      revokeByGrantId,
      deleteExpired: () => deleteExpired,
      sharedSecret
    })
  })
}) {}
