/**
 * The SQL of issuing commission invoices and credit notes (InvoiceIssuing) and of their stored
 * files: the legal entities, a close's entries, the series counters, the documents, their lines and
 * files (migration 0033). A database error is a defect here, once.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { repoEdge, theRow } from "../db/repoEdge.js"
import { toPgArray } from "../db/sql.js"
import type { DocumentLine, InvoiceDocument } from "./document.js"
import type { BookingBilling, CloseEntry, DocumentStatus, DocumentType, PlannedLine } from "./rules.js"

/** A legal entity: a payout account (merchant) and the operators paid through it. */
export interface LegalEntity {
  readonly merchant_id: string
  readonly operator_ids: ReadonlyArray<string>
  readonly legal_name: string | null
  readonly org_number: string | null
  readonly first_name: string
}

/** A document to issue: what the issued one holds but its id and lines, with its number's sequence and its place among those issued at the same instant. */
export interface NewDocument extends Omit<InvoiceDocument, "id" | "lines"> {
  readonly sequence: number
  /** The document's place among those issued at the same instant (0, 1, …): the read's order after the month. */
  readonly ordinal: number
}

interface DocumentRow {
  readonly id: string
  readonly type: DocumentType
  readonly number: string
  readonly status: DocumentStatus
  readonly merchant_id: string
  readonly period_month: string
  readonly currency: string
  readonly issue_date: string
  readonly due_date: string
  readonly issued_at: Date
  readonly seller_name: string
  readonly seller_org_number: string
  readonly seller_address: string
  readonly seller_email: string | null
  readonly seller_bank_account: string | null
  readonly buyer_name: string
  readonly buyer_org_number: string | null
  readonly buyer_operator_ids: ReadonlyArray<string>
  readonly vat_rate_percent: number
  readonly net_minor: number
  readonly vat_minor: number
  readonly gross_minor: number
  readonly deducted_minor: number
  readonly payable_minor: number
}

interface LineRow {
  readonly invoice_id: string
  readonly line_no: number
  readonly kind: "commission" | "refund_credit"
  readonly booking_id: string
  readonly operator_id: string
  readonly operator_name: string
  readonly confirmation_code: string
  readonly tour: string | null
  readonly experience_date: string | null
  readonly description: string
  readonly commission_rate_percent: number | null
  readonly booking_gross_minor: number
  readonly net_minor: number
  readonly vat_minor: number
  readonly gross_minor: number
  readonly deducted_minor: number
  readonly corrects_invoice_id: string | null
  readonly corrects_number: string | null
  readonly original_net_minor: number | null
  readonly cancellation_fee_minor: number | null
}

/** The document columns every read selects (`i` is commission_invoices). */
export const documentColumns = (sql: SqlClient.SqlClient) =>
  sql`i.id, i.type, i.number, i.status, i.merchant_id, to_char(i.period_month, 'YYYY-MM') AS period_month,
    i.currency, i.issue_date, i.due_date, i.issued_at, i.seller_name, i.seller_org_number, i.seller_address,
    i.seller_email, i.seller_bank_account, i.buyer_name, i.buyer_org_number, i.buyer_operator_ids::text[] AS buyer_operator_ids,
    i.vat_rate_percent, i.net_minor, i.vat_minor, i.gross_minor, i.deducted_minor, i.payable_minor`

