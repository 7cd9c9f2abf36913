/** Maps Surfboard JSON to the port's types, and the port's requests to Surfboard bodies. */
import { Either } from "effect"
import type {
  NewOrder,
  OrderState,
  OrderStatus,
  PaymentAccount,
  PaymentAttempt,
  PaymentLinkState,
  Refund,
  RefundState,
  ServiceProviderShare,
  TaxLine,
  Transaction
} from "../../ports/PaymentProvider.js"
import { alphaCurrency } from "./currency.js"
import type * as Dialect from "./dialect.js"

const ORDER_STATES: Readonly<Record<string, OrderState>> = {
  PENDING: "pending",
  PAYMENT_COMPLETED: "paid",
  PARTIAL_PAYMENT_COMPLETED: "partially_paid",
  PAYMENT_CANCELLED: "cancelled",
  PAYMENT_PROCESSED: "processed"
}

/** `PAYMENT_COMPLETED` → `completed`. */
export const paymentStatusOf = (status: string) => status.toLowerCase().replace(/^payment_/, "")

export const taxOf = (lines: ReadonlyArray<TaxLine> | undefined): Array<typeof Dialect.Tax.Encoded> | undefined =>
  lines && lines.length > 0
    ? lines.map((t) => ({ amount: t.amountMinor, percentage: t.percentage, type: t.type }))
    : undefined

export const serviceProvidersOf = (shares: ReadonlyArray<ServiceProviderShare> | undefined) =>
  shares && shares.length > 0
    ? shares.map((s) => ({
      serviceProviderId: s.serviceProviderId,
      amount: {
        // Surfboard's reference types these as strings.
        ...(s.amount.percentage !== undefined ? { percentage: String(s.amount.percentage) } : {}),
        ...(s.amount.fixedMinor !== undefined ? { fixed: String(s.amount.fixedMinor) } : {}),
        ...(s.amount.adjustmentTypes !== undefined ? { adjustmentTypes: [...s.amount.adjustmentTypes] } : {})
      }
    }))
    : undefined

/** One order line for the whole amount, and the same total on the order. */
export const purchaseBody = (
  order: Omit<NewOrder, "idempotencyReference">,
  numericCurrency: string,
  controlFunctions: typeof Dialect.ControlFunctions.Encoded
): typeof Dialect.CreateOrderRequest.Encoded => {
  const tax = taxOf(order.taxLines)
  const amount = {
    regular: order.amountMinor,
    total: order.amountMinor,
    currency: numericCurrency,
    ...(tax ? { tax } : {})
  }
  const serviceProviders = serviceProvidersOf(order.serviceProviders)
  return {
    "terminal$id": order.terminalId,
    referenceId: order.referenceId,
    orderLines: [{ id: "1", name: order.description, quantity: 1, amount }],
    totalOrderAmount: amount,
    controlFunctions: { ...controlFunctions, ...(serviceProviders ? { serviceProviders } : {}) }
  }
}

/** A return order: negative quantity and totals, linked to the purchase on the order and its line. */
export const returnBody = (input: {
  readonly terminalId: string
  readonly referenceId: string
  readonly purchaseOrderId: string
  readonly purchasePaymentId: string | null
  readonly amountMinor: number
  readonly numericCurrency: string
  readonly description: string
  readonly taxLines?: ReadonlyArray<TaxLine> | undefined
}): typeof Dialect.CreateOrderRequest.Encoded => {
  const tax = taxOf(input.taxLines)
  const amount = (total: number) => ({
    regular: input.amountMinor,
    total,
    currency: input.numericCurrency,
    ...(tax ? { tax } : {})
  })
  return {
    "terminal$id": input.terminalId,
    referenceId: input.referenceId,
    type: "return",
    purchaseOrderId: input.purchaseOrderId,
    orderLines: [{
      id: "1",
      name: input.description,
      quantity: -1,
      purchaseOrderId: input.purchaseOrderId,
      amount: amount(-input.amountMinor)
    }],
    totalOrderAmount: amount(-input.amountMinor),
    controlFunctions: {
      initiatePaymentsOptions: {
        // Card refunds go back to the card without it being present.
        paymentMethod: "CARD_NP",
        refundProcessingParams: {
          ...(input.purchasePaymentId !== null ? { purchasePaymentId: input.purchasePaymentId } : {}),
          refundReason: "CUSTOMER_INITIATED_RETURN"
        }
      }
    }
  }
}

const DURATION = /^(\d+)\s*([mhd])$/i
const UNIT_MS: Readonly<Record<string, number>> = { m: 60_000, h: 3_600_000, d: 86_400_000 }

/** `"15m"` → 900000; null when absent or not in that form. */
export const validForMillis = (value: string | undefined): number | null => {
  const m = value === undefined ? null : DURATION.exec(value.trim())
  return m ? Number(m[1]) * UNIT_MS[m[2]!.toLowerCase()]! : null
}

/** The validity Surfboard takes (whole minutes, at least one) for a page that closes at `expiresAt`. */
export const validForUntil = (expiresAt: Date, now: number) =>
  `${Math.max(1, Math.ceil((expiresAt.getTime() - now) / 60_000))}m`

