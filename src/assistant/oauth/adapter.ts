/**
 * oidc-provider's storage adapter over PostgreSQL (OAuthStoreRepo): each model's entries keyed by
 * the hash of their id. The id itself (`jti`) is left out of the stored payload and put back from
 * the id asked for; an entry found by another key (a session by its uid) comes back without it,
 * which the provider only reads (to check who is signed in).
 */
import { Effect, Option, Runtime } from "effect"
import type { Adapter, AdapterPayload } from "oidc-provider"
import { OAuthStoreRepo, type StoredRow } from "./OAuthStoreRepo.js"

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
    find: (id) => run(Effect.map(repo.find(model, id), (row) => restore(row, id))),
    findByUid: (uid) => run(Effect.map(repo.findByUid(model, uid), (row) => restore(row))),
    findByUserCode: (userCode) => run(Effect.map(repo.findByUserCode(model, userCode), (row) => restore(row))),
    consume: (id) => run(repo.consume(model, id)),
    destroy: (id) => run(repo.destroy(model, id)),
    revokeByGrantId: (grantId) => run(repo.revokeByGrantId(grantId))
  })
})
