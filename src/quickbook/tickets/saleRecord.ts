/**
 * One Quickbook sale as the status, ticket and guest-email code reads it: the row of
 * `quickbook_sales` (migrations 0015-0017) with its JSON columns decoded, and when its ticket's
 * PDF link lapses (the end of the day after the departure, in the tour's zone, computed by
 * PostgreSQL). A JSON column that does not decode is a defect (the row was written by us).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { REFERENCE_PATTERN } from "../sales/rules.js"
import { SaleStatus } from "./saleStatus.js"
import { SaleCustomer, TicketCartLine, TicketLanguage, type TicketSale } from "./ticket.js"

const Row = Schema.Struct({
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
export type SaleRecord = typeof Row.Type

const decodeRow = Schema.decodeUnknown(Row)

/**
 * The sale with this reference, of this terminal when `terminalId` is given; none for an unknown
 * or malformed reference. `lock` reads it `FOR UPDATE` (inside the caller's transaction).
 */
export const readSale = (
  sql: SqlClient.SqlClient,
  reference: string,
  options: { readonly terminalId?: string | undefined; readonly lock?: boolean | undefined } = {}
) =>
  Effect.gen(function*() {
    if (!REFERENCE_PATTERN.test(reference)) return Option.none<SaleRecord>()
    const rows = yield* sql`
      SELECT reference, terminal_id, (SELECT k.mode FROM quickbook_keys k WHERE k.id = s.key_id) AS key_mode,
        selling_operator_id, status, valid_until, hold_expires_at, cart_line, customer,
        language, booking_code, confirmed_at, failed_at, failure_reason,
        (SELECT p.state = 'refunded' FROM quickbook_payments p
          WHERE p.sale_reference = s.reference AND p.payment_id = s.paid_by_payment_id) AS money_returned,
        ((start_date + 2)::timestamp AT TIME ZONE (cart_line->'start'->>'timeZone')) AS link_expires_at
      FROM quickbook_sales s
      WHERE reference = ${reference}
        ${options.terminalId === undefined ? sql`` : sql`AND terminal_id = ${options.terminalId}`}
      ${options.lock ? sql`FOR UPDATE OF s` : sql``}`.pipe(Effect.orDie)
    if (rows.length === 0) return Option.none<SaleRecord>()
    return Option.some(yield* Effect.orDie(decodeRow(rows[0])))
  }).pipe(Effect.withSpan("QuickbookSales.read"))

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
