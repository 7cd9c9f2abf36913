/**
 * Pay-later charging in the payment sandbox (issue 15, part B): cards saved as tokens by a
 * tokenised payment, and merchant-initiated charges of a saved card.
 *
 * - A purchase made with `controlFunctions.online.enforceTokenization: true` saves the card it is
 *   paid with as a token (`tokenise`, called when the order is paid, in the payment's transaction).
 *   `GET /orders/:id/tokens` lists them: token id, a made-up brand and last four digits.
 * - `POST /orders` with `initiatePaymentsOptions.paymentMethodParams.tokenId` charges the saved card
 *   at once (`charge`): the merchant's `mitOutcome` switch says how the card answers: `paid`,
 *   `soft_decline` (INSUFFICIENT_FUNDS), `hard_decline` (CARD_BLOCKED) or `sca_required`
 *   (AUTHENTICATION_REQUIRED). A declined charge leaves its order PENDING with a PAYMENT_FAILED
 *   payment. Keyed like every change (store.keyed): a retry with the same key charges nothing more.
 * - `GET /orders?referenceId=` lists the merchant's orders with that reference (oldest first).
 * - `chargesOf(tokenId)`: every order charged to a token (tests count double charges with it).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import type * as Dialect from "../../adapters/surfboard/dialect.js"
import type { SandboxClock } from "./clock.js"
import { badRequest, notFound } from "./failure.js"
import type { SwitchesFor } from "./orders.js"
import { makeRowWriters, type MerchantRow, newId, type OrderRow } from "./rows.js"

export const TOKENS_DDL = `
  CREATE TABLE IF NOT EXISTS surfboard_sandbox.card_tokens (
    id text PRIMARY KEY,
    merchant_id text NOT NULL,
    order_id text NOT NULL,
    created_at timestamptz NOT NULL
  );
  CREATE INDEX IF NOT EXISTS card_tokens_by_order ON surfboard_sandbox.card_tokens (order_id);
`

/** What a saved card answers to a merchant-initiated charge (the `mitOutcome` switch). */
export type MitOutcome = "paid" | "soft_decline" | "hard_decline" | "sca_required"

export const FAILURE_REASON: Record<Exclude<MitOutcome, "paid">, string> = {
  soft_decline: "INSUFFICIENT_FUNDS",
  hard_decline: "CARD_BLOCKED",
  sca_required: "AUTHENTICATION_REQUIRED"
}

export interface ChargeRecord {
  readonly orderId: string
  readonly referenceId: string | null
  readonly status: string
  readonly amountMinor: number
  readonly paid: boolean
}

