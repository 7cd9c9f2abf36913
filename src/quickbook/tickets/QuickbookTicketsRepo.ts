/**
 * The SQL of a desk sale as the status, ticket and guest-email code reads it (QuickbookTickets,
 * QuickbookSaleMail): the row of `quickbook_sales` (migrations 0015-0017) decoded with its JSON
 * columns into a SaleRecord (src/quickbook/tickets/saleRecord.ts), with when its ticket's PDF link
 * lapses (the end of the day after the departure, in the tour's zone, computed by PostgreSQL). A
 * database error or a row that does not decode (the row was written by us) is a defect at its edge
 * (repoEdge: a span per method), once.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { repoEdge } from "../../db/repoEdge.js"
import { REFERENCE_PATTERN } from "../sales/rules.js"
import { SaleRecord } from "./saleRecord.js"

const SaleQuery = Schema.Struct({
  reference: Schema.String,
  /** Only this terminal's sale. */
  terminalId: Schema.optional(Schema.String),
  /** Read it `FOR UPDATE` (inside the caller's transaction). */
  lock: Schema.optional(Schema.Boolean)
})

export class QuickbookTicketsRepo extends Effect.Service<QuickbookTicketsRepo>()("Quickbook/TicketsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const select = SqlSchema.findOne({
      Request: SaleQuery,
      Result: SaleRecord,
      execute: ({ lock, reference, terminalId }) =>
        sql`
          SELECT reference, terminal_id, (SELECT k.mode FROM quickbook_keys k WHERE k.id = s.key_id) AS key_mode,
            selling_operator_id, status, valid_until, hold_expires_at, cart_line, customer,
            language, booking_code, confirmed_at, failed_at, failure_reason,
            (SELECT p.state = 'refunded' FROM quickbook_payments p
              WHERE p.sale_reference = s.reference AND p.payment_id = s.paid_by_payment_id) AS money_returned,
            ((start_date + 2)::timestamp AT TIME ZONE (cart_line->'start'->>'timeZone')) AS link_expires_at
          FROM quickbook_sales s
          WHERE reference = ${reference}
            ${terminalId === undefined ? sql`` : sql`AND terminal_id = ${terminalId}`}
          ${lock ? sql`FOR UPDATE OF s` : sql``}`
    })

    /** The sale with this reference (of this terminal when given); none for an unknown or malformed reference. */
    const findSale = (query: typeof SaleQuery.Type) =>
      REFERENCE_PATTERN.test(query.reference) ? select(query) : Effect.succeed(Option.none<SaleRecord>())

    return repoEdge("QuickbookTicketsRepo", { findSale })
  })
}) {}
