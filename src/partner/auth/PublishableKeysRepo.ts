/**
 * The SQL of publishable keys (PublishableKeys; `publishable_keys`, migration 0013), typed with
 * SqlSchema and the row schemas below; a database error or a row that does not decode is a defect
 * here, once.
 *
 * The key look-up runs on every catalogue request made with query `key`, cached answers included
 * (`npm run bench:tours`, bench/README.md "Issue 5"): it is decoded (one small row) but has no span
 * of its own (`repoEdge.untraced`: PublishableKeys.authenticate's and the driver's cover it).
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { repoEdge } from "../../db/repoEdge.js"
import { PUBLISHABLE_KEY_PREFIX } from "./publishableKey.js"

export const PublishableKeyListing = Schema.Struct({
  id: Schema.String,
  key: Schema.String,
  name: Schema.String,
  site: Schema.String,
  allowed_origins: Schema.Array(Schema.String),
  created_by: Schema.String,
  created_at: Schema.DateFromSelf,
  revoked_at: Schema.NullOr(Schema.DateFromSelf)
})
export type PublishableKeyListing = typeof PublishableKeyListing.Type

const KeyRow = Schema.Struct({
  id: Schema.String,
  site_id: Schema.String,
  allowed_origins: Schema.Array(Schema.String),
  revoked_at: Schema.NullOr(Schema.DateFromSelf)
})

export class PublishableKeysRepo extends Effect.Service<PublishableKeysRepo>()("Partner/PublishableKeysRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Whether the user is owner or admin of the site's operator; None when there is no such site. */
    const creatorAllowed = SqlSchema.findOne({
      Request: Schema.Struct({ siteId: Schema.String, userId: Schema.String }),
      Result: Schema.Struct({ allowed: Schema.Boolean }),
      execute: ({ siteId, userId }) =>
        sql`
            SELECT EXISTS (
              SELECT 1 FROM memberships m WHERE m.operator_id = s.owner_operator_id AND m.user_id = ${userId}
                AND m.role IN ('owner', 'admin')) AS allowed
            FROM sites s WHERE s.id = ${siteId}::uuid`
    })

    const insert = SqlSchema.void({
      Request: Schema.Struct({
        id: Schema.String,
        siteId: Schema.String,
        name: Schema.String,
        origins: Schema.Array(Schema.String),
        createdBy: Schema.String
      }),
      execute: (k) =>
        sql`
            INSERT INTO publishable_keys (id, site_id, name, allowed_origins, created_by)
            VALUES (${k.id}, ${k.siteId}::uuid, ${k.name}, ${k.origins}::text[], ${k.createdBy})`
    })

    /** Every key, or a site's, newest first. */
    const list = SqlSchema.findAll({
      Request: Schema.UndefinedOr(Schema.String),
      Result: PublishableKeyListing,
      execute: (siteId) =>
        sql`
            SELECT ${PUBLISHABLE_KEY_PREFIX} || k.id AS key, k.id, k.name, s.domain AS site, k.allowed_origins,
              u.email AS created_by, k.created_at, k.revoked_at
            FROM publishable_keys k JOIN sites s ON s.id = k.site_id JOIN users u ON u.id = k.created_by
            ${siteId ? sql`WHERE k.site_id = ${siteId}::uuid` : sql``}
            ORDER BY k.created_at DESC, k.id`
    })

    /** Revokes a key (once: the first time stays); None when there is no such key. */
    const revoke = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ id: Schema.String }),
      execute: (id) =>
        sql`UPDATE publishable_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = ${id} RETURNING id`
    })

    const selectKey = SqlSchema.findOne({
      Request: Schema.String,
      Result: KeyRow,
      execute: (id) => sql`SELECT id, site_id, allowed_origins, revoked_at FROM publishable_keys WHERE id = ${id}`
    })

    return {
      ...repoEdge("PublishableKeysRepo", { creatorAllowed, insert, list, revoke }),
      ...repoEdge.untraced({
        /** The key behind query `key` (a per-request look-up: see above). */
        findKey: (id: string) => selectKey(id)
      })
    }
  })
}) {}
