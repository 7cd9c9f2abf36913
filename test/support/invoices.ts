/**
 * Commission invoices in tests: ledger entries written directly (the table of migration 0029; the
 * ledger's own writers are not needed), payout accounts, closes run through InvoiceIssuing, and the
 * text a pdfkit document draws.
 */
import { SqlClient } from "@effect/sql"
import { ConfigProvider, Effect } from "effect"
import { randomUUID } from "node:crypto"
import { InvoiceIssuing } from "../../src/invoices/InvoiceIssuing.js"
import { insertBooking } from "./fixtures.js"

export interface EntryInput {
  readonly bookingId: string
  readonly operatorId: string
  readonly type?: "sale" | "cancellation" | "difference"
  readonly occurredAt: string
  readonly currency?: string
  readonly grossMinor?: number
  readonly ratePercent?: number
  readonly commissionMinor: number
  readonly pending?: boolean
}

export const insertEntry = (e: EntryInput) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ id: string }>`
      INSERT INTO commission_entries (booking_id, operator_id, type, occurred_at, currency, gross_minor,
        commission_rate_percent, commission_minor, pending, source_key)
      VALUES (${e.bookingId}, ${e.operatorId}, ${e.type ?? "sale"}, ${new Date(e.occurredAt)}, ${e.currency ?? "NOK"},
        ${e.grossMinor ?? e.commissionMinor * 10}, ${e.ratePercent ?? 10}, ${e.commissionMinor}, ${e.pending ?? false},
        ${`test:${randomUUID()}`})
      RETURNING id`).pipe(Effect.map((rows) => rows[0]!.id), Effect.orDie)

/** A booking of `operatorId` with a sale entry of `commissionMinor` at `occurredAt`. */
export const sale = (
  operatorId: string,
  occurredAt: string,
  commissionMinor: number,
  extra: Partial<EntryInput> & { tourName?: string } = {}
) =>
  Effect.gen(function*() {
    const bookingId = yield* insertBooking({
      operatorId,
      tourName: extra.tourName ?? "Fjord Safari",
      experienceDate: occurredAt.slice(0, 10),
      amountMinor: commissionMinor * 10,
      currency: extra.currency ?? "NOK"
    })
    const entryId = yield* insertEntry({ bookingId, operatorId, occurredAt, commissionMinor, ...extra })
    return { bookingId, entryId }
  })

/** The operators paid through `merchantId` (one legal entity). */
export const payoutAccount = (merchantId: string, operatorIds: ReadonlyArray<string>) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      Effect.forEach(operatorIds, (operatorId) =>
        sql`INSERT INTO operator_payment_accounts (operator_id, merchant_id) VALUES (${operatorId}, ${merchantId})`)
  ).pipe(
    Effect.orDie
  )

export const setLegal = (operatorId: string, legalName: string, orgNumber: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`UPDATE operators SET legal_name = ${legalName}, org_number = ${orgNumber} WHERE id = ${operatorId}`
  ).pipe(
    Effect.orDie
  )

/** A close of `month` for these payout accounts, with settings `env` (e.g. CRASH_AT). */
export const close = (month: string, merchantIds: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  Effect.flatMap(InvoiceIssuing, (issuing) => issuing.closeMonth(month, { merchantIds })).pipe(
    Effect.provide(InvoiceIssuing.Default),
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))
  )

export const reissue = (which: { id: string } | { number: string }) =>
  Effect.flatMap(InvoiceIssuing, (issuing) => issuing.reissueFiles(which)).pipe(
    Effect.provide(InvoiceIssuing.Default),
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map()))
  )

export interface StoredDoc {
  readonly id: string
  readonly number: string
  readonly type: string
  readonly sequence: number
  readonly currency: string
  readonly net_minor: number
  readonly vat_minor: number
  readonly gross_minor: number
  readonly deducted_minor: number
  readonly payable_minor: number
  readonly status: string
}

export const documentsOf = (merchantId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<StoredDoc>`
      SELECT id, number, type, sequence, currency, net_minor, vat_minor, gross_minor, deducted_minor, payable_minor, status
      FROM commission_invoices WHERE merchant_id = ${merchantId} ORDER BY list_key, number`).pipe(Effect.orDie)

export const linesOfDoc = (invoiceId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{
      line_no: number
      kind: string
      booking_id: string
      net_minor: number
      vat_minor: number
      gross_minor: number
      deducted_minor: number
      corrects_invoice_id: string | null
      original_net_minor: number | null
      cancellation_fee_minor: number | null
    }>`SELECT * FROM commission_invoice_lines WHERE invoice_id = ${invoiceId} ORDER BY line_no`).pipe(Effect.orDie)

/** Every number of a series, in order. */
export const sequences = (series: "invoice" | "credit_note") =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ sequence: number; last: number }>`
      SELECT i.sequence, s.last_number AS last FROM commission_invoices i JOIN invoice_series s USING (series)
      WHERE i.series = ${series} ORDER BY i.sequence`).pipe(Effect.orDie)

export const storedFile = (invoiceId: string, kind: "pdf" | "csv") =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ content: Buffer; sha256: string; reissues: number }>`
      SELECT content, sha256, reissues FROM commission_invoice_files WHERE invoice_id = ${invoiceId} AND kind = ${kind}`)
    .pipe(Effect.map((rows) => rows[0]!), Effect.orDie)

export { pdfText } from "./pdf.js"
