/**
 * The JSON Surfboard Payments sends and receives (developers.surfboardpayments.com, API reference
 * "Orders" and "Payments"), as schemas. The adapter encodes requests and decodes answers with them;
 * the sandbox decodes requests and builds its answers from the same types. Only the fields the
 * service uses are declared; decoding ignores the rest.
 *
 * Every answer is an envelope `{status: "SUCCESS" | "ERROR", data?, message?}`. Amounts are integers
 * in the currency's smallest unit; currencies are numeric ISO 4217 codes in strings (`"578"`).
 * Fields marked "sandbox" are not in Surfboard's public reference: the sandbox sends them and the
 * adapter reads them when they are there (docs/payment-provider.md).
 *
 * Answers are read leniently: a field the service does not need to trust may be missing or null
 * (an order made at a card terminal without a reference or a line name answers `referenceId`
 * absent and `orderLines[].name: null`), so that such an order is read, and judged by what it says
 * (e.g. a payment_mismatch), instead of failing to decode.
 */
import { Schema } from "effect"

const optional = Schema.optional
/** Absent, null or the value. */
const maybe = <S extends Schema.Schema.Any>(schema: S) => Schema.optional(Schema.NullOr(schema))

/** A tax share of an amount: `{amount, percentage, type: "VAT"}`. */
export const Tax = Schema.Struct({
  amount: Schema.Number,
  percentage: Schema.Number,
  type: Schema.String
})

export const Amount = Schema.Struct({
  /** Unit price (order lines) or the regular total (order). */
  regular: Schema.Number,
  /** What is paid: negative on a return. */
  total: Schema.Number,
  currency: Schema.String,
  tax: maybe(Schema.Array(Tax))
})

export const OrderLine = Schema.Struct({
  id: maybe(Schema.String),
  /** What the receipt says; an order made at the terminal may have none (`null`). */
  name: maybe(Schema.String),
  /** Negative on a return. */
  quantity: maybe(Schema.Number),
  amount: Amount,
  /** On a return's lines: the purchase order the money goes back from. */
  purchaseOrderId: maybe(Schema.String)
})

/** Percentages and fixed shares are strings in Surfboard's reference; numbers are accepted too. */
const NumberOrString = Schema.Union(Schema.Number, Schema.String)

export const ServiceProvider = Schema.Struct({
  serviceProviderId: Schema.String,
  amount: optional(Schema.Struct({
    percentage: optional(NumberOrString),
    fixed: optional(NumberOrString),
    adjustmentTypes: optional(Schema.Array(Schema.String))
  }))
})

export const ControlFunctions = Schema.Struct({
  initiatePaymentsOptions: optional(Schema.Struct({
    paymentMethod: optional(Schema.String),
    amount: optional(Schema.Number),
    /** A merchant-initiated charge of a saved card (pay-later charging). */
    paymentMethodParams: optional(Schema.Struct({ tokenId: optional(Schema.String) })),
    refundProcessingParams: optional(Schema.Struct({
      purchasePaymentId: optional(Schema.String),
      refundReason: optional(Schema.String),
      otherReason: optional(Schema.String)
    }))
  })),
  serviceProviders: optional(Schema.Array(ServiceProvider)),
  online: optional(Schema.Struct({
    /** `<number><m|h|d>`, e.g. `"15m"`, `"3d"`. */
    paymentPageValidFor: optional(Schema.String),
    redirectUrl: optional(Schema.String),
    /** The card paid with is saved as a token for a later merchant-initiated charge. */
    enforceTokenization: optional(Schema.Boolean)
  })),
  callBackUrl: optional(Schema.String)
})

/** POST /orders */
export const CreateOrderRequest = Schema.Struct({
  "terminal$id": Schema.String,
  referenceId: optional(Schema.String),
  /** `"return"` for a refund order (online refund guide). */
  type: optional(Schema.String),
  /** The purchase a return refunds (online refund guide puts it on the order, the API reference on each line). */
  purchaseOrderId: optional(Schema.String),
  orderLines: optional(Schema.Array(OrderLine)),
  totalOrderAmount: optional(Amount),
  controlFunctions: optional(ControlFunctions)
})