const isReturn = (order: typeof Dialect.Order.Type) =>
  order.type?.toLowerCase() === "return" ||
  (order.totalOrderAmount?.total ?? 0) < 0 ||
  (order.orderLines ?? []).some((l) => l.purchaseOrderId != null)

/** Order (GET /orders/:id) and its status (GET /orders/:id/status) as the port's OrderStatus; Left: what did not make sense. */
export const orderStatusOf = (
  account: PaymentAccount,
  orderId: string,
  order: typeof Dialect.Order.Type,
  status: typeof Dialect.OrderStatus.Type
): Either.Either<OrderStatus, string> => {
  const lines = order.orderLines ?? []
  const currencyCode = order.totalOrderAmount?.currency ?? lines[0]?.amount.currency
  if (currencyCode === undefined) return Either.left(`order ${orderId}: no amount`)
  // A currency we do not know stays as sent: it matches no sale of ours (a mismatch, not an unreadable order).
  const currency = alphaCurrency(currencyCode) ?? currencyCode
  const type = isReturn(order) ? "return" : "purchase"
  const amountMinor = Math.abs(order.totalOrderAmount?.total ?? lines.reduce((sum, l) => sum + l.amount.total, 0))
  const transactions: Array<Transaction> = []
  for (const t of status.transactions ?? []) {
    const txCurrency = alphaCurrency(t.currency) ?? t.currency
    const at = new Date(t.timestamp)
    if (Number.isNaN(at.getTime())) {
      return Either.left(`transaction ${t.transactionId}: unreadable timestamp ${t.timestamp}`)
    }
    transactions.push({
      transactionId: t.transactionId,
      paymentId: t.paymentId,
      type: t.type.toLowerCase() === "return" ? "return" : "purchase",
      amountMinor: Math.abs(t.amount),
      currency: txCurrency,
      voided: t.voided ?? false,
      at,
      merchantId: t.merchantId,
      terminalId: t.terminalId,
      referenceId: t.referenceId ?? null
    })
  }
  const own = transactions.filter((t) => t.type === type)
  const paidMinor = own.filter((t) => !t.voided).reduce((sum, t) => sum + t.amountMinor, 0)
  const voided = own.length > 0 && own.every((t) => t.voided)
  const state = ORDER_STATES[status.orderStatus.toUpperCase()] ?? "pending"
  const payments: Array<PaymentAttempt> = (status.payments ?? []).map((p) => ({
    paymentId: p.paymentId,
    status: paymentStatusOf(p.paymentStatus),
    method: p.paymentMethod ?? null,
    amountMinor: Math.abs(p.amount ?? 0),
    failureReason: p.failureReason ?? null
  }))
  const times = own.map((t) => t.at.getTime())
  return Either.right({
    orderId,
    merchantId: own[0]?.merchantId ?? account.merchantId,
    terminalId: order["terminal$id"],
    referenceId: order.referenceId ?? null,
    type,
    purchaseOrderId: order.purchaseOrderId ?? lines.find((l) => l.purchaseOrderId != null)?.purchaseOrderId ?? null,
    state,
    providerStatus: status.orderStatus,
    amountMinor,
    currency,
    paidMinor,
    paid: state === "paid" && !voided && paidMinor >= amountMinor,
    voided,
    paidAt: times.length > 0 ? new Date(Math.min(...times)) : null,
    taxLines: (order.totalOrderAmount?.tax ?? [])
      .filter((t) => t.type.toUpperCase() === "VAT")
      .map((t) => ({ amountMinor: Math.abs(t.amount), percentage: t.percentage, type: "VAT" as const })),
    payments,
    transactions
  })
}

/** A return order's status as the refund it is. */
export const refundOf = (status: OrderStatus, purchaseOrderId: string): Refund => {
  const completed = status.payments.some((p) => p.status === "completed")
  const failed = !completed && status.payments.length > 0 &&
    status.payments.every((p) => p.status === "failed" || p.status === "cancelled")
  const state: RefundState = failed
    ? "failed"
    : status.state === "partially_paid" || (status.state === "paid" && status.paidMinor < status.amountMinor)
    ? "partial"
    : status.state === "paid"
    ? "completed"
    : "pending"
  return {
    refundOrderId: status.orderId,
    paymentId: status.payments[0]?.paymentId ?? null,
    purchaseOrderId: status.purchaseOrderId ?? purchaseOrderId,
    state,
    requestedMinor: status.amountMinor,
    refundedMinor: status.paidMinor,
    currency: status.currency
  }
}

/** When a payment page order stops taking payments; null when it does not say. */
export const linkExpiry = (order: typeof Dialect.Order.Type): Date | null => {
  const validFor = validForMillis(order.controlFunctions?.online?.paymentPageValidFor)
  const created = order.date == null ? NaN : Date.parse(order.date)
  return validFor === null || Number.isNaN(created) ? null : new Date(created + validFor)
}

export const linkStateOf = (status: OrderStatus, expiresAt: Date | null, now: number): PaymentLinkState => {
  if (status.state === "paid") return "paid"
  if (expiresAt !== null && expiresAt.getTime() <= now) return "expired"
  if (status.state === "cancelled") return "cancelled"
  return "open"
}
