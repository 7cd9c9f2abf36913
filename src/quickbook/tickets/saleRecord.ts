/**
 * One Quickbook sale as the status, ticket and guest-email code reads it (QuickbookTicketsRepo):
 * the row of `quickbook_sales` (migrations 0015-0017) with its JSON columns decoded, and when its
 * ticket's PDF link lapses.
 */
import { Option, Schema } from "effect"
import { SaleStatus } from "./saleStatus.js"
import { SaleCustomer, TicketCartLine, TicketLanguage, type TicketSale } from "./ticket.js"

export const SaleRecord = Schema.Struct({
  reference: Schema.String,
  terminal_id: Schema.String,
  /** The mode of the key the sale was quoted with: only keys of this mode may use it. */
  key_mode: Schema.Literal("live", "test"),
  selling_operator_id: Schema.String,
  status: SaleStatus,
  valid_until: Schema.DateFromSelf,
  hold_expires_at: Schema.NullOr(Schema.DateFromSelf),
  cart_line: TicketCartLine,
  customer: Schema.NullOr(SaleCustomer),
  language: Schema.NullOr(TicketLanguage),
  booking_code: Schema.NullOr(Schema.String),
  confirmed_at: Schema.NullOr(Schema.DateFromSelf),
  failed_at: Schema.NullOr(Schema.DateFromSelf),
  failure_reason: Schema.NullOr(Schema.String),
  /** The paying payment's money is back (voided or refunded); null when no payment was recorded. */
  money_returned: Schema.NullOr(Schema.Boolean),
  link_expires_at: Schema.DateFromSelf
})
export type SaleRecord = typeof SaleRecord.Type

/** A confirmed sale's ticket data; none when the sale is not (yet) confirmed. */
export const ticketSaleOf = (sale: SaleRecord): Option.Option<TicketSale> =>
  sale.status === "confirmed" && sale.booking_code !== null && sale.customer !== null
    ? Option.some({
      reference: sale.reference,
      bookingCode: sale.booking_code,
      customer: sale.customer,
      cartLine: sale.cart_line
    })
    : Option.none()
