/**
 * A document's CSV specification (csv-stringify): UTF-8 with a byte-order mark, `;` between fields
 * and amounts as decimals with a comma, so that spreadsheet programs set up for Norway open it as
 * columns and numbers. One row per line, then a `total` row with the document's totals. The columns
 * are `CSV_COLUMNS` (docs/api/invoices.md "CSV specification").
 */
import { stringify } from "csv-stringify/sync"
import type { InvoiceDocument } from "./document.js"
import { decimalComma } from "./rules.js"

export const CSV_COLUMNS = [
  "number",
  "type",
  "issue_date",
  "due_date",
  "period",
  "currency",
  "line",
  "kind",
  "partner",
  "booking_id",
  "confirmation_code",
  "tour",
  "experience_date",
  "description",
  "commission_rate_percent",
  "booking_gross",
  "net",
  "vat_rate_percent",
  "vat",
  "gross",
  "deducted_from_payouts",
  "corrects_invoice",
  "cancellation_fee"
] as const

const BOM = "\uFEFF"

export const invoiceCsv = (doc: InvoiceDocument): Uint8Array => {
  const head = [doc.number, doc.type, doc.issueDate, doc.dueDate, doc.month, doc.currency]
  const rate = String(doc.vatRatePercent).replace(".", ",")
  const rows = doc.lines.map((l) => [
    ...head,
    String(l.lineNo),
    l.kind,
    l.operatorName,
    l.bookingId,
    l.confirmationCode,
    l.tour ?? "",
    l.experienceDate ?? "",
    l.description,
    l.commissionRatePercent === null ? "" : String(l.commissionRatePercent).replace(".", ","),
    decimalComma(l.bookingGrossMinor),
    decimalComma(l.netMinor),
    rate,
    decimalComma(l.vatMinor),
    decimalComma(l.grossMinor),
    decimalComma(l.deductedMinor),
    l.correctsInvoiceNumber ?? "",
    l.cancellationFeeMinor === null ? "" : decimalComma(l.cancellationFeeMinor)
  ])
  const total = [
    ...head,
    "",
    "total",
    doc.buyer.name,
    "",
    "",
    "",
    "",
    `Total, still payable ${decimalComma(doc.payableMinor)}`,
    "",
    "",
    decimalComma(doc.netMinor),
    rate,
    decimalComma(doc.vatMinor),
    decimalComma(doc.grossMinor),
    decimalComma(doc.deductedMinor),
    "",
    ""
  ]
  const text = stringify([[...CSV_COLUMNS], ...rows, total], { delimiter: ";", record_delimiter: "\r\n" })
  return new Uint8Array(Buffer.from(BOM + text, "utf8"))
}
