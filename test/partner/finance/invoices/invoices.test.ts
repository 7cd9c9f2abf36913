import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { deriveLinkSecret, signLink } from "../../../../src/http/linkSignature.js"
import { Operators } from "../../../../src/operators/Operators.js"
import { createKey, makeWorld } from "../../../support/fixtures.js"
import { call, get } from "../../../support/http.js"
import { close, insertEntry, payoutAccount, pdfText, sale, setLegal } from "../../../support/invoices.js"
import { conforms, dereferencedSpec } from "../../../support/openapi.js"
import { testServer } from "../../../support/server.js"

const PATH = "/api/v1/finance/invoices"

const list = (query: string, key: string, status = 200) =>
  Effect.map(get(`${PATH}${query ? `?${query}` : ""}`, key), (res) => {
    expect(res.status, res.text).toBe(status)
    return res.body
  })

/** The path and query of an absolute link. */
const local = (url: string) => {
  const u = new URL(url)
  return u.pathname + u.search
}

/**
 * Alpha and Beta: one legal entity (shared payout account) with documents for 2025-01 to 2025-03
 * (March with a credit note); Cetus: another with a January invoice.
 */
const world = Effect.gen(function*() {
  const w = yield* makeWorld
  const shared = `M-${randomUUID().slice(0, 8)}`
  const lisbon = `M-${randomUUID().slice(0, 8)}`
  yield* payoutAccount(shared, [w.alpha, w.beta])
  yield* payoutAccount(lisbon, [w.cetus])
  yield* setLegal(w.alpha, `Alpha Tours AS ${w.tag}`, "912345678")
  yield* setLegal(w.beta, `Alpha Tours AS ${w.tag}`, "912345678")
  yield* setLegal(w.cetus, `Cetus Lda ${w.tag}`, "501234567")
  const jan = yield* sale(w.alpha, "2025-01-10T10:00:00Z", 10000)
  yield* sale(w.beta, "2025-01-11T10:00:00Z", 4000)
  yield* sale(w.alpha, "2025-02-10T10:00:00Z", 20000)
  yield* sale(w.beta, "2025-03-10T10:00:00Z", 30000)
  yield* insertEntry({
    bookingId: jan.bookingId,
    operatorId: w.alpha,
    type: "cancellation",
    occurredAt: "2025-03-12T10:00:00Z",
    commissionMinor: -10000
  })
  yield* sale(w.cetus, "2025-01-15T10:00:00Z", 5000, { currency: "EUR" })
  for (const month of ["2025-01", "2025-02", "2025-03"]) yield* close(month, [shared, lisbon])
  // Bob may make keys over all three (a key over two legal entities).
  yield* Effect.orDie((yield* Operators).setMembership(w.cetus, w.bob, "admin"))
  const key = (operators: ReadonlyArray<string>, scopes = ["finance:read"]) =>
    Effect.map(
      createKey({ by: w.bob, operators, scopes }),
      (k) => k.token
    )
  return { ...w, shared, lisbon, jan, key }
})

