/**
 * The one wrapper every Partner API write runs through (spec §8): `Idempotency-Key`, the daily
 * write limit and the audit log, in this order:
 *
 * 1. The header (missing or malformed: 400, naming `Idempotency-Key`).
 * 2. The claim on (API key, Idempotency-Key): a finished identical request is replayed with
 *    `Idempotent-Replayed: true`; a different request answers 422; one still running answers 409.
 * 3. A slot of today's daily limit, reserved atomically (429 with `Retry-After` to the next UTC
 *    midnight when none is left); with `slotBeforeChange`, when the action is about to change
 *    something (so a no-op is answered whatever the limit).
 * 4. The action. A result or a refusal (4xx) is stored as the key's final answer; a no-op or a
 *    refusal gives the slot back. A 5xx, a crash or an interruption frees the key at once and
 *    gives the slot back, so the client retries with the same key. A process that dies holding a
 *    claim leaves a lease that lapses (renewed while the action runs).
 * 5. One audit entry per attempt, whatever happened (with the assistant's client and person when the
 *    write comes through the MCP server: `AssistantConnection` in context).
 *
 * With `transactional: true` (database-only writes such as check-in) the action's changes, the
 * stored answer, the slot give-back and the audit entry commit in one transaction.
 */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { SqlClient, SqlError } from "@effect/sql"
import { Cause, Data, Effect, Either, Exit, FiberRef, Option, Ref, type Schema } from "effect"
import { AssistantConnection } from "../../assistant/connection.js"
import {
  type DailyLimitReached,
  IdempotencyInProgress,
  IdempotencyMismatch,
  InvalidRequest
} from "../../domain/errors.js"
import { CurrentRequest } from "../../http/requestContext.js"
import { annotateSpan, spanFn } from "../../observability/spanFn.js"
import { CurrentKey } from "../auth/security.js"
import { INTERNAL, PROBLEM_CONTENT_TYPE, problemFor, problemResponse } from "../problem.js"
import { Audit } from "./Audit.js"
import type { AuditAssistant, AuditEntry } from "./AuditRepo.js"
import { DailyLimits, limitReached, type Slot } from "./DailyLimits.js"
import { IdempotencyStore, type StoredResponse } from "./IdempotencyStore.js"
import {
  type AuditOutcome,
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENT_REPLAYED_HEADER,
  parseIdempotencyKey,
  requestFingerprint,
  type WriteAction,
  type WriteContext,
  type WriteDone
} from "./rules.js"

export interface WriteSpec<A, I> {
  /**
   * The endpoint's success schema (its `Api.ts`): the action's result must be of its type. The result
   * is stored and answered as its JSON text (so a replay is the same bytes), not encoded again.
   */
  readonly success: Schema.Schema<A, I>
  /** The daily limit it counts against; also the audit action. */
  readonly action: WriteAction
  /** The id the write acts on (path `id`). */
  readonly targetId: string
  /** The decoded body: with method and path it makes "the same request". */
  readonly payload: unknown
  /** Database-only write: its changes and the stored answer commit together. */
  readonly transactional?: boolean
  /**
   * The daily-limit slot is taken when the action calls `ctx.beforeChange` (right before its first
   * side effect) instead of before the action runs, so that a no-op (`already_cancelled`,
   * `already_on_date`) is answered even when the limit is used up. The action must call it.
   */
  readonly slotBeforeChange?: boolean
}

/** The claim was taken over while the action ran (its lease lapsed): our outcome must not be kept. */
class ClaimLost extends Data.TaggedError("ClaimLost") {}

/** A refusal: the stored answer, and the problem type slug and detail the audit records. */
interface Refusal {
  readonly stored: StoredResponse
  readonly slug: string
  readonly detail: string
}

const pathOf = (url: string) => url.split("?")[0]!

/** Whether an answer is the key's final answer (kept and replayed) or leaves the key free to retry. */
export const isFinalStatus = (status: number) => status < 500 && status !== 409 && status !== 429
const isFinal = isFinalStatus

