/**
 * Publishable keys (migration 0013, rules in src/partner/auth/publishableKey.ts): made, listed and revoked
 * by the CLI; resolved on every catalogue request made with query `key`. SQL: PublishableKeysRepo.
 */
import { Effect, Either, Option } from "effect"
import { Unauthorized } from "../../domain/errors.js"
import { AdminError } from "../../operators/Operators.js"
import { generatePublishableKey, normalizeOrigin, parsePublishableKey } from "./publishableKey.js"
import { PublishableKeysRepo } from "./PublishableKeysRepo.js"

export type { PublishableKeyListing } from "./PublishableKeysRepo.js"

/** A publishable key as a request uses it. */
export interface PublishableKey {
  readonly id: string
  readonly siteId: string
  readonly allowedOrigins: ReadonlyArray<string>
}

export class PublishableKeys extends Effect.Service<PublishableKeys>()("Partner/PublishableKeys", {
  effect: Effect.gen(function*() {
    const repo = yield* PublishableKeysRepo

    /** A key for the site; the creator must be owner or admin of the site's operator. */
    const create = Effect.fn("PublishableKeys.create")(function*(
      k: {
        readonly siteId: string
        readonly createdBy: string
        readonly name: string
        readonly origins: ReadonlyArray<string>
      }
    ) {
      if (k.origins.length === 0) {
        return yield* new AdminError({ message: "give at least one allowed origin (--origin)" })
      }
      const origins: Array<string> = []
      for (const o of k.origins) {
        const normalized = normalizeOrigin(o)
        if (Either.isLeft(normalized)) return yield* new AdminError({ message: normalized.left })
        if (!origins.includes(normalized.right)) origins.push(normalized.right)
      }
      const site = yield* repo.creatorAllowed({ siteId: k.siteId, userId: k.createdBy })
      if (Option.isNone(site)) return yield* new AdminError({ message: `site ${k.siteId} not found` })
      if (!site.value.allowed) {
        return yield* new AdminError({ message: "the creator is not owner or admin of the site's operator" })
      }
      const generated = generatePublishableKey()
      yield* repo.insert({ id: generated.id, siteId: k.siteId, name: k.name, origins, createdBy: k.createdBy })
      return { id: generated.id, key: generated.token, allowedOrigins: origins as ReadonlyArray<string> }
    })

    const list = Effect.fn("PublishableKeys.list")((filter: { readonly siteId?: string | undefined } = {}) =>
      repo.list(filter.siteId)
    )

    const revoke = Effect.fn("PublishableKeys.revoke")(function*(id: string) {
      const revoked = yield* repo.revoke(parsePublishableKey(id) ?? id)
      if (Option.isNone(revoked)) return yield* new AdminError({ message: `publishable key ${id} not found` })
    })

    /** The key behind query `key`; every refusal is a 401 whose detail says which rule failed. */
    const authenticate = Effect.fn("PublishableKeys.authenticate")(function*(token: string) {
      const id = parsePublishableKey(token)
      if (id === undefined) {
        return yield* new Unauthorized({
          detail: "the publishable key is malformed (pk_widget_ and 24 letters or digits)"
        })
      }
      const found = yield* repo.findKey(id)
      if (Option.isNone(found)) return yield* new Unauthorized({ detail: "the publishable key is not valid" })
      const row = found.value
      if (row.revoked_at !== null) return yield* new Unauthorized({ detail: "the publishable key has been revoked" })
      return { id: row.id, siteId: row.site_id, allowedOrigins: row.allowed_origins } satisfies PublishableKey
    })

    return { create, list, revoke, authenticate } as const
  }),
  dependencies: [PublishableKeysRepo.Default]
}) {}
