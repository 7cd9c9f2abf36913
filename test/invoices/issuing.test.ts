import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { CSV_COLUMNS } from "../../src/invoices/invoiceCsv.js"
import { cli, json } from "../support/cli.js"
import { makeWorld } from "../support/fixtures.js"
import {
  close,
  documentsOf,
  insertEntry,
  linesOfDoc,
  payoutAccount,
  pdfText,
  reissue,
  sale,
  sequences,
  setLegal,
  storedFile
} from "../support/invoices.js"
import { TestServer, testServer } from "../support/server.js"

const merchant = () => `M-${randomUUID().slice(0, 8)}`

/** A world whose Alpha and Beta are one legal entity (one payout account), Cetus another. */
const invoiceWorld = Effect.gen(function*() {
  const w = yield* makeWorld
  const shared = merchant()
  const lisbon = merchant()
  yield* payoutAccount(shared, [w.alpha, w.beta])
  yield* payoutAccount(lisbon, [w.cetus])
  yield* setLegal(w.alpha, `Alpha Tours AS ${w.tag}`, "912345678")
  yield* setLegal(w.beta, `Alpha Tours AS ${w.tag}`, "912345678")
  yield* setLegal(w.cetus, `Cetus Lda ${w.tag}`, "501234567")
  return { ...w, shared, lisbon }
})

const expectContiguous = (rows: ReadonlyArray<{ sequence: number; last: number }>) => {
  expect(rows.map((r) => r.sequence)).toEqual(rows.map((_, i) => i + 1))
  if (rows.length > 0) expect(rows[0]!.last).toBe(rows.length)
}

const sum = <A>(xs: ReadonlyArray<A>, f: (x: A) => number) => xs.reduce((n, x) => n + f(x), 0)

