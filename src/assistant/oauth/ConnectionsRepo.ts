/**
 * The SQL of connections (the grant a person gives one MCP client): the backing `api_keys` row
 * (kind `assistant`, an unusable random secret hash) with its operators, and the
 * `assistant_connections` row naming the grant, the person and the client, in one transaction.
 * A database error is a defect here, once (repoEdge).
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { repoEdge } from "../../db/repoEdge.js"

export const ConnectionRow = Schema.Struct({
  id: Schema.String,
  grant_id: Schema.String,
  user_id: Schema.String,
  user_email: Schema.String,
  client_id: Schema.String,
  client_name: Schema.String,
  scopes: Schema.Array(Schema.String),
  operators: Schema.Array(Schema.String),
  created_at: Schema.DateFromSelf,
  revoked_at: Schema.NullOr(Schema.DateFromSelf)
})
export type ConnectionRow = typeof ConnectionRow.Type

export interface NewConnection {
  readonly id: string
  readonly secretHash: Uint8Array
  readonly name: string
  readonly grantId: string
  readonly userId: string
  readonly clientId: string
  readonly clientName: string
  readonly scopes: ReadonlyArray<string>
  readonly operatorIds: ReadonlyArray<string>
  readonly expiresAt: Date
}

export class ConnectionsRepo extends Effect.Service<ConnectionsRepo>()("Assistant/ConnectionsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insert = (c: NewConnection) =>
      Effect.gen(function*() {
        yield* sql`
          INSERT INTO api_keys (id, secret_hash, name, scopes, created_by, expires_at, kind)
          VALUES (${c.id}, ${c.secretHash}, ${c.name}, ${`{${c.scopes.join(",")}}`}::text[], ${c.userId},
            ${c.expiresAt}, 'assistant')`
        for (const operatorId of c.operatorIds) {
          yield* sql`INSERT INTO api_key_operators (key_id, operator_id) VALUES (${c.id}, ${operatorId})`
        }
        yield* sql`
          INSERT INTO assistant_connections (key_id, grant_id, user_id, client_id, client_name)
          VALUES (${c.id}, ${c.grantId}, ${c.userId}, ${c.clientId}, ${c.clientName})`
      }).pipe(sql.withTransaction)

    const select = sql`
      SELECT k.id, c.grant_id, c.user_id, u.email AS user_email, c.client_id, c.client_name, k.scopes,
        coalesce(array_agg(ko.operator_id::text ORDER BY ko.operator_id) FILTER (WHERE ko.operator_id IS NOT NULL),
          '{}') AS operators,
        k.created_at, k.revoked_at
      FROM assistant_connections c
      JOIN api_keys k ON k.id = c.key_id
      JOIN users u ON u.id = c.user_id
      LEFT JOIN api_key_operators ko ON ko.key_id = k.id`

    const byGrant = SqlSchema.findOne({
      Request: Schema.String,
      Result: ConnectionRow,
      execute: (grantId) => sql`${select} WHERE c.grant_id = ${grantId} GROUP BY k.id, c.key_id, u.email`
    })

    const byId = SqlSchema.findOne({
      Request: Schema.String,
      Result: ConnectionRow,
      execute: (id) => sql`${select} WHERE c.key_id = ${id} GROUP BY k.id, c.key_id, u.email`
    })

    /** Every connection (newest first), or a person's. */
    const list = SqlSchema.findAll({
      Request: Schema.UndefinedOr(Schema.String),
      Result: ConnectionRow,
      execute: (email) =>
        sql`${select} ${email === undefined ? sql`` : sql`WHERE u.email = ${email.toLowerCase()}`}
          GROUP BY k.id, c.key_id, u.email ORDER BY k.created_at DESC, k.id`
    })

    /** Marks the connection revoked (once); answers its grant when it was active. */
    const revoke = SqlSchema.findAll({
      Request: Schema.String,
      Result: Schema.Struct({ grant_id: Schema.String }),
      execute: (id) =>
        sql`
          UPDATE api_keys k SET revoked_at = now() FROM assistant_connections c
          WHERE k.id = ${id} AND c.key_id = k.id AND k.kind = 'assistant' AND k.revoked_at IS NULL
          RETURNING c.grant_id`
    })

    const revokeByGrant = (grantId: string) =>
      sql`
        UPDATE api_keys k SET revoked_at = now() FROM assistant_connections c
        WHERE c.grant_id = ${grantId} AND c.key_id = k.id AND k.revoked_at IS NULL`.pipe(Effect.asVoid)

    return repoEdge("ConnectionsRepo", { insert, byGrant, byId, list, revoke, revokeByGrant })
  })
}) {}
