/**
 * A balance paid on a service booking (`booking_payments`, purpose `balance`): recorded once per
 * provider order, by a paid payment link (src/partner/paymentLinks/) or a pay-later charge
 * (src/payLater/). A second record of the same order is nothing (ON CONFLICT DO NOTHING).
 */
import type { SqlClient } from "@effect/sql"
import { SqlSchema } from "@effect/sql"
import { Schema } from "effect"
import { IdRow } from "../db/repoEdge.js"

export const NewBalancePayment = Schema.Struct({
  bookingId: Schema.String,
  merchantId: Schema.String,
  /** The provider's order behind the payment. */
  orderId: Schema.String,
  paymentId: Schema.NullOr(Schema.String),
  amountMinor: Schema.Number,
  currency: Schema.String,
  paidAt: Schema.DateFromSelf
})
export type NewBalancePayment = typeof NewBalancePayment.Type

/** The statement recording `payment`: the new row's id, none when the order was recorded already. */
export const insertBalancePayment = (sql: SqlClient.SqlClient) =>
  SqlSchema.findOne({
    Request: NewBalancePayment,
    Result: IdRow,
    execute: (p) =>
      sql`
        INSERT INTO booking_payments (booking_id, purpose, merchant_id, provider_order_id, provider_payment_id, amount_minor,
          currency, paid_at)
        VALUES (${p.bookingId}::uuid, 'balance', ${p.merchantId}, ${p.orderId}, ${p.paymentId}, ${p.amountMinor},
          ${p.currency}, ${p.paidAt})
        ON CONFLICT (merchant_id, provider_order_id) DO NOTHING
        RETURNING id`
  })