export const CreatedOrder = Schema.Struct({
  orderId: Schema.String,
  paymentId: maybe(Schema.String),
  /** Online (PaymentPage) terminals: the hosted page. */
  paymentPageLink: maybe(Schema.String)
})

/** GET /orders/:orderId */
export const Order = Schema.Struct({
  "terminal$id": Schema.String,
  referenceId: maybe(Schema.String),
  /** ISO 8601: when the order was made. */
  date: maybe(Schema.String),
  type: maybe(Schema.String),
  purchaseOrderId: maybe(Schema.String),
  orderLines: maybe(Schema.Array(OrderLine)),
  totalOrderAmount: maybe(Amount),
  controlFunctions: maybe(ControlFunctions)
})

export const Payment = Schema.Struct({
  paymentId: Schema.String,
  /** PAYMENT_INITIATED, PAYMENT_PROCESSING, PAYMENT_PROCESSED, PAYMENT_COMPLETED, PAYMENT_FAILED, PAYMENT_CANCELLED */
  paymentStatus: Schema.String,
  paymentMethod: maybe(Schema.String),
  amount: maybe(Schema.Number),
  failureReason: maybe(Schema.String)
})

export const Transaction = Schema.Struct({
  transactionId: Schema.String,
  merchantId: Schema.String,
  terminalId: Schema.String,
  orderId: Schema.String,
  paymentId: Schema.String,
  referenceId: maybe(Schema.String),
  /** A string of minor units in Surfboard's reference (`"200"`). */
  amount: Schema.Union(Schema.Number, Schema.NumberFromString),
  currency: Schema.String,
  method: maybe(Schema.String),
  /** PURCHASE or RETURN (the reference spells it either case). */
  type: Schema.String,
  timestamp: Schema.String,
  voided: maybe(Schema.Boolean)
})

/** GET /orders/:orderId/status */
export const OrderStatus = Schema.Struct({
  /** PENDING, PAYMENT_COMPLETED, PAYMENT_CANCELLED, PARTIAL_PAYMENT_COMPLETED, PAYMENT_PROCESSED */
  orderStatus: Schema.String,
  payments: maybe(Schema.Array(Payment)),
  paymentIds: maybe(Schema.Array(Schema.String)),
  /** Only once the order is (partially) paid. */
  transactions: maybe(Schema.Array(Transaction))
})

/** PUT /payments/:paymentId/void */
export const VoidAnswer = Schema.Struct({
  /** VOID_INITIATED, CANNOT_VOID, VOIDED */
  voidStatus: Schema.String
})

/** DELETE /payments/:paymentId */
export const CancelAnswer = Schema.Struct({
  /** PAYMENT_COMPLETED, PAYMENT_FAILED, PAYMENT_CANCELLED */
  paymentStatus: Schema.String
})

/** The answer envelope around `data`. */
export const Envelope = <A, I>(data: Schema.Schema<A, I>) =>
  Schema.Struct({
    status: Schema.String,
    data: optional(data),
    message: maybe(Schema.String)
  })

/** An error answer. `errorCode` is the sandbox's (Surfboard's reference shows only `message`). */
export const ErrorBody = Schema.Struct({
  status: optional(Schema.String),
  message: optional(Schema.String),
  errorCode: optional(Schema.String),
  data: optional(Schema.Unknown)
})
export type ErrorBody = typeof ErrorBody.Type

export const API_KEY_HEADER = "api-key"
export const API_SECRET_HEADER = "api-secret"
export const MERCHANT_ID_HEADER = "merchant-id"
/**
 * Our idempotency reference on every call that can move money. Not in Surfboard's public reference:
 * the sandbox honours it; whether Surfboard does is an assumption (docs/payment-provider.md).
 */
export const IDEMPOTENCY_HEADER = "idempotency-key"

/** Header names that carry credentials: redacted wherever headers are printed or traced. */
export const REDACTED_HEADERS: ReadonlyArray<string> = [API_KEY_HEADER, API_SECRET_HEADER]
