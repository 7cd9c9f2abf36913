/** GET /api/v1/finance/invoices and the signed file links: decode (done by HttpApi), check, resolve the operators in view, read. */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect, Either, Layer } from "effect"
import { CursorSigner } from "../../../http/CursorSigner.js"
import { PartnerApi } from "../../Api.js"
import { CurrentKey } from "../../auth/security.js"
import { operatorIdsFor } from "../../auth/visibility.js"
import { InvoicePage } from "./Api.js"
import { FinanceInvoices } from "./FinanceInvoices.js"
import { checkPeriods, INVOICE_LIMIT_DEFAULT } from "./rules.js"

export const InvoicesLive = HttpApiBuilder.group(PartnerApi, "invoices", (handlers) =>
  Effect.gen(function*() {
    const invoices = yield* FinanceInvoices
    const cursors = yield* CursorSigner
    return handlers.handle("list", ({ urlParams: p }) =>
      Effect.gen(function*() {
        const periods = checkPeriods(p)
        if (Either.isLeft(periods)) return yield* periods.left
        const key = yield* CurrentKey
        const operatorIds = yield* operatorIdsFor(key, p.partner_id)
        const filters = { period_from: p.period_from, period_to: p.period_to, type: p.type, partner_id: p.partner_id }
        const after = yield* cursors.decode(p.cursor, filters)
        const page = yield* invoices.list({
          operatorIds,
          periodFrom: p.period_from,
          periodTo: p.period_to,
          type: p.type,
          after,
          limit: p.limit ?? INVOICE_LIMIT_DEFAULT
        })
        // A page of documents with all their lines (5 MB for 24 documents of 700 lines): written as
        // the service built it (typed by the success schema, and checked against the OpenAPI document
        // by the tests), as text, as the statements read does (bench/finance.ts).
        const text = JSON.stringify(
          {
            data: page.data,
            next_cursor: page.next ? cursors.encode(page.next, filters) : null
          } satisfies typeof InvoicePage.Type
        )
        return HttpServerResponse.raw(text, { contentType: "application/json", contentLength: Buffer.byteLength(text) })
      }))
  })).pipe(Layer.provide([FinanceInvoices.Default, CursorSigner.Default]))

export const InvoiceFilesLive = HttpApiBuilder.group(PartnerApi, "invoiceFiles", (handlers) =>
  Effect.gen(function*() {
    const invoices = yield* FinanceInvoices
    return handlers.handle("file", ({ path, urlParams }) =>
      Effect.map(invoices.file(path.file, urlParams), (f) =>
        HttpServerResponse.uint8Array(f.content, {
          contentType: f.kind === "pdf" ? "application/pdf" : "text/csv; charset=utf-8",
          headers: {
            "Content-Disposition": `${f.kind === "pdf" ? "inline" : "attachment"}; filename="${f.number}.${f.kind}"`,
            "Cache-Control": "private, no-store"
          }
        })))
  })).pipe(Layer.provide(FinanceInvoices.Default))
