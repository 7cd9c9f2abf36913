/**
 * Issuing commission invoices and credit notes (docs/api/invoices.md "Issuing"; the rules:
 * ./rules.ts). A close takes one legal entity (a payout account and every operator paid through it)
 * and one delivery month, in ONE transaction:
 *   1. an advisory lock on the entity (its closes run one at a time) and a check that the month was
 *      not issued for it yet (`commission_closes`: a month is issued once per legal entity);
 *   2. its final, uninvoiced ledger entries that occurred before the month's end;
 *   3. per currency an invoice of the positive commission, then a credit note of the commission given
 *      back, each taking the next number of its series (`invoice_series`, the row locked until the
 *      transaction ends, so numbers never leave a gap, even when the transaction rolls back);
 *   4. the PDF and CSV of each document, stored with it (files as issued);
 *   5. the close row (only when something was issued: a month with nothing to invoice yet can be
 *      issued by a later close).
 * `closeMonth` closes every legal entity; one entity's failure is logged and returned in the summary
 * and never stops the others. `reissueFiles` makes a document's files again from its stored content.
 *
 * Crash points (CRASH_AT, src/lib/CrashPoints.ts): `commission-close.after_number` and
 * `commission-close.after_number:<merchant id>`, reached after a close took its first number.
 */
import { SqlClient } from "@effect/sql"
import { Cause, Clock, Effect, Option } from "effect"
import { createHash } from "node:crypto"
import { transactionAtEdge } from "../db/repoEdge.js"
import { CrashPoints } from "../lib/CrashPoints.js"
import { InvoiceConfig } from "./config.js"
import type { InvoiceDocument } from "./document.js"
import { invoiceCsv } from "./invoiceCsv.js"
import { invoicePdf } from "./invoicePdf.js"
import { InvoicesRepo, type LegalEntity } from "./InvoicesRepo.js"
import * as rules from "./rules.js"

export interface IssuedDocument {
  readonly id: string
  readonly number: string
  readonly type: rules.DocumentType
  readonly currency: string
  readonly grossMinor: number
  readonly lines: number
}

export interface EntityClose {
  readonly merchantId: string
  readonly ok: boolean
  /** Why nothing was issued: the month was issued before, or nothing is ready to invoice. */
  readonly skipped?: "already_issued" | "nothing_to_invoice"
  readonly error?: string
  readonly documents: ReadonlyArray<IssuedDocument>
}

export interface CloseSummary {
  readonly month: string
  readonly entities: number
  readonly failed: number
  readonly documents: number
  readonly results: ReadonlyArray<EntityClose>
}

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

