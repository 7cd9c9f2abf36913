/**
 * The Surfboard Payments adapter: the port's operations as calls to Surfboard's API.
 *
 * | port              | Surfboard                                                              | sent          |
 * |-------------------|------------------------------------------------------------------------|---------------|
 * | createOrder       | POST /orders (card: initiatePaymentsOptions CARD)                      | once, keyed   |
 * | orderStatus       | GET /orders/{id} + GET /orders/{id}/status                             | retried       |
 * | refund            | GET …/status of the purchase, POST /orders (return, CARD_NP), GET …    | POST once     |
 * | refundStatus      | GET /orders/{id} + GET /orders/{id}/status                             | retried       |
 * | voidPayment       | PUT /payments/{paymentId}/void                                         | once, keyed   |
 * | cancelPayment     | DELETE /payments/{paymentId}                                           | once, keyed   |
 * | createPaymentLink | POST /orders on the payment page terminal (online.paymentPageValidFor) | once, keyed   |
 * | paymentLinkStatus | GET /orders/{id} + GET /orders/{id}/status                             | retried       |
 * | cancelPaymentLink | DELETE /orders/{id}                                                    | once, keyed   |
 * | settlementReports, settlementCharges | GET /partners/{p}/merchants/{m}/reports… (reports.ts) | retried |
 *
 * "keyed": the call carries our idempotency reference (`Idempotency-Key`) and is never retried by
 * the adapter; retrying it with the same reference is the caller's move and returns the first
 * call's answer instead of moving money again.
 */
import { Clock, Effect, Either, Schema } from "effect"
import {
  type OrderStatus,
  type PaymentAccount,
  type PaymentProviderClient,
  PaymentProviderRejected,
  PaymentProviderUnavailable
} from "../../ports/PaymentProvider.js"
import {
  defaultHttpOptions,
  makeSurfboardHttp,
  operationSpan,
  type SurfboardHttp,
  type SurfboardHttpOptions
} from "./client.js"
import { numericCurrency } from "./currency.js"
import * as Dialect from "./dialect.js"
import { linkExpiry, linkStateOf, orderStatusOf, purchaseBody, refundOf, returnBody, validForUntil } from "./mapping.js"
import { merchantInitiatedOperations } from "./merchantInitiated.js"
import { makeReportCalls } from "./reports.js"

export type SurfboardAdapterOptions = SurfboardHttpOptions

export const defaultAdapterOptions: SurfboardAdapterOptions = defaultHttpOptions

const enc = encodeURIComponent

const rejected = (account: PaymentAccount, operation: string, reason: string, detail: string) =>
  new PaymentProviderRejected({ accountId: account.id, operation, reason, detail })

const isPositiveMinor = (n: number) => Number.isSafeInteger(n) && n > 0