layer(testServer(), { excludeTestServices: true, timeout: 120_000 })("commission invoices: issuing", (it) => {
  it.effect("a month's invoice per legal entity and currency: a line per booking, 25 % VAT, totals add up; pending entries wait; issued once", () =>
    Effect.gen(function*() {
      const w = yield* invoiceWorld
      const a = yield* sale(w.alpha, "2025-03-05T10:00:00Z", 15000)
      yield* insertEntry({
        bookingId: a.bookingId,
        operatorId: w.alpha,
        type: "difference",
        occurredAt: "2025-03-20T10:00:00Z",
        commissionMinor: 2000
      })
      const b = yield* sale(w.beta, "2025-03-31T23:59:59Z", 12345) // VAT 3086.25 → 3086
      const pending = yield* sale(w.alpha, "2025-03-10T10:00:00Z", 7000, { pending: true })
      yield* sale(w.alpha, "2025-03-11T10:00:00Z", 5003, { currency: "EUR" }) // VAT 1250.75 → 1251
      yield* sale(w.alpha, "2025-04-01T00:00:00Z", 99999) // April: not in March's close
      yield* sale(w.cetus, "2025-03-06T10:00:00Z", 4000) // another legal entity

      const summary = yield* close("2025-03", [w.shared])
      expect(summary.failed).toBe(0)
      expect(summary.results[0]!.documents.map((d) => [d.type, d.currency, d.lines])).toEqual([
        ["invoice", "EUR", 1],
        ["invoice", "NOK", 2]
      ])
      const docs = yield* documentsOf(w.shared)
      const nok = docs.find((d) => d.currency === "NOK")!
      const lines = yield* linesOfDoc(nok.id)
      expect(lines.map((l) => [l.kind, l.booking_id, l.net_minor, l.vat_minor, l.gross_minor, l.deducted_minor]))
        .toEqual([
          ["commission", a.bookingId, 17000, 4250, 21250, 17000],
          ["commission", b.bookingId, 12345, 3086, 15431, 12345]
        ])
      for (const d of docs) {
        const ls = yield* linesOfDoc(d.id)
        expect(d.net_minor).toBe(sum(ls, (l) => l.net_minor))
        expect(d.vat_minor).toBe(sum(ls, (l) => l.vat_minor))
        expect(d.gross_minor).toBe(sum(ls, (l) => l.gross_minor))
        expect(d.deducted_minor).toBe(sum(ls, (l) => l.deducted_minor))
        expect(d.payable_minor).toBe(d.gross_minor - d.deducted_minor)
        expect(d.status).toBe("open")
      }
      expect(docs.find((d) => d.currency === "EUR")!.vat_minor).toBe(1251)
      expect(yield* documentsOf(w.lisbon)).toEqual([])

      // Issued once: a second close of March for the entity issues nothing.
      const again = yield* close("2025-03", [w.shared])
      expect(again.results[0]).toMatchObject({ ok: true, skipped: "already_issued", documents: [] })
      expect((yield* documentsOf(w.shared)).length).toBe(2)

      // The pending entry becomes final: April's close invoices it (with April's own sale).
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE commission_entries SET pending = false WHERE id = ${pending.entryId}`
      yield* close("2025-04", [w.shared])
      const april = (yield* documentsOf(w.shared)).filter((d) => !docs.some((x) => x.id === d.id))
      expect(april.map((d) => [d.type, d.net_minor])).toEqual([["invoice", 7000 + 99999]])
    }))

  it.effect("a credit note gives commission back per booking and points at the invoice it corrects; the fee kept is shown", () =>
    Effect.gen(function*() {
      const w = yield* invoiceWorld
      const a = yield* sale(w.alpha, "2025-05-05T10:00:00Z", 15000)
      const b = yield* sale(w.beta, "2025-05-06T10:00:00Z", 8000)
      yield* close("2025-05", [w.shared])
      const [may] = yield* documentsOf(w.shared)

      // June: A cancelled giving back 10000 of 15000 (5000 kept); C sold and cancelled in full in June;
      // D's cancellation arrives before its sale is final (no invoice billed it: it waits).
      yield* insertEntry({
        bookingId: a.bookingId,
        operatorId: w.alpha,
        type: "cancellation",
        occurredAt: "2025-06-02T10:00:00Z",
        commissionMinor: -10000
      })
      const c = yield* sale(w.alpha, "2025-06-03T10:00:00Z", 6000)
      yield* insertEntry({
        bookingId: c.bookingId,
        operatorId: w.alpha,
        type: "cancellation",
        occurredAt: "2025-06-04T10:00:00Z",
        commissionMinor: -6000
      })
      const d = yield* sale(w.beta, "2025-06-05T10:00:00Z", 3000, { pending: true })
      yield* insertEntry({
        bookingId: d.bookingId,
        operatorId: w.beta,
        type: "cancellation",
        occurredAt: "2025-06-06T10:00:00Z",
        commissionMinor: -3000
      })
      yield* close("2025-06", [w.shared])

      const june = (yield* documentsOf(w.shared)).filter((x) => x.id !== may!.id)
      expect(june.map((x) => x.type)).toEqual(["invoice", "credit_note"])
      const [juneInvoice, credit] = june as [typeof june[0], typeof june[0]]
      const creditLines = yield* linesOfDoc(credit.id)
      expect(creditLines.map((l) => ({
        kind: l.kind,
        booking: l.booking_id,
        net: l.net_minor,
        vat: l.vat_minor,
        corrects: l.corrects_invoice_id,
        original: l.original_net_minor,
        fee: l.cancellation_fee_minor
      }))).toEqual([
        {
          kind: "refund_credit",
          booking: a.bookingId,
          net: -10000,
          vat: -2500,
          corrects: may!.id,
          original: 15000,
          fee: 5000
        },
        {
          kind: "refund_credit",
          booking: c.bookingId,
          net: -6000,
          vat: -1500,
          corrects: juneInvoice.id,
          original: 6000,
          fee: 0
        }
      ])
      expect(credit).toMatchObject({
        net_minor: -16000,
        vat_minor: -4000,
        gross_minor: -20000,
        deducted_minor: -16000,
        payable_minor: -4000,
        status: "credited"
      })
      expect(credit.number).toMatch(/^CN-\d{6}$/)
      expect(b.bookingId).not.toBe(d.bookingId)

      // D's sale becomes final: July's close invoices it, and its credit note corrects that invoice.
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE commission_entries SET pending = false WHERE id = ${d.entryId}`
      yield* close("2025-07", [w.shared])
      const july = (yield* documentsOf(w.shared)).filter((x) => ![may!.id, juneInvoice.id, credit.id].includes(x.id))
      expect(july.map((x) => [x.type, x.net_minor])).toEqual([["invoice", 3000], ["credit_note", -3000]])
      expect((yield* linesOfDoc(july[1]!.id))[0]!.corrects_invoice_id).toBe(july[0]!.id)
    }))

  it.effect("numbers run without gaps when many legal entities are issued at once, each month once", () =>
    Effect.gen(function*() {
      const w = yield* makeWorld
      const merchants: Array<string> = []
      for (const operator of [w.alpha, w.beta, w.cetus]) {
        const m = merchant()
        merchants.push(m)
        yield* payoutAccount(m, [operator])
        yield* sale(operator, "2025-08-10T10:00:00Z", 1000)
        const cancelled = yield* sale(operator, "2025-08-11T10:00:00Z", 2000)
        yield* insertEntry({
          bookingId: cancelled.bookingId,
          operatorId: operator,
          type: "cancellation",
          occurredAt: "2025-08-12T10:00:00Z",
          commissionMinor: -2000
        })
      }
      // Each entity closed three times at once, all nine closes concurrently.
      const closes = [...merchants, ...merchants, ...merchants].map((m) => close("2025-08", [m]))
      const results = yield* Effect.all(closes, { concurrency: "unbounded" })
      expect(results.every((r) => r.failed === 0)).toBe(true)
      for (const m of merchants) {
        const docs = yield* documentsOf(m)
        expect(docs.map((d) => d.type)).toEqual(["invoice", "credit_note"])
      }
      expectContiguous(yield* sequences("invoice"))
      expectContiguous(yield* sequences("credit_note"))
    }))

  it.effect("a rolled-back issuing gives its number back; one legal entity's failure never fails the run", () =>
    Effect.gen(function*() {
      const w = yield* makeWorld
      const failing = merchant()
      const fine = merchant()
      yield* payoutAccount(failing, [w.alpha])
      yield* payoutAccount(fine, [w.beta])
      const a = yield* sale(w.alpha, "2025-09-10T10:00:00Z", 1000)
      yield* sale(w.beta, "2025-09-10T10:00:00Z", 2000)
      const before = (yield* sequences("invoice")).length

      const run = yield* close("2025-09", [failing, fine], { CRASH_AT: `commission-close.after_number:${failing}` })
      expect(run.failed).toBe(1)
      expect(run.results.find((r) => r.merchantId === failing)).toMatchObject({ ok: false, documents: [] })
      expect(run.results.find((r) => r.merchantId === fine)!.documents.length).toBe(1)
      expect(yield* documentsOf(failing)).toEqual([])
      const sql = yield* SqlClient.SqlClient
      const linked = yield* sql`SELECT 1 FROM commission_invoice_entries WHERE entry_id = ${a.entryId}`
      expect(linked.length).toBe(0)
      expectContiguous(yield* sequences("invoice"))

      // Without the fault the failed entity's month is issued with the next number.
      yield* close("2025-09", [failing])
      const [doc] = yield* documentsOf(failing)
      expect(doc!.sequence).toBe(before + 2)
      expectContiguous(yield* sequences("invoice"))
    }))

  it.effect("the PDF carries the legal content; the CSV is UTF-8 with a BOM, ';' and the columns; a re-issue stores the same files", () =>
    Effect.gen(function*() {
      const w = yield* invoiceWorld
      const a = yield* sale(w.alpha, "2025-10-05T10:00:00Z", 123456)
      yield* insertEntry({
        bookingId: a.bookingId,
        operatorId: w.alpha,
        type: "cancellation",
        occurredAt: "2025-10-06T10:00:00Z",
        commissionMinor: -23456
      })
      yield* close("2025-10", [w.shared])
      const [invoice, credit] = yield* documentsOf(w.shared)

      const pdf = yield* storedFile(invoice!.id, "pdf")
      expect(pdf.content.subarray(0, 5).toString()).toBe("%PDF-")
      const text = pdfText(pdf.content)
      const has = (s: string) => expect(text, s).toContain(s)
      has("FAKTURA")
      has(invoice!.number)
      has("Tour Partner AS")
      has("Org.nr. NO 999 999 999 MVA")
      has(`Alpha Tours AS ${w.tag}`)
      has("Org.nr. 912345678")
      has("01.10.2025 - 31.10.2025")
      has("1 234,56") // net
      has("308,64") // VAT 25 %
      has("1 543,20") // gross
      has("MVA 25 % (VAT)")

      const creditText = pdfText((yield* storedFile(credit!.id, "pdf")).content)
      expect(creditText).toContain("KREDITNOTA")
      expect(creditText).toContain(credit!.number)
      expect(creditText).toContain(`Korrigerer faktura (corrects invoice): ${invoice!.number}`)
      expect(creditText).toContain("-234,56")

      const csv = yield* storedFile(credit!.id, "csv")
      expect([...csv.content.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf])
      const rows = new TextDecoder("utf-8", { fatal: true }).decode(csv.content.subarray(3)).trimEnd().split("\r\n")
      expect(rows[0]).toBe(CSV_COLUMNS.join(";"))
      const cells = rows.map((r) => r.split(";"))
      expect(cells.every((c) => c.length === CSV_COLUMNS.length)).toBe(true)
      const row = Object.fromEntries(CSV_COLUMNS.map((c, i) => [c, cells[1]![i]]))
      expect(row).toMatchObject({
        number: credit!.number,
        type: "credit_note",
        period: "2025-10",
        kind: "refund_credit",
        booking_id: a.bookingId,
        net: "-234,56",
        vat: "-58,64",
        gross: "-293,20",
        corrects_invoice: invoice!.number,
        cancellation_fee: "1000,00"
      })
      expect(cells[2]![CSV_COLUMNS.indexOf("kind")]).toBe("total")

      // A lost file is made again from the stored content: the same bytes.
      const csvBefore = yield* storedFile(invoice!.id, "csv")
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE commission_invoice_files SET content = '\\x00'::bytea WHERE invoice_id = ${invoice!.id}`
      const done = yield* reissue({ number: invoice!.number })
      expect(done._tag).toBe("Some")
      const again = yield* storedFile(invoice!.id, "pdf")
      expect(again.content.equals(pdf.content)).toBe(true)
      expect(again.reissues).toBe(1)
      expect((yield* storedFile(invoice!.id, "csv")).content.equals(csvBefore.content)).toBe(true)
      expect((yield* reissue({ number: "INV-999999" }))._tag).toBe("None")
    }))

  it.effect("the admin CLI issues a month and re-issues a document's files with the same content", () =>
    Effect.gen(function*() {
      const w = yield* invoiceWorld
      yield* sale(w.alpha, "2025-11-05T10:00:00Z", 4321)
      const { databaseUrl } = yield* TestServer
      const closed = json(
        yield* Effect.promise(() => cli(databaseUrl, "invoices", "close", "--month", "2025-11", "--merchant", w.shared))
      )
      expect(closed).toMatchObject({ month: "2025-11", entities: 1, failed: 0, documents: 1 })
      const [doc] = yield* documentsOf(w.shared)
      const before = yield* storedFile(doc!.id, "pdf")
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE commission_invoice_files SET content = '\\x00'::bytea WHERE invoice_id = ${doc!.id}`
      const out = json(yield* Effect.promise(() => cli(databaseUrl, "invoices", "reissue", "--number", doc!.number)))
      expect(out.reissued).toMatchObject({ id: doc!.id, number: doc!.number, pdfSha256: before.sha256 })
      const after = yield* storedFile(doc!.id, "pdf")
      expect(after.content.equals(before.content)).toBe(true)
      yield* Effect.promise(() =>
        cli(databaseUrl, "invoices", "reissue", "--number", "INV-999999").then(
          () => expect.unreachable("an unknown number must fail"),
          (e: Error) => expect(e.message).toContain("no such document")
        )
      )
    }))
})
