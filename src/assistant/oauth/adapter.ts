/**
 * oidc-provider's storage adapter over PostgreSQL (OAuthStoreRepo): each model's entries keyed by
 * the hash of their id. The id itself (`jti`) is left out of the stored payload and put back from
 * the id asked for; an entry found by another key (a session by its uid) comes back without it,
 * which the provider only reads (to check who is signed in).
 *
 * An access token already read with its connection and key (src/assistant/mcp/BearerRepo.ts: one
 * statement per MCP call) is handed to `AccessToken.find` through `withReadAccessToken`, so that the
 * provider's own checks run on that row without reading it a second time.
 */
import { Effect, Option, Runtime } from "effect"
import { AsyncLocalStorage } from "node:async_hooks"
import type { Adapter, AdapterPayload } from "oidc-provider"
import { OAuthStoreRepo, type StoredRow } from "./OAuthStoreRepo.js"

const readAccessToken = new AsyncLocalStorage<{ readonly id: string; readonly row: Option.Option<StoredRow> }>()

/** Runs `find` (a call of `provider.AccessToken.find(id)`) with the entry of the access token `id` as already read. */
export const withReadAccessToken = <A>(id: string, row: Option.Option<StoredRow>, find: () => Promise<A>) =>
  readAccessToken.run({ id, row }, find)

/** Builds the adapter factory oidc-provider takes (`adapter: (model) => Adapter`). */
export const makeAdapter = Effect.gen(function*() {
  const repo = yield* OAuthStoreRepo
  const runtime = yield* Effect.runtime<never>()
  const run = <A>(effect: Effect.Effect<A>) => Runtime.runPromise(runtime)(effect)

  const restore = (row: Option.Option<StoredRow>, jti?: string): AdapterPayload | undefined => {
    if (Option.isNone(row)) return undefined
    const payload = { ...row.value.payload } as AdapterPayload
    if (jti !== undefined) payload.jti = jti
    if (row.value.consumed_at !== null) payload.consumed = Math.floor(row.value.consumed_at.getTime() / 1000)
    return payload
  }

  return (model: string): Adapter => ({
    upsert: (id, payload, expiresIn) => {
      const { jti: _jti, ...stored } = payload
      return run(repo.upsert({
        model,
        id,
        payload: stored,
        grantId: typeof payload.grantId === "string" ? payload.grantId : null,
        uid: model === "Session" && typeof payload.uid === "string" ? payload.uid : null,
        userCode: typeof payload.userCode === "string" ? payload.userCode : null,
        expiresAt: typeof expiresIn === "number" ? new Date(Date.now() + expiresIn * 1000) : null
      }))
    },
    find: (id) => {
      const read = model === "AccessToken" ? readAccessToken.getStore() : undefined
      if (read !== undefined && read.id === id) return Promise.resolve(restore(read.row, id))
      return run(Effect.map(repo.find(model, id), (row) => restore(row, id)))
    },
    findByUid: (uid) => run(Effect.map(repo.findByUid(model, uid), (row) => restore(row))),
    findByUserCode: (userCode) => run(Effect.map(repo.findByUserCode(model, userCode), (row) => restore(row))),
    consume: (id) => run(repo.consume(model, id)),
    destroy: (id) => run(repo.destroy(model, id)),
    revokeByGrantId: (grantId) => run(repo.revokeByGrantId(grantId))
  })
})
