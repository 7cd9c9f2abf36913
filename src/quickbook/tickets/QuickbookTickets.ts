/**
 * A Quickbook sale's status and its ticket (spec §2 Ticket, §3, §4 GET /sales/{reference} and
 * GET /sales/{reference}/ticket; docs/decisions.md "Quickbook: sale status and tickets").
 *
 * For the POST /book answer (call inside the book's transaction, after the sale is confirmed):
 *   tickets.ticketFor(reference: string, lang: TicketLanguage): Effect<Ticket, QbNotFound>
 *   tickets.ticketOf(sale: SaleRecord, lang: TicketLanguage): Option<Ticket>   (none unless confirmed)
 * Both use the pure `ticketOf(sale, lang, links)` of src/quickbook/tickets/ticket.ts with the
 * links of QuickbookTicketLinks.
 *
 * - status and ticket are scoped to the caller's terminal: an unknown or malformed reference, or
 *   another terminal's, is 404 not_found; a sale without a ticket yet is 404 with its own message.
 * - the PDF is opened by a signed link without a key: a link that does not verify or has lapsed,
 *   and a sale not confirmed, are 404 not_found; a valid link spends the reads budget of the
 *   sale's terminal (the PDF is drawn on each request).
 */
import { Clock, Effect, Option } from "effect"
import { RateLimiter } from "../../http/RateLimiter.js"
import { type ClerkLanguage } from "../clerkMessages.js"
import { type QbForbidden, QbNotFound, QbRateLimited } from "../errors.js"
import { QUICKBOOK_BUDGETS, QUICKBOOK_WINDOW_SECONDS, quickbookBucket } from "../limits.js"
import type { QuickbookCaller } from "../terminals/QuickbookKeys.js"
import { otherModeSale } from "../terminals/testKeys.js"
import { QuickbookTicketLinks } from "./QuickbookTicketLinks.js"
import { QuickbookTicketsRepo } from "./QuickbookTicketsRepo.js"
import { type SaleRecord, ticketSaleOf } from "./saleRecord.js"
import { isBookFailureReason, saleClerkMessage, statusAt } from "./saleStatus.js"
import { type Ticket, type TicketLanguage, ticketOf as layoutTicket } from "./ticket.js"
import { ticketPdf } from "./ticketPdf.js"

const notFound = (detail: string, reference?: string) =>
  new QbNotFound({ code: "not_found", detail, ...(reference !== undefined ? { reference } : {}) })

const PDF_FILE = /^(SVC-[A-Z0-9]{10})\.pdf$/

