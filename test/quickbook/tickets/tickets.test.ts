/**
 * Quickbook GET /sales/{reference}, GET /sales/{reference}/ticket and the signed PDF link over real
 * HTTP (issue 6 items 8-9): status per spec §3 (expired computed on read), the ticket of a
 * confirmed sale in en/nb, 404 for unknown, malformed and other terminals' sales and for a sale
 * with no ticket yet, 400 for a bad `lang`, the PDF (header, text, QR decoded back to the payload),
 * bad and lapsed signatures, and the document.
 *
 * Until POST /book exists, confirmed and failed sales are made by quoting over HTTP and then
 * updating the sale row in SQL (status, customer, language, booking code and id, confirmed_at,
 * paid_by_payment_id), as POST /book will.
 */
import SwaggerParser from "@apidevtools/swagger-parser"
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import jsQRModule from "jsqr"
import { inflateSync } from "node:zlib"
import { failedClerkMessage } from "../../../src/quickbook/book/rules.js"
import { CLERK_MESSAGE_VARIANTS, CLERK_MESSAGES, invalidFieldMessage } from "../../../src/quickbook/clerkMessages.js"
import { QuickbookKeys } from "../../../src/quickbook/terminals/QuickbookKeys.js"
import { ticketLines } from "../../../src/quickbook/tickets/ticket.js"
import { deriveTicketLinkSecret, signTicketLink } from "../../../src/quickbook/tickets/ticketLinkSignature.js"
import { qrMatrix } from "../../../src/quickbook/tickets/ticketPdf.js"
import { addDays } from "../../../src/sandbox/bokun/index.js"
import { call, get, type Reply } from "../../support/http.js"
import { paymentsEnv } from "../../support/payments.js"
import { pdfText } from "../../support/pdf.js"
import { BASE, sellingDesk } from "../../support/quickbook.js"
import { TestServer } from "../../support/server.js"

// jsqr is CommonJS with an ES-style default in its types: the function is the module or its `default`.
const jsQR = ((jsQRModule as any).default ?? jsQRModule) as typeof jsQRModule.default

const GUEST_BASE = "https://guests.example.com/"
const env = paymentsEnv(Effect.succeed({ TOUR_AVAILABILITY_TIMEOUT_MS: "1500", GUEST_BOOKING_BASE_URL: GUEST_BASE }))

const expectError = (res: Reply, status: number, code: string, clerkMessage = (CLERK_MESSAGES as any)[code].en) => {
  expect(res.status, res.text).toBe(status)
  expect(res.body.error).toMatchObject({ code, clerkMessage })
  expect(res.headers.get("cache-control")).toBe("no-store")
}

const world = Effect.gen(function*() {
  const { w, merchant, own, keys, terminal, key, day } = yield* sellingDesk
  const other = yield* keys.registerTerminal(w.alpha, "Kiosk", merchant.terminalId)
  const otherKey = yield* keys.issueKey({ mode: "test", name: "Kiosk app", terminals: [other.id] })
  const as = (token: string, terminalId: string) => ({
    status: (ref: string, lang?: string) =>
      get(`${BASE}/sales/${ref}`, token, {
        "quickbook-terminal": terminalId,
        ...(lang ? { "accept-language": lang } : {})
      }),
    ticket: (ref: string, query = "") =>
      get(`${BASE}/sales/${ref}/ticket${query}`, token, { "quickbook-terminal": terminalId }),
    quote: (terminal = terminalId) =>
      Effect.map(
        call(`${BASE}/quote`, {
          method: "POST",
          key: token,
          headers: { "quickbook-terminal": terminal },
          body: {
            activityId: own,
            start: { date: day, time: "10:00" },
            guests: [{ type: "adult", count: 2 }, { type: "child", count: 1 }]
          }
        }),
        (r) => {
          expect(r.status, r.text).toBe(200)
          return r.body as { reference: string; validUntil: string; cartLine: any }
        }
      )
  })
  return {
    w,
    own,
    terminal,
    other,
    day,
    desk: as(key.token, terminal.id),
    kiosk: as(otherKey.token, other.id),
    wrongTerminal: as(key.token, other.id)
  }
}).pipe(Effect.provide(QuickbookKeys.Default))