export const toDocument = (row: DocumentRow, lines: ReadonlyArray<LineRow>): InvoiceDocument => ({
  id: row.id,
  type: row.type,
  number: row.number,
  status: row.status,
  merchantId: row.merchant_id,
  month: row.period_month,
  currency: row.currency,
  issueDate: row.issue_date,
  dueDate: row.due_date,
  issuedAt: row.issued_at,
  seller: {
    name: row.seller_name,
    orgNumber: row.seller_org_number,
    address: row.seller_address,
    email: row.seller_email,
    bankAccount: row.seller_bank_account
  },
  buyer: { name: row.buyer_name, orgNumber: row.buyer_org_number, operatorIds: row.buyer_operator_ids },
  vatRatePercent: row.vat_rate_percent,
  netMinor: row.net_minor,
  vatMinor: row.vat_minor,
  grossMinor: row.gross_minor,
  deductedMinor: row.deducted_minor,
  payableMinor: row.payable_minor,
  lines: lines.map((l): DocumentLine => ({
    lineNo: l.line_no,
    kind: l.kind,
    bookingId: l.booking_id,
    operatorId: l.operator_id,
    operatorName: l.operator_name,
    confirmationCode: l.confirmation_code,
    tour: l.tour,
    experienceDate: l.experience_date,
    description: l.description,
    commissionRatePercent: l.commission_rate_percent,
    bookingGrossMinor: l.booking_gross_minor,
    netMinor: l.net_minor,
    vatMinor: l.vat_minor,
    grossMinor: l.gross_minor,
    deductedMinor: l.deducted_minor,
    correctsInvoiceId: l.corrects_invoice_id,
    correctsInvoiceNumber: l.corrects_number,
    originalNetMinor: l.original_net_minor,
    cancellationFeeMinor: l.cancellation_fee_minor
  }))
})

/** The lines of some documents, in line order. */
export const linesOf = (sql: SqlClient.SqlClient, invoiceIds: ReadonlyArray<string>) =>
  sql<LineRow>`
    SELECT l.invoice_id, l.line_no, l.kind, l.booking_id, l.operator_id, l.operator_name, l.confirmation_code, l.tour,
      l.experience_date, l.description, l.commission_rate_percent, l.booking_gross_minor, l.net_minor, l.vat_minor,
      l.gross_minor, l.deducted_minor, l.corrects_invoice_id, c.number AS corrects_number, l.original_net_minor,
      l.cancellation_fee_minor
    FROM commission_invoice_lines l
    LEFT JOIN commission_invoices c ON c.id = l.corrects_invoice_id
    WHERE l.invoice_id = ANY(${toPgArray(invoiceIds)}::uuid[])
    ORDER BY l.invoice_id, l.line_no`

