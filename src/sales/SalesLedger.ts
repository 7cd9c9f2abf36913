/**
 * The other-channel sales ledger: every booking line of every linked booking-system account by the
 * BOOKING's creation day (UTC), whatever its departure day, kept in `sales_ledger_lines` for the
 * sales figures (docs/booking-system.md "Sales ledger"). Read through the port's
 * `createdBookingLines`, one page at a time with a pause between pages (SALES_LEDGER_PAGE_PAUSE_MS)
 * so that a booking system is not hammered.
 *
 * - `refreshRecent`: bookings created yesterday and today (UTC); `covered_until` becomes the
 *   refresh's start. `refreshNightly`: the last SALES_LEDGER_NIGHTLY_DAYS days, for late changes
 *   (cancellations) of older bookings. When an account's `covered_until` is older than the range's
 *   first day (its refreshes failed for a while), the range starts at that day instead, so the
 *   covered days stay one unbroken stretch.
 * - `backfill`: accounts not yet covered back SALES_LEDGER_BACKFILL_DAYS days are walked backwards
 *   from `covered_from` in steps of SALES_LEDGER_BACKFILL_CHUNK_DAYS days; each step's lines and its
 *   new `covered_from` commit together, so a crash resumes where it stopped. An account with no
 *   ledger yet gets its recent refresh first.
 * - Lines a refresh no longer finds among the bookings created in its range (deleted, or a hold
 *   that lapsed) become CANCELLED; a changed line's `changed_at` moves, an unchanged one's never.
 * - One account failing (the booking system, or the database refusing its lines) records
 *   `last_outcome = 'failed'` with the error for that account and never stops the others.
 */
import { Clock, Duration, Effect, Schedule, Stream } from "effect"
import { type AccountRunsSummary, summarizeAccountRuns } from "../mirror/accountRuns.js"
import { BookingSystemAccounts, type MirroredAccount } from "../operators/BookingSystemAccounts.js"
import {
  type BookingLine,
  BookingSystem,
  type BookingSystemClient,
  type BookingSystemError,
  createdLinePages
} from "../ports/BookingSystem.js"
import { SalesLedgerConfig } from "./config.js"
import { addUtcDays, type Coverage, type LedgerNotStored, SalesLedgerRepo } from "./SalesLedgerRepo.js"

export type LedgerRunKind = "recent" | "nightly" | "backfill"

export interface LedgerAccountResult {
  readonly accountId: string
  readonly account: string
  readonly ok: boolean
  readonly error?: string
  /** Ranges of creation days read (a backfill reads one per step). */
  readonly ranges: number
  readonly linesSeen: number
  readonly inserted: number
  readonly updated: number
  readonly cancelled: number
}

export type LedgerSummary = AccountRunsSummary<LedgerRunKind, LedgerAccountResult>

export interface LedgerRunOptions {
  /** Only this account (default: every account with an operator linked). */
  readonly accountId?: string
  /** Overrides SALES_LEDGER_PAGE_PAUSE_MS (the demo's start reads its small accounts faster). */
  readonly pagePauseMs?: number
  /** Overrides SALES_LEDGER_BACKFILL_CHUNK_DAYS (the demo's start reads its small accounts in one step). */
  readonly chunkDays?: number
  /** Overrides SALES_LEDGER_RETRIES (the demo's start does not wait for an account it knows fails). */
  readonly retries?: number
}

const describe = (e: BookingSystemError | LedgerNotStored) =>
  e._tag === "LedgerNotStored"
    ? `could not store the lines: ${e.message}`
    : `${e._tag} (${e.reason}) in ${e.operation}: ${e.detail}`

const utcDay = (at: Date) => at.toISOString().slice(0, 10)

const noCounts = { ranges: 0, linesSeen: 0, inserted: 0, updated: 0, cancelled: 0 }