export class InvoiceIssuing extends Effect.Service<InvoiceIssuing>()("Invoices/InvoiceIssuing", {
  effect: Effect.gen(function*() {
    const repo = yield* InvoicesRepo
    const sql = yield* SqlClient.SqlClient
    const config = yield* InvoiceConfig
    const crash = yield* CrashPoints
    const inTransaction = transactionAtEdge(sql)

    const seller: InvoiceDocument["seller"] = {
      name: config.sellerName,
      orgNumber: config.sellerOrgNumber,
      address: config.sellerAddress,
      email: Option.getOrNull(config.sellerEmail),
      bankAccount: Option.getOrNull(config.sellerBankAccount)
    }

    /** The PDF and CSV of a stored document, made and stored (replacing what was there). */
    const storeFiles = (doc: InvoiceDocument, at: Date) =>
      Effect.gen(function*() {
        const pdf = yield* invoicePdf(doc)
        const csv = invoiceCsv(doc)
        yield* repo.storeFile({ invoiceId: doc.id, kind: "pdf", content: pdf, sha256: sha256(pdf), at })
        yield* repo.storeFile({ invoiceId: doc.id, kind: "csv", content: csv, sha256: sha256(csv), at })
        return { pdfSha256: sha256(pdf), csvSha256: sha256(csv) }
      })

    const closeEntity = (entity: LegalEntity, month: string, issuedAt: Date) =>
      inTransaction(Effect.gen(function*() {
        yield* repo.lockEntity(entity.merchant_id)
        if (yield* repo.closeExists(entity.merchant_id, month)) {
          return { merchantId: entity.merchant_id, ok: true, skipped: "already_issued", documents: [] } as EntityClose
        }
        const before = new Date(`${rules.nextMonth(month)}-01T00:00:00Z`)
        const entries = yield* repo.closeEntries(entity.operator_ids, before)
        const names = yield* repo.operatorNames(entity.operator_ids)
        const issueDate = issuedAt.toISOString().slice(0, 10)
        const issued: Array<IssuedDocument> = []

        const issue = (type: rules.DocumentType, currency: string, lines: ReadonlyArray<rules.PlannedLine>) =>
          Effect.gen(function*() {
            const taken = yield* repo.takeNumber(type)
            yield* crash.reached("commission-close.after_number")
            yield* crash.reached(`commission-close.after_number:${entity.merchant_id}`)
            const totals = rules.totalsOf(lines)
            const number = rules.documentNumber(taken.prefix, taken.last_number)
            const id = yield* repo.insertDocument({
              type,
              sequence: taken.last_number,
              number,
              merchantId: entity.merchant_id,
              month,
              currency,
              issueDate,
              dueDate: rules.addDays(issueDate, config.dueDays),
              issuedAt,
              seller,
              buyer: {
                name: entity.legal_name ?? entity.first_name,
                orgNumber: entity.org_number,
                operatorIds: entity.operator_ids
              },
              vatRatePercent: config.vatPercent,
              ...totals,
              status: rules.statusOf(type, totals.payableMinor),
              ordinal: issued.length
            })
            yield* repo.insertLines(id, lines, names)
            const doc = yield* Effect.flatMap(
              repo.findDocument({ id }),
              Effect.orDieWith(() => "issued document not found")
            )
            yield* storeFiles(doc, issuedAt)
            issued.push({ id, number, type, currency, grossMinor: totals.grossMinor, lines: lines.length })
          })

        const invoices = rules.invoiceLines(entries, config.vatPercent)
        for (const currency of [...invoices.keys()].sort()) yield* issue("invoice", currency, invoices.get(currency)!)
        const giveBacks = entries.filter((e) => e.commission_minor < 0)
        if (giveBacks.length > 0) {
          const billing = yield* repo.billing([...new Set(giveBacks.map((e) => e.booking_id))])
          const credits = rules.creditLines(
            giveBacks,
            config.vatPercent,
            (bookingId, currency) => billing.get(`${bookingId}:${currency}`)
          )
          for (const currency of [...credits.keys()].sort()) {
            yield* issue("credit_note", currency, credits.get(currency)!)
          }
        }
        if (issued.length === 0) {
          return {
            merchantId: entity.merchant_id,
            ok: true,
            skipped: "nothing_to_invoice",
            documents: []
          } as EntityClose
        }
        yield* repo.recordClose(entity.merchant_id, month, issuedAt, issued.length)
        return { merchantId: entity.merchant_id, ok: true, documents: issued } as EntityClose
      }))

    /**
     * Issues `month`'s documents (YYYY-MM, UTC) for every legal entity (or only `merchantIds`). Never
     * fails: an entity whose close fails is rolled back, logged and reported (`ok: false`).
     */
    const closeMonth = Effect.fn("InvoiceIssuing.closeMonth")(function*(
      month: string,
      options: { readonly merchantIds?: ReadonlyArray<string> } = {}
    ) {
      const issuedAt = new Date(yield* Clock.currentTimeMillis)
      const entities = (yield* repo.legalEntities()).filter((e) =>
        options.merchantIds === undefined || options.merchantIds.includes(e.merchant_id)
      )
      const results: Array<EntityClose> = []
      for (const entity of entities) {
        const result = yield* closeEntity(entity, month, issuedAt).pipe(
          Effect.catchAllCause((cause) =>
            Effect.as(
              Effect.logError(`commission close of ${entity.merchant_id} for ${month} failed`, cause),
              {
                merchantId: entity.merchant_id,
                ok: false,
                error: Cause.pretty(cause).split("\n")[0]!,
                documents: []
              } as EntityClose
            )
          ),
          Effect.annotateLogs({ merchant: entity.merchant_id, month })
        )
        results.push(result)
      }
      return {
        month,
        entities: results.length,
        failed: results.filter((r) => !r.ok).length,
        documents: results.reduce((n, r) => n + r.documents.length, 0),
        results
      } satisfies CloseSummary
    })

    /** Makes a document's PDF and CSV again from its stored content and stores them; None when there is no such document. */
    const reissueFiles = Effect.fn("InvoiceIssuing.reissueFiles")(function*(
      which: { readonly id: string } | { readonly number: string }
    ) {
      const doc = yield* repo.findDocument(which)
      if (Option.isNone(doc)) return Option.none()
      const at = new Date(yield* Clock.currentTimeMillis)
      const files = yield* inTransaction(storeFiles(doc.value, at))
      return Option.some({ id: doc.value.id, number: doc.value.number, ...files })
    })

    return { closeMonth, reissueFiles } as const
  }),
  dependencies: [InvoicesRepo.Default, CrashPoints.Default]
}) {}
