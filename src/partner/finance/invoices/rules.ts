/** Pure rules of GET /api/v1/finance/invoices: the month parameters and the document as the API shows it. */
import { Either, Schema } from "effect"
import { InvalidRequest } from "../../../domain/errors.js"
import { correctedInvoices, type InvoiceDocument } from "../../../invoices/document.js"
import { monthEnd, vatNumberOf } from "../../../invoices/rules.js"
import type { CommissionInvoice } from "./Api.js"

export const DOCUMENT_TYPES = ["invoice", "credit_note"] as const
export const INVOICE_LIMIT_DEFAULT = 24
/** Longest `period_from`–`period_to` range, in months counting both (a year: the finance ranges' 366 days). */
export const MAX_MONTHS = 12

export const IsoMonth = Schema.String.pipe(
  Schema.pattern(/^\d{4}-(0[1-9]|1[0-2])$/, { message: () => "must be a month YYYY-MM" })
).annotations({
  jsonSchema: { type: "string", pattern: "^\\d{4}-(0[1-9]|1[0-2])$", maxLength: 7 },
  examples: ["2026-10"]
})

const monthIndex = (month: string) => Number(month.slice(0, 4)) * 12 + Number(month.slice(5, 7)) - 1

/** With both given: `period_to` not before `period_from`, at most MAX_MONTHS months. */
export const checkPeriods = (
  p: { readonly period_from?: string | undefined; readonly period_to?: string | undefined }
) => {
  if (p.period_from === undefined || p.period_to === undefined) return Either.void
  const months = monthIndex(p.period_to) - monthIndex(p.period_from) + 1
  if (months < 1) {
    return Either.left(new InvalidRequest({ detail: "period_to must not be before period_from", field: "period_to" }))
  }
  if (months > MAX_MONTHS) {
    return Either.left(
      new InvalidRequest({
        detail: `period_from to period_to spans ${months} months; at most ${MAX_MONTHS}`,
        field: "period_to"
      })
    )
  }
  return Either.void
}

/** A stored document as the read shows it, with its buyer's operators and its file links. */
export const toApi = (
  doc: InvoiceDocument,
  partners: ReadonlyArray<{ readonly id: string; readonly name: string }>,
  files: CommissionInvoice["files"]
): CommissionInvoice => ({
  id: doc.id,
  number: doc.number,
  type: doc.type,
  status: doc.status,
  period: { month: doc.month, start: `${doc.month}-01`, end: monthEnd(doc.month) },
  issue_date: doc.issueDate,
  due_date: doc.dueDate,
  currency: doc.currency,
  seller: {
    name: doc.seller.name,
    org_number: doc.seller.orgNumber,
    vat_number: vatNumberOf(doc.seller.orgNumber),
    address: doc.seller.address,
    email: doc.seller.email,
    bank_account: doc.seller.bankAccount
  },
  buyer: { name: doc.buyer.name, org_number: doc.buyer.orgNumber, partners },
  vat_rate_percent: doc.vatRatePercent,
  net_minor: doc.netMinor,
  vat_minor: doc.vatMinor,
  gross_minor: doc.grossMinor,
  deducted_from_payouts_minor: doc.deductedMinor,
  payable_minor: doc.payableMinor,
  corrects: correctedInvoices(doc),
  lines: doc.lines.map((l) => ({
    line: l.lineNo,
    kind: l.kind,
    partner: { id: l.operatorId, name: l.operatorName },
    booking: { id: l.bookingId, confirmation_code: l.confirmationCode, experience_date: l.experienceDate },
    tour: l.tour,
    description: l.description,
    commission_rate_percent: l.commissionRatePercent,
    booking_gross_minor: l.bookingGrossMinor,
    net_minor: l.netMinor,
    vat_minor: l.vatMinor,
    gross_minor: l.grossMinor,
    deducted_from_payouts_minor: l.deductedMinor,
    corrects_invoice: l.correctsInvoiceId === null
      ? null
      : { id: l.correctsInvoiceId, number: l.correctsInvoiceNumber ?? "" },
    original_net_minor: l.originalNetMinor,
    cancellation_fee_minor: l.cancellationFeeMinor
  })),
  files
})
