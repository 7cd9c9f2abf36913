/**
 * The mirror of the operators' booking systems that the manifest reads. A refresh reads every
 * booking line with a departure in a window of days from the booking system (all sales channels),
 * upserts them, turns lines that disappeared into CANCELLED and records when each day was synced.
 *
 * - Accounts shared by several operators are read once; each line belongs to the operator whose
 *   tour is the line's product, else to the account's first operator by name.
 * - One account failing never stops the others; each account's result is a `mirror_runs` row.
 * - Everything an account's refresh writes is one transaction: a half-applied refresh never shows.
 */
import { Clock, Duration, Effect, Schedule } from "effect"
import { isTimeZone, mirrorWindow } from "../domain/localDay.js"
import { annotateSpan } from "../observability/spanFn.js"
import { BookingSystemAccounts, type MirroredAccount } from "../operators/BookingSystemAccounts.js"
import { type BookingLine, BookingSystem, type BookingSystemError } from "../ports/BookingSystem.js"
import { type AccountRunsSummary, summarizeAccountRuns } from "./accountRuns.js"
import { MirrorConfig } from "./config.js"
import { type DayWindow, MirrorRepo, type MissingLine } from "./MirrorRepo.js"

export type RefreshKind = "near_term" | "nightly" | "manual"

export interface AccountCounts {
  readonly linesSeen: number
  readonly inserted: number
  readonly updated: number
  readonly cancelled: number
}

export interface AccountResult extends Partial<AccountCounts> {
  readonly accountId: string
  readonly account: string
  readonly from: string
  readonly to: string
  readonly ok: boolean
  readonly error?: string
}

export type RefreshSummary = AccountRunsSummary<RefreshKind, AccountResult>

const describe = (e: BookingSystemError) => `${e._tag} (${e.reason}) in ${e.operation}: ${e.detail}`

