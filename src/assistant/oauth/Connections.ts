/**
 * Connections: the grant a person gives one MCP client on the consent page, backed by an `api_keys`
 * row of kind `assistant` (docs/assistant.md "Signing in"). Created on consent, listed and revoked
 * by the admin CLI, revoked with their grant (a reused refresh token, the revocation endpoint).
 * Revoking one also deletes its grant's codes and tokens. SQL: ConnectionsRepo, OAuthStoreRepo.
 */
import { Effect, Option } from "effect"
import { randomBytes } from "node:crypto"
import { randomKeyParts } from "../../partner/auth/apiKey.js"
import type { Scope } from "../../partner/auth/scopes.js"
import { ConnectionsRepo } from "./ConnectionsRepo.js"
import { OAuthStoreRepo } from "./OAuthStoreRepo.js"

/** A connection does not expire by date; it ends when revoked or when its person no longer manages any picked operator. */
const LIFETIME_MS = 100 * 365 * 24 * 60 * 60 * 1000

export class Connections extends Effect.Service<Connections>()("Assistant/Connections", {
  effect: Effect.gen(function*() {
    const repo = yield* ConnectionsRepo
    const store = yield* OAuthStoreRepo

    const create = Effect.fn("Connections.create")(function*(c: {
      grantId: string
      userId: string
      clientId: string
      clientName: string
      scopes: ReadonlyArray<Scope>
      operatorIds: ReadonlyArray<string>
    }) {
      const id = randomKeyParts().id
      yield* repo.insert({
        id,
        // Random bytes nobody knows: no bearer secret can ever match an assistant row.
        secretHash: randomBytes(32),
        name: `${c.clientName}`.slice(0, 180) + " (assistant)",
        grantId: c.grantId,
        userId: c.userId,
        clientId: c.clientId,
        clientName: c.clientName.slice(0, 200),
        scopes: c.scopes,
        operatorIds: c.operatorIds,
        expiresAt: new Date(Date.now() + LIFETIME_MS)
      })
      return id
    })

    const byGrant = Effect.fn("Connections.byGrant")((grantId: string) => repo.byGrant(grantId))

    const list = Effect.fn("Connections.list")((email?: string) => repo.list(email))

    /** Revokes a connection and its grant's tokens; false when there was no active one by that id. */
    const revoke = Effect.fn("Connections.revoke")(function*(id: string) {
      const rows = yield* repo.revoke(id)
      for (const row of rows) yield* store.revokeByGrantId(row.grant_id)
      return rows.length > 0
    })

    /** The grant was revoked by the authorization server (reuse of a refresh token, revocation). */
    const grantRevoked = Effect.fn("Connections.grantRevoked")((grantId: string) => repo.revokeByGrant(grantId))

    const find = Effect.fn("Connections.find")((id: string) => Effect.map(repo.byId(id), Option.getOrUndefined))

    return { create, byGrant, list, revoke, grantRevoked, find } as const
  }),
  dependencies: [ConnectionsRepo.Default, OAuthStoreRepo.Default]
}) {}
