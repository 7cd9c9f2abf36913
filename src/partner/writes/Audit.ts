/**
 * The audit log of write attempts: who (API key, operator), what (action, target), which request
 * (request id, Idempotency-Key), how it ended (outcome, HTTP status, problem type of a refusal or
 * failure) and when. Append-only; read by the CLI (`audit list`). SQL: AuditRepo.
 */
import { Effect } from "effect"
import { annotateSpan, spanFn } from "../../observability/spanFn.js"
import { type AuditEntry, AuditRepo, type AuditRow } from "./AuditRepo.js"

export type { AuditEntry, AuditRow } from "./AuditRepo.js"

export interface AuditFilter {
  readonly keyId?: string | undefined
  readonly operatorId?: string | undefined
  readonly limit?: number | undefined
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export class Audit extends Effect.Service<Audit>()("Partner/Audit", {
  effect: Effect.gen(function*() {
    const repo = yield* AuditRepo

    /** Appends one entry (inside the caller's transaction when there is one). */
    const record = spanFn("Audit.record")(function*(e: AuditEntry) {
      yield* annotateSpan({ action: e.action, outcome: e.outcome })
      yield* repo.append(e)
    })

    /** Newest first; `limit` 1 to 1000, default 50. */
    const list = spanFn("Audit.list")(function*(f: AuditFilter = {}) {
      // operator_id is a uuid column: a value that is not one cannot match (and must not reach the cast).
      if (f.operatorId !== undefined && !UUID.test(f.operatorId)) return [] as ReadonlyArray<AuditRow>
      return yield* repo.list({
        keyId: f.keyId,
        operatorId: f.operatorId,
        limit: Math.min(Math.max(f.limit ?? 50, 1), 1000)
      })
    })

    return { record, list } as const
  }),
  dependencies: [AuditRepo.Default]
}) {}
