/**
 * The payment sandbox's rows (schema surfboard_sandbox), the ids Surfboard gives them, and the
 * writes that create orders, payments and transactions (store.ts).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import type * as Dialect from "../../adapters/surfboard/dialect.js"

export type PartnerRow = {
  readonly id: string
  readonly name: string
  readonly api_key: string
  readonly api_secret: string
}

export type MerchantRow = {
  readonly id: string
  readonly partner_id: string
  readonly name: string
  readonly country: string
}

export type TerminalRow = {
  readonly id: string
  readonly merchant_id: string
  readonly name: string
  readonly kind: "card" | "PaymentPage"
}

export interface OrderRow {
  readonly id: string
  readonly merchant_id: string
  readonly terminal_id: string
  readonly reference_id: string | null
  readonly type: "purchase" | "return"
  readonly purchase_order_id: string | null
  readonly status: string
  readonly currency: string
  readonly amount_minor: number
  readonly body: typeof Dialect.CreateOrderRequest.Encoded
  readonly page_token: string | null
  readonly page_expires_at: Date | null
  readonly created_at: Date
}

export interface PaymentRow {
  readonly id: string
  readonly order_id: string
  readonly status: string
  readonly method: string | null
  readonly amount_minor: number
  readonly failure_reason: string | null
  readonly settle_amount_minor: number | null
  readonly void_status: string | null
  readonly created_at: Date
  readonly completed_at: Date | null
}

export interface TransactionRow {
  readonly id: string
  readonly order_id: string
  readonly payment_id: string
  readonly merchant_id: string
  readonly terminal_id: string
  readonly reference_id: string | null
  readonly type: "PURCHASE" | "RETURN"
  readonly amount_minor: number
  readonly currency: string
  readonly voided: boolean
  readonly created_at: Date
}

/** Surfboard-like ids: 16 hex digits and a two-digit type code. */
const ID_SUFFIX = {
  partner: "0a",
  merchant: "0e",
  terminal: "04",
  order: "0b",
  payment: "06",
  transaction: "19"
} as const
export const newId = (kind: keyof typeof ID_SUFFIX) => randomBytes(8).toString("hex") + ID_SUFFIX[kind]
export const newSecret = (prefix: string) => `${prefix}_${randomBytes(18).toString("base64url")}`

/** The INSERTs of the rows an order makes: the order, its payments, their transactions. */
export const makeRowWriters = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  /**
   * A new payment of an order: initiated (a purchase's, waiting for the card or the page), or
   * `settling` says how a return's refund settles (processing until then).
   */
  const insertPayment = (
    id: string,
    orderId: string,
    amount: number,
    method: string,
    at: Date,
    settling?: {
      readonly status: "PAYMENT_PROCESSING"
      readonly settle_amount_minor: number
      readonly settles_at: Date | null
      readonly settle_on_request: boolean
    }
  ) =>
    sql`INSERT INTO surfboard_sandbox.payments ${
      sql.insert({
        id,
        order_id: orderId,
        status: "PAYMENT_INITIATED",
        method,
        amount_minor: amount,
        failure_reason: null,
        settle_amount_minor: null,
        settles_at: null,
        settle_on_request: false,
        ...settling,
        void_status: null,
        void_settles_at: null,
        void_on_request: false,
        created_at: at,
        completed_at: null
      })
    }`

  /** A new order (PENDING until a payment moves it): a purchase or a return. */
  const insertOrder = (order: Omit<OrderRow, "status">) =>
    sql`INSERT INTO surfboard_sandbox.orders ${
      sql.insert({ ...order, status: "PENDING", body: JSON.stringify(order.body), updated_at: order.created_at })
    }`

  /** The transaction of a completed payment of `order`: what it took (PURCHASE) or returned (RETURN). */
  const insertTransaction = (
    order: OrderRow,
    paymentId: string,
    id: string,
    type: TransactionRow["type"],
    amount: number,
    at: Date
  ) =>
    sql`INSERT INTO surfboard_sandbox.transactions ${
      sql.insert({
        id,
        order_id: order.id,
        payment_id: paymentId,
        merchant_id: order.merchant_id,
        terminal_id: order.terminal_id,
        reference_id: order.reference_id,
        type,
        amount_minor: amount,
        currency: order.currency,
        voided: false,
        created_at: at
      })
    }`

  return { insertOrder, insertPayment, insertTransaction }
})
