/**
 * Publishable keys (migration 0013, rules in src/partner/auth/publishableKey.ts): made, listed and revoked
 * by the CLI; resolved on every catalogue request made with query `key`.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Either } from "effect"
import { Unauthorized } from "../../domain/errors.js"
import { generatePublishableKey, normalizeOrigin, parsePublishableKey, PUBLISHABLE_KEY_PREFIX } from "./publishableKey.js"
import { AdminError } from "../../operators/Operators.js"

/** A publishable key as a request uses it. */
export interface PublishableKey {
  readonly id: string
  readonly siteId: string
  readonly allowedOrigins: ReadonlyArray<string>
}

export interface PublishableKeyListing {
  readonly id: string
  readonly key: string
  readonly name: string
  readonly site: string
  readonly allowed_origins: ReadonlyArray<string>
  readonly created_by: string
  readonly created_at: Date
  readonly revoked_at: Date | null
}

export class PublishableKeys extends Effect.Service<PublishableKeys>()("Partner/PublishableKeys", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** A key for the site; the creator must be owner or admin of the site's operator. */
    const create = Effect.fn("PublishableKeys.create")(function*(
      k: { readonly siteId: string; readonly createdBy: string; readonly name: string; readonly origins: ReadonlyArray<string> }
    ) {
      if (k.origins.length === 0) return yield* new AdminError({ message: "give at least one allowed origin (--origin)" })
      const origins: Array<string> = []
      for (const o of k.origins) {
        const normalized = normalizeOrigin(o)
        if (Either.isLeft(normalized)) return yield* new AdminError({ message: normalized.left })
        if (!origins.includes(normalized.right)) origins.push(normalized.right)
      }
      const [site] = yield* sql<{ allowed: boolean }>`
        SELECT EXISTS (
          SELECT 1 FROM memberships m WHERE m.operator_id = s.owner_operator_id AND m.user_id = ${k.createdBy}
            AND m.role IN ('owner', 'admin')) AS allowed
        FROM sites s WHERE s.id = ${k.siteId}::uuid`.pipe(Effect.orDie)
      if (site === undefined) return yield* new AdminError({ message: `site ${k.siteId} not found` })
      if (!site.allowed) return yield* new AdminError({ message: "the creator is not owner or admin of the site's operator" })
      const generated = generatePublishableKey()
      yield* sql`
        INSERT INTO publishable_keys (id, site_id, name, allowed_origins, created_by)
        VALUES (${generated.id}, ${k.siteId}::uuid, ${k.name}, ${origins}::text[], ${k.createdBy})`.pipe(Effect.orDie)
      return { id: generated.id, key: generated.token, allowedOrigins: origins as ReadonlyArray<string> }
    })

    const list = Effect.fn("PublishableKeys.list")((filter: { readonly siteId?: string | undefined } = {}) =>
      sql<PublishableKeyListing>`
        SELECT ${PUBLISHABLE_KEY_PREFIX} || k.id AS key, k.id, k.name, s.domain AS site, k.allowed_origins,
          u.email AS created_by, k.created_at, k.revoked_at
        FROM publishable_keys k JOIN sites s ON s.id = k.site_id JOIN users u ON u.id = k.created_by
        ${filter.siteId ? sql`WHERE k.site_id = ${filter.siteId}::uuid` : sql``}
        ORDER BY k.created_at DESC, k.id`.pipe(Effect.orDie))

    const revoke = Effect.fn("PublishableKeys.revoke")((id: string) =>
      sql<{ id: string }>`
        UPDATE publishable_keys SET revoked_at = coalesce(revoked_at, now())
        WHERE id = ${parsePublishableKey(id) ?? id} RETURNING id`.pipe(
        Effect.orDie,
        Effect.flatMap((rows) => rows.length === 0 ? Effect.fail(new AdminError({ message: `publishable key ${id} not found` })) : Effect.void)
      ))

    /** The key behind query `key`; every refusal is a 401 whose detail says which rule failed. */
    const authenticate = Effect.fn("PublishableKeys.authenticate")(function*(token: string) {
      const id = parsePublishableKey(token)
      if (id === undefined) return yield* new Unauthorized({ detail: "the publishable key is malformed (pk_widget_ and 24 letters or digits)" })
      const [row] = yield* sql<{ id: string; site_id: string; allowed_origins: Array<string>; revoked_at: Date | null }>`
        SELECT id, site_id, allowed_origins, revoked_at FROM publishable_keys WHERE id = ${id}`.pipe(Effect.orDie)
      if (row === undefined) return yield* new Unauthorized({ detail: "the publishable key is not valid" })
      if (row.revoked_at !== null) return yield* new Unauthorized({ detail: "the publishable key has been revoked" })
      return { id: row.id, siteId: row.site_id, allowedOrigins: row.allowed_origins } satisfies PublishableKey
    })

    return { create, list, revoke, authenticate } as const
  })
}) {}