export const makeMerchantInitiated = (clock: SandboxClock, switchesFor: SwitchesFor) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { insertOrder, insertPayment, insertTransaction } = yield* makeRowWriters

    /** The card that paid `order` saved as a token, when the order asked for it (in the payment's transaction). */
    const tokenise = (order: OrderRow, at: Date) =>
      order.body.controlFunctions?.online?.enforceTokenization === true
        ? sql`
            INSERT INTO surfboard_sandbox.card_tokens (id, merchant_id, order_id, created_at)
            VALUES (${randomBytes(9).toString("hex")}, ${order.merchant_id}, ${order.id}, ${at})`.pipe(Effect.asVoid)
        : Effect.void

    /** GET /orders/:id/tokens */
    const tokensOf = (merchantId: string, orderId: string) =>
      Effect.gen(function*() {
        const [order] = yield* sql<{ id: string }>`
          SELECT id FROM surfboard_sandbox.orders WHERE id = ${orderId} AND merchant_id = ${merchantId}`
        if (!order) return yield* notFound("Order")
        const rows = yield* sql<{ id: string; created_at: Date }>`
          SELECT id, created_at FROM surfboard_sandbox.card_tokens WHERE order_id = ${orderId} ORDER BY created_at, id`
        return rows.map((r) => ({
          cardBrand: "VISA",
          tokenId: r.id,
          createdAt: r.created_at.toISOString(),
          truncatedPan: "0004"
        }))
      })

    /** POST /orders with a saved card's token: charged at once, answered as the switch says. */
    const charge = (
      merchant: MerchantRow,
      input: typeof Dialect.CreateOrderRequest.Type,
      tokenId: string,
      terminalKind: string
    ) =>
      Effect.gen(function*() {
        if (terminalKind !== "PaymentPage") {
          return yield* badRequest(
            "A saved card is charged on an online (payment page) terminal.",
            "TERMINAL_NOT_FOUND"
          )
        }
        const [token] = yield* sql<{ id: string }>`
          SELECT id FROM surfboard_sandbox.card_tokens WHERE id = ${tokenId} AND merchant_id = ${merchant.id}`
        if (!token) return yield* badRequest(`Unknown token ${tokenId}.`, "TOKEN_NOT_FOUND")
        const total = input.totalOrderAmount
        if (total === undefined || !Number.isSafeInteger(total.total) || total.total <= 0) {
          return yield* badRequest("A charge needs a positive totalOrderAmount.total.")
        }
        const at = yield* clock.now
        const orderId = newId("order")
        const order: OrderRow = {
          id: orderId,
          merchant_id: merchant.id,
          terminal_id: input["terminal$id"],
          reference_id: input.referenceId ?? null,
          type: "purchase",
          purchase_order_id: null,
          status: "PENDING",
          currency: total.currency,
          amount_minor: total.total,
          body: input,
          page_token: null,
          page_expires_at: null,
          created_at: at
        }
        yield* insertOrder(order)
        const paymentId = newId("payment")
        yield* insertPayment(paymentId, orderId, total.total, "CARD", at)
        const outcome = (yield* switchesFor(merchant.id)).mitOutcome
        if (outcome !== "paid") {
          yield* sql`
            UPDATE surfboard_sandbox.payments SET status = 'PAYMENT_FAILED', failure_reason = ${FAILURE_REASON[outcome]}
            WHERE id = ${paymentId}`
          return { orderId, paymentId }
        }
        yield* sql`
          UPDATE surfboard_sandbox.payments SET status = 'PAYMENT_COMPLETED', completed_at = ${at} WHERE id = ${paymentId}`
        yield* insertTransaction(order, paymentId, newId("transaction"), "PURCHASE", total.total, at)
        yield* sql`UPDATE surfboard_sandbox.orders SET status = 'PAYMENT_COMPLETED', updated_at = ${at} WHERE id = ${orderId}`
        return { orderId, paymentId }
      })

    /** GET /orders?referenceId= */
    const ordersByReference = (merchantId: string, referenceId: string) =>
      Effect.map(
        sql<{ id: string; reference_id: string | null; created_at: Date }>`
          SELECT id, reference_id, created_at FROM surfboard_sandbox.orders
          WHERE merchant_id = ${merchantId} AND reference_id = ${referenceId} ORDER BY created_at, id`,
        (rows) => rows.map((r) => ({ orderId: r.id, referenceId: r.reference_id, date: r.created_at.toISOString() }))
      )

    /** Every order charged to the token, oldest first. */
    const chargesOf = (tokenId: string) =>
      Effect.map(
        sql<{ id: string; reference_id: string | null; status: string; amount_minor: number }>`
          SELECT id, reference_id, status, amount_minor FROM surfboard_sandbox.orders
          WHERE body->'controlFunctions'->'initiatePaymentsOptions'->'paymentMethodParams'->>'tokenId' = ${tokenId}
          ORDER BY created_at, id`,
        (rows): ReadonlyArray<ChargeRecord> =>
          rows.map((r) => ({
            orderId: r.id,
            referenceId: r.reference_id,
            status: r.status,
            amountMinor: Number(r.amount_minor),
            paid: r.status === "PAYMENT_COMPLETED"
          }))
      )

    return { tokenise, tokensOf, charge, ordersByReference, chargesOf }
  })
