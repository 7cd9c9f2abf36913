/**
 * The SQL of the MCP bearer (./bearer.ts): one statement per call reads the access token's stored
 * entry (`oauth_store`, by the hash of the token, as the oidc-provider adapter does), the connection
 * of its grant with the person's email, and the connection's key with the operators it acts for right
 * now (KeyAuthRepo's own columns and joins). Revocation, demotion and scopes are thereby read fresh
 * on every call, in one round trip instead of three (bench/README.md, issue 16's MCP reads).
 *
 * A look-up on every MCP request: a plain `sql<Row>` typed row and no span of its own
 * (`repoEdge.untraced`, as KeyAuthRepo); McpAuth.authenticate's span and the driver's cover it.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { repoEdge } from "../../db/repoEdge.js"
import { type KeyRow, keyRowSql } from "../../partner/auth/KeyAuthRepo.js"
import { idHash, type StoredRow } from "../oauth/OAuthStoreRepo.js"

/** The token's entry, its connection (null columns when the grant has none) and the connection's key. */
export interface BearerRow {
  readonly token: StoredRow
  readonly connection: {
    readonly id: string
    readonly userId: string
    readonly userEmail: string
    readonly clientId: string
    readonly clientName: string
  } | null
  readonly key: Option.Option<KeyRow>
}

type Row =
  & { readonly payload: Record<string, unknown>; readonly consumed_at: Date | null }
  & { readonly connection_id: string | null; readonly user_id: string | null; readonly user_email: string | null }
  & { readonly client_id: string | null; readonly client_name: string | null }
  & { readonly [K in keyof KeyRow]: KeyRow[K] | null }

const bearerRow = (row: Row): BearerRow => ({
  token: { payload: row.payload, consumed_at: row.consumed_at },
  connection: row.connection_id === null ? null : {
    id: row.connection_id,
    userId: row.user_id!,
    userEmail: row.user_email!,
    clientId: row.client_id!,
    clientName: row.client_name!
  },
  key: row.id === null ? Option.none() : Option.some(row as KeyRow)
})

export class BearerRepo extends Effect.Service<BearerRepo>()("Assistant/BearerRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { columns, operatorJoins } = keyRowSql(sql)

    /** The access token's entry (unexpired) with its connection and key; none when there is no such token. */
    const byAccessToken = (token: string) =>
      Effect.map(
        sql<Row>`
        SELECT t.payload, t.consumed_at, c.key_id AS connection_id, c.user_id, u.email AS user_email, c.client_id,
          c.client_name, ${columns}
        FROM oauth_store t
        LEFT JOIN assistant_connections c ON c.grant_id = t.grant_id
        LEFT JOIN users u ON u.id = c.user_id
        LEFT JOIN api_keys k ON k.id = c.key_id
        ${operatorJoins}
        WHERE t.model = 'AccessToken' AND t.id_hash = ${idHash(token)}
          AND (t.expires_at IS NULL OR t.expires_at > now())
        GROUP BY t.model, t.id_hash, c.key_id, u.id, k.id`,
        (rows) => Option.map(Option.fromNullable(rows[0]), bearerRow)
      )

    return repoEdge.untraced({ byAccessToken })
  })
}) {}
