/**
 * Orders in the payment sandbox (store.ts): a purchase is paid when a card is presented (`pay`) or
 * its hosted page is paid; a return (refund) is a negative order linked to a paid purchase, never
 * for more than is left to refund (pending refunds count). Voids: a completed purchase payment,
 * before 23:00 UTC of its UTC day, with no refund on it.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { alphaCurrency } from "../../adapters/surfboard/currency.js"
import type * as Dialect from "../../adapters/surfboard/dialect.js"
import { validForMillis } from "../../adapters/surfboard/mapping.js"
import { voidDeadline } from "../../ports/PaymentProvider.js"
import type { makeAccounts } from "./accounts.js"
import type { SandboxClock } from "./clock.js"
import { badRequest, notFound, SandboxFailure } from "./failure.js"
import {
  makeRowWriters,
  type MerchantRow,
  newId,
  type OrderRow,
  type PaymentRow,
  type TerminalRow,
  type TransactionRow
} from "./rows.js"
import type { makeSettlement } from "./settlement.js"
import { settlementPlan, type SurfboardSwitches } from "./switches.js"

/** A payment page with no validity of its own stays open this long. */
export const DEFAULT_PAGE_VALIDITY = "7d"

export type SwitchesFor = (merchantId: string) => Effect.Effect<SurfboardSwitches>