export class SalesLedger extends Effect.Service<SalesLedger>()("Sales/SalesLedger", {
  effect: Effect.gen(function*() {
    const repo = yield* SalesLedgerRepo
    const bookingSystem = yield* BookingSystem
    const accounts = yield* BookingSystemAccounts
    const config = yield* SalesLedgerConfig

    const retryPolicy = (retries: number) =>
      Schedule.exponential(Duration.millis(config.retryBaseMillis)).pipe(
        Schedule.jittered,
        Schedule.intersect(Schedule.recurs(retries))
      )

    /** How one run reads: the pause between pages, the step of a backfill, the retries of a page. */
    interface Pace {
      readonly pauseMs: number
      readonly chunkDays: number
      readonly retries: number
    }
    const paceOf = (options: LedgerRunOptions): Pace => ({
      pauseMs: options.pagePauseMs ?? config.pagePauseMs,
      chunkDays: Math.max(1, options.chunkDays ?? config.backfillChunkDays),
      retries: options.retries ?? config.retries
    })

    /** The port's page reader, paced (a pause before every page after the first) and retried while the system does not answer. */
    const pacedClient = ({ pauseMs, retries }: Pace): BookingSystemClient => ({
      ...bookingSystem,
      createdBookingLines: (account, query) =>
        Effect.zipRight(
          query.page > 1 && pauseMs > 0 ? Effect.sleep(Duration.millis(pauseMs)) : Effect.void,
          bookingSystem.createdBookingLines(account, query).pipe(
            // A definite refusal (bad credentials, ...) will not change by asking again.
            Effect.retry({ schedule: retryPolicy(retries), while: (e) => e._tag === "BookingSystemUnavailable" })
          )
        )
    })

    /** Every line of the bookings created on the days [from, to], each once. */
    const readRange = (m: MirroredAccount, from: string, to: string, pace: Pace) =>
      createdLinePages(pacedClient(pace), m.account, { from, to }).pipe(
        Stream.runFold(new Map<string, BookingLine>(), (lines, page) => {
          for (const line of page) lines.set(line.lineId, line)
          return lines
        }),
        Effect.map((lines) => [...lines.values()])
      )

    /** Reads one range and stores it with the coverage it earns; counts, or the error. */
    const range = (m: MirroredAccount, from: string, to: string, coverage: Coverage, pace: Pace) =>
      Effect.gen(function*() {
        const [primary] = m.operators
        if (primary === undefined) return yield* Effect.dieMessage(`account ${m.account.id} has no operator`)
        const lines = yield* readRange(m, from, to, pace)
        const stored = yield* repo.storeRange({
          accountId: m.account.id,
          owners: { operatorIds: m.operators.map((o) => o.id), primaryOperatorId: primary.id },
          from,
          to,
          lines,
          coverage
        })
        return { linesSeen: lines.length, ...stored }
      }).pipe(Effect.withSpan("SalesLedger.range", { attributes: { account_id: m.account.id, from, to } }))

    const failed = (m: MirroredAccount, error: BookingSystemError | LedgerNotStored, done: typeof noCounts) =>
      Effect.gen(function*() {
        const message = describe(error)
        yield* repo.recordFailure({ accountId: m.account.id, error: message })
        yield* Effect.logWarning(`sales ledger: account ${m.account.name} failed`).pipe(
          Effect.annotateLogs({ account_id: m.account.id, error: message })
        )
        return { accountId: m.account.id, account: m.account.name, ok: false, error: message, ...done }
      })

    const stateOf = (accountId: string) => Effect.map(repo.states([accountId]), (rows) => rows[0])

    /**
     * The creation days from `daysBack` days before today (UTC) to today, started earlier when the
     * account's coverage ends before that; `covered_until` becomes the moment the refresh started.
     */
    const forward = (m: MirroredAccount, daysBack: number, pace: Pace) =>
      Effect.gen(function*() {
        const started = new Date(yield* Clock.currentTimeMillis)
        const today = utcDay(started)
        const state = yield* stateOf(m.account.id)
        let from = addUtcDays(today, -daysBack)
        if (state?.covered_from != null && state.covered_until !== null) {
          const until = utcDay(state.covered_until)
          if (until < from) from = until
        }
        return yield* range(m, from, today, { kind: "forward", until: started }, pace).pipe(
          Effect.map((counts): LedgerAccountResult => ({
            accountId: m.account.id,
            account: m.account.name,
            ok: true,
            ranges: 1,
            ...counts
          })),
          Effect.catchAll((e) => failed(m, e, noCounts))
        )
      }).pipe(Effect.withSpan("SalesLedger.forward", { attributes: { account_id: m.account.id, days_back: daysBack } }))

    /** Walks the account back to the backfill horizon, one saved step at a time. */
    const backfillAccount = (m: MirroredAccount, pace: Pace) =>
      Effect.gen(function*() {
        const today = utcDay(new Date(yield* Clock.currentTimeMillis))
        const horizon = addUtcDays(today, -config.backfillDays)
        let state = yield* stateOf(m.account.id)
        const done = { ...noCounts }
        const add = (c: { linesSeen: number; inserted: number; updated: number; cancelled: number }) => {
          done.ranges += 1
          done.linesSeen += c.linesSeen
          done.inserted += c.inserted
          done.updated += c.updated
          done.cancelled += c.cancelled
        }
        if (state?.covered_from == null || state.covered_until === null) {
          const first = yield* forward(m, 1, pace)
          if (!first.ok) return first
          add(first)
          state = yield* stateOf(m.account.id)
        }
        while (state?.covered_from != null && state.covered_from > horizon) {
          const to = addUtcDays(state.covered_from, -1)
          const stepFrom = addUtcDays(state.covered_from, -pace.chunkDays)
          const from = stepFrom < horizon ? horizon : stepFrom
          if (done.ranges > 0 && pace.pauseMs > 0) yield* Effect.sleep(Duration.millis(pace.pauseMs))
          const step = yield* Effect.either(range(m, from, to, { kind: "backfill" }, pace))
          if (step._tag === "Left") return yield* failed(m, step.left, done)
          add(step.right)
          const next = yield* stateOf(m.account.id)
          // Someone else restarted the coverage meanwhile (a refresh after a long outage): stop here.
          if (next?.covered_from == null || next.covered_from >= state.covered_from) break
          state = next
        }
        return { accountId: m.account.id, account: m.account.name, ok: true, ...done } satisfies LedgerAccountResult
      }).pipe(Effect.withSpan("SalesLedger.backfillAccount", { attributes: { account_id: m.account.id } }))

    const targets = (options: LedgerRunOptions) =>
      options.accountId === undefined
        ? accounts.mirrored()
        : Effect.map(accounts.byId(options.accountId).pipe(Effect.orDie), (m) => [m])

    const summarize = (kind: LedgerRunKind, results: ReadonlyArray<LedgerAccountResult>) =>
      summarizeAccountRuns("sales ledger", kind, results)

    const forwardRun = (kind: "recent" | "nightly", daysBack: number, options: LedgerRunOptions) =>
      Effect.gen(function*() {
        const pace = paceOf(options)
        const results = yield* Effect.forEach(
          yield* targets(options),
          (m) => forward(m, daysBack, pace),
          { concurrency: config.concurrency }
        )
        return yield* summarize(kind, results)
      })

    /** Bookings created yesterday and today (UTC), every account. */
    const refreshRecent = Effect.fn("SalesLedger.refreshRecent")((options: LedgerRunOptions = {}) =>
      forwardRun("recent", 1, options)
    )

    /** Bookings created over the last SALES_LEDGER_NIGHTLY_DAYS days, every account. */
    const refreshNightly = Effect.fn("SalesLedger.refreshNightly")((options: LedgerRunOptions = {}) =>
      forwardRun("nightly", config.nightlyDays, options)
    )

    /** Every account whose ledger does not reach back SALES_LEDGER_BACKFILL_DAYS days yet, walked back to there. */
    const backfill = Effect.fn("SalesLedger.backfill")(function*(options: LedgerRunOptions = {}) {
      const pace = paceOf(options)
      const all = yield* targets(options)
      const today = utcDay(new Date(yield* Clock.currentTimeMillis))
      const horizon = addUtcDays(today, -config.backfillDays)
      const states = new Map((yield* repo.states(all.map((m) => m.account.id))).map((s) => [s.account_id, s]))
      const due = all.filter((m) => {
        const s = states.get(m.account.id)
        return s?.covered_from == null || s.covered_from > horizon
      })
      const results = yield* Effect.forEach(due, (m) => backfillAccount(m, pace), {
        concurrency: config.concurrency
      })
      return yield* summarize("backfill", results)
    })

    return { refreshRecent, refreshNightly, backfill } as const
  }),
  dependencies: [SalesLedgerRepo.Default]
}) {}
