/**
 * The commission invoices and credit notes of the legal entities in view (GET
 * /api/v1/finance/invoices), with fresh signed links to their files, and a file by its signed link.
 * SQL: FinanceInvoicesRepo; links: src/invoices/InvoiceFileLinks.ts.
 */
import { Clock, Effect, Option } from "effect"
import { NotFound } from "../../../domain/errors.js"
import type { CursorPosition } from "../../../http/cursor.js"
import { INVOICE_LINK_SECONDS, InvoiceFileLinks } from "../../../invoices/InvoiceFileLinks.js"
import type { CommissionInvoice } from "./Api.js"
import { FinanceInvoicesRepo } from "./FinanceInvoicesRepo.js"
import { toApi } from "./rules.js"

export interface InvoiceListInput {
  readonly operatorIds: ReadonlyArray<string>
  readonly periodFrom?: string | undefined
  readonly periodTo?: string | undefined
  readonly type?: "invoice" | "credit_note" | undefined
  readonly after?: CursorPosition | undefined
  readonly limit: number
}

const FILE = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.(pdf|csv)$/

/** One answer for every link that opens nothing, whatever the reason. */
const noFile = () => new NotFound({ detail: "No such file, or the link is not valid (links expire after 15 minutes)." })

export class FinanceInvoices extends Effect.Service<FinanceInvoices>()("Partner/FinanceInvoices", {
  effect: Effect.gen(function*() {
    const repo = yield* FinanceInvoicesRepo
    const links = yield* InvoiceFileLinks

    const list = Effect.fn("FinanceInvoices.list")(function*(r: InvoiceListInput) {
      const merchantIds = yield* repo.merchantsOf(r.operatorIds)
      const rows = yield* repo.list({ ...r, merchantIds, limit: r.limit + 1 })
      const page = rows.slice(0, r.limit)
      const names = new Map(
        (yield* repo.operatorNames([...new Set(page.flatMap((p) => p.doc.buyer.operatorIds))])).map((o) => [o.id, o])
      )
      const now = yield* Clock.currentTimeMillis
      const expiresAt = new Date((Math.floor(now / 1000) + INVOICE_LINK_SECONDS) * 1000).toISOString()
      const data: Array<CommissionInvoice> = page.map(({ doc }) =>
        toApi(
          doc,
          doc.buyer.operatorIds.flatMap((id) => names.get(id) ?? []),
          {
            pdf_url: links.url(doc.id, "pdf", now).url,
            csv_url: links.url(doc.id, "csv", now).url,
            expires_at: expiresAt
          }
        )
      )
      const last = page[page.length - 1]
      return {
        data,
        next: rows.length > r.limit && last ? { createdMicros: last.listKey, id: last.doc.id } : undefined
      }
    })

    /** A stored file by its signed link; every failure is the same 404. */
    const file = Effect.fn("FinanceInvoices.file")(function*(
      name: string,
      query: { readonly exp?: string | undefined; readonly sig?: string | undefined }
    ) {
      const match = FILE.exec(name)
      if (match === null || query.exp === undefined || query.sig === undefined) return yield* noFile()
      if (links.check(name, query.exp, query.sig, yield* Clock.currentTimeMillis) !== "valid") return yield* noFile()
      const kind = match[2] as "pdf" | "csv"
      const stored = yield* repo.file(match[1]!, kind)
      if (Option.isNone(stored)) return yield* noFile()
      return { kind, number: stored.value.number, content: new Uint8Array(stored.value.content) }
    })

    return { list, file } as const
  }),
  dependencies: [FinanceInvoicesRepo.Default, InvoiceFileLinks.Default]
}) {}
