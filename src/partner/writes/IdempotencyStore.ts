/**
 * Idempotency records in PostgreSQL, one per (API key, Idempotency-Key), shared by every instance.
 *
 * A request claims its key with one atomic upsert (no read-then-write race): it gets the claim when
 * the key is new, when the record's 24-hour window has passed, or when an earlier attempt at the
 * same request died holding it (its lease lapsed). Otherwise it learns what the record holds: a
 * finished response to replay, a different request (mismatch), or a request still running.
 *
 * Every later change is fenced on the claim token, so an attempt that lost its claim can never
 * overwrite the outcome of the one that took over. SQL: IdempotencyStoreRepo.
 */
import { Effect, Option } from "effect"
import { randomUUID } from "node:crypto"
import { AppConfig } from "../../config.js"
import { IdempotencyStoreRepo } from "./IdempotencyStoreRepo.js"

/** A response as replayed: status, content type, the headers worth repeating, exact body text. */
export interface StoredResponse {
  readonly status: number
  readonly contentType: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

export interface ClaimRequest {
  readonly keyId: string
  readonly idempotencyKey: string
  readonly action: string
  readonly fingerprint: string
}

export type Claim =
  | {
    readonly _tag: "Claimed"
    readonly token: string
    /** The UTC day (YYYY-MM-DD) whose daily-limit slot a dead earlier attempt already reserved, if today. */
    readonly slotDay: string | null
  }
  | { readonly _tag: "Replay"; readonly response: StoredResponse }
  | { readonly _tag: "InProgress" }
  | { readonly _tag: "Mismatch"; readonly action: string }

/** Attempts before giving up on a key whose record keeps changing under us (answered as in progress). */
const CLAIM_ATTEMPTS = 5

export class IdempotencyStore extends Effect.Service<IdempotencyStore>()("Partner/IdempotencyStore", {
  effect: Effect.gen(function*() {
    const repo = yield* IdempotencyStoreRepo
    const { idempotencyLeaseSeconds: leaseSeconds } = yield* AppConfig

    /** Claims the key, or says why not. */
    const claim = Effect.fn("IdempotencyStore.claim")(function*(r: ClaimRequest) {
      yield* Effect.annotateCurrentSpan({ action: r.action })
      const token = randomUUID()
      for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
        const claimed = yield* repo.tryClaim({ ...r, token, leaseSeconds })
        if (Option.isSome(claimed)) {
          return { _tag: "Claimed", token, slotDay: claimed.value.slot_day } satisfies Claim as Claim
        }
        const found = yield* repo.existing(r)
        // Gone (released) or lapsed since the upsert looked: try again.
        if (Option.isNone(found) || !found.value.current) continue
        const row = found.value
        if (row.fingerprint !== r.fingerprint) return { _tag: "Mismatch", action: row.action } satisfies Claim as Claim
        if (row.state === "done") {
          return {
            _tag: "Replay",
            response: {
              status: row.response_status!,
              contentType: row.response_content_type ?? "application/json",
              headers: row.response_headers ?? {},
              body: row.response_body!
            }
          } satisfies Claim as Claim
        }
        if (row.live) return { _tag: "InProgress" } satisfies Claim as Claim
      }
      return { _tag: "InProgress" } satisfies Claim as Claim
    })

    /** Extends the lease of a running claim; false when the claim is no longer ours. */
    const renew = Effect.fn("IdempotencyStore.renew")((token: string) => repo.renew(token, leaseSeconds))

    /** Notes the daily-limit slot the claim holds, so that a retry after a crash reuses it. */
    const holdSlot = Effect.fn("IdempotencyStore.holdSlot")((token: string, day: string) => repo.holdSlot(token, day))

    /** Stores the final response; false when the claim is no longer ours (nothing stored). */
    const complete = Effect.fn("IdempotencyStore.complete")(function*(token: string, response: StoredResponse) {
      yield* Effect.annotateCurrentSpan({ status: response.status })
      return yield* repo.complete({
        token,
        status: response.status,
        contentType: response.contentType,
        headers: JSON.stringify(response.headers),
        body: response.body
      })
    })

    /** Frees the key at once for a retry (the attempt failed without a final answer); false when no longer ours. */
    const release = Effect.fn("IdempotencyStore.release")((token: string) =>
      Effect.map(repo.release(token), (released) => ({ released }))
    )

    /** Deletes records whose window has passed (for a cleanup job); returns how many. */
    const purgeExpired = Effect.fn("IdempotencyStore.purgeExpired")(() =>
      Effect.map(repo.purgeExpired(), (row) => row.n)
    )

    return { leaseSeconds, claim, renew, holdSlot, complete, release, purgeExpired } as const
  }),
  dependencies: [IdempotencyStoreRepo.Default]
}) {}
