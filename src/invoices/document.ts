/** A commission invoice or credit note as issued (stored in commission_invoices and its lines): what the PDF, the CSV and the read show. */
import type { DocumentStatus, DocumentType, LineFigures } from "./rules.js"

/** An issued line: its figures, its place, and the names printed with it. */
export interface DocumentLine extends LineFigures {
  readonly lineNo: number
  readonly operatorName: string
  readonly correctsInvoiceNumber: string | null
}

export interface InvoiceDocument {
  readonly id: string
  readonly type: DocumentType
  readonly number: string
  readonly status: DocumentStatus
  readonly merchantId: string
  /** Delivery month, YYYY-MM. */
  readonly month: string
  readonly currency: string
  readonly issueDate: string
  readonly dueDate: string
  readonly issuedAt: Date
  readonly seller: {
    readonly name: string
    readonly orgNumber: string
    readonly address: string
    readonly email: string | null
    readonly bankAccount: string | null
  }
  readonly buyer: {
    readonly name: string
    readonly orgNumber: string | null
    readonly operatorIds: ReadonlyArray<string>
  }
  readonly vatRatePercent: number
  readonly netMinor: number
  readonly vatMinor: number
  readonly grossMinor: number
  readonly deductedMinor: number
  readonly payableMinor: number
  readonly lines: ReadonlyArray<DocumentLine>
}

/** The invoices a credit note corrects (each once, in line order). */
export const correctedInvoices = (doc: Pick<InvoiceDocument, "lines">) => {
  const seen = new Map<string, string>()
  for (const l of doc.lines) {
    if (l.correctsInvoiceId !== null && !seen.has(l.correctsInvoiceId)) {
      seen.set(l.correctsInvoiceId, l.correctsInvoiceNumber ?? "")
    }
  }
  return [...seen].map(([id, number]) => ({ id, number }))
}
