/**
 * The assistant's two-call writes (issue 16; spec §1; docs/assistant.md "Confirmations").
 *
 * `ask` (a write tool called without `confirm_token`): the tool has already run every check the REST
 * write makes (scope is the server's; tenancy and the booking's state are the feature's `preview`);
 * this adds the daily limit's room, changes and counts nothing, and answers
 * `{requires_confirmation, summary, confirm_token, expires_at}`, keeping only the token's hash bound
 * to the connection, the tool, the exact arguments, the booking and a fingerprint of its state.
 *
 * `confirm` (the same call with `confirm_token`): the token must be known, this connection's, for
 * this tool and these exact arguments, unexpired (5 minutes, the service's clock) and the booking's
 * state what the summary showed; then the one second call that claims it runs the write once through
 * the REST write machinery (src/partner/writes/Writes.ts `execute`: idempotency keyed
 * `mcp:<confirmation id>`, the daily limit, the audit with the assistant's client and person). Its
 * final answer is kept: a retried or concurrent second call with the same token and arguments
 * replays it (a concurrent one waits for it) and writes, counts and audits nothing. A write that
 * ends without a final answer (429, 409, 5xx) frees the token to be tried again. Any other use of a
 * token is refused with one error (rules.ts `confirmationRefused`). SQL: ConfirmationsRepo.
 */
import { Clock, Duration, Effect, Either, Exit, FiberRef, Option, Schema } from "effect"
import {
  IdempotencyInProgress,
  IdempotencyMismatch,
  InvalidRequest,
  NotFound,
  NotPossible
} from "../../domain/errors.js"
import { CurrentRequest } from "../../http/requestContext.js"
import { annotateSpan } from "../../observability/spanFn.js"
import { CurrentKey } from "../../partner/auth/security.js"
import { type Problem, problemFor } from "../../partner/problem.js"
import { DailyLimits } from "../../partner/writes/DailyLimits.js"
import type { StoredResponse } from "../../partner/writes/IdempotencyStore.js"
import { requestFingerprint, type WriteAction, type WriteContext, type WriteDone } from "../../partner/writes/rules.js"
import { isFinalStatus, Writes } from "../../partner/writes/Writes.js"
import { type ConfirmationRow, ConfirmationsRepo } from "./ConfirmationsRepo.js"
import {
  argumentsHash,
  CONFIRMATION_TTL_MS,
  CONFIRMATION_WAIT_MS,
  confirmationRefused,
  newConfirmToken,
  type RefusalReason,
  type RequiresConfirmation,
  stateFingerprint,
  tokenHash
} from "./rules.js"

/** One call of a write tool, as the protocol binds it. */
export interface ToolWrite<A, I> {
  readonly tool: string
  /** The daily limit and audit action of the REST write it runs. */
  readonly action: WriteAction
  /** The booking or manifest row id (lower case). */
  readonly targetId: string
  /** The decoded arguments without `confirm_token`. */
  readonly args: unknown
  /** The REST endpoint's success schema. */
  readonly success: Schema.Schema<A, I>
  readonly transactional?: boolean
  readonly slotBeforeChange?: boolean
}

/** What the feature's preview found: the summary, the state it was made from, whether anything would change. */
export interface Preview {
  readonly summary: string
  /** What the summary shows about the booking, fingerprinted: a second call after it changed is refused. */
  readonly state: unknown
  /** Nothing would change (a no-op answers without using the daily limit). */
  readonly noop: boolean
}

/** Where the audit and problems say an assistant write happened. */
const urlOf = (tool: string) => `/mcp/tools/${tool}`

/** A stored refusal turned back into its error, so a replay fails exactly as the first answer did. */
const storedRefusal = (body: Problem) => {
  const slug = body.type.slice(body.type.indexOf("#") + 1)
  switch (slug) {
    case "invalid-request":
      return new InvalidRequest({
        detail: body.detail,
        ...(body.invalid_params?.[0] ? { field: body.invalid_params[0].name } : {})
      })
    case "not-found":
      return new NotFound({ detail: body.detail })
    case "idempotency-key-reused":
      return new IdempotencyMismatch({ detail: body.detail })
    default:
      return new NotPossible({ detail: body.detail })
  }
}

