/**
 * Pay-later charging at Surfboard (issue 15, part B): the cards a tokenised payment saved, a
 * merchant-initiated charge of a saved card, and finding a charge by our reference.
 *
 * | port            | Surfboard                                                                          | sent        |
 * |-----------------|------------------------------------------------------------------------------------|-------------|
 * | savedCards      | GET /orders/{id}/tokens (Fetch Tokens from Order)                                   | retried     |
 * | chargeSavedCard | POST /orders on the online terminal, `initiatePaymentsOptions{paymentMethod: CARD,   | POST once,  |
 * |                 | paymentMethodParams{tokenId}}`, then GET /orders/{id}/status for the outcome        | keyed       |
 * | findCharge      | GET /orders?referenceId= (assumed; Surfboard documents "Fetch Online Orders"), then  | retried     |
 * |                 | GET /orders/{id}/status                                                              |             |
 *
 * The outcome comes from the payment's status and failure reason (declineOutcome): the reason names
 * below are assumptions written down in docs/payment-provider.md.
 */
import { Effect, Schema } from "effect"
import {
  type PaymentAccount,
  type PaymentProviderClient,
  PaymentProviderRejected,
  type SavedCardChargeOutcome,
  type SavedCardChargeResult
} from "../../ports/PaymentProvider.js"
import { operationSpan as withSpan, type SurfboardHttp } from "./client.js"
import { numericCurrency } from "./currency.js"
import * as Dialect from "./dialect.js"
import { purchaseBody } from "./mapping.js"

/** Failure reasons worth trying again later (the card may work then). */
export const SOFT_DECLINES: ReadonlySet<string> = new Set([
  "INSUFFICIENT_FUNDS",
  "TRY_AGAIN_LATER",
  "ISSUER_UNAVAILABLE",
  "LIMIT_EXCEEDED"
])
/** Failure reasons that ask for the card holder (strong customer authentication). */
export const SCA_DECLINES: ReadonlySet<string> = new Set(["AUTHENTICATION_REQUIRED", "SCA_REQUIRED"])

/** A failed payment's outcome: soft, SCA, else hard (an unknown reason is never retried blindly). */
export const declineOutcome = (reason: string | null): SavedCardChargeOutcome => {
  const r = (reason ?? "").toUpperCase()
  return SOFT_DECLINES.has(r) ? "soft_decline" : SCA_DECLINES.has(r) ? "sca_required" : "hard_decline"
}

/** The charge's outcome from GET /orders/:id/status. */
export const chargeResultOf = (
  orderId: string,
  status: typeof Dialect.OrderStatus.Type
): SavedCardChargeResult => {
  const payments = status.payments ?? []
  const completed = payments.find((p) => p.paymentStatus === "PAYMENT_COMPLETED")
  const paidTx = (status.transactions ?? []).find((t) => t.type.toUpperCase() === "PURCHASE")
  if (status.orderStatus === "PAYMENT_COMPLETED" || completed !== undefined) {
    return {
      orderId,
      paymentId: completed?.paymentId ?? paidTx?.paymentId ?? null,
      outcome: "paid",
      declineReason: null,
      paidAt: paidTx ? new Date(paidTx.timestamp) : null
    }
  }
  const last = payments[payments.length - 1]
  if (last !== undefined && (last.paymentStatus === "PAYMENT_FAILED" || last.paymentStatus === "PAYMENT_CANCELLED")) {
    const reason = last.failureReason ?? null
    return { orderId, paymentId: last.paymentId, outcome: declineOutcome(reason), declineReason: reason, paidAt: null }
  }
  return { orderId, paymentId: last?.paymentId ?? null, outcome: "pending", declineReason: null, paidAt: null }
}

const SavedCardsAnswer = Schema.Array(Schema.Struct({
  tokenId: Schema.String,
  createdAt: Schema.optional(Schema.NullOr(Schema.String))
}))

const OrdersByReference = Schema.Array(Schema.Struct({
  orderId: Schema.String,
  referenceId: Schema.optional(Schema.NullOr(Schema.String)),
  date: Schema.optional(Schema.NullOr(Schema.String))
}))

const enc = encodeURIComponent

export const merchantInitiatedOperations = (
  http: SurfboardHttp
): Pick<PaymentProviderClient, "savedCards" | "chargeSavedCard" | "findCharge"> => {
  const rejected = (account: PaymentAccount, operation: string, detail: string) =>
    new PaymentProviderRejected({ accountId: account.id, operation, reason: "invalid", detail })

  const statusOf = (account: PaymentAccount, orderId: string) =>
    Effect.map(
      http.request(account, {
        operation: "fetchOrderStatus",
        method: "GET",
        route: "/orders/{orderId}/status",
        path: `/orders/${enc(orderId)}/status`
      }, Dialect.OrderStatus),
      (status) => chargeResultOf(orderId, status)
    )

  return {
    savedCards: (account, orderId) =>
      http.request(account, {
        operation: "fetchOrderTokens",
        method: "GET",
        route: "/orders/{orderId}/tokens",
        path: `/orders/${enc(orderId)}/tokens`
      }, SavedCardsAnswer).pipe(
        Effect.map((cards) =>
          cards.map((c) => ({ tokenId: c.tokenId, createdAt: c.createdAt ? new Date(c.createdAt) : null }))
        ),
        withSpan("savedCards", account, { "surfboard.order_id": orderId })
      ),

    chargeSavedCard: (account, charge) =>
      Effect.gen(function*() {
        if (charge.idempotencyReference.trim() === "") {
          return yield* rejected(account, "chargeSavedCard", "an idempotency reference is required")
        }
        if (!Number.isSafeInteger(charge.amountMinor) || charge.amountMinor <= 0) {
          return yield* rejected(account, "chargeSavedCard", "the amount must be a positive integer of minor units")
        }
        const currency = numericCurrency(charge.currency)
        if (currency === undefined) {
          return yield* rejected(account, "chargeSavedCard", `currency ${charge.currency} is not supported`)
        }
        const terminalId = account.paymentPageTerminalId
        if (!terminalId) {
          return yield* rejected(account, "chargeSavedCard", "the account has no online (payment page) terminal")
        }
        const created = yield* http.request(account, {
          operation: "chargeSavedCard",
          method: "POST",
          route: "/orders",
          path: "/orders",
          body: purchaseBody(
            {
              terminalId,
              referenceId: charge.referenceId,
              amountMinor: charge.amountMinor,
              currency: charge.currency,
              description: charge.description
            },
            currency,
            { initiatePaymentsOptions: { paymentMethod: "CARD", paymentMethodParams: { tokenId: charge.tokenId } } }
          ),
          idempotencyReference: charge.idempotencyReference
        }, Dialect.CreatedOrder)
        return yield* statusOf(account, created.orderId)
      }).pipe(withSpan("chargeSavedCard", account, { "surfboard.reference_id": charge.referenceId })),

    findCharge: (account, referenceId) =>
      Effect.gen(function*() {
        const orders = yield* http.request(account, {
          operation: "fetchOrdersByReference",
          method: "GET",
          route: "/orders",
          path: `/orders?referenceId=${enc(referenceId)}`
        }, OrdersByReference)
        const found = orders.filter((o) => o.referenceId === referenceId)
        const last = found[found.length - 1]
        if (last === undefined) return null
        return yield* statusOf(account, last.orderId)
      }).pipe(withSpan("findCharge", account, { "surfboard.reference_id": referenceId }))
  }
}