const asResponse = (stored: StoredResponse, replayed: boolean) =>
  HttpServerResponse.text(stored.body, {
    status: stored.status,
    contentType: stored.contentType,
    headers: replayed ? { ...stored.headers, [IDEMPOTENT_REPLAYED_HEADER]: "true" } : stored.headers
  })

/** How an attempt is named and shown: the REST request, or the assistant's confirmed call. */
export interface WriteCall {
  readonly idempotencyKey: string
  /** "The same request" (rules.ts `requestFingerprint`). */
  readonly fingerprint: string
  readonly requestId: string
  /** Where a refusal's problem says it happened. */
  readonly method: string
  readonly url: string
}

/** The audit's assistant columns, when the write comes through the MCP server. */
const assistantOf = Effect.map(Effect.serviceOption(AssistantConnection), (connection) =>
  Option.match(connection, {
    onNone: () => undefined,
    onSome: (c): AuditAssistant => ({
      clientId: c.clientId,
      clientName: c.clientName,
      personId: c.userId,
      personEmail: c.userEmail
    })
  }))

/** A refusal as the client sees it (kept as the key's answer) and as the audit records it. */
const renderFor = (call: Pick<WriteCall, "requestId" | "method" | "url">) => (error: unknown): Refusal | undefined => {
  const problem = problemFor(error, call.requestId, call.method, call.url)
  if (problem === undefined) return undefined
  return {
    stored: {
      status: problem.type.status,
      contentType: PROBLEM_CONTENT_TYPE,
      headers: { ...problemResponse(problem).headers },
      body: JSON.stringify(problem.body)
    },
    slug: problem.type.slug,
    detail: problem.body.detail
  }
}

const successOf = (body: unknown): StoredResponse => ({
  status: 200,
  contentType: "application/json",
  headers: {},
  body: JSON.stringify(body)
})