export class Confirmations extends Effect.Service<Confirmations>()("Assistant/Confirmations", {
  effect: Effect.gen(function*() {
    const repo = yield* ConfirmationsRepo
    const limits = yield* DailyLimits
    const writes = yield* Writes

    const refuse = (reason: RefusalReason, tool: string) =>
      Effect.zipRight(
        Effect.logInfo("confirm_token refused").pipe(Effect.annotateLogs({ tool, reason })),
        Effect.fail(confirmationRefused())
      )

    /** The first call: checks the limit's room, keeps the binding, answers the token. */
    const ask = Effect.fn("Confirmations.ask")(function*<A, I>(write: ToolWrite<A, I>, preview: Preview) {
      yield* annotateSpan({ tool: write.tool })
      const key = yield* CurrentKey
      if (!preview.noop) yield* limits.checkRoom(key.id, write.action)
      const token = newConfirmToken()
      const expiresAt = new Date((yield* Clock.currentTimeMillis) + CONFIRMATION_TTL_MS)
      yield* repo.insert({
        tokenHash: tokenHash(token),
        connectionId: key.id,
        tool: write.tool,
        argumentsHash: argumentsHash(write.tool, write.args),
        targetId: write.targetId,
        stateFingerprint: stateFingerprint(preview.state),
        summary: preview.summary,
        expiresAt
      })
      const answer: RequiresConfirmation = {
        requires_confirmation: true,
        summary: preview.summary,
        confirm_token: token,
        expires_at: expiresAt.toISOString()
      }
      return answer
    })

    /** The kept answer of the write: its result again, or its refusal again. */
    const replay = <A, I>(write: ToolWrite<A, I>, stored: { readonly status: number; readonly body: string }) =>
      stored.status === 200
        ? Effect.orDie(Schema.decodeUnknown(write.success)(JSON.parse(stored.body)))
        : Effect.fail(storedRefusal(JSON.parse(stored.body) as Problem))

    /** Runs the write once for this confirmation and keeps its final answer. */
    const carryOut = <A, I, E, R>(
      write: ToolWrite<A, I>,
      row: ConfirmationRow,
      perform: (ctx: WriteContext) => Effect.Effect<WriteDone<NoInfer<A>>, E, R>
    ) =>
      Effect.gen(function*() {
        const { requestId } = yield* FiberRef.get(CurrentRequest)
        const url = urlOf(write.tool)
        const outcome = yield* Effect.either(writes.execute(
          {
            action: write.action,
            success: write.success,
            targetId: write.targetId,
            payload: write.args,
            ...(write.transactional ? { transactional: true } : {}),
            ...(write.slotBeforeChange ? { slotBeforeChange: true } : {})
          },
          perform,
          {
            idempotencyKey: `mcp:${row.id}`,
            fingerprint: requestFingerprint("POST", `${url}/${write.targetId}`, write.args),
            requestId,
            method: "POST",
            url
          }
        ))
        if (outcome._tag === "Right") {
          const stored: StoredResponse = outcome.right.stored
          if (isFinalStatus(stored.status)) yield* repo.finish({ id: row.id, status: stored.status, body: stored.body })
          else yield* repo.release(row.id)
          return yield* replay(write, stored)
        }
        const problem = problemFor(outcome.left, requestId, "POST", url)
        if (problem !== undefined && isFinalStatus(problem.type.status)) {
          yield* repo.finish({ id: row.id, status: problem.type.status, body: JSON.stringify(problem.body) })
        } else {
          yield* repo.release(row.id)
        }
        return yield* Effect.fail(outcome.left)
      }).pipe(
        // A defect or an interruption: the token may be tried again (the write machinery freed its key).
        // A kept answer stays (release changes only a confirmation without one).
        Effect.onExit((exit) => (Exit.isFailure(exit) ? repo.release(row.id) : Effect.void))
      )

    /**
     * The second call. `recheck` is the feature's preview run again (the booking's state now);
     * `perform` the REST write's action.
     */
    const confirm = Effect.fn("Confirmations.confirm")(function*<A, I, E1, R1, E2, R2>(
      write: ToolWrite<A, I>,
      token: string,
      recheck: Effect.Effect<Preview, E1, R1>,
      perform: (ctx: WriteContext) => Effect.Effect<WriteDone<NoInfer<A>>, E2, R2>
    ) {
      yield* annotateSpan({ tool: write.tool })
      const key = yield* CurrentKey
      const found = yield* repo.byTokenHash(tokenHash(token))
      if (Option.isNone(found)) return yield* refuse("unknown", write.tool)
      let row = found.value
      if (row.connection_id !== key.id) return yield* refuse("other_connection", write.tool)
      if (
        row.tool !== write.tool || row.target_id !== write.targetId ||
        row.arguments_hash !== argumentsHash(write.tool, write.args)
      ) {
        return yield* refuse("other_arguments", write.tool)
      }

      if (row.used_at === null && row.result_status === null) {
        if ((yield* Clock.currentTimeMillis) >= row.expires_at.getTime()) return yield* refuse("expired", write.tool)
        const now = yield* Effect.either(recheck)
        if (Either.isLeft(now) || stateFingerprint(now.right.state) !== row.state_fingerprint) {
          // Changed (or being changed: 409) by a concurrent second call carrying this very
          // confirmation out: wait for its answer. Otherwise the booking changed, or its check fails now.
          const again = yield* repo.byId(row.id)
          if (Option.isNone(again) || (again.value.used_at === null && again.value.result_status === null)) {
            if (Either.isLeft(now)) return yield* Effect.fail(now.left)
            return yield* refuse("booking_changed", write.tool)
          }
          row = again.value
        }
      }

      // Claim it, or wait for the call that has it (taking over if that one died).
      const waitUntil = (yield* Clock.currentTimeMillis) + CONFIRMATION_WAIT_MS
      while (true) {
        if (row.result_status !== null && row.result_body !== null) {
          return yield* replay(write, { status: row.result_status, body: row.result_body })
        }
        if (row.used_at === null && (yield* Clock.currentTimeMillis) >= row.expires_at.getTime()) {
          return yield* refuse("expired", write.tool)
        }
        if (yield* repo.claim(row.id)) return yield* carryOut(write, row, perform)
        if ((yield* Clock.currentTimeMillis) >= waitUntil) {
          return yield* new IdempotencyInProgress({
            detail: "another call is carrying out this confirmation; retry shortly with the same confirm_token"
          })
        }
        yield* Effect.sleep(Duration.millis(100))
        const again = yield* repo.byId(row.id)
        if (Option.isNone(again)) return yield* refuse("unknown", write.tool)
        row = again.value
      }
    })

    return { ask, confirm } as const
  }),
  dependencies: [ConfirmationsRepo.Default, DailyLimits.Default, Writes.Default]
}) {}
