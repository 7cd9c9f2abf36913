/**
 * Guest emails of desk sales (issue 6 item 9): enqueued in the caller's transaction with their
 * dedupe keys, sent by the outbox to the local mailbox, in the sale's language; the confirmation's
 * PDF link opens the ticket on the server; nothing is sent when the transaction rolls back; a sale
 * in another status is a defect.
 *
 * Until POST /book exists, the sales are made by quoting over HTTP and then updating the sale row
 * in SQL (status, customer, language, booking code and id, confirmed_at / failed_at), as POST /book
 * will, in the same transaction as the enqueue. Also the ticket POST /book will answer (ticketFor).
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { ConfigProvider, Effect, Exit, Layer, Option } from "effect"
import { randomUUID } from "node:crypto"
import { Outbox } from "../../../src/email/Outbox.js"
import { QuickbookKeys } from "../../../src/quickbook/terminals/QuickbookKeys.js"
import { QuickbookSaleMail } from "../../../src/quickbook/tickets/QuickbookSaleMail.js"
import { QuickbookTickets } from "../../../src/quickbook/tickets/QuickbookTickets.js"
import { call, get } from "../../support/http.js"
import { mailTo, paymentsEnv } from "../../support/payments.js"
import { BASE, sellingDesk } from "../../support/quickbook.js"

const GUESTS = { GUEST_BOOKING_BASE_URL: "https://guests.example.com" }
const env = paymentsEnv(Effect.succeed({ TOUR_AVAILABILITY_TIMEOUT_MS: "1500", ...GUESTS }))
const MailLive = Layer.merge(QuickbookSaleMail.Default, QuickbookTickets.Default).pipe(
  Layer.provide(
    Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries({ LOG_LEVEL: "Warning", ...GUESTS }))))
  )
)

const world = Effect.gen(function*() {
  const { own, key, headers, day } = yield* sellingDesk
  const quote = Effect.map(
    call(`${BASE}/quote`, {
      method: "POST",
      key: key.token,
      headers,
      body: {
        activityId: own,
        start: { date: day, time: "10:00" },
        guests: [{ type: "adult", count: 2 }, { type: "child", count: 1 }]
      }
    }),
    (r) => {
      expect(r.status, r.text).toBe(200)
      return r.body.reference as string
    }
  )
  return {
    day,
    quote,
    ticket: (ref: string, lang: string) => get(`${BASE}/sales/${ref}/ticket?lang=${lang}`, key.token, headers)
  }
}).pipe(Effect.provide(QuickbookKeys.Default))

const guest = (language: "en" | "nb") => {
  const email = `guest-${randomUUID().slice(0, 8)}@example.com`
  return { email, language, customer: JSON.stringify({ firstName: "Åse", lastName: "Ærlig", email, phone: null }) }
}

/** What POST /book does to a sale it confirms (see the file comment). */
const confirmRow = (reference: string, g: ReturnType<typeof guest>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`
      UPDATE quickbook_sales SET status = 'confirmed', language = ${g.language}, customer = ${g.customer}::jsonb,
        booking_id = 'bk-1', booking_code = 'FJX-4821', confirmed_at = now(), paid_by_payment_id = 'pay-1'
      WHERE reference = ${reference}`).pipe(Effect.orDie)

const failRow = (reference: string, g: ReturnType<typeof guest>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`
      UPDATE quickbook_sales SET status = 'failed', language = ${g.language}, customer = ${g.customer}::jsonb,
        failed_at = now(), failure_reason = 'sold_out', paid_by_payment_id = 'pay-2'
      WHERE reference = ${reference}`).pipe(Effect.orDie)

const inTransaction = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.withTransaction(effect))

const send = Effect.flatMap(Outbox, (outbox) => outbox.sendDue())