/** What POST /book will do to a sale it confirms (see the file comment). */
const confirm = (reference: string, over: { language?: "en" | "nb"; firstName?: string; lastName?: string } = {}) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`
      UPDATE quickbook_sales SET status = 'confirmed', language = ${over.language ?? "en"},
        customer = ${
      JSON.stringify({
        firstName: over.firstName ?? "Kari",
        lastName: over.lastName ?? "Nordmann",
        email: "kari@example.com",
        phone: null
      })
    }::jsonb,
        booking_id = 'bk-1', booking_code = ${`FJX-${reference.slice(4, 8)}`}, confirmed_at = now(),
        paid_by_payment_id = ${`pay-${reference}`}, updated_at = now()
      WHERE reference = ${reference}`).pipe(Effect.orDie)

const setStatus = (reference: string, set: Record<string, unknown>) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`UPDATE quickbook_sales SET ${sql.update(set)} WHERE reference = ${reference}`
  ).pipe(Effect.orDie)

/** Fetches an absolute URL. */
const fetchUrl = (url: string) =>
  Effect.promise(async () => {
    const res = await fetch(url)
    return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) }
  })

/** The rectangles a content stream fills (`x y w h re`), rasterised and read back as a QR code. */
const pdfQr = (pdf: Buffer): string | null => {
  const raw = pdf.toString("latin1")
  const rects: Array<[number, number, number, number]> = []
  for (const m of raw.matchAll(/stream\r?\n([\s\S]*?)\r?\nendstream/g)) {
    let content: string
    try {
      content = inflateSync(Buffer.from(m[1]!, "latin1")).toString("latin1")
    } catch {
      continue
    }
    for (const r of content.matchAll(/(-?[\d.]+) (-?[\d.]+) (-?[\d.]+) (-?[\d.]+) re/g)) {
      rects.push([Number(r[1]), Number(r[2]), Number(r[3]), Number(r[4])])
    }
  }
  if (rects.length === 0) return null
  const minX = Math.min(...rects.map((r) => r[0])) - 12
  const minY = Math.min(...rects.map((r) => r[1])) - 12
  const maxX = Math.max(...rects.map((r) => r[0] + r[2])) + 12
  const maxY = Math.max(...rects.map((r) => r[1] + r[3])) + 12
  const scale = 2
  const width = Math.ceil((maxX - minX) * scale)
  const height = Math.ceil((maxY - minY) * scale)
  const pixels = new Uint8ClampedArray(width * height * 4).fill(255)
  for (const [x, y, w, h] of rects) {
    for (let py = Math.round((y - minY) * scale); py < Math.round((y + h - minY) * scale); py++) {
      for (let px = Math.round((x - minX) * scale); px < Math.round((x + w - minX) * scale); px++) {
        pixels.fill(0, (py * width + px) * 4, (py * width + px) * 4 + 3)
      }
    }
  }
  return jsQR(pixels, width, height)?.data ?? null
}

