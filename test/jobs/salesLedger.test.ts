/**
 * The sales ledger's jobs as the service runs them (JobsLive: ClusterCron runs recorded in job_runs)
 * against the Bókun sandbox over HTTP: an account linked while the service runs gets its recent
 * refresh and its backfill with nobody doing anything; an account whose sales cannot be read is
 * recorded as failed and never stops the other.
 */
import { NodeHttpClient } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { bookingSystemLayer } from "../../src/adapters/BookingSystemLive.js"
import { layerFromUrl } from "../../src/db/Database.js"
import { SALES_LEDGER_BACKFILL, SALES_LEDGER_RECENT } from "../../src/jobs/salesLedger.js"
import { Operators } from "../../src/operators/Operators.js"
import { startSandbox } from "../../src/sandbox/bokun/index.js"
import { smallVendor, TEST_ADAPTER } from "../sandbox/env.js"
import { makeWorld } from "../support/fixtures.js"
import { jobsInstance } from "../support/jobs.js"
import { freshDatabase } from "../support/server.js"
import { linkSandboxAccount } from "../support/tours.js"

const bookingSystem = bookingSystemLayer(TEST_ADAPTER).pipe(Layer.provide(NodeHttpClient.layer))

const DAY = 86_400_000
const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10)

layer(Layer.empty, { excludeTestServices: true, timeout: 120_000 })("sales ledger jobs", (it) => {
  it.scoped("a newly linked account is refreshed and backfilled on schedule; a failing one is recorded, the other goes on", () =>
    Effect.gen(function*() {
      const url = yield* freshDatabase
      const context = yield* Layer.build(Operators.Default.pipe(Layer.provideMerge(layerFromUrl(url, 3))))
      const sql = Context.get(context, SqlClient.SqlClient)
      const sandbox = yield* startSandbox({ port: 0 }).pipe(Effect.provide(context))

      yield* Layer.build(
        jobsInstance(url, undefined, {
          SALES_LEDGER_RECENT_CRON: "*/2 * * * * *",
          SALES_LEDGER_BACKFILL_CRON: "*/3 * * * * *",
          SALES_LEDGER_BACKFILL_DAYS: "20",
          SALES_LEDGER_BACKFILL_CHUNK_DAYS: "6",
          SALES_LEDGER_PAGE_PAUSE_MS: "1",
          SALES_LEDGER_RETRIES: "0"
        }, bookingSystem)
      )

      // Linked while the jobs run: one whose sales can be read, one whose sales cannot.
      const w = yield* makeWorld.pipe(Effect.provide(context))
      const up = yield* sandbox.createVendor(smallVendor(`Sales Up ${w.tag}`, { capacity: null }))
      const down = yield* sandbox.createVendor(smallVendor(`Sales Down ${w.tag}`))
      yield* sandbox.faults.set({ failCreationSearch: true }, { vendorId: down.id })
      const now = Date.now()
      const made: Array<string> = []
      for (const daysAgo of [0, 1, 5, 12, 19]) {
        const b = yield* sandbox.addBooking({
          vendorId: up.id,
          productId: up.products[0]!.id,
          date: utcDay(now + 30 * DAY),
          createdAt: new Date(now - daysAgo * DAY - 60_000)
        })
        made.push(String(b.lineIds[0]))
      }
      const upAccount = yield* linkSandboxAccount(w.alpha, sandbox.baseUrl, up).pipe(Effect.provide(context))
      const downAccount = yield* linkSandboxAccount(w.beta, sandbox.baseUrl, down).pipe(Effect.provide(context))

      let coverage: ReadonlyArray<{ account_id: string; covered_from: string | null; last_outcome: string }> = []
      const horizon = utcDay(Date.now() - 20 * DAY)
      const finishedRuns = sql<{ job: string; outcome: string }>`
        SELECT job, outcome FROM job_runs WHERE job IN (${SALES_LEDGER_RECENT}, ${SALES_LEDGER_BACKFILL})
          AND finished_at IS NOT NULL`
      // Until the backfill reached the horizon and each job has finished a run (on a loaded machine
      // the backfill may get there before the first recent run has finished).
      for (let i = 0; i < 80; i++) {
        yield* Effect.sleep("500 millis")
        coverage = yield* sql<{ account_id: string; covered_from: string | null; last_outcome: string }>`
          SELECT account_id, covered_from, last_outcome FROM sales_ledger_accounts`
        const upRow = coverage.find((c) => c.account_id === upAccount)
        const jobs = new Set((yield* finishedRuns).map((r) => r.job))
        if (upRow?.covered_from != null && upRow.covered_from <= horizon && coverage.length === 2 && jobs.size === 2) {
          break
        }
      }
      const byAccount = new Map(coverage.map((c) => [c.account_id, c]))
      expect(byAccount.get(upAccount)).toMatchObject({ last_outcome: "ok" })
      expect(byAccount.get(upAccount)!.covered_from! <= horizon).toBe(true)
      expect(byAccount.get(downAccount)).toMatchObject({ covered_from: null, last_outcome: "failed" })
      const lines = yield* sql<
        { line_id: string }
      >`SELECT line_id FROM sales_ledger_lines WHERE account_id = ${upAccount}`
      expect(lines.map((l) => l.line_id).sort()).toEqual([...made].sort())

      const runs = yield* finishedRuns
      expect(new Set(runs.map((r) => r.job))).toEqual(new Set([SALES_LEDGER_RECENT, SALES_LEDGER_BACKFILL]))
      // An account failing never fails the run.
      expect(runs.every((r) => r.outcome === "ok")).toBe(true)
    }))
})