export class Mirror extends Effect.Service<Mirror>()("Mirror/Mirror", {
  effect: Effect.gen(function*() {
    const repo = yield* MirrorRepo
    const bookingSystem = yield* BookingSystem
    const accounts = yield* BookingSystemAccounts
    const config = yield* MirrorConfig

    const retryPolicy = Schedule.exponential(Duration.millis(config.retryBaseMillis)).pipe(
      Schedule.jittered,
      Schedule.intersect(Schedule.recurs(config.retries))
    )

    /**
     * A line can leave the window because it was cancelled or deleted, or because it moved to a day
     * outside the window. Each such booking is read once: lines still there are updated where they
     * are now; lines the booking system no longer has (or has cancelled) become CANCELLED. When the
     * booking system does not answer for one, its lines are left as they are until the next run.
     */
    const settleMissing = (m: MirroredAccount, missing: ReadonlyArray<MissingLine>) =>
      Effect.gen(function*() {
        const byBooking = new Map<string, Array<string>>()
        for (const row of missing) {
          const ref = row.reference ?? row.booking_id
          byBooking.set(ref, [...(byBooking.get(ref) ?? []), row.line_id])
        }
        const found: Array<BookingLine> = []
        const gone: Array<string> = []
        yield* Effect.forEach(byBooking, ([ref, lineIds]) =>
          bookingSystem.booking(m.account, ref).pipe(
            Effect.map((lines) => {
              for (const id of lineIds) {
                const line = lines.find((l) => l.lineId === id)
                if (line && line.status !== "CANCELLED") found.push(line)
                else gone.push(id)
              }
            }),
            Effect.catchAll((e) =>
              e._tag === "BookingSystemRejected" && e.reason === "not_found"
                ? Effect.sync(() => gone.push(...lineIds))
                : Effect.void
            )
          ), { concurrency: 4, discard: true })
        return { found, gone }
      })

    const finishRun = (runId: string, outcome: "ok" | "failed", counts: Partial<AccountCounts>, error: string | null) =>
      repo.finishRun({
        runId,
        outcome,
        linesSeen: counts.linesSeen ?? 0,
        inserted: counts.inserted ?? 0,
        updated: counts.updated ?? 0,
        cancelled: counts.cancelled ?? 0,
        error
      })

    const startRun = (m: MirroredAccount, kind: RefreshKind, window: DayWindow, jobRunId: string | null) =>
      Effect.map(repo.startRun({ accountId: m.account.id, jobRunId, kind, ...window }), (run) => run.id)

    const failRun = (m: MirroredAccount, runId: string, window: DayWindow, error: string) =>
      Effect.gen(function*() {
        yield* finishRun(runId, "failed", {}, error)
        yield* Effect.logWarning(`mirror: account ${m.account.name} failed`).pipe(
          Effect.annotateLogs({ account_id: m.account.id, error })
        )
        return { accountId: m.account.id, account: m.account.name, ...window, ok: false, error } satisfies AccountResult
      })

    /**
     * The account's window in its operators' zones. An operator whose zone is not one (operators'
     * zones are free text) fails its account alone: the run is recorded over the UTC window.
     */
    const refreshInZones = (
      m: MirroredAccount,
      now: Date,
      daysAhead: number,
      kind: RefreshKind,
      jobRunId: string | null
    ) =>
      Effect.suspend(() => {
        const unknown = m.operators.filter((o) => !isTimeZone(o.timezone))
        if (unknown.length === 0) {
          return refreshAccount(m, mirrorWindow(m.operators.map((o) => o.timezone), now, daysAhead), kind, jobRunId)
        }
        const window = mirrorWindow(["UTC"], now, daysAhead)
        const error = `unknown time zone: ${unknown.map((o) => `${o.timezone} (operator ${o.name})`).join(", ")}`
        return Effect.flatMap(startRun(m, kind, window, jobRunId), (runId) => failRun(m, runId, window, error))
      })

    /** Refreshes one account over `window`; never fails: the result says what happened. */
    const refreshAccount = Effect.fn("Mirror.refreshAccount")(function*(
      m: MirroredAccount,
      window: DayWindow,
      kind: RefreshKind,
      jobRunId: string | null = null
    ) {
      yield* annotateSpan({ account_id: m.account.id, kind, from: window.from, to: window.to })
      const runId = yield* startRun(m, kind, window, jobRunId)
      const base = { accountId: m.account.id, account: m.account.name, from: window.from, to: window.to }
      const lines = yield* bookingSystem.bookingLines(m.account, window).pipe(
        // A definite refusal (bad credentials, ...) will not change by asking again.
        Effect.retry({ schedule: retryPolicy, while: (e) => e._tag === "BookingSystemUnavailable" }),
        Effect.either
      )
      if (lines._tag === "Left") return yield* failRun(m, runId, window, describe(lines.left))
      // A line outside the window asked for is not judged here (the booking system answered loosely).
      const inWindow = lines.right.filter((l) => l.date >= window.from && l.date <= window.to)
      const stored = yield* Effect.gen(function*() {
        const seen = JSON.stringify(inWindow.map((l) => l.lineId))
        const missing = yield* repo.missingLines({ accountId: m.account.id, ...window, seen })
        const settled = yield* settleMissing(m, missing)
        return yield* repo.store(m, window, [...inWindow, ...settled.found], settled.gone)
      }).pipe(Effect.either)
      // The database refusing what the booking system sent (e.g. a NUL in a guest name) fails this
      // account alone; nothing of it was stored (one transaction).
      if (stored._tag === "Left") {
        yield* Effect.logError(`mirror: could not store account ${m.account.name}`, stored.left.cause)
        return yield* failRun(m, runId, window, `could not store the lines: ${stored.left.message}`)
      }
      const counts: AccountCounts = { linesSeen: inWindow.length, ...stored.right }
      yield* finishRun(runId, "ok", counts, null)
      yield* annotateSpan({ ...counts })
      return { ...base, ok: true, ...counts } satisfies AccountResult
    })

    /**
     * Refreshes every account (or one) over today and the next `daysAhead` days in its operators'
     * time zones, `concurrency` accounts at a time.
     */
    const refresh = Effect.fn("Mirror.refresh")(function*(
      options: { kind: RefreshKind; daysAhead: number; accountId?: string; jobRunId?: string | null }
    ) {
      yield* annotateSpan({ kind: options.kind, days_ahead: options.daysAhead })
      const targets = options.accountId === undefined
        ? yield* accounts.mirrored()
        : [yield* accounts.byId(options.accountId).pipe(Effect.orDie)]
      const now = new Date(yield* Clock.currentTimeMillis)
      const results = yield* Effect.forEach(
        targets,
        (m) => refreshInZones(m, now, options.daysAhead, options.kind, options.jobRunId ?? null),
        { concurrency: config.concurrency }
      )
      return yield* summarizeAccountRuns<RefreshKind, AccountResult>("mirror", options.kind, results)
    })

    return { refresh, refreshAccount } as const
  }),
  dependencies: [MirrorRepo.Default]
}) {}