export class InvoicesRepo extends Effect.Service<InvoicesRepo>()("Invoices/InvoicesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Every payout account with its operators; the legal name and org number of the first operator (by name) that has them. */
    const legalEntities = () =>
      sql<LegalEntity>`
        SELECT a.merchant_id, array_agg(o.id::text ORDER BY o.name, o.id) AS operator_ids,
          (array_agg(o.legal_name ORDER BY o.name, o.id) FILTER (WHERE o.legal_name IS NOT NULL))[1] AS legal_name,
          (array_agg(o.org_number ORDER BY o.name, o.id) FILTER (WHERE o.org_number IS NOT NULL))[1] AS org_number,
          (array_agg(o.name ORDER BY o.name, o.id))[1] AS first_name
        FROM operator_payment_accounts a JOIN operators o ON o.id = a.operator_id
        GROUP BY a.merchant_id
        ORDER BY a.merchant_id`

    /** Serialises the closes of one legal entity (until the transaction ends). */
    const lockEntity = (merchantId: string) =>
      sql`SELECT pg_advisory_xact_lock(hashtext('commission-close'), hashtext(${merchantId}))`

    const closeExists = (merchantId: string, month: string) =>
      Effect.map(
        sql<{ one: number }>`
          SELECT 1 AS one FROM commission_closes WHERE merchant_id = ${merchantId} AND period_month = ${
          month + "-01"
        }::date`,
        (rows) => rows.length > 0
      )

    const recordClose = (merchantId: string, month: string, at: Date, documents: number) =>
      sql`
        INSERT INTO commission_closes (merchant_id, period_month, closed_at, documents)
        VALUES (${merchantId}, ${month + "-01"}::date, ${at}, ${documents})`

    /** The entity's final, uninvoiced entries with commission that occurred before `before`. */
    const closeEntries = (operatorIds: ReadonlyArray<string>, before: Date) =>
      sql<CloseEntry>`
        SELECT e.id, e.booking_id, e.operator_id, e.type, e.occurred_at, e.currency, e.gross_minor,
          e.commission_rate_percent, e.commission_minor, b.confirmation_code, b.tour_name AS tour,
          to_char(b.experience_date, 'YYYY-MM-DD') AS experience_date
        FROM commission_entries e
        JOIN bookings b ON b.id = e.booking_id
        WHERE e.operator_id = ANY(${toPgArray(operatorIds)}::uuid[])
          AND e.occurred_at < ${before} AND NOT e.pending AND e.commission_minor <> 0
          AND NOT EXISTS (SELECT 1 FROM commission_invoice_entries x WHERE x.entry_id = e.id)
        ORDER BY e.occurred_at, e.id`

    /** The next number of a series, taken in the caller's transaction (the row stays locked until it ends). */
    const takeNumber = (series: DocumentType) =>
      Effect.flatMap(
        sql<{ prefix: string; last_number: number }>`
          UPDATE invoice_series SET last_number = last_number + 1, updated_at = now()
          WHERE series = ${series} RETURNING prefix, last_number`,
        theRow
      )

    const insertDocument = (d: NewDocument) =>
      Effect.flatMap(
        sql<{ id: string }>`
          INSERT INTO commission_invoices (
            type, series, sequence, number, merchant_id, period_month, currency, issue_date, due_date, issued_at,
            seller_name, seller_org_number, seller_address, seller_email, seller_bank_account,
            buyer_name, buyer_org_number, buyer_operator_ids, vat_rate_percent,
            net_minor, vat_minor, gross_minor, deducted_minor, payable_minor, status, list_key)
          VALUES (
            ${d.type}, ${d.type}, ${d.sequence}, ${d.number}, ${d.merchantId}, ${d.month + "-01"}::date, ${d.currency},
            ${d.issueDate}::date, ${d.dueDate}::date, ${d.issuedAt},
            ${d.seller.name}, ${d.seller.orgNumber}, ${d.seller.address}, ${d.seller.email}, ${d.seller.bankAccount},
            ${d.buyer.name}, ${d.buyer.orgNumber}, ${toPgArray(d.buyer.operatorIds)}::uuid[], ${d.vatRatePercent},
            ${d.netMinor}, ${d.vatMinor}, ${d.grossMinor}, ${d.deductedMinor}, ${d.payableMinor}, ${d.status},
            ${Number(d.month.replace("-", ""))}::int8 * 10000000000000 + ${d.issuedAt.getTime() + d.ordinal}::int8)
          RETURNING id`,
        (rows) => Effect.map(theRow(rows), (row) => row.id)
      )

    const insertLines = (
      invoiceId: string,
      lines: ReadonlyArray<PlannedLine>,
      operatorNames: ReadonlyMap<string, string>
    ) =>
      Effect.gen(function*() {
        if (lines.length === 0) return
        yield* sql`
          INSERT INTO commission_invoice_lines ${
          sql.insert(lines.map((l, i) => ({
            invoice_id: invoiceId,
            line_no: i + 1,
            kind: l.kind,
            booking_id: l.bookingId,
            operator_id: l.operatorId,
            operator_name: operatorNames.get(l.operatorId) ?? "",
            confirmation_code: l.confirmationCode,
            tour: l.tour,
            experience_date: l.experienceDate,
            first_occurred_at: l.firstOccurredAt,
            description: l.description,
            commission_rate_percent: l.commissionRatePercent,
            booking_gross_minor: l.bookingGrossMinor,
            net_minor: l.netMinor,
            vat_minor: l.vatMinor,
            gross_minor: l.grossMinor,
            deducted_minor: l.deductedMinor,
            corrects_invoice_id: l.correctsInvoiceId,
            original_net_minor: l.originalNetMinor,
            cancellation_fee_minor: l.cancellationFeeMinor
          })))
        }`
        const entries = lines.flatMap((l) => l.entryIds.map((entry_id) => ({ entry_id, invoice_id: invoiceId })))
        yield* sql`INSERT INTO commission_invoice_entries ${sql.insert(entries)}`
      })

    /** What the documents issued so far billed and credited for these bookings, per booking and currency. */
    const billing = (bookingIds: ReadonlyArray<string>) =>
      Effect.map(
        sql<{
          booking_id: string
          currency: string
          invoice_id: string
          number: string
          line_net_minor: number
          billed_net_minor: number
          credited_net_minor: number
        }>`
          WITH latest AS (
            SELECT DISTINCT ON (l.booking_id, i.currency) l.booking_id, i.currency, i.id AS invoice_id, i.number,
              l.net_minor AS line_net_minor
            FROM commission_invoice_lines l JOIN commission_invoices i ON i.id = l.invoice_id
            WHERE l.booking_id = ANY(${toPgArray(bookingIds)}::uuid[]) AND l.kind = 'commission'
            ORDER BY l.booking_id, i.currency, i.list_key DESC, i.id DESC
          ), sums AS (
            SELECT l.booking_id, i.currency,
              coalesce(sum(l.net_minor) FILTER (WHERE l.kind = 'commission'), 0)::int8 AS billed_net_minor,
              coalesce(sum(l.net_minor) FILTER (WHERE l.kind = 'refund_credit'), 0)::int8 AS credited_net_minor
            FROM commission_invoice_lines l JOIN commission_invoices i ON i.id = l.invoice_id
            WHERE l.booking_id = ANY(${toPgArray(bookingIds)}::uuid[])
            GROUP BY l.booking_id, i.currency
          )
          SELECT latest.*, sums.billed_net_minor, sums.credited_net_minor
          FROM latest JOIN sums USING (booking_id, currency)`,
        (rows) =>
          new Map(rows.map((r): [string, BookingBilling] => [`${r.booking_id}:${r.currency}`, {
            invoiceId: r.invoice_id,
            invoiceNumber: r.number,
            lineNetMinor: r.line_net_minor,
            billedNetMinor: r.billed_net_minor,
            creditedNetMinor: r.credited_net_minor
          }]))
      )

    const operatorNames = (operatorIds: ReadonlyArray<string>) =>
      Effect.map(
        sql<{ id: string; name: string }>`SELECT id, name FROM operators WHERE id = ANY(${
          toPgArray(operatorIds)
        }::uuid[])`,
        (rows) => new Map(rows.map((r) => [r.id, r.name]))
      )

    /** Stores (or, re-issued, replaces) a document's file. */
    const storeFile = (
      f: { invoiceId: string; kind: "pdf" | "csv"; content: Uint8Array; sha256: string; at: Date }
    ) =>
      sql`
        INSERT INTO commission_invoice_files (invoice_id, kind, content, sha256, generated_at)
        VALUES (${f.invoiceId}, ${f.kind}, ${Buffer.from(f.content)}, ${f.sha256}, ${f.at})
        ON CONFLICT (invoice_id, kind) DO UPDATE SET content = EXCLUDED.content, sha256 = EXCLUDED.sha256,
          generated_at = EXCLUDED.generated_at, reissues = commission_invoice_files.reissues + 1`

    const findFile = (invoiceId: string, kind: "pdf" | "csv") =>
      Effect.map(
        sql<{ content: Buffer; number: string }>`
          SELECT f.content, i.number FROM commission_invoice_files f JOIN commission_invoices i ON i.id = f.invoice_id
          WHERE f.invoice_id = ${invoiceId} AND f.kind = ${kind}`,
        (rows) => Option.fromNullable(rows[0])
      )

    /** One document with its lines, by id or number. */
    const findDocument = (idOrNumber: { readonly id: string } | { readonly number: string }) =>
      Effect.gen(function*() {
        const rows = yield* ("id" in idOrNumber
          ? sql<DocumentRow>`SELECT ${documentColumns(sql)} FROM commission_invoices i WHERE i.id = ${idOrNumber.id}`
          : sql<DocumentRow>`SELECT ${
            documentColumns(sql)
          } FROM commission_invoices i WHERE i.number = ${idOrNumber.number}`)
        const row = rows[0]
        if (row === undefined) return Option.none<InvoiceDocument>()
        return Option.some(toDocument(row, yield* linesOf(sql, [row.id])))
      })

    /** The documents of a close, for its summary and the demo. */
    const numbersOfSeries = (series: DocumentType) =>
      Effect.map(
        sql<{ sequence: number }>`SELECT sequence FROM commission_invoices WHERE series = ${series} ORDER BY sequence`,
        (rows) => rows.map((r) => r.sequence)
      )

    return repoEdge("InvoicesRepo", {
      legalEntities,
      lockEntity,
      closeExists,
      recordClose,
      closeEntries,
      takeNumber,
      insertDocument,
      insertLines,
      billing,
      operatorNames,
      storeFile,
      findFile,
      findDocument,
      numbersOfSeries
    })
  })
}) {}