export const makeOrders = (
  clock: SandboxClock,
  switchesFor: SwitchesFor,
  { terminalOf }: Effect.Effect.Success<ReturnType<typeof makeAccounts>>,
  { completeRefund, completeVoid, settleDue }: Effect.Effect.Success<ReturnType<typeof makeSettlement>>,
  /** Saves the paying card as a token when the order asked for it (merchantInitiated.ts). */
  tokenise: (order: OrderRow, at: Date) => Effect.Effect<void, unknown> = () => Effect.void
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const now = clock.now
    const { insertOrder, insertPayment, insertTransaction } = yield* makeRowWriters

    const orderRow = (merchantId: string, orderId: string, lock = false) =>
      (lock
        ? sql<
          OrderRow
        >`SELECT * FROM surfboard_sandbox.orders WHERE id = ${orderId} AND merchant_id = ${merchantId} FOR UPDATE`
        : sql<OrderRow>`SELECT * FROM surfboard_sandbox.orders WHERE id = ${orderId} AND merchant_id = ${merchantId}`)
        .pipe(
          Effect.flatMap((rows) => (rows[0] ? Effect.succeed(rows[0]) : Effect.fail(notFound("Order"))))
        )

    const paymentsOf = (orderId: string) =>
      sql<PaymentRow>`
        SELECT id, order_id, status, method, amount_minor, failure_reason, settle_amount_minor, void_status, created_at, completed_at
        FROM surfboard_sandbox.payments WHERE order_id = ${orderId} ORDER BY created_at, id`

    const transactionsOf = (orderId: string) =>
      sql<
        TransactionRow
      >`SELECT * FROM surfboard_sandbox.transactions WHERE order_id = ${orderId} ORDER BY created_at, id`

    /** One order with its payments and transactions, settled up to now. */
    const orderView = (merchantId: string, orderId: string) =>
      Effect.gen(function*() {
        yield* settleDue
        const order = yield* orderRow(merchantId, orderId)
        const [payments, transactions] = yield* Effect.all([paymentsOf(order.id), transactionsOf(order.id)])
        return { order, payments, transactions }
      })

    /** A payment page's order, when the page's token is right. */
    const pageOrder = (orderId: string, token: string) =>
      Effect.gen(function*() {
        yield* settleDue
        const [row] = yield* sql<OrderRow & { merchant_name: string }>`
          SELECT o.*, m.name AS merchant_name FROM surfboard_sandbox.orders o
          JOIN surfboard_sandbox.merchants m ON m.id = o.merchant_id
          WHERE o.id = ${orderId}`
        if (!row || row.page_token === null || row.page_token !== token) return yield* notFound("Payment page")
        return row
      })

    /** The return orders of a purchase and what each returned (tests count refunds with it). */
    const refundsOf = (purchaseOrderId: string) =>
      Effect.zipRight(
        settleDue,
        sql<
          {
            order_id: string
            reference_id: string | null
            status: string
            requested_minor: number
            refunded_minor: number
          }
        >`
          SELECT o.id AS order_id, o.reference_id, o.status, o.amount_minor AS requested_minor,
            COALESCE((SELECT sum(t.amount_minor) FROM surfboard_sandbox.transactions t WHERE t.order_id = o.id), 0)::bigint AS refunded_minor
          FROM surfboard_sandbox.orders o
          WHERE o.purchase_order_id = ${purchaseOrderId}
          ORDER BY o.created_at, o.id`
      )

    /** The purchase's money that is still refundable: paid, not voided, minus refunds done or settling. */
    const refundable = (purchase: OrderRow) =>
      Effect.gen(function*() {
        const [row] = yield* sql<{ paid: number; committed: number }>`
          SELECT
            COALESCE((SELECT sum(amount_minor) FROM surfboard_sandbox.transactions
                      WHERE order_id = ${purchase.id} AND type = 'PURCHASE' AND NOT voided), 0)::bigint AS paid,
            COALESCE((SELECT sum(CASE
                        WHEN p.status = 'PAYMENT_PROCESSING' THEN COALESCE(p.settle_amount_minor, p.amount_minor)
                        WHEN p.status = 'PAYMENT_COMPLETED' THEN
                          COALESCE((SELECT sum(t.amount_minor) FROM surfboard_sandbox.transactions t WHERE t.payment_id = p.id), 0)
                        ELSE 0 END)
                      FROM surfboard_sandbox.payments p JOIN surfboard_sandbox.orders o ON o.id = p.order_id
                      WHERE o.purchase_order_id = ${purchase.id}), 0)::bigint AS committed`
        return { paid: row!.paid, left: row!.paid - row!.committed }
      })

    const createReturn = (
      merchant: MerchantRow,
      terminal: TerminalRow,
      input: typeof Dialect.CreateOrderRequest.Type,
      total: typeof Dialect.Amount.Type
    ) =>
      Effect.gen(function*() {
        const lines = input.orderLines ?? []
        const linked = new Set(lines.flatMap((l) => (l.purchaseOrderId != null ? [l.purchaseOrderId] : [])))
        if (input.purchaseOrderId !== undefined) linked.add(input.purchaseOrderId)
        if (linked.size !== 1) {
          return yield* badRequest("A return needs exactly one purchaseOrderId (on the order or its lines).")
        }
        const purchaseOrderId = [...linked][0]!
        const amount = Math.abs(total.total)
        if (amount === 0) return yield* badRequest("A return must return something.")
        const purchase = yield* orderRow(merchant.id, purchaseOrderId, true).pipe(
          Effect.catchAll(() => Effect.fail(notFound(`Purchase order ${purchaseOrderId}`)))
        )
        if (purchase.type !== "purchase") return yield* badRequest("A return can only refund a purchase order.")
        if (purchase.currency !== total.currency) {
          return yield* badRequest(`The purchase was paid in currency ${purchase.currency}.`, "CURRENCY_MISMATCH")
        }
        const { paid, left } = yield* refundable(purchase)
        if (paid === 0) return yield* badRequest("The purchase order has not been paid.", "NOT_PAID")
        if (amount > left) {
          return yield* badRequest(`The refund exceeds what is left to refund (${left}).`, "REFUND_EXCEEDS_PAID")
        }
        const at = yield* now
        const orderId = newId("order")
        yield* insertOrder({
          id: orderId,
          merchant_id: merchant.id,
          terminal_id: terminal.id,
          reference_id: input.referenceId ?? null,
          type: "return",
          purchase_order_id: purchaseOrderId,
          currency: total.currency,
          amount_minor: amount,
          body: input,
          page_token: null,
          page_expires_at: null,
          created_at: at
        })
        const initiate = input.controlFunctions?.initiatePaymentsOptions
        if (initiate === undefined) return { orderId }
        const switches = yield* switchesFor(merchant.id)
        const ratio = switches.partialRefundRatio
        const settles = ratio !== null && ratio > 0 && ratio < 1 ? Math.floor(amount * ratio) : amount
        const plan = settlementPlan(switches, at)
        const paymentId = newId("payment")
        yield* insertPayment(paymentId, orderId, amount, initiate.paymentMethod ?? "CARD_NP", at, {
          status: "PAYMENT_PROCESSING",
          settle_amount_minor: settles,
          settles_at: plan.kind === "at" ? plan.at : null,
          settle_on_request: plan.kind === "on_request"
        })
        if (plan.kind === "now") yield* completeRefund(paymentId, at)
        else yield* sql`UPDATE surfboard_sandbox.orders SET status = 'PAYMENT_PROCESSED' WHERE id = ${orderId}`
        return { orderId, paymentId }
      })

    /** POST /orders for the merchant: a purchase (card or payment page) or a return. */
    const createOrder = (merchant: MerchantRow, input: typeof Dialect.CreateOrderRequest.Type, payPageBase: string) =>
      Effect.gen(function*() {
        yield* settleDue
        const terminal = yield* terminalOf(merchant.id, input["terminal$id"])
        const lines = input.orderLines ?? []
        const total = input.totalOrderAmount ?? (lines[0]
          ? { regular: 0, total: lines.reduce((sum, l) => sum + l.amount.total, 0), currency: lines[0].amount.currency }
          : undefined)
        if (total === undefined) return yield* badRequest("orderLines or totalOrderAmount is required.")
        if (alphaCurrency(total.currency) === undefined || !/^\d{3}$/.test(total.currency)) {
          return yield* badRequest(`currency must be a numeric ISO 4217 code, got "${total.currency}".`)
        }
        if (lines.some((l) => l.amount.currency !== total.currency)) {
          return yield* badRequest("All lines must be in the order's currency.")
        }
        const amounts = [total.total, ...lines.map((l) => l.amount.total), ...lines.map((l) => l.quantity)]
        if (!amounts.every(Number.isSafeInteger)) {
          return yield* badRequest("Amounts and quantities must be integers (smallest currency unit).")
        }
        if (lines.length > 0 && lines.reduce((sum, l) => sum + l.amount.total, 0) !== total.total) {
          return yield* badRequest("totalOrderAmount.total does not match the sum of the order lines.")
        }
        const isReturn = input.type?.toLowerCase() === "return" || total.total < 0 ||
          input.purchaseOrderId !== undefined ||
          lines.some((l) => l.purchaseOrderId != null)
        if (isReturn) return yield* createReturn(merchant, terminal, input, total)
        if (total.total <= 0) return yield* badRequest("A purchase must have a positive total.")
        const at = yield* now
        const orderId = newId("order")
        let body: typeof Dialect.CreateOrderRequest.Encoded = input
        let page: { token: string; expiresAt: Date } | null = null
        if (terminal.kind === "PaymentPage") {
          const requested = input.controlFunctions?.online?.paymentPageValidFor
          const validFor = requested ?? DEFAULT_PAGE_VALIDITY
          const millis = validForMillis(validFor)
          if (millis === null || millis <= 0) {
            return yield* badRequest(`paymentPageValidFor must look like 15m, 2h or 3d, got "${validFor}".`)
          }
          page = { token: randomBytes(24).toString("base64url"), expiresAt: new Date(at.getTime() + millis) }
          body = {
            ...input,
            controlFunctions: {
              ...input.controlFunctions,
              online: { ...input.controlFunctions?.online, paymentPageValidFor: validFor }
            }
          }
        }
        yield* insertOrder({
          id: orderId,
          merchant_id: merchant.id,
          terminal_id: terminal.id,
          reference_id: input.referenceId ?? null,
          type: "purchase",
          purchase_order_id: null,
          currency: total.currency,
          amount_minor: total.total,
          body,
          page_token: page?.token ?? null,
          page_expires_at: page?.expiresAt ?? null,
          created_at: at
        })
        let paymentId: string | undefined
        const initiate = input.controlFunctions?.initiatePaymentsOptions
        if (initiate !== undefined && terminal.kind === "card") {
          paymentId = newId("payment")
          yield* insertPayment(paymentId, orderId, total.total, initiate.paymentMethod ?? "CARD", at)
        }
        return {
          orderId,
          ...(paymentId !== undefined ? { paymentId } : {}),
          ...(page !== null ? { paymentPageLink: `${payPageBase}/pay/${orderId}?pi=${page.token}` } : {})
        }
      })

    /**
     * A card presented at the order's terminal, or its payment page paid: the purchase completes
     * (or the attempt is declined and the order stays payable). `token` checks a payment page's link.
     */
    const pay = (
      orderId: string,
      options: {
        readonly declined?: boolean | undefined
        readonly token?: string | undefined
        readonly method?: string | undefined
      } = {}
    ) =>
      Effect.gen(function*() {
        yield* settleDue
        return yield* sql.withTransaction(Effect.gen(function*() {
          const [order] = yield* sql<OrderRow>`SELECT * FROM surfboard_sandbox.orders WHERE id = ${orderId} FOR UPDATE`
          if (!order || (options.token !== undefined && order.page_token !== options.token)) {
            return yield* notFound("Order")
          }
          if (order.type !== "purchase") return yield* badRequest("A return is not paid by a card.")
          const at = yield* now
          if (order.page_expires_at !== null && order.page_expires_at.getTime() <= at.getTime()) {
            return yield* new SandboxFailure({
              status: 410,
              message: "The payment page has expired.",
              errorCode: "PAYMENT_PAGE_EXPIRED"
            })
          }
          if (order.status === "PAYMENT_COMPLETED") {
            return yield* new SandboxFailure({
              status: 409,
              message: "Order is already completed.",
              errorCode: "ORDER_ALREADY_COMPLETED"
            })
          }
          if (order.status === "PAYMENT_CANCELLED") {
            return yield* new SandboxFailure({
              status: 409,
              message: "Order is cancelled.",
              errorCode: "ORDER_ALREADY_CANCELLED"
            })
          }
          const [open] = yield* sql<{ id: string }>`
            SELECT id FROM surfboard_sandbox.payments WHERE order_id = ${order.id} AND status = 'PAYMENT_INITIATED'
            ORDER BY created_at LIMIT 1`
          const paymentId = open?.id ?? newId("payment")
          if (!open) yield* insertPayment(paymentId, order.id, order.amount_minor, options.method ?? "CARD", at)
          if (options.declined) {
            yield* sql`
              UPDATE surfboard_sandbox.payments SET status = 'PAYMENT_FAILED', failure_reason = 'DECLINED'
              WHERE id = ${paymentId}`
            return { orderId: order.id, paymentId, transactionId: null, status: "PAYMENT_FAILED" }
          }
          yield* sql`
            UPDATE surfboard_sandbox.payments SET status = 'PAYMENT_COMPLETED', completed_at = ${at},
              method = COALESCE(${options.method ?? null}, method)
            WHERE id = ${paymentId}`
          const transactionId = newId("transaction")
          yield* insertTransaction(order, paymentId, transactionId, "PURCHASE", order.amount_minor, at)
          yield* sql`UPDATE surfboard_sandbox.orders SET status = 'PAYMENT_COMPLETED', updated_at = ${at} WHERE id = ${order.id}`
          yield* tokenise(order, at)
          return { orderId: order.id, paymentId, transactionId, status: "PAYMENT_COMPLETED" }
        }))
      })

    /** PUT /payments/:id/void */
    const voidPayment = (merchant: MerchantRow, paymentId: string) =>
      Effect.gen(function*() {
        yield* settleDue
        const [row] = yield* sql<PaymentRow & { type: string; order_status: string }>`
          SELECT p.id, p.order_id, p.status, p.void_status, p.completed_at, o.type, o.status AS order_status
          FROM surfboard_sandbox.payments p JOIN surfboard_sandbox.orders o ON o.id = p.order_id
          WHERE p.id = ${paymentId} AND o.merchant_id = ${merchant.id}
          FOR UPDATE OF p`
        if (!row) return yield* notFound("Payment")
        if (row.void_status !== null) return row.void_status
        if (
          row.type !== "purchase" || row.status !== "PAYMENT_COMPLETED" || row.completed_at === null
        ) return "CANNOT_VOID"
        const at = yield* now
        if (at.getTime() >= voidDeadline(row.completed_at).getTime()) return "CANNOT_VOID"
        const [refunds] = yield* sql<{ n: number }>`
          SELECT count(*)::int AS n FROM surfboard_sandbox.payments p JOIN surfboard_sandbox.orders o ON o.id = p.order_id
          WHERE o.purchase_order_id = ${row.order_id} AND p.status IN ('PAYMENT_PROCESSING', 'PAYMENT_COMPLETED')`
        if (refunds!.n > 0) return "CANNOT_VOID"
        const plan = settlementPlan(yield* switchesFor(merchant.id), at)
        if (plan.kind === "now") {
          yield* completeVoid(paymentId, at)
          return "VOIDED"
        }
        yield* sql`
          UPDATE surfboard_sandbox.payments SET void_status = 'VOID_INITIATED',
            void_settles_at = ${plan.kind === "at" ? plan.at : null}, void_on_request = ${plan.kind === "on_request"}
          WHERE id = ${paymentId}`
        return "VOID_INITIATED"
      })

    /** DELETE /payments/:id: stops a payment that has not completed. */
    const cancelPayment = (merchant: MerchantRow, paymentId: string) =>
      Effect.gen(function*() {
        yield* settleDue
        const [row] = yield* sql<{ status: string; order_id: string }>`
          SELECT p.status, p.order_id FROM surfboard_sandbox.payments p JOIN surfboard_sandbox.orders o ON o.id = p.order_id
          WHERE p.id = ${paymentId} AND o.merchant_id = ${merchant.id}
          FOR UPDATE OF p`
        if (!row) return yield* badRequest("Invalid payment ID provided.", "NOT_FOUND")
        if (row.status === "PAYMENT_COMPLETED") {
          return yield* new SandboxFailure({
            status: 403,
            message: "Payment is already completed and cannot be cancelled. Use void API to void this payment.",
            errorCode: "PAYMENT_ALREADY_COMPLETED",
            data: { paymentStatus: "PAYMENT_COMPLETED" }
          })
        }
        if (row.status === "PAYMENT_CANCELLED" || row.status === "PAYMENT_FAILED") return row.status
        const at = yield* now
        yield* sql`UPDATE surfboard_sandbox.payments SET status = 'PAYMENT_CANCELLED' WHERE id = ${paymentId}`
        yield* sql`
          UPDATE surfboard_sandbox.orders SET status = 'PAYMENT_CANCELLED', updated_at = ${at}
          WHERE id = ${row.order_id} AND status IN ('PENDING', 'PAYMENT_PROCESSED')`
        return "PAYMENT_CANCELLED"
      })

    /** DELETE /orders/:id: cancels an order that is not paid; cancelling a cancelled one succeeds. */
    const cancelOrder = (merchant: MerchantRow, orderId: string) =>
      Effect.gen(function*() {
        yield* settleDue
        const order = yield* orderRow(merchant.id, orderId, true)
        if (order.status === "PAYMENT_CANCELLED") return
        if (order.status !== "PENDING") {
          return yield* new SandboxFailure({
            status: 409,
            message: "Order cannot be cancelled. Order is already completed.",
            errorCode: "ORDER_ALREADY_COMPLETED"
          })
        }
        const at = yield* now
        yield* sql`UPDATE surfboard_sandbox.orders SET status = 'PAYMENT_CANCELLED', updated_at = ${at} WHERE id = ${orderId}`
        yield* sql`
          UPDATE surfboard_sandbox.payments SET status = 'PAYMENT_CANCELLED'
          WHERE order_id = ${orderId} AND status IN ('PAYMENT_INITIATED', 'PAYMENT_PROCESSING')`
      })

    return { orderView, pageOrder, refundsOf, createOrder, pay, voidPayment, cancelPayment, cancelOrder }
  })