layer(MailLive.pipe(Layer.provideMerge(env)), { excludeTestServices: true, timeout: 180_000 })(
  "quickbook guest emails",
  (it) => {
    it.effect("a confirmed sale: the guest's email in Norwegian with tour, time, guests, total, code and both links; the PDF link opens", () =>
      Effect.gen(function*() {
        const s = yield* world
        const mail = yield* QuickbookSaleMail
        const ref = yield* s.quote
        const g = guest("nb")
        const enqueued = yield* inTransaction(Effect.zipRight(confirmRow(ref, g), mail.enqueueConfirmed(ref)))
        expect(Option.getOrThrow(enqueued).created).toBe(true)
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ dedupe_key: string; template: string; locale: string }>`
        SELECT dedupe_key, template, locale FROM email_outbox WHERE id = ${Option.getOrThrow(enqueued).id}`
        expect(row).toEqual({
          dedupe_key: `quickbook:${ref}:confirmed:guest`,
          template: "quickbook_sale_confirmed_guest",
          locale: "nb"
        })
        // Again (a replayed book): the same message, nothing new.
        const again = yield* inTransaction(mail.enqueueConfirmed(ref))
        expect(Option.getOrThrow(again)).toMatchObject({ id: Option.getOrThrow(enqueued).id, created: false })
        yield* send
        const [message, ...more] = yield* mailTo(g.email)
        expect(more).toEqual([])
        expect(message!.subject).toMatch(/^Bestillingen din FJX-4821: Fjord Cruise, /)
        const text = message!.text_body
        for (
          const part of [
            "Hei Åse Ærlig,",
            "Bookingkode: FJX-4821",
            "Tur: Fjord Cruise",
            "Tid: 10:00",
            "2 x Adult: 998,00\u00a0kr",
            "1 x Child: 249,50\u00a0kr",
            "Totalt betalt: 1\u00a0247,50\u00a0kr",
            "Bestillingen din: https://guests.example.com/b/FJX-4821"
          ]
        ) {
          expect(text, part).toContain(part)
        }
        // The PDF link is the ticket's, in the sale's language, and opens on the server.
        const pdfUrl = /Billett \(PDF\): (\S+)/.exec(text)![1]!
        const ticket = (yield* s.ticket(ref, "nb")).body
        const path = (u: string) => new URL(u).pathname + new URL(u).search
        expect(path(pdfUrl)).toBe(path(ticket.pdfUrl))
        const pdf = yield* call(path(pdfUrl))
        expect(pdf.status).toBe(200)
        expect(pdf.text.startsWith("%PDF-")).toBe(true)
      }))

    it.effect("a failed sale: the guest is told the payment is being returned, or has been, in English", () =>
      Effect.gen(function*() {
        const s = yield* world
        const mail = yield* QuickbookSaleMail
        const ref = yield* s.quote
        const g = guest("en")
        yield* inTransaction(Effect.zipRight(failRow(ref, g), mail.enqueueFailed(ref, { moneyReturned: false })))
        // The dedupe key holds: a second call (say after the refund completed) adds nothing.
        expect(Option.getOrThrow(yield* inTransaction(mail.enqueueFailed(ref, { moneyReturned: true }))).created).toBe(
          false
        )
        yield* send
        const messages = yield* mailTo(g.email)
        expect(messages.map((m) => m.subject)).toEqual([
          `We could not book Fjord Cruise: your payment is being returned (${ref})`
        ])
        expect(messages[0]!.text_body).toContain("Hello Åse Ærlig,")
        expect(messages[0]!.text_body).toContain(
          "Your payment of NOK\u00a01,247.50 is being returned to the card you paid with."
        )
        expect(messages[0]!.text_body).toContain(`Sale reference: ${ref}`)

        const returned = yield* s.quote
        const h = guest("nb")
        yield* inTransaction(
          Effect.zipRight(failRow(returned, h), mail.enqueueFailed(returned, { moneyReturned: true }))
        )
        yield* send
        const [nb] = yield* mailTo(h.email)
        expect(nb!.subject).toBe(`Vi fikk ikke booket Fjord Cruise: betalingen din er betalt tilbake (${returned})`)
      }))

    it.effect("QuickbookTickets.ticketFor (for the POST /book answer) gives the ticket the ticket endpoint gives", () =>
      Effect.gen(function*() {
        const s = yield* world
        const tickets = yield* QuickbookTickets
        const ref = yield* s.quote
        const notYet = yield* Effect.flip(tickets.ticketFor(ref, "en"))
        expect(notYet).toMatchObject({ _tag: "QbNotFound", variant: "no_ticket_yet", reference: ref })
        const ticket = yield* inTransaction(Effect.zipRight(confirmRow(ref, guest("nb")), tickets.ticketFor(ref, "nb")))
        const served = (yield* s.ticket(ref, "nb")).body
        const path = (u: string) => new URL(u).pathname + new URL(u).search
        expect({ ...ticket, pdfUrl: path(ticket.pdfUrl!) }).toEqual({ ...served, pdfUrl: path(served.pdfUrl) })
        expect(ticket.qrPayload).toBe("https://guests.example.com/b/FJX-4821")
      }))

    it.effect("nothing is enqueued when the caller's transaction rolls back; a sale in another status is a defect", () =>
      Effect.gen(function*() {
        const s = yield* world
        const mail = yield* QuickbookSaleMail
        const sql = yield* SqlClient.SqlClient
        const ref = yield* s.quote
        const g = guest("en")
        const rolledBack = yield* Effect.exit(inTransaction(
          confirmRow(ref, g).pipe(
            Effect.zipRight(mail.enqueueConfirmed(ref)),
            Effect.zipRight(Effect.fail("book failed later" as const))
          )
        ))
        expect(Exit.isFailure(rolledBack)).toBe(true)
        const [n] = yield* sql<
          { n: number }
        >`SELECT count(*)::int AS n FROM email_outbox WHERE dedupe_key LIKE ${`quickbook:${ref}:%`}`
        expect(n!.n).toBe(0)
        // Still quoted: neither email may be sent for it.
        const confirmed = yield* Effect.exit(inTransaction(mail.enqueueConfirmed(ref)))
        expect(Exit.isFailure(confirmed) && !Exit.isInterrupted(confirmed)).toBe(true)
        expect(String(Exit.isFailure(confirmed) ? confirmed.cause : "")).toMatch(/is quoted, not confirmed/)
        const failed = yield* Effect.exit(inTransaction(mail.enqueueFailed(ref, { moneyReturned: false })))
        expect(String(Exit.isFailure(failed) ? failed.cause : "")).toMatch(/is quoted, not failed/)
      }))
  }
)
