/**
 * Monthly (COMMISSION_CLOSE_CRON, default the 2nd at 03:00 UTC, a day after the month ends so that
 * entries settled on the last day are final): the commission invoices and credit notes of the month
 * just ended, per legal entity (src/invoices/InvoiceIssuing.ts), once across all instances and
 * recorded in `job_runs`. A month is issued once per legal entity; one entity's failure is logged,
 * counted in the run's summary and never fails the run (the next run's close picks up its entries).
 */
import { ClusterCron } from "@effect/cluster"
import { Clock, Effect, Layer } from "effect"
import { InvoiceConfig } from "../invoices/config.js"
import { InvoiceIssuing } from "../invoices/InvoiceIssuing.js"
import { monthOf, previousMonth } from "../invoices/rules.js"
import { recordedRun } from "./runs.js"

export const COMMISSION_CLOSE = "commission-close"

/** One run: the month before the current UTC month. */
export const commissionCloseRun = Effect.gen(function*() {
  const issuing = yield* InvoiceIssuing
  const month = previousMonth(monthOf(new Date(yield* Clock.currentTimeMillis)))
  const { results, ...summary } = yield* issuing.closeMonth(month)
  return { ...summary, failures: results.filter((r) => !r.ok).map((r) => ({ merchant: r.merchantId, error: r.error })) }
})

export const commissionCloseJob = Layer.unwrapEffect(
  Effect.map(InvoiceConfig, (config) =>
    ClusterCron.make({
      name: COMMISSION_CLOSE,
      cron: config.closeCron,
      execute: recordedRun(COMMISSION_CLOSE, () => commissionCloseRun),
      // A run missed while no instance was up is still worth doing within the month.
      skipIfOlderThan: "20 days"
    }))
).pipe(Layer.provide(InvoiceIssuing.Default))
