/**
 * The summary of a run over booking-system accounts, shared by the mirror refresh and the sales
 * ledger: how many accounts ran and failed, and the lines they saw, inserted, changed and cancelled;
 * annotated on the run's span and logged once.
 */
import { Effect } from "effect"
import { annotateSpan } from "../observability/spanFn.js"

export interface AccountRunCounts {
  readonly ok: boolean
  readonly linesSeen?: number | undefined
  readonly inserted?: number | undefined
  readonly updated?: number | undefined
  readonly cancelled?: number | undefined
}

export interface AccountRunsSummary<K extends string, R extends AccountRunCounts> {
  readonly kind: K
  readonly accounts: number
  readonly ok: number
  readonly failed: number
  readonly linesSeen: number
  readonly inserted: number
  readonly updated: number
  readonly cancelled: number
  readonly results: ReadonlyArray<R>
}

/** Sums the accounts' results of a `what` run (`mirror`, `sales ledger`) of `kind`. */
export const summarizeAccountRuns = <K extends string, R extends AccountRunCounts>(
  what: string,
  kind: K,
  results: ReadonlyArray<R>
) =>
  Effect.gen(function*() {
    const sum = (f: (r: R) => number | undefined) => results.reduce((n, r) => n + (f(r) ?? 0), 0)
    const summary: AccountRunsSummary<K, R> = {
      kind,
      accounts: results.length,
      ok: results.filter((r) => r.ok).length,
      failed: results.filter((r) => !r.ok).length,
      linesSeen: sum((r) => r.linesSeen),
      inserted: sum((r) => r.inserted),
      updated: sum((r) => r.updated),
      cancelled: sum((r) => r.cancelled),
      results
    }
    const { results: _, ...counts } = summary
    yield* annotateSpan(counts)
    yield* Effect.logInfo(
      `${what} ${kind}: ${summary.ok}/${summary.accounts} accounts ok, ${summary.linesSeen} lines seen, ` +
        `${summary.inserted} new, ${summary.updated} changed, ${summary.cancelled} cancelled`
    ).pipe(Effect.annotateLogs(counts))
    return summary
  })