export class Writes extends Effect.Service<Writes>()("Partner/Writes", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const store = yield* IdempotencyStore
    const limits = yield* DailyLimits
    const audit = yield* Audit

    /** A transaction whose own failures (begin, commit) are defects, like every other SQL failure here. */
    const inTransaction = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      sql.withTransaction(effect).pipe(
        Effect.catchIf((e): e is SqlError.SqlError => e instanceof SqlError.SqlError, Effect.die)
      )

    /**
     * Runs `perform` as the write `spec` describes, for a caller that has already named its attempt
     * (`call`): the REST API with the request's `Idempotency-Key` (`run` below), the assistant's
     * confirmed second call with `mcp:<confirmation id>` (src/assistant/confirmations/). The result is
     * the stored answer (its JSON text), the first time and on every replay; a refusal fails with
     * its error, as `run`'s would.
     */
    const execute = spanFn("Writes.execute")(
      function*<A, I, E, R>(
        spec: WriteSpec<A, I>,
        perform: (ctx: WriteContext) => Effect.Effect<WriteDone<NoInfer<A>>, E, R>,
        call: WriteCall
      ) {
        yield* annotateSpan({ action: spec.action })
        const key = yield* CurrentKey
        const assistant = yield* assistantOf
        const { idempotencyKey, requestId } = call
        const operator = yield* Ref.make<string | null>(null)
        const render = renderFor(call)
        /** The attempt's audit entry. */
        const entry = (
          outcome: AuditOutcome,
          status: number,
          problem?: { readonly slug: string; readonly detail: string }
        ) =>
          Effect.map(Ref.get(operator), (operatorId): AuditEntry => ({
            keyId: key.id,
            operatorId,
            action: spec.action,
            targetId: spec.targetId,
            requestId,
            idempotencyKey,
            outcome,
            status,
            reason: problem?.slug ?? null,
            detail: problem?.detail ?? null,
            assistant
          }))
        const record = (
          outcome: AuditOutcome,
          status: number,
          problem?: { readonly slug: string; readonly detail: string }
        ) => Effect.flatMap(entry(outcome, status, problem), audit.record)

        /** Refused before the action ran: audit, then fail with the error. */
        const refuse = <X>(error: X) => {
          const problem = render(error)!
          return Effect.zipRight(record("refused", problem.stored.status, problem), Effect.fail(error))
        }

        // 2. The claim.
        const claim = yield* store.claim({
          keyId: key.id,
          idempotencyKey,
          action: spec.action,
          fingerprint: call.fingerprint,
          takeSlot: !spec.slotBeforeChange
        })
        switch (claim._tag) {
          case "Replay":
            yield* record("replayed", claim.response.status)
            return { stored: claim.response, replayed: true }
          case "InProgress":
            return yield* refuse(
              new IdempotencyInProgress({
                detail: "an earlier request with this Idempotency-Key is still running; retry shortly with the same key"
              })
            )
          case "Mismatch":
            return yield* refuse(
              new IdempotencyMismatch({
                detail: "this Idempotency-Key was used for a different request in the last 24 hours " +
                  "(method, path or body differ); use a new key for a new action"
              })
            )
        }
        const { token } = claim

        // 3. The daily-limit slot (reused when this retry took over a dead attempt's claim today).
        const held = yield* Ref.make<Slot | null>(
          claim.slotDay === null ? null : { keyId: key.id, action: spec.action, day: claim.slotDay }
        )
        const reserveSlot = Effect.gen(function*() {
          const reused = yield* Ref.get(held)
          if (reused !== null) return reused
          // The claim tried to take the slot and found the limit used up.
          if (claim.exhausted !== null) {
            return yield* limitReached(spec.action, claim.exhausted.limit, claim.exhausted.retryAfterSeconds)
          }
          const reservation = yield* limits.reserve(key.id, spec.action)
          if (reservation._tag === "Exhausted") {
            return yield* limitReached(spec.action, reservation.limit, reservation.retryAfterSeconds)
          }
          const slot: Slot = { keyId: key.id, action: spec.action, day: reservation.day }
          yield* Ref.set(held, slot)
          yield* store.holdSlot(token, reservation.day)
          return slot
        })
        const ctx: WriteContext = {
          keyId: key.id,
          idempotencyKey,
          operatorIds: key.partners.map((p) => p.id),
          target: (operatorId) => Ref.set(operator, operatorId),
          beforeChange: spec.slotBeforeChange ? Effect.asVoid(reserveSlot) : Effect.void
        }
        /**
         * The stored answer, the slot give-back and the audit entry of a result: one statement, which
         * also makes the action's own change when it left it there (`done.change`).
         */
        const finishDone = (done: WriteDone<A>) =>
          Effect.gen(function*() {
            const slot = yield* Ref.get(held)
            if (slot === null && !done.noop) {
              return yield* Effect.dieMessage(`${spec.action}: changed something without ctx.beforeChange`)
            }
            if (done.change !== undefined && !spec.transactional) {
              // Only the transaction rolls the change back when the claim turns out lost.
              return yield* Effect.dieMessage(
                `${spec.action}: a change left to the final statement needs transactional`
              )
            }
            const stored = successOf(done.body)
            const completed = yield* store.complete(token, stored, {
              giveBack: done.noop ? slot : null,
              audit: yield* entry(done.noop ? "noop" : "done", stored.status),
              auditAnyway: false,
              change: done.change
            })
            if (!completed) return yield* new ClaimLost()
            return stored
          })

        // 4. The action, with the lease renewed while it runs (the final statement is atomic on its own).
        const attempt = Effect.gen(function*() {
          if (!spec.slotBeforeChange) yield* reserveSlot
          return yield* spec.transactional
            ? inTransaction(Effect.flatMap(perform(ctx), finishDone))
            : Effect.flatMap(perform(ctx), finishDone)
        }).pipe(store.whileHolding(token))

        return yield* Effect.uninterruptibleMask((restore) =>
          Effect.gen(function*() {
            const exit = yield* Effect.exit(restore(attempt))
            if (Exit.isSuccess(exit)) return { stored: exit.value, replayed: false }
            const failure = Cause.failureOption(exit.cause)
            const error = Option.getOrUndefined(failure)
            if (error instanceof ClaimLost) {
              return yield* refuse(
                new IdempotencyInProgress({
                  detail:
                    "another request with this Idempotency-Key took over while this one ran; retry with the same key"
                })
              )
            }
            const problem = Cause.isInterrupted(exit.cause) ? undefined : render(error)
            if (problem !== undefined && isFinal(problem.stored.status)) {
              // A refusal is the key's final answer: keep it, give the slot back, audit (one statement).
              yield* store.complete(token, problem.stored, {
                giveBack: yield* Ref.get(held),
                audit: yield* entry("refused", problem.stored.status, problem),
                auditAnyway: true
              })
              return yield* Effect.failCause(exit.cause as Cause.Cause<E | DailyLimitReached>)
            }
            // No final answer (429, 5xx, crash, interruption): free the key now, give the slot back
            // (unless the claim was taken over: the slot went with it) and audit, in one statement.
            yield* store.abandon(token, {
              giveBack: yield* Ref.get(held),
              audit: yield* entry(
                problem !== undefined && problem.stored.status < 500 ? "refused" : "failed",
                problem?.stored.status ?? 500,
                problem ?? { slug: INTERNAL.slug, detail: failureSummary(exit.cause) }
              )
            })
            return yield* Effect.failCause(exit.cause as Cause.Cause<E | DailyLimitReached>)
          })
        )
      }
    )

    /**
     * Runs `perform` as the write `spec` describes, for a REST request (1. its `Idempotency-Key`
     * header, then `execute`). The result is the response itself: the stored answer (a handler may
     * answer an HttpServerResponse), the first time and on every replay.
     */
    const run = spanFn("Writes.run")(
      function*<A, I, E, R>(
        spec: WriteSpec<A, I>,
        perform: (ctx: WriteContext) => Effect.Effect<WriteDone<NoInfer<A>>, E, R>
      ) {
        const request = yield* HttpServerRequest.HttpServerRequest
        const { requestId } = yield* FiberRef.get(CurrentRequest)

        // 1. The header.
        const parsed = parseIdempotencyKey(request.headers["idempotency-key"])
        if (Either.isLeft(parsed)) {
          const error = new InvalidRequest({ detail: parsed.left, field: IDEMPOTENCY_KEY_HEADER })
          const problem = renderFor({ requestId, method: request.method, url: request.url })(error)!
          const key = yield* CurrentKey
          yield* audit.record({
            keyId: key.id,
            operatorId: null,
            action: spec.action,
            targetId: spec.targetId,
            requestId,
            idempotencyKey: null,
            outcome: "refused",
            status: problem.stored.status,
            reason: problem.slug,
            detail: problem.detail,
            assistant: yield* assistantOf
          })
          return yield* error
        }
        const { replayed, stored } = yield* execute(spec, perform, {
          idempotencyKey: parsed.right,
          fingerprint: requestFingerprint(request.method, pathOf(request.url), spec.payload),
          requestId,
          method: request.method,
          url: request.url
        })
        return asResponse(stored, replayed)
      }
    )

    return { run, execute } as const
  }),
  dependencies: [IdempotencyStore.Default, DailyLimits.Default, Audit.Default]
}) {}

const failureSummary = (cause: Cause.Cause<unknown>) => {
  if (Cause.isInterruptedOnly(cause)) return "interrupted"
  const parts: Array<string> = []
  let current: unknown = Cause.squash(cause)
  while (current instanceof Error && parts.length < 3) {
    parts.push(`${current.name}: ${current.message}`)
    current = current.cause
  }
  if (parts.length === 0) parts.push(String(current))
  return parts.join(" <- ").slice(0, 500)
}