export const makeSurfboardAdapter = (options: SurfboardAdapterOptions = defaultAdapterOptions) =>
  Effect.map(makeSurfboardHttp(options), (http: SurfboardHttp): PaymentProviderClient => {
    /** The alpha code's numeric form, or a definite "no" before anything is sent. */
    const currencyFor = (account: PaymentAccount, operation: string, currency: string) => {
      const numeric = numericCurrency(currency)
      return numeric === undefined
        ? Effect.fail(rejected(account, operation, "invalid", `currency ${currency} is not supported`))
        : Effect.succeed(numeric)
    }

    const checkAmount = (account: PaymentAccount, operation: string, amountMinor: number) =>
      isPositiveMinor(amountMinor)
        ? Effect.void
        : Effect.fail(rejected(account, operation, "invalid", "the amount must be a positive integer of minor units"))

    const fetchOrder = (account: PaymentAccount, orderId: string) =>
      http.request(account, {
        operation: "fetchOrder",
        method: "GET",
        route: "/orders/{orderId}",
        path: `/orders/${enc(orderId)}`
      }, Dialect.Order)

    const fetchStatus = (account: PaymentAccount, orderId: string) =>
      http.request(account, {
        operation: "fetchOrderStatus",
        method: "GET",
        route: "/orders/{orderId}/status",
        path: `/orders/${enc(orderId)}/status`
      }, Dialect.OrderStatus)

    /** Both reads of an order, mapped; the raw order too (links need its validity). */
    const readOrder = (account: PaymentAccount, orderId: string) =>
      Effect.gen(function*() {
        // One after the other: a refused or failing first read spares the second, and counts stay plain.
        const order = yield* fetchOrder(account, orderId)
        const status = yield* fetchStatus(account, orderId)
        const mapped = orderStatusOf(account, orderId, order, status)
        if (Either.isLeft(mapped)) {
          return yield* new PaymentProviderUnavailable({
            accountId: account.id,
            operation: "orderStatus",
            reason: "bad_response",
            detail: mapped.left
          })
        }
        return { order, status: mapped.right }
      })

    const postOrder = (
      account: PaymentAccount,
      operation: string,
      body: typeof Dialect.CreateOrderRequest.Encoded,
      idempotencyReference: string
    ) =>
      http.request(account, {
        operation,
        method: "POST",
        route: "/orders",
        path: "/orders",
        body,
        idempotencyReference
      }, Dialect.CreatedOrder)

    const requireReference = (account: PaymentAccount, operation: string, reference: string) =>
      reference.trim() === ""
        ? Effect.fail(rejected(account, operation, "invalid", "an idempotency reference is required"))
        : Effect.void

    const refundStatus: PaymentProviderClient["refundStatus"] = (account, refundOrderId) =>
      readOrder(account, refundOrderId).pipe(
        Effect.flatMap(({ status }) =>
          status.type === "return"
            ? Effect.succeed(refundOf(status, status.purchaseOrderId ?? ""))
            : Effect.fail(rejected(account, "refundStatus", "not_found", `order ${refundOrderId} is not a refund`))
        ),
        operationSpan("refundStatus", account, { "surfboard.order_id": refundOrderId })
      )

    return {
      createOrder: (account, order) =>
        Effect.gen(function*() {
          yield* requireReference(account, "createOrder", order.idempotencyReference)
          yield* checkAmount(account, "createOrder", order.amountMinor)
          const currency = yield* currencyFor(account, "createOrder", order.currency)
          const created = yield* postOrder(
            account,
            "createOrder",
            purchaseBody(order, currency, { initiatePaymentsOptions: { paymentMethod: "CARD" } }),
            order.idempotencyReference
          )
          return {
            orderId: created.orderId,
            paymentId: created.paymentId ?? null,
            paymentPageUrl: created.paymentPageLink ?? null
          }
        }).pipe(operationSpan("createOrder", account, { "surfboard.reference_id": order.referenceId })),

      orderStatus: (account, orderId) =>
        readOrder(account, orderId).pipe(
          Effect.map(({ status }) => status),
          operationSpan("orderStatus", account, { "surfboard.order_id": orderId })
        ),

      refund: (account, request) =>
        Effect.gen(function*() {
          yield* requireReference(account, "refund", request.idempotencyReference)
          yield* checkAmount(account, "refund", request.amountMinor)
          const currency = yield* currencyFor(account, "refund", request.currency)
          const purchase: OrderStatus = (yield* readOrder(account, request.purchaseOrderId)).status
          if (purchase.type !== "purchase") {
            return yield* rejected(account, "refund", "invalid", `order ${request.purchaseOrderId} is itself a refund`)
          }
          if (purchase.currency !== request.currency.toUpperCase()) {
            return yield* rejected(
              account,
              "refund",
              "currency_mismatch",
              `the purchase was paid in ${purchase.currency}`
            )
          }
          const paidWith = purchase.transactions.find((t) => t.type === "purchase")
          if (!paidWith) {
            return yield* rejected(account, "refund", "not_paid", `order ${request.purchaseOrderId} has no payment`)
          }
          const created = yield* postOrder(
            account,
            "refund",
            returnBody({
              terminalId: paidWith.terminalId,
              // The refund order carries our reference too, so it can be found on the provider's side.
              referenceId: request.idempotencyReference,
              purchaseOrderId: request.purchaseOrderId,
              purchasePaymentId: paidWith.paymentId,
              amountMinor: request.amountMinor,
              numericCurrency: currency,
              description: request.description ?? "Refund",
              taxLines: request.taxLines
            }),
            request.idempotencyReference
          )
          // The refund order exists. If its status cannot be read now, it is reported pending:
          // the caller reads it again with refundStatus (never by refunding again).
          return yield* refundStatus(account, created.orderId).pipe(
            Effect.catchTag("PaymentProviderUnavailable", () =>
              Effect.succeed({
                refundOrderId: created.orderId,
                paymentId: created.paymentId ?? null,
                purchaseOrderId: request.purchaseOrderId,
                state: "pending" as const,
                requestedMinor: request.amountMinor,
                refundedMinor: 0,
                currency: request.currency.toUpperCase()
              }))
          )
        }).pipe(operationSpan("refund", account, {
          "surfboard.purchase_order_id": request.purchaseOrderId,
          "surfboard.idempotency_reference": request.idempotencyReference
        })),

      refundStatus,

      voidPayment: (account, request) =>
        Effect.gen(function*() {
          yield* requireReference(account, "voidPayment", request.idempotencyReference)
          const answer = yield* http.request(account, {
            operation: "voidPayment",
            method: "PUT",
            route: "/payments/{paymentId}/void",
            path: `/payments/${enc(request.paymentId)}/void`,
            idempotencyReference: request.idempotencyReference
          }, Dialect.VoidAnswer)
          switch (answer.voidStatus.toUpperCase()) {
            case "VOIDED":
              return { paymentId: request.paymentId, state: "voided" as const }
            case "VOID_INITIATED":
              return { paymentId: request.paymentId, state: "pending" as const }
            case "CANNOT_VOID":
              return yield* rejected(
                account,
                "voidPayment",
                "cannot_void",
                "the payment is settled (after 23:00 UTC on its day) or not completed: refund it instead"
              )
            default:
              return yield* new PaymentProviderUnavailable({
                accountId: account.id,
                operation: "voidPayment",
                reason: "bad_response",
                detail: `unknown voidStatus ${answer.voidStatus}`
              })
          }
        }).pipe(operationSpan("voidPayment", account, { "surfboard.payment_id": request.paymentId })),

      cancelPayment: (account, request) =>
        Effect.gen(function*() {
          yield* requireReference(account, "cancelPayment", request.idempotencyReference)
          const answer = yield* http.request(account, {
            operation: "cancelPayment",
            method: "DELETE",
            route: "/payments/{paymentId}",
            path: `/payments/${enc(request.paymentId)}`,
            idempotencyReference: request.idempotencyReference
          }, Dialect.CancelAnswer)
          switch (answer.paymentStatus.toUpperCase()) {
            case "PAYMENT_CANCELLED":
              return { paymentId: request.paymentId, state: "cancelled" as const }
            case "PAYMENT_FAILED":
              return { paymentId: request.paymentId, state: "failed" as const }
            case "PAYMENT_COMPLETED":
              return yield* rejected(
                account,
                "cancelPayment",
                "already_completed",
                "the payment completed: void or refund it"
              )
            default:
              return yield* new PaymentProviderUnavailable({
                accountId: account.id,
                operation: "cancelPayment",
                reason: "bad_response",
                detail: `unknown paymentStatus ${answer.paymentStatus}`
              })
          }
        }).pipe(operationSpan("cancelPayment", account, { "surfboard.payment_id": request.paymentId })),

      createPaymentLink: (account, link) =>
        Effect.gen(function*() {
          yield* requireReference(account, "createPaymentLink", link.idempotencyReference)
          const terminalId = account.paymentPageTerminalId
          if (!terminalId) {
            return yield* rejected(account, "createPaymentLink", "invalid", "the account has no payment page terminal")
          }
          yield* checkAmount(account, "createPaymentLink", link.amountMinor)
          const currency = yield* currencyFor(account, "createPaymentLink", link.currency)
          const now = yield* Clock.currentTimeMillis
          const expiresAt = link.expiresAt ?? null
          if (expiresAt !== null && expiresAt.getTime() <= now) {
            return yield* rejected(account, "createPaymentLink", "invalid", "the link would expire before it is sent")
          }
          const created = yield* postOrder(
            account,
            "createPaymentLink",
            purchaseBody(
              { ...link, terminalId },
              currency,
              expiresAt !== null ? { online: { paymentPageValidFor: validForUntil(expiresAt, now) } } : {}
            ),
            link.idempotencyReference
          )
          if (!created.paymentPageLink) {
            return yield* new PaymentProviderUnavailable({
              accountId: account.id,
              operation: "createPaymentLink",
              reason: "bad_response",
              detail:
                `order ${created.orderId} came back without a payment page link (is ${terminalId} a PaymentPage terminal?)`
            })
          }
          return {
            linkId: created.orderId,
            url: created.paymentPageLink,
            state: "open" as const,
            amountMinor: link.amountMinor,
            currency: link.currency.toUpperCase(),
            expiresAt
          }
        }).pipe(operationSpan("createPaymentLink", account, { "surfboard.reference_id": link.referenceId })),

      paymentLinkStatus: (account, linkId) =>
        Effect.gen(function*() {
          const { order, status } = yield* readOrder(account, linkId)
          const now = yield* Clock.currentTimeMillis
          const expiresAt = linkExpiry(order)
          const paying = status.payments.find((p) => p.status === "completed") ?? status.payments[0]
          return {
            linkId,
            state: linkStateOf(status, expiresAt, now),
            amountMinor: status.amountMinor,
            currency: status.currency,
            expiresAt,
            paidMinor: status.paidMinor,
            paidAt: status.paidAt,
            paymentId: paying?.paymentId ?? null
          }
        }).pipe(operationSpan("paymentLinkStatus", account, { "surfboard.order_id": linkId })),

      cancelPaymentLink: (account, request) =>
        Effect.gen(function*() {
          yield* requireReference(account, "cancelPaymentLink", request.idempotencyReference)
          yield* http.request(account, {
            operation: "cancelOrder",
            method: "DELETE",
            route: "/orders/{orderId}",
            path: `/orders/${enc(request.linkId)}`,
            idempotencyReference: request.idempotencyReference
          }, Schema.Unknown).pipe(
            // A link that is already closed is closed: success.
            Effect.catchIf(
              (e): e is PaymentProviderRejected =>
                e._tag === "PaymentProviderRejected" && e.reason === "already_cancelled",
              () => Effect.void
            )
          )
        }).pipe(Effect.asVoid, operationSpan("cancelPaymentLink", account, { "surfboard.order_id": request.linkId })),

      // Pay-later charging (issue 15, part B): merchantInitiated.ts
      ...merchantInitiatedOperations(http),
      ...makeReportCalls(http)
    } satisfies PaymentProviderClient
  })
