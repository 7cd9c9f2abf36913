/**
 * The SQL of secret-key authentication (KeyAuth): a key with the operators it acts for right now,
 * those picked for the key where its creator is still owner or admin. A database error is a defect
 * here, once.
 *
 * A look-up on every Partner API request (each scenario of `npm run bench` passes it, bench/README.md
 * "Issue 2"): a plain `sql<Row>` typed row and no span of its own (`repoEdge.untraced`:
 * KeyAuth.authenticate's and the driver's cover it).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { repoEdge } from "../../db/repoEdge.js"
import type { Scope } from "./scopes.js"

export interface KeyRow {
  readonly id: string
  readonly name: string
  readonly scopes: Array<Scope>
  readonly created_at: Date
  readonly expires_at: Date
  readonly revoked_at: Date | null
  readonly secret_hash: Uint8Array
  /** `secret` (a partner key) or `assistant` (an MCP connection: no usable secret). */
  readonly kind: "secret" | "assistant"
  /** Sorted by name, then id. */
  readonly partners: Array<{ readonly id: string; readonly name: string }>
}

/**
 * A key row's columns (KeyRow, over `api_keys k`) and the joins that give the operators it acts for
 * right now; a statement using them groups by `k.id`. Shared with the MCP bearer's look-up
 * (src/assistant/mcp/BearerRepo.ts), which reads the connection's key in the same statement as its token.
 */
export const keyRowSql = (sql: SqlClient.SqlClient) => ({
  columns: sql`k.id, k.name, k.scopes, k.created_at, k.expires_at, k.revoked_at, k.secret_hash, k.kind,
          coalesce(
            json_agg(json_build_object('id', o.id, 'name', o.name) ORDER BY o.name, o.id)
              FILTER (WHERE o.id IS NOT NULL),
            '[]'
          ) AS partners`,
  operatorJoins: sql`LEFT JOIN api_key_operators ko ON ko.key_id = k.id
        LEFT JOIN memberships m
          ON m.operator_id = ko.operator_id AND m.user_id = k.created_by AND m.role IN ('owner', 'admin')
        LEFT JOIN operators o ON o.id = m.operator_id`
})

export class KeyAuthRepo extends Effect.Service<KeyAuthRepo>()("Partner/KeyAuthRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { columns, operatorJoins } = keyRowSql(sql)

    const findKey = (id: string) =>
      Effect.map(
        sql<KeyRow>`
        SELECT ${columns}
        FROM api_keys k
        ${operatorJoins}
        WHERE k.id = ${id}
        GROUP BY k.id`,
        (rows) => Option.fromNullable(rows[0])
      )

    return repoEdge.untraced({ findKey })
  })
}) {}
