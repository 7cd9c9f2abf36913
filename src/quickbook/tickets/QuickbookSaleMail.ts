/**
 * Guest emails of desk (Quickbook) sales, through the outbox (docs/email.md), in the sale's
 * language (`quickbook_sales.language`, English when unset).
 *
 * For POST /book and its recovery job. Call inside the transaction that moves the sale, after its
 * UPDATE (the email then exists exactly when the new status committed):
 *
 *   saleMail.enqueueConfirmed(reference: string): Effect<Option<Enqueued>>
 *     the sale must be `confirmed`; template `quickbook_sale_confirmed_guest` (tour, date and time,
 *     guests, the booking price of a tour priced per booking, total, booking code, the booking page
 *     link and the ticket PDF link);
 *     dedupe key `quickbook:<reference>:confirmed:guest`.
 *
 *   saleMail.enqueueFailed(reference: string, outcome: { moneyReturned: boolean }): Effect<Option<Enqueued>>
 *     the sale must be `failed`; template `quickbook_sale_failed_guest` (the payment has been
 *     returned / is being returned); dedupe key `quickbook:<reference>:failed:guest`.
 *
 * Both answer Option.none when the sale has no guest to write to (no `customer`), and the
 * existing message (created: false) when called again. An unknown reference or a sale in another
 * status is a defect: a bug in the caller, which rolls its transaction back.
 * Needs the Outbox and a SqlClient from the caller's context; QuickbookTicketLinks and
 * QuickbookTicketsRepo are its own.
 */
import { Effect, Option } from "effect"
import { Outbox } from "../../email/Outbox.js"
import type { Departure, Money } from "../../email/templates.js"
import { annotateSpan } from "../../observability/spanFn.js"
import { BOOKING_LINE_TYPE } from "../sales/rules.js"
import { QuickbookTicketLinks } from "./QuickbookTicketLinks.js"
import { QuickbookTicketsRepo } from "./QuickbookTicketsRepo.js"
import type { SaleRecord } from "./saleRecord.js"
import type { SaleStatus } from "./saleStatus.js"
import { bookingLineOf, cleanText } from "./ticket.js"

export const confirmedGuestDedupeKey = (reference: string) => `quickbook:${reference}:confirmed:guest`
export const failedGuestDedupeKey = (reference: string) => `quickbook:${reference}:failed:guest`

const departureOf = (sale: SaleRecord): Departure => ({
  date: sale.cart_line.start.date,
  startTime: sale.cart_line.start.time
})
const moneyOf = (sale: SaleRecord, amountMinor: number): Money => ({ amountMinor, currency: sale.cart_line.currency })
const guestNameOf = (sale: SaleRecord) => {
  const name = sale.customer ? cleanText(`${sale.customer.firstName} ${sale.customer.lastName}`) : ""
  return name === "" ? null : name
}

export class QuickbookSaleMail extends Effect.Service<QuickbookSaleMail>()("Quickbook/SaleMail", {
  effect: Effect.gen(function*() {
    const repo = yield* QuickbookTicketsRepo
    const outbox = yield* Outbox
    const links = yield* QuickbookTicketLinks

    /** The sale, locked, in the status the caller just gave it. */
    const saleIn = (reference: string, status: SaleStatus) =>
      Effect.flatMap(repo.findSale({ reference, lock: true }), (found) => {
        if (Option.isNone(found)) return Effect.dieMessage(`QuickbookSaleMail: no sale ${reference}`)
        if (found.value.status !== status) {
          return Effect.dieMessage(`QuickbookSaleMail: sale ${reference} is ${found.value.status}, not ${status}`)
        }
        return Effect.succeed(found.value)
      })

    const enqueueConfirmed = Effect.fn("QuickbookSaleMail.enqueueConfirmed")(function*(reference: string) {
      yield* annotateSpan({ reference })
      const sale = yield* saleIn(reference, "confirmed")
      if (sale.customer === null || sale.booking_code === null) return Option.none()
      const lang = sale.language ?? "en"
      const line = sale.cart_line
      const booking = bookingLineOf(line)
      const enqueued = yield* outbox.enqueue({
        dedupeKey: confirmedGuestDedupeKey(reference),
        to: sale.customer.email,
        locale: lang,
        operatorId: sale.selling_operator_id,
        template: "quickbook_sale_confirmed_guest",
        data: {
          guestName: guestNameOf(sale),
          operatorName: line.operatorName,
          tourName: line.tourName,
          departure: departureOf(sale),
          // Priced per booking: the guest types without amounts (included), the booking price on its own.
          guests: line.guests.filter((g) => g.type !== BOOKING_LINE_TYPE).map((g) => ({
            label: g.label,
            count: g.count,
            amount: booking === undefined ? moneyOf(sale, g.lineMinor) : null
          })),
          ...(booking === undefined ? {} : { bookingPrice: moneyOf(sale, booking.lineMinor) }),
          total: moneyOf(sale, line.totalMinor),
          bookingCode: sale.booking_code,
          saleReference: reference,
          bookingPageUrl: links.bookingPageUrl(sale.booking_code),
          ticketPdfUrl: links.pdfUrl(reference, lang, sale.link_expires_at)
        }
      })
      return Option.some(enqueued)
    })

    const enqueueFailed = Effect.fn("QuickbookSaleMail.enqueueFailed")(function*(
      reference: string,
      outcome: { readonly moneyReturned: boolean }
    ) {
      yield* annotateSpan({ reference })
      const sale = yield* saleIn(reference, "failed")
      if (sale.customer === null) return Option.none()
      const enqueued = yield* outbox.enqueue({
        dedupeKey: failedGuestDedupeKey(reference),
        to: sale.customer.email,
        locale: sale.language ?? "en",
        operatorId: sale.selling_operator_id,
        template: "quickbook_sale_failed_guest",
        data: {
          guestName: guestNameOf(sale),
          operatorName: sale.cart_line.operatorName,
          tourName: sale.cart_line.tourName,
          departure: departureOf(sale),
          total: moneyOf(sale, sale.cart_line.totalMinor),
          saleReference: reference,
          moneyReturned: outcome.moneyReturned
        }
      })
      return Option.some(enqueued)
    })

    return { enqueueConfirmed, enqueueFailed } as const
  }),
  dependencies: [QuickbookTicketLinks.Default, QuickbookTicketsRepo.Default]
}) {}