export class QuickbookTickets extends Effect.Service<QuickbookTickets>()("Quickbook/Tickets", {
  effect: Effect.gen(function*() {
    const repo = yield* QuickbookTicketsRepo
    const links = yield* QuickbookTicketLinks
    const limiter = yield* RateLimiter

    const ticketOf = (sale: SaleRecord, lang: TicketLanguage): Option.Option<Ticket> =>
      Option.map(
        ticketSaleOf(sale),
        (t) => layoutTicket(t, lang, links.linksFor({ ...t, linkExpiresAt: sale.link_expires_at }, lang))
      )

    /** The caller's terminal's sale (404 otherwise), when it was quoted with a key of the caller's mode (403 otherwise). */
    const saleOf = (caller: QuickbookCaller, reference: string) =>
      Effect.flatMap(
        repo.findSale({ reference, terminalId: caller.terminal.id }),
        Option.match({
          onNone: () =>
            Effect.fail<QbNotFound | QbForbidden>(notFound(`no sale ${reference} for terminal ${caller.terminal.id}`)),
          onSome: (sale) => {
            const refused = otherModeSale(caller.key.mode, { reference: sale.reference, keyMode: sale.key_mode })
            return refused ? Effect.fail(refused) : Effect.succeed(sale)
          }
        })
      )

    const noTicketYet = (sale: SaleRecord) =>
      new QbNotFound({
        code: "not_found",
        detail: `sale ${sale.reference} is ${sale.status}: no ticket`,
        reference: sale.reference,
        variant: "no_ticket_yet"
      })

    /** GET /sales/{reference}: the status now, the ticket when confirmed, what the clerk should know. */
    const status = Effect.fn("QuickbookTickets.status")(function*(
      caller: QuickbookCaller,
      reference: string,
      clerkLang: ClerkLanguage
    ) {
      const sale = yield* saleOf(caller, reference)
      const now = new Date(yield* Clock.currentTimeMillis)
      const current = statusAt(sale.status, sale.valid_until, sale.hold_expires_at, now)
      const reason = sale.failure_reason !== null && isBookFailureReason(sale.failure_reason)
        ? sale.failure_reason
        : undefined
      const ticket = ticketOf(sale, sale.language ?? "en")
      return {
        reference: sale.reference,
        status: current,
        clerkMessage: saleClerkMessage(current, clerkLang, { reason, moneyReturned: sale.money_returned ?? undefined }),
        ...(current === "quoted" || current === "held" || current === "expired"
          ? { validUntil: sale.valid_until.toISOString() }
          : {}),
        ...(current === "held" && sale.hold_expires_at !== null
          ? { holdExpiresAt: sale.hold_expires_at.toISOString() }
          : {}),
        ...(current === "confirmed" && sale.confirmed_at !== null
          ? { confirmedAt: sale.confirmed_at.toISOString() }
          : {}),
        ...(Option.isSome(ticket) ? { ticket: ticket.value } : {}),
        ...(current === "failed" && sale.failed_at !== null ? { failedAt: sale.failed_at.toISOString() } : {}),
        ...(current === "failed" && reason !== undefined ? { reason } : {}),
        ...(current === "failed" && sale.money_returned !== null ? { moneyReturned: sale.money_returned } : {})
      }
    })

    /** GET /sales/{reference}/ticket. */
    const ticket = Effect.fn("QuickbookTickets.ticket")((
      caller: QuickbookCaller,
      reference: string,
      lang: TicketLanguage
    ) =>
      Effect.flatMap(saleOf(caller, reference), (sale) =>
        Option.match(ticketOf(sale, lang), {
          onNone: () => Effect.fail(noTicketYet(sale)),
          onSome: Effect.succeed
        }))
    )

    /** The ticket of a sale, any terminal (for POST /book, inside its transaction). */
    const ticketFor = Effect.fn("QuickbookTickets.ticketFor")((reference: string, lang: TicketLanguage) =>
      Effect.flatMap(repo.findSale({ reference }), (found) =>
        Option.match(found, {
          onNone: () => Effect.fail(notFound(`no sale ${reference}`)),
          onSome: (sale) =>
            Option.match(ticketOf(sale, lang), { onNone: () => Effect.fail(noTicketYet(sale)), onSome: Effect.succeed })
        }))
    )

    /** GET /tickets/{reference}.pdf?lang&exp&sig: the PDF of a confirmed sale's ticket. */
    const pdf = Effect.fn("QuickbookTickets.pdf")(function*(
      file: string,
      query: { readonly lang: TicketLanguage; readonly exp: string; readonly sig: string }
    ) {
      const reference = PDF_FILE.exec(file)?.[1]
      if (reference === undefined) return yield* notFound(`not a ticket file: ${file}`)
      const check = links.check(reference, query.exp, query.sig, yield* Clock.currentTimeMillis)
      if (check !== "valid") return yield* notFound(`ticket link of ${reference}: ${check}`)
      const sale = yield* Effect.flatMap(
        repo.findSale({ reference }),
        Option.match({
          onNone: () => Effect.fail(notFound(`no sale ${reference}`)),
          onSome: Effect.succeed
        })
      )
      const { perMinute } = QUICKBOOK_BUDGETS.reads
      const decision = yield* limiter.hit(
        quickbookBucket("reads", sale.terminal_id),
        perMinute,
        QUICKBOOK_WINDOW_SECONDS
      )
      if (!decision.allowed) {
        return yield* new QbRateLimited({
          code: "rate_limited",
          detail:
            `more than ${perMinute} reads in ${QUICKBOOK_WINDOW_SECONDS} seconds from terminal ${sale.terminal_id}`,
          retryAfterSeconds: decision.resetSeconds
        })
      }
      const found = ticketOf(sale, query.lang)
      if (Option.isNone(found)) return yield* noTicketYet(sale)
      return yield* ticketPdf(found.value, `Ticket ${found.value.bookingCode} (${reference})`)
    })

    return { status, ticket, ticketFor, ticketOf, pdf } as const
  }),
  dependencies: [QuickbookTicketLinks.Default, RateLimiter.Default, QuickbookTicketsRepo.Default]
}) {}
