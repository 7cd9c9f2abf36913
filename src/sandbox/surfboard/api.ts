/**
 * The sandbox's Surfboard API: the same paths, bodies and answers the adapter uses against
 * Surfboard, every call authenticated (auth.ts). Answers are built as the dialect's encoded types,
 * in Surfboard's envelope `{status: "SUCCESS", data, message}`.
 *
 *   POST   /orders                       purchase (card or payment page) or return (refund)
 *   GET    /orders/:orderId              the order as it was made
 *   GET    /orders/:orderId/status       order status, payments and transactions
 *   PUT    /payments/:paymentId/void     void before 23:00 UTC of the payment's day
 *   DELETE /payments/:paymentId          cancel a payment that has not completed
 *   DELETE /orders/:orderId              cancel an order that is not paid
 *   GET    /orders?referenceId=          the merchant's orders with that reference (pay-later charging)
 *   GET    /orders/:orderId/tokens       the cards a tokenised order saved (merchantInitiated.ts)
 *   (POST /orders with paymentMethodParams.tokenId charges a saved card: merchantInitiated.ts)
 *
 * Calls that change something honour an `Idempotency-Key` (store.keyed).
 */
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, ParseResult, Schema } from "effect"
import * as Dialect from "../../adapters/surfboard/dialect.js"
import { authenticate } from "./auth.js"
import { badRequest, SandboxFailure } from "./failure.js"
import { type Answer, fingerprintOf } from "./idempotency.js"
import type { MerchantRow } from "./rows.js"
import type { Store } from "./store.js"

const failureResponse = (f: SandboxFailure) =>
  HttpServerResponse.unsafeJson(
    { status: "ERROR", message: f.message, errorCode: f.errorCode, ...(f.data !== undefined ? { data: f.data } : {}) },
    { status: f.status }
  )

const internalError = (cause: unknown) =>
  Effect.zipRight(
    Effect.logError("surfboard sandbox: request failed", cause),
    Effect.succeed(
      HttpServerResponse.unsafeJson({ status: "ERROR", message: "An unexpected error occurred." }, { status: 500 })
    )
  )

/** Surfboard's success envelope. */
export const success = (data: unknown, message: string): Answer => ({
  status: 200,
  body: { status: "SUCCESS", ...(data !== undefined ? { data } : {}), message }
})

/**
 * Runs a handler and answers its Answer, a SandboxFailure with its status, anything else (a
 * database error, a defect) as 500. The in-process Sandbox methods turn failures into defects: a
 * SandboxFailure still answers its status.
 */
export const answer = <E, R>(handler: Effect.Effect<Answer, E, R>) =>
  handler.pipe(
    Effect.map((a) => HttpServerResponse.unsafeJson(a.body, { status: a.status })),
    Effect.catchAll((e) => (e instanceof SandboxFailure ? Effect.succeed(failureResponse(e)) : internalError(e))),
    Effect.catchAllDefect((d) => (d instanceof SandboxFailure ? Effect.succeed(failureResponse(d)) : internalError(d)))
  )

export const param = (name: string) => Effect.map(HttpRouter.params, (params) => params[name] ?? "")

/** The JSON body (null when empty) and its text, for the idempotency fingerprint. */
export const rawBody = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const text = yield* request.text.pipe(Effect.mapError(() => badRequest("The body could not be read.")))
  if (text.trim() === "") return null
  return yield* Effect.try({ try: () => JSON.parse(text) as unknown, catch: () => badRequest("Invalid JSON body.") })
})

export const decodeBody = <A, I>(schema: Schema.Schema<A, I>, raw: unknown) =>
  Schema.decodeUnknown(schema)(raw).pipe(
    Effect.mapError((e) => badRequest(`Invalid body: ${ParseResult.TreeFormatter.formatErrorSync(e)}`))
  )

const idempotencyKey = Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
  const key = request.headers[Dialect.IDEMPOTENCY_HEADER]
  return typeof key === "string" && key.trim() !== "" ? key : null
})

/** GET /orders/:id: the order as it was made, with its date and (sandbox) type and purchase link. */
export const orderBody = (
  order: Effect.Effect.Success<ReturnType<Store["orderView"]>>["order"]
): typeof Dialect.Order.Encoded => ({
  ...order.body,
  "terminal$id": order.terminal_id,
  referenceId: order.reference_id,
  date: order.created_at.toISOString(),
  type: order.type,
  ...(order.purchase_order_id !== null ? { purchaseOrderId: order.purchase_order_id } : {})
})

