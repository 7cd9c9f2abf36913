/**
 * Resolves a bearer token to the key and the operators it acts for right now: those picked for
 * the key where its creator is still owner or admin. Every refusal is the same 401 to the
 * client; the detail says which rule failed. SQL: KeyAuthRepo.
 */
import { Clock, Effect, Option } from "effect"
import { Unauthorized } from "../../domain/errors.js"
import { spanFn } from "../../observability/spanFn.js"
import { parseSecretKey, secretMatches } from "./apiKey.js"
import { KeyAuthRepo, type KeyRow } from "./KeyAuthRepo.js"
import type { Scope } from "./scopes.js"

export interface Partner {
  readonly id: string
  readonly name: string
}

export interface AuthenticatedKey {
  readonly id: string
  readonly name: string
  readonly scopes: ReadonlyArray<Scope>
  readonly createdAt: Date
  readonly expiresAt: Date
  /** Operators the key acts for, sorted by name then id; never empty. */
  readonly partners: ReadonlyArray<Partner>
}

const unauthorized = (detail: string) => new Unauthorized({ detail })

/** A found key as it acts right now, or the 401 saying which rule failed. */
const usable = (row: KeyRow) =>
  Effect.gen(function*() {
    if (row.revoked_at !== null) return yield* unauthorized("the key has been revoked")
    const now = yield* Clock.currentTimeMillis
    if (row.expires_at.getTime() <= now) return yield* unauthorized("the key has expired")
    if (row.partners.length === 0) {
      return yield* unauthorized("the key's creator is no longer owner or admin of any operator on the key")
    }
    return {
      id: row.id,
      name: row.name,
      scopes: row.scopes,
      createdAt: row.created_at,
      expiresAt: row.expires_at,
      partners: row.partners
    } satisfies AuthenticatedKey
  })

/**
 * The key behind an MCP connection as it acts right now, from its row (read by `findKey`, or with the
 * access token in one statement: src/assistant/mcp/BearerRepo.ts): an assistant key, and the rules of
 * `usable` (revoked, expired, no operator left where its person is owner/admin), else the 401.
 */
export const connectionKey = (found: Option.Option<KeyRow>) =>
  Option.isNone(found) || found.value.kind !== "assistant"
    ? Effect.fail(unauthorized("the connection is not valid"))
    : usable(found.value)

export class KeyAuth extends Effect.Service<KeyAuth>()("Partner/KeyAuth", {
  effect: Effect.gen(function*() {
    const repo = yield* KeyAuthRepo

    const authenticate = spanFn("KeyAuth.authenticate")(function*(token: string) {
      if (token === "") return yield* unauthorized("send the key as `Authorization: Bearer svc_live_...`")
      if (token.startsWith("svcqb_")) {
        return yield* unauthorized("a quickbook key (svcqb_...) works only on the Quickbook API (/api/quickbook/v1)")
      }
      const parts = parseSecretKey(token)
      if (!parts) return yield* unauthorized("the key is malformed")
      const found = yield* repo.findKey(parts.id)
      if (Option.isNone(found)) return yield* unauthorized("the key is not valid")
      const row = found.value
      // An assistant connection's row has no usable secret; refused here whatever was sent.
      if (row.kind !== "secret" || !secretMatches(parts.secret, row.secret_hash)) {
        return yield* unauthorized("the key is not valid")
      }
      return yield* usable(row)
    })

    /**
     * The key behind an MCP connection (src/assistant/mcp/), once its access token was verified: the
     * same rules as a secret key (revoked, expired, no operator left where its person is owner/admin).
     */
    const authenticateConnection = Effect.fn("KeyAuth.authenticateConnection")(function*(connectionId: string) {
      return yield* connectionKey(yield* repo.findKey(connectionId))
    })

    return { authenticate, authenticateConnection } as const
  }),
  dependencies: [KeyAuthRepo.Default]
}) {}
