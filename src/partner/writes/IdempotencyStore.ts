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
import type { Statement } from "@effect/sql"
import { Duration, Effect, Option } from "effect"
import { randomUUID } from "node:crypto"
import { AppConfig } from "../../config.js"
import { annotateSpan, spanFn } from "../../observability/spanFn.js"
import type { AuditEntry } from "./AuditRepo.js"
import { DailyLimits, type Slot } from "./DailyLimits.js"
import { IdempotencyStoreRepo } from "./IdempotencyStoreRepo.js"
import { DEFAULT_DAILY_LIMITS, type WriteAction } from "./rules.js"

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
  readonly action: WriteAction
  readonly fingerprint: string
  /** Take today's daily-limit slot with the claim (one statement), for a write that counts before it acts. */
  readonly takeSlot: boolean
}

export type Claim =
  | {
    readonly _tag: "Claimed"
    readonly token: string
    /**
     * The UTC day (YYYY-MM-DD) of the daily-limit slot the claim holds: taken with the claim
     * (`takeSlot`), or reserved today by a dead earlier attempt it took over; null when none.
     */
    readonly slotDay: string | null
    /** With `takeSlot`: the limit was used up (no slot taken); the 429's figures. */
    readonly exhausted: { readonly limit: number; readonly retryAfterSeconds: number } | null
  }
  | { readonly _tag: "Replay"; readonly response: StoredResponse }
  | { readonly _tag: "InProgress" }
  | { readonly _tag: "Mismatch"; readonly action: string }

/** Attempts before giving up on a key whose record keeps changing under us (answered as in progress). */
const CLAIM_ATTEMPTS = 5

export class IdempotencyStore extends Effect.Service<IdempotencyStore>()("Partner/IdempotencyStore", {
  scoped: Effect.gen(function*() {
    const repo = yield* IdempotencyStoreRepo
    const limits = yield* DailyLimits
    const { idempotencyLeaseSeconds: leaseSeconds } = yield* AppConfig

    /** Claims the key (with today's daily-limit slot when `takeSlot`), or says why not. */
    const claim = spanFn("IdempotencyStore.claim")(function*(r: ClaimRequest) {
      yield* annotateSpan({ action: r.action })
      const token = randomUUID()
      const slot = r.takeSlot ? { defaultLimit: DEFAULT_DAILY_LIMITS[r.action] } : undefined
      for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
        const claimed = yield* repo.tryClaim({ ...r, token, leaseSeconds, slot })
        if (claimed.claimed) {
          const exhausted = claimed.slot_tried && claimed.slot_day === null
            ? { limit: claimed.daily_limit, retryAfterSeconds: Math.max(1, claimed.reset_seconds) }
            : null
          return { _tag: "Claimed", token, slotDay: claimed.slot_day, exhausted } satisfies Claim as Claim
        }
        // A concurrent request with the same key won the claim after this statement took a slot: not ours to keep.
        if (claimed.reserved_day !== null) {
          yield* limits.giveBack({ keyId: r.keyId, action: r.action, day: claimed.reserved_day })
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

    /**
     * The claims this process holds while their actions run: one fiber renews all their leases every
     * third of the lease (one statement for all of them), instead of a fiber per request. A claim
     * taken over meanwhile (its renewal finds it no longer ours) is dropped from the set.
     */
    const running = new Set<string>()
    const renewRunning = Effect.suspend(() => {
      if (running.size === 0) return Effect.void
      const tokens = [...running]
      return Effect.map(repo.renewAll(tokens, leaseSeconds), (ours) => {
        const kept = new Set(ours)
        for (const token of tokens) if (!kept.has(token)) running.delete(token)
      })
    }).pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("could not renew the idempotency leases", cause)),
      Effect.withSpan("IdempotencyStore.renewRunning")
    )
    yield* renewRunning.pipe(
      Effect.delay(Duration.millis(leaseSeconds * 1000 / 3)),
      Effect.forever,
      Effect.forkScoped
    )

    /** Keeps the claim's lease renewed while `effect` runs. */
    const whileHolding = (token: string) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.suspend(() => {
        running.add(token)
        return Effect.ensuring(effect, Effect.sync(() => running.delete(token)))
      })

    /** Notes the daily-limit slot the claim holds, so that a retry after a crash reuses it. */
    const holdSlot = spanFn("IdempotencyStore.holdSlot")(function*(token: string, day: string) {
      yield* repo.holdSlot(token, day)
    })

    /**
     * Stores the final response, gives `giveBack` back and appends the audit entry, in one statement
     * that also makes the write's own `change` when it has one (inside the write's transaction);
     * false when the claim is no longer ours (nothing stored, nothing given back; the entry appended
     * only with `auditAnyway`).
     */
    const complete = spanFn("IdempotencyStore.complete")(function*(
      token: string,
      response: StoredResponse,
      then: {
        readonly giveBack: Slot | null
        readonly audit: AuditEntry
        readonly auditAnyway: boolean
        readonly change?: Statement.Fragment | undefined
      }
    ) {
      yield* annotateSpan({ status: response.status })
      return yield* repo.complete({
        token,
        status: response.status,
        contentType: response.contentType,
        headers: JSON.stringify(response.headers),
        body: response.body,
        ...then
      })
    })

    /**
     * Frees the key at once for a retry (the attempt failed without a final answer), gives the slot
     * it held back (unless the claim was taken over: the slot went with it) and appends the audit
     * entry, in one statement; false when the claim was no longer ours.
     */
    const abandon = spanFn("IdempotencyStore.abandon")(function*(
      token: string,
      then: { readonly giveBack: Slot | null; readonly audit: AuditEntry }
    ) {
      yield* annotateSpan({ status: then.audit.status })
      return yield* repo.abandon({ token, ...then })
    })

    /** Deletes records whose window has passed (for a cleanup job); returns how many. */
    const purgeExpired = spanFn("IdempotencyStore.purgeExpired")(function*() {
      return (yield* repo.purgeExpired()).n
    })

    return { claim, whileHolding, holdSlot, complete, abandon, purgeExpired } as const
  }),
  dependencies: [IdempotencyStoreRepo.Default, DailyLimits.Default]
}) {}