layer(env, { excludeTestServices: true, timeout: 180_000 })("quickbook sale status and tickets", (it) => {
  it.effect("GET /sales/{reference}: quoted, held, expired on read, booking, failed with its reason, confirmed with the ticket", () =>
    Effect.gen(function*() {
      const s = yield* world
      const q = yield* s.desk.quote()
      const quoted = yield* s.desk.status(q.reference)
      expect(quoted.status, quoted.text).toBe(200)
      expect(quoted.headers.get("ratelimit-policy")).toMatch(/reads/)
      expect(quoted.body).toEqual({
        reference: q.reference,
        status: "quoted",
        clerkMessage: "Quoted, not booked. Take the payment, then book.",
        validUntil: q.validUntil
      })
      const inAMinute = new Date(Date.now() + 60_000)
      yield* setStatus(q.reference, { status: "held", hold_id: "h-1", hold_expires_at: inAMinute })
      expect((yield* s.desk.status(q.reference)).body).toMatchObject({
        status: "held",
        holdExpiresAt: inAMinute.toISOString()
      })
      // A quote past its validity reads as expired, though the row still says quoted.
      yield* setStatus(q.reference, {
        status: "quoted",
        hold_id: null,
        hold_expires_at: null,
        valid_until: new Date(Date.now() - 1000)
      })
      const expired = yield* s.desk.status(q.reference, "nb")
      expect(expired.body).toMatchObject({
        status: "expired",
        clerkMessage: "Tilbudet har utløpt og ingenting er holdt av. Lag et nytt tilbud."
      })
      expect(expired.body.ticket).toBeUndefined()
      yield* setStatus(q.reference, { status: "booking" })
      expect((yield* s.desk.status(q.reference)).body).toEqual({
        reference: q.reference,
        status: "booking",
        clerkMessage: "The booking is being made. Check again in a few seconds; do not take another payment."
      })
      const failedAt = new Date()
      yield* setStatus(q.reference, { status: "failed", failed_at: failedAt, failure_reason: "sold_out" })
      expect((yield* s.desk.status(q.reference)).body).toEqual({
        reference: q.reference,
        status: "failed",
        clerkMessage: failedClerkMessage("sold_out", false, "en"),
        failedAt: failedAt.toISOString(),
        reason: "sold_out"
      })

      const c = yield* s.desk.quote()
      yield* confirm(c.reference, { language: "nb" })
      const confirmed = yield* s.desk.status(c.reference)
      expect(confirmed.body).toMatchObject({
        reference: c.reference,
        status: "confirmed",
        clerkMessage: "Booked. The ticket is ready."
      })
      expect(Date.parse(confirmed.body.confirmedAt)).toBeGreaterThan(Date.now() - 60_000)
      // The ticket of the status is in the sale's language.
      expect(confirmed.body.ticket).toEqual((yield* s.desk.ticket(c.reference, "?lang=nb")).body)
      expect(confirmed.body.ticket.lines32).toContain("Gjest: Kari Nordmann")
    }))

  it.effect("GET /sales/{reference}/ticket: the ticket in en (default) and nb, QR to the booking page, a PDF link", () =>
    Effect.gen(function*() {
      const s = yield* world
      const server = yield* TestServer
      const q = yield* s.desk.quote()
      yield* confirm(q.reference, { firstName: "Åse", lastName: "Ærlig-Øvrebø" })
      const code = `FJX-${q.reference.slice(4, 8)}`
      const en = yield* s.desk.ticket(q.reference)
      expect(en.status, en.text).toBe(200)
      const ticketSale = {
        reference: q.reference,
        bookingCode: code,
        customer: { firstName: "Åse", lastName: "Ærlig-Øvrebø" },
        cartLine: q.cartLine
      }
      expect(en.body).toEqual({
        lines32: ticketLines(ticketSale, "en", 32),
        lines48: ticketLines(ticketSale, "en", 48),
        qrPayload: `https://guests.example.com/b/${code}`,
        pdfUrl: expect.stringMatching(
          new RegExp(`^${server.baseUrl}${BASE}/tickets/${q.reference}\\.pdf\\?lang=en&exp=\\d+&sig=[0-9a-f]{32}$`)
        ),
        bookingCode: code
      })
      expect(en.body.lines32).toContain("Total               NOK 1,247.50")
      expect(en.body.lines32).toContain(`Booking code: ${code}`)
      // The link lapses at the end of the day after the departure in Oslo (23:00 or 22:00 UTC).
      const exp = Number(new URL(en.body.pdfUrl).searchParams.get("exp")) * 1000
      const dayAfter = addDays(s.day, 2)
      expect([Date.parse(`${dayAfter}T00:00:00+01:00`), Date.parse(`${dayAfter}T00:00:00+02:00`)]).toContain(exp)
      const nb = yield* s.desk.ticket(q.reference, "?lang=nb")
      expect(nb.body.lines48).toContain("Totalt" + " ".repeat(48 - 6 - 11) + "1 247,50 kr")
      expect(nb.body.pdfUrl).toContain("lang=nb")
      expect((yield* s.desk.ticket(q.reference, "?lang=en")).body).toEqual(en.body)
      expectError(
        yield* s.desk.ticket(q.reference, "?lang=de"),
        400,
        "invalid_request",
        invalidFieldMessage("lang", false, "en")
      )
    }))

  it.effect("404 not_found: unknown, malformed, another terminal's sale, a key used on a terminal it is not bound to; no ticket yet", () =>
    Effect.gen(function*() {
      const s = yield* world
      const mine = yield* s.desk.quote()
      const theirs = yield* s.kiosk.quote()
      yield* confirm(theirs.reference)
      for (const ref of ["SVC-0000000000", "SVC-abc", "nothing", "SVC-00000000000"]) {
        expectError(yield* s.desk.status(ref), 404, "not_found")
        expectError(yield* s.desk.ticket(ref), 404, "not_found")
      }
      expectError(yield* s.desk.status(theirs.reference), 404, "not_found")
      expectError(yield* s.desk.ticket(theirs.reference), 404, "not_found")
      expect((yield* s.kiosk.ticket(theirs.reference)).status).toBe(200)
      // The desk's key is not bound to the kiosk terminal.
      expectError(yield* s.wrongTerminal.status(theirs.reference), 403, "terminal_not_registered")
      // Not confirmed: no ticket yet, said so.
      const none = yield* s.desk.ticket(mine.reference)
      expectError(none, 404, "not_found", CLERK_MESSAGE_VARIANTS.no_ticket_yet.en)
      expect(none.body.error.reference).toBe(mine.reference)
      yield* setStatus(mine.reference, { status: "failed", failed_at: new Date(), failure_reason: "provider_refused" })
      expectError(yield* s.desk.ticket(mine.reference), 404, "not_found", CLERK_MESSAGE_VARIANTS.no_ticket_yet.en)
      expectError(yield* get(`${BASE}/sales/${mine.reference}`), 401, "unauthorized")
    }))

  it.effect("the PDF link opens without a key: a PDF with the ticket's text and a QR code of the booking page", () =>
    Effect.gen(function*() {
      const s = yield* world
      const q = yield* s.desk.quote()
      yield* confirm(q.reference, { firstName: "Åse", lastName: "Ærlig-Øvrebø", language: "nb" })
      const ticket = (yield* s.desk.ticket(q.reference, "?lang=nb")).body
      const pdf = yield* fetchUrl(ticket.pdfUrl)
      expect(pdf.status).toBe(200)
      expect(pdf.headers.get("content-type")).toBe("application/pdf")
      expect(pdf.headers.get("cache-control")).toBe("no-store")
      expect(pdf.bytes.subarray(0, 5).toString("latin1")).toBe("%PDF-")
      const text = pdfText(pdf.bytes)
      for (const line of ticket.lines48) expect(text, line).toContain(line)
      expect(text).toContain(`Bookingkode: ${ticket.bookingCode}`)
      expect(text).toContain("Gjest: Åse Ærlig-Øvrebø")
      // The QR code drawn in the PDF reads back as the payload, and is the module's matrix for it.
      expect(pdfQr(pdf.bytes)).toBe(ticket.qrPayload)
      expect(qrMatrix(ticket.qrPayload).size).toBeGreaterThanOrEqual(25)
      // English from the English link.
      const en = (yield* s.desk.ticket(q.reference)).body
      expect(pdfText((yield* fetchUrl(en.pdfUrl)).bytes)).toContain(`Booking code: ${ticket.bookingCode}`)
    }))

  it.effect("the PDF link: a bad or lapsed signature, another sale's signature, or a sale not confirmed is 404", () =>
    Effect.gen(function*() {
      const s = yield* world
      const q = yield* s.desk.quote()
      const other = yield* s.desk.quote()
      yield* confirm(q.reference)
      const url = new URL((yield* s.desk.ticket(q.reference)).body.pdfUrl)
      const path = `${url.pathname}`
      const exp = url.searchParams.get("exp")!
      const sig = url.searchParams.get("sig")!
      const open = (p: string, query: string) => call(`${p}?${query}`)
      expect((yield* open(path, `exp=${exp}&sig=${sig}`)).status).toBe(200)
      const flipped = (sig[0] === "0" ? "1" : "0") + sig.slice(1)
      expectError(yield* open(path, `lang=en&exp=${exp}&sig=${flipped}`), 404, "not_found")
      expectError(yield* open(path, `lang=en&exp=${Number(exp) + 86400}&sig=${sig}`), 404, "not_found")
      expectError(
        yield* open(path.replace(q.reference, other.reference), `lang=en&exp=${exp}&sig=${sig}`),
        404,
        "not_found"
      )
      expectError(yield* open(path.replace(".pdf", ".png"), `lang=en&exp=${exp}&sig=${sig}`), 404, "not_found")
      expectError(
        yield* open(path, `lang=de&exp=${exp}&sig=${sig}`),
        400,
        "invalid_request",
        invalidFieldMessage("lang", false, "en")
      )
      expectError(yield* open(path, `lang=en`), 400, "invalid_request", invalidFieldMessage("exp", true, "en"))
      // A correctly signed link that has lapsed, and one for a sale that is not confirmed, need the
      // secret: derived from the shared one in service_secrets when QUICKBOOK_TICKET_LINK_SECRET is unset.
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ value: Uint8Array }>`SELECT value FROM service_secrets WHERE name = 'cursor'`
      const secret = deriveTicketLinkSecret(row!.value)
      expect(signTicketLink(secret, q.reference, Number(exp))).toBe(sig)
      const past = Math.floor(Date.now() / 1000) - 1
      expectError(yield* open(path, `exp=${past}&sig=${signTicketLink(secret, q.reference, past)}`), 404, "not_found")
      const otherPath = path.replace(q.reference, other.reference)
      const otherNoTicket = yield* open(
        otherPath,
        `exp=${exp}&sig=${signTicketLink(secret, other.reference, Number(exp))}`
      )
      expectError(otherNoTicket, 404, "not_found", CLERK_MESSAGE_VARIANTS.no_ticket_yet.en)
    }))

  it.effect("the OpenAPI document is valid and documents status, ticket and the PDF link with their errors", () =>
    Effect.gen(function*() {
      const doc = (yield* get(`${BASE}/openapi.json`)).body
      yield* Effect.promise(() => SwaggerParser.validate(structuredClone(doc)))
      const status = doc.paths[`${BASE}/sales/{reference}`].get
      expect(Object.keys(status.responses).sort()).toEqual(["200", "400", "401", "403", "404", "429", "500"])
      const ticket = doc.paths[`${BASE}/sales/{reference}/ticket`].get
      expect(Object.keys(ticket.responses).sort()).toEqual(["200", "400", "401", "403", "404", "429", "500"])
      expect(ticket.parameters.find((p: any) => p.name === "lang").schema.enum).toEqual(["en", "nb"])
      const pdf = doc.paths[`${BASE}/tickets/{file}`].get
      expect(pdf.security).toEqual([])
      expect(Object.keys(pdf.responses).sort()).toEqual(["200", "400", "404", "429", "500"])
      expect(Object.keys(pdf.responses["200"].content)).toEqual(["application/pdf"])
      expect(pdf.parameters.map((p: any) => p.name)).not.toContain("Quickbook-Terminal")
      expect(doc.components.schemas.Ticket.required.sort()).toEqual([
        "bookingCode",
        "lines32",
        "lines48",
        "pdfUrl",
        "qrPayload"
      ])
      expect(doc.components.schemas.SaleStatus.required.sort()).toEqual(["clerkMessage", "reference", "status"])
    }))
})