/** GET /orders/:id/status. Transactions appear once the order is (partially) paid, as in Surfboard. */
export const statusBody = (
  view: Effect.Effect.Success<ReturnType<Store["orderView"]>>
): typeof Dialect.OrderStatus.Encoded => {
  const { order, payments, transactions } = view
  const paidOut = order.status === "PAYMENT_COMPLETED" || order.status === "PARTIAL_PAYMENT_COMPLETED"
  return {
    orderStatus: order.status,
    payments: payments.map((p) => ({
      paymentId: p.id,
      paymentStatus: p.status,
      paymentMethod: p.method,
      amount: p.amount_minor,
      ...(p.failure_reason !== null ? { failureReason: p.failure_reason } : {})
    })),
    paymentIds: payments.filter((p) => p.status === "PAYMENT_COMPLETED").map((p) => p.id),
    ...(paidOut
      ? {
        transactions: transactions.map((t) => ({
          transactionId: t.id,
          merchantId: t.merchant_id,
          terminalId: t.terminal_id,
          orderId: t.order_id,
          paymentId: t.payment_id,
          referenceId: t.reference_id,
          amount: String(t.amount_minor),
          currency: t.currency,
          method: "CARD",
          type: t.type,
          timestamp: t.created_at.toISOString(),
          voided: t.voided
        }))
      }
      : {})
  }
}

export const surfboardApi = (store: Store, payPageBase: string) => {
  /** An authenticated call on behalf of the merchant it names. */
  const signed = <E, R>(handler: (merchant: MerchantRow) => Effect.Effect<Answer, E, R>) =>
    answer(Effect.flatMap(authenticate(store), handler))

  /** A call that changes something: once per Idempotency-Key, in one transaction. */
  const keyedCall = <E, R>(
    merchant: MerchantRow,
    method: string,
    path: string,
    body: unknown,
    run: Effect.Effect<Answer, E, R>
  ) => Effect.flatMap(idempotencyKey, (key) => store.keyed(merchant.id, key, fingerprintOf(method, path, body), run))

  return HttpRouter.empty.pipe(
    HttpRouter.post(
      "/orders",
      signed((merchant) =>
        Effect.gen(function*() {
          const raw = yield* rawBody
          const input = yield* decodeBody(Dialect.CreateOrderRequest, raw)
          const tokenId = input.controlFunctions?.initiatePaymentsOptions?.paymentMethodParams?.tokenId
          const made = tokenId === undefined
            ? store.createOrder(merchant, input, payPageBase)
            : Effect.flatMap(
              store.terminalOf(merchant.id, input["terminal$id"]),
              (terminal) => store.merchantInitiated.charge(merchant, input, tokenId, terminal.kind)
            )
          return yield* keyedCall(
            merchant,
            "POST",
            "/orders",
            raw,
            Effect.map(made, (data) => success(data, "Order created successfully"))
          )
        })
      )
    ),
    HttpRouter.get(
      "/orders",
      signed((merchant) =>
        Effect.gen(function*() {
          const params = yield* HttpServerRequest.ParsedSearchParams
          const reference = typeof params["referenceId"] === "string" ? params["referenceId"] : ""
          if (reference === "") return yield* badRequest("referenceId is required.")
          const orders = yield* store.merchantInitiated.ordersByReference(merchant.id, reference)
          return success(orders, "Orders fetched successfully")
        })
      )
    ),
    HttpRouter.get(
      "/orders/:orderId/tokens",
      signed((merchant) =>
        Effect.gen(function*() {
          const tokens = yield* store.merchantInitiated.tokensOf(merchant.id, yield* param("orderId"))
          return success(tokens, "Fetched the card information.")
        })
      )
    ),
    HttpRouter.get(
      "/orders/:orderId",
      signed((merchant) =>
        Effect.gen(function*() {
          const view = yield* store.orderView(merchant.id, yield* param("orderId"))
          return success(orderBody(view.order), "Order fetched successfully")
        })
      )
    ),
    HttpRouter.get(
      "/orders/:orderId/status",
      signed((merchant) =>
        Effect.gen(function*() {
          const view = yield* store.orderView(merchant.id, yield* param("orderId"))
          return success(statusBody(view), "Fetched order status successfully")
        })
      )
    ),
    HttpRouter.put(
      "/payments/:paymentId/void",
      signed((merchant) =>
        Effect.gen(function*() {
          const paymentId = yield* param("paymentId")
          const raw = yield* rawBody
          return yield* keyedCall(
            merchant,
            "PUT",
            `/payments/${paymentId}/void`,
            raw,
            Effect.map(store.voidPayment(merchant, paymentId), (voidStatus) =>
              success(
                { voidStatus },
                voidStatus === "CANNOT_VOID" ? "Payment cannot be voided" : "Payment void status retrieved"
              ))
          )
        })
      )
    ),
    HttpRouter.del(
      "/payments/:paymentId",
      signed((merchant) =>
        Effect.gen(function*() {
          const paymentId = yield* param("paymentId")
          return yield* keyedCall(
            merchant,
            "DELETE",
            `/payments/${paymentId}`,
            null,
            Effect.map(
              store.cancelPayment(merchant, paymentId),
              (paymentStatus) => success({ paymentStatus }, "Payment cancelled successfully.")
            )
          )
        })
      )
    ),
    HttpRouter.del(
      "/orders/:orderId",
      signed((merchant) =>
        Effect.gen(function*() {
          const orderId = yield* param("orderId")
          return yield* keyedCall(
            merchant,
            "DELETE",
            `/orders/${orderId}`,
            null,
            Effect.as(store.cancelOrder(merchant, orderId), success(undefined, "Order cancelled successfully"))
          )
        })
      )
    )
  )
}
