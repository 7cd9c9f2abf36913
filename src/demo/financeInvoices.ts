/**
 * The demo's commission invoices and credit notes (issue 15, docs/api/invoices.md): on every start,
 * after the demo operators have their payout accounts (./paymentProvider.ts), the last three months
 * are issued oldest first from the demo's commission ledger (commission_entries, which the ledger's
 * writers and the finance demo fill), exactly as the commission-close job issues a month. Idempotent:
 * a month issued for a legal entity is never issued again, so a second start adds nothing; a month
 * with nothing final to invoice yet is issued by a later start or by the job.
 */
import { Clock, Effect } from "effect"
import { InvoiceIssuing } from "../invoices/InvoiceIssuing.js"
import { monthOf, previousMonth } from "../invoices/rules.js"

export const DEMO_INVOICE_MONTHS = 3

export const issueDemoInvoices = Effect.gen(function*() {
  const issuing = yield* InvoiceIssuing
  const current = monthOf(new Date(yield* Clock.currentTimeMillis))
  const months: Array<string> = []
  for (let m = previousMonth(current); months.length < DEMO_INVOICE_MONTHS; m = previousMonth(m)) months.unshift(m)
  let documents = 0
  for (const month of months) documents += (yield* issuing.closeMonth(month)).documents
  yield* Effect.logInfo(`demo commission invoices: ${documents} issued for ${months.join(", ")}`)
}).pipe(Effect.provide(InvoiceIssuing.Default))