layer(testServer(), { excludeTestServices: true, timeout: 120_000 })("GET /api/v1/finance/invoices", (it) => {
  it.effect("every field of an invoice and a credit note, newest delivery month first, as documented", () =>
    Effect.gen(function*() {
      const w = yield* world
      const token = yield* w.key([w.alpha])
      const res = yield* get(PATH, token)
      expect(res.status, res.text).toBe(200)
      conforms(yield* dereferencedSpec, "get", PATH, res)
      const body = res.body
      expect(body.next_cursor).toBeNull()
      // Newest delivery month first; within a month, the later issued first (a credit note after its invoice).
      expect(body.data.map((d: any) => [d.period.month, d.type])).toEqual([
        ["2025-03", "credit_note"],
        ["2025-03", "invoice"],
        ["2025-02", "invoice"],
        ["2025-01", "invoice"]
      ])
      const january = body.data.find((d: any) => d.period.month === "2025-01")
      const partners = [
        { id: w.alpha, name: `Alpha Tours ${w.tag}` },
        { id: w.beta, name: `Beta Boats ${w.tag}` }
      ]
      expect(january).toMatchObject({
        type: "invoice",
        status: "open",
        number: expect.stringMatching(/^INV-\d{6}$/),
        period: { month: "2025-01", start: "2025-01-01", end: "2025-01-31" },
        currency: "NOK",
        seller: {
          name: "Tour Partner AS",
          org_number: "999999999",
          vat_number: "NO 999 999 999 MVA",
          address: "Karl Johans gate 1, 0154 Oslo, Norway",
          email: null,
          bank_account: null
        },
        buyer: { name: `Alpha Tours AS ${w.tag}`, org_number: "912345678", partners },
        vat_rate_percent: 25,
        net_minor: 14000,
        vat_minor: 3500,
        gross_minor: 17500,
        deducted_from_payouts_minor: 14000,
        payable_minor: 3500,
        corrects: []
      })
      expect(new Date(january.due_date).getTime() - new Date(january.issue_date).getTime()).toBe(14 * 86_400_000)
      expect(january.lines).toEqual([
        {
          line: 1,
          kind: "commission",
          partner: partners[0],
          booking: { id: w.jan.bookingId, confirmation_code: expect.any(String), experience_date: "2025-01-10" },
          tour: "Fjord Safari",
          description: expect.stringMatching(/^Commission T-.* – Fjord Safari \(2025-01-10\)$/),
          commission_rate_percent: 10,
          booking_gross_minor: 100000,
          net_minor: 10000,
          vat_minor: 2500,
          gross_minor: 12500,
          deducted_from_payouts_minor: 10000,
          corrects_invoice: null,
          original_net_minor: null,
          cancellation_fee_minor: null
        },
        expect.objectContaining({ line: 2, partner: partners[1], net_minor: 4000 })
      ])
      const credit = body.data.find((d: any) => d.type === "credit_note")
      expect(credit).toMatchObject({
        status: "credited",
        number: expect.stringMatching(/^CN-\d{6}$/),
        net_minor: -10000,
        vat_minor: -2500,
        gross_minor: -12500,
        payable_minor: -2500,
        corrects: [{ id: january.id, number: january.number }]
      })
      expect(credit.lines[0]).toMatchObject({
        kind: "refund_credit",
        booking: { id: w.jan.bookingId },
        corrects_invoice: { id: january.id, number: january.number },
        original_net_minor: 10000,
        cancellation_fee_minor: 0
      })
      // Totals add up to lines; no guest details anywhere.
      for (const d of body.data) {
        for (const f of ["net_minor", "vat_minor", "gross_minor", "deducted_from_payouts_minor"]) {
          expect(d[f]).toBe(d.lines.reduce((n: number, l: any) => n + l[f], 0))
        }
        expect(d.payable_minor).toBe(d.gross_minor - d.deducted_from_payouts_minor)
      }
      expect(res.text).not.toContain("Guest Person")
      expect(res.text).not.toContain("guest@example.com")
    }))

  it.effect("a legal entity's documents are seen by each of its operators and by no one else", () =>
    Effect.gen(function*() {
      const w = yield* world
      const ids = (body: any) => body.data.map((d: any) => d.id).sort()
      const alpha = yield* list("", yield* w.key([w.alpha]))
      const beta = yield* list("", yield* w.key([w.beta]))
      expect(alpha.data.length).toBe(4)
      expect(ids(beta)).toEqual(ids(alpha))
      const cetus = yield* list("", yield* w.key([w.cetus]))
      expect(cetus.data.map((d: any) => [d.period.month, d.currency, d.buyer.name])).toEqual([
        ["2025-01", "EUR", `Cetus Lda ${w.tag}`]
      ])
      expect(ids(alpha)).not.toContain(cetus.data[0].id)
      // A key over all three narrowed with partner_id; an operator outside the key is a 404.
      const all = yield* w.key([w.alpha, w.cetus])
      expect((yield* list("", all)).data.length).toBe(5)
      expect(ids(yield* list(`partner_id=${w.cetus}`, all))).toEqual(ids(cetus))
      expect(ids(yield* list(`partner_id=${w.alpha}`, all))).toEqual(ids(alpha))
      yield* list(`partner_id=${w.beta}`, all, 404)
      yield* list(`partner_id=${randomUUID()}`, all, 404)
      // Another world's operators never see these.
      const other = yield* world
      expect(ids(yield* list("", yield* other.key([other.alpha])))).not.toContain(alpha.data[0].id)
      // The scope is finance:read.
      yield* list("", yield* w.key([w.alpha], ["bookings:read"]), 403)
    }))

  it.effect("filters, bounds and signed cursors bound to the filters", () =>
    Effect.gen(function*() {
      const w = yield* world
      const token = yield* w.key([w.alpha])
      expect((yield* list("type=credit_note", token)).data.map((d: any) => d.type)).toEqual(["credit_note"])
      expect((yield* list("type=invoice", token)).data.length).toBe(3)
      expect((yield* list("period_from=2025-02&period_to=2025-02", token)).data.map((d: any) => d.period.month))
        .toEqual(["2025-02"])
      expect((yield* list("period_from=2025-02", token)).data.length).toBe(3)
      expect((yield* list("period_to=2025-01", token)).data.length).toBe(1)
      expect((yield* list("period_from=2024-02&period_to=2025-01", token)).data.length).toBe(1)

      const bad = (query: string, field: string) =>
        Effect.map(list(query, token, 400), (body) => expect(JSON.stringify(body), query).toContain(field))
      yield* bad("period_from=2025-03&period_to=2025-02", "period_to")
      yield* bad("period_from=2024-01&period_to=2025-01", "period_to") // 13 months
      yield* bad("period_from=2025-13", "period_from")
      yield* bad("period_to=2025-1", "period_to")
      yield* bad("type=draft", "type")
      yield* bad("limit=0", "limit")
      yield* bad("limit=101", "limit")
      yield* bad("cursor=abc", "cursor")

      // Pages of one, newest first, each document once.
      const seen: Array<any> = []
      let cursor: string | null = null
      do {
        const page: any = yield* list(`limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`, token)
        seen.push(...page.data)
        cursor = page.next_cursor
        if (cursor !== null) {
          // A cursor from these filters is refused under others.
          yield* bad(`limit=1&type=invoice&cursor=${encodeURIComponent(cursor)}`, "cursor")
        }
      } while (cursor !== null && seen.length < 10)
      const whole = (yield* list("", token)).data
      expect(seen.map((d) => d.id)).toEqual(whole.map((d: any) => d.id))
      const months = seen.map((d) => d.period.month)
      expect([...months].sort().reverse()).toEqual(months)
      expect((yield* list("limit=2", token)).data.length).toBe(2)
    }))

  it.effect("the signed links open the PDF and CSV as issued; forged, altered and expired links answer the same 404", () =>
    Effect.gen(function*() {
      const w = yield* world
      const token = yield* w.key([w.alpha])
      const body = yield* list("type=invoice&period_from=2025-01&period_to=2025-01", token)
      const doc = body.data[0]
      expect(doc.files.pdf_url).toMatch(
        new RegExp(`/api/v1/finance/invoice-files/${doc.id}\\.pdf\\?exp=\\d+&sig=[0-9a-f]{32}$`)
      )
      const exp = Number(new URL(doc.files.pdf_url).searchParams.get("exp"))
      expect(exp * 1000).toBe(new Date(doc.files.expires_at).getTime())
      expect(exp * 1000 - Date.now()).toBeGreaterThan(14 * 60_000)
      expect(exp * 1000 - Date.now()).toBeLessThanOrEqual(15 * 60_000)

      const pdf = yield* Effect.promise(() => fetch(doc.files.pdf_url))
      expect(pdf.status).toBe(200)
      expect(pdf.headers.get("content-type")).toBe("application/pdf")
      const bytes = Buffer.from(yield* Effect.promise(() => pdf.arrayBuffer()))
      const text = pdfText(bytes)
      expect(text).toContain(doc.number)
      expect(text).toContain("Org.nr. NO 999 999 999 MVA")
      expect(text).toContain("Org.nr. 912345678")
      expect(text).toContain("140,00")
      expect(text).toContain("175,00")

      const csv = yield* Effect.promise(() => fetch(doc.files.csv_url))
      expect(csv.status).toBe(200)
      expect(csv.headers.get("content-type")).toBe("text/csv; charset=utf-8")
      expect(csv.headers.get("content-disposition")).toBe(`attachment; filename="${doc.number}.csv"`)
      const csvBytes = Buffer.from(yield* Effect.promise(() => csv.arrayBuffer()))
      expect([...csvBytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf])
      expect(csvBytes.toString("utf8")).toContain(`${doc.number};invoice;`)
      // Both media types are documented (the fuzzer found the CSV's answer undocumented).
      const documented: any =
        (yield* dereferencedSpec).paths!["/api/v1/finance/invoice-files/{file}"]!.get!.responses["200"]
      expect(Object.keys(documented.content).sort()).toEqual(["application/pdf", "text/csv"])

      // Refused links: every one the same 404, saying nothing of why.
      const sql = yield* SqlClient.SqlClient
      const [shared] = yield* sql<{ value: Buffer }>`SELECT value FROM service_secrets WHERE name = 'cursor'`
      const secret = deriveLinkSecret(shared!.value, "commission-invoice-file-links")
      const past = Math.floor(Date.now() / 1000) - 1
      const pdfPath = `/api/v1/finance/invoice-files/${doc.id}.pdf`
      const other = (yield* list("type=credit_note", token)).data[0]
      const good = new URL(doc.files.pdf_url)
      const sig = good.searchParams.get("sig")!
      const refused = [
        `${pdfPath}?exp=${past}&sig=${signLink(secret, "commission-invoice-file", `${doc.id}.pdf`, past)}`, // expired
        `${pdfPath}?exp=${exp + 60}&sig=${sig}`, // exp altered
        `${pdfPath}?exp=${exp}&sig=${sig.replace(/.$/, (c) => (c === "0" ? "1" : "0"))}`, // sig altered
        `${pdfPath}?exp=${exp}&sig=${"0".repeat(32)}`, // forged
        `/api/v1/finance/invoice-files/${other.id}.pdf?exp=${exp}&sig=${sig}`, // another document
        `/api/v1/finance/invoice-files/${doc.id}.csv?exp=${exp}&sig=${sig}`, // the other file
        `${pdfPath}?exp=${exp}&sig=${signLink(secret, "quickbook-ticket-pdf", `${doc.id}.pdf`, exp)}`, // another purpose
        `/api/v1/finance/invoice-files/${randomUUID()}.pdf?exp=${exp}&sig=${sig}`, // no such document
        `${pdfPath}?exp=${exp}`, // no signature
        pdfPath,
        `/api/v1/finance/invoice-files/${doc.id}.exe?exp=${exp}&sig=${sig}`
      ]
      const details = new Set<string>()
      for (const path of refused) {
        const res = yield* call(path)
        expect(res.status, path).toBe(404)
        expect(res.headers.get("content-type")).toContain("application/problem+json")
        details.add(JSON.stringify({ ...res.body, request_id: undefined }))
      }
      expect(details.size).toBe(1)
      // The good link still opens (local path as given).
      expect((yield* call(local(doc.files.pdf_url))).status).toBe(200)
      expect((yield* call(local(doc.files.csv_url))).status).toBe(200)
    }))
})
