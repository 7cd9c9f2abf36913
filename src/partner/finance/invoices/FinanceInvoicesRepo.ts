/**
 * The SQL of GET /api/v1/finance/invoices: the payout accounts (legal entities) of the operators in
 * view, their documents newest delivery month first (keyset on `list_key`, id; index
 * commission_invoices_list), the documents' lines, the operators' names, and a stored file.
 *
 * The list's statements have no spans of their own (`repoEdge.untraced`, as BookingsRepo):
 * FinanceInvoices.list's span and the driver's cover them (bench/README.md, issue 15: the finance lists).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { repoEdge } from "../../../db/repoEdge.js"
import { toPgArray } from "../../../db/sql.js"
import type { CursorPosition } from "../../../http/cursor.js"
import { documentColumns, linesOf, toDocument } from "../../../invoices/InvoicesRepo.js"

export interface InvoiceListRequest {
  readonly merchantIds: ReadonlyArray<string>
  readonly periodFrom?: string | undefined
  readonly periodTo?: string | undefined
  readonly type?: "invoice" | "credit_note" | undefined
  readonly after?: CursorPosition | undefined
  readonly limit: number
}

export class FinanceInvoicesRepo extends Effect.Service<FinanceInvoicesRepo>()("Partner/FinanceInvoicesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** The payout accounts these operators are paid through. */
    const merchantsOf = (operatorIds: ReadonlyArray<string>) =>
      Effect.map(
        sql<{ merchant_id: string }>`
          SELECT DISTINCT merchant_id FROM operator_payment_accounts
          WHERE operator_id = ANY(${toPgArray(operatorIds)}::uuid[])`,
        (rows) => rows.map((r) => r.merchant_id)
      )

    /** Up to `limit` documents after the cursor, with their lines and `list_key` (exact, as text). */
    const list = (r: InvoiceListRequest) =>
      Effect.gen(function*() {
        if (r.merchantIds.length === 0) return []
        const rows = yield* sql<Parameters<typeof toDocument>[0] & { list_key: string }>`
          SELECT ${documentColumns(sql)}, i.list_key::text AS list_key
          FROM commission_invoices i
          WHERE i.merchant_id = ANY(${toPgArray(r.merchantIds)}::text[])
            ${r.periodFrom === undefined ? sql`` : sql`AND i.period_month >= ${r.periodFrom + "-01"}::date`}
            ${r.periodTo === undefined ? sql`` : sql`AND i.period_month <= ${r.periodTo + "-01"}::date`}
            ${r.type === undefined ? sql`` : sql`AND i.type = ${r.type}`}
            ${
          r.after === undefined
            ? sql``
            : sql`AND (i.list_key, i.id) < (${r.after.createdMicros}::int8, ${r.after.id}::uuid)`
        }
          ORDER BY i.list_key DESC, i.id DESC
          LIMIT ${r.limit}`
        const lines = rows.length === 0 ? [] : yield* linesOf(sql, rows.map((row) => row.id))
        // The lines come ordered by document (then line number): grouped in one pass, not filtered
        // once per document (a page of 25 documents of 700 lines each, bench/finance.ts).
        const byDocument = new Map<string, Array<(typeof lines)[number]>>()
        for (const line of lines) {
          const list = byDocument.get(line.invoice_id)
          if (list) list.push(line)
          else byDocument.set(line.invoice_id, [line])
        }
        return rows.map((row) => ({
          listKey: row.list_key,
          doc: toDocument(row, byDocument.get(row.id) ?? [])
        }))
      })

    const operatorNames = (ids: ReadonlyArray<string>) =>
      Effect.map(
        sql<{ id: string; name: string }>`
          SELECT id, name FROM operators WHERE id = ANY(${toPgArray(ids)}::uuid[]) ORDER BY name, id`,
        (rows) => rows
      )

    const file = (invoiceId: string, kind: "pdf" | "csv") =>
      Effect.map(
        sql<{ content: Buffer; number: string }>`
          SELECT f.content, i.number FROM commission_invoice_files f JOIN commission_invoices i ON i.id = f.invoice_id
          WHERE f.invoice_id = ${invoiceId} AND f.kind = ${kind}`,
        (rows) => Option.fromNullable(rows[0])
      )

    return { ...repoEdge.untraced({ merchantsOf, list, operatorNames }), ...repoEdge("FinanceInvoicesRepo", { file }) }
  })
}) {}
