/**
 * The sandbox's payment provider: its data in PostgreSQL (schema surfboard_sandbox) and the rules
 * Surfboard applies to money, as the API handlers (api.ts), the hosted pay page (payPage.ts) and the
 * test helpers (sandbox.ts) use them.
 *
 * - Orders: a purchase is paid when a card is presented (`pay`) or its hosted page is paid; a
 *   return (refund) is a negative order linked to a paid purchase, never for more than is left to
 *   refund (pending refunds count).
 * - Refunds and voids settle per the switches: at once, after a delay, or when told (`settleNow`).
 *   Settlement is applied lazily, before every read and write (`settleDue`), in sandbox time.
 * - Voids: a completed purchase payment, before 23:00 UTC of its UTC day, with no refund on it.
 * - Keyed calls (`keyed`): the same Idempotency-Key with the same request answers the stored answer;
 *   with another request 422. The check, the change and the stored answer are one transaction.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { alphaCurrency } from "../../adapters/surfboard/currency.js"
import type * as Dialect from "../../adapters/surfboard/dialect.js"
import { validForMillis } from "../../adapters/surfboard/mapping.js"
import { voidDeadline } from "../../ports/PaymentProvider.js"
import type { SandboxClock } from "./clock.js"
import { badRequest, notFound, SandboxFailure } from "./failure.js"
import { settlementPlan, type SurfboardSwitches } from "./switches.js"

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

/** A payment page with no validity of its own stays open this long. */
export const DEFAULT_PAGE_VALIDITY = "7d"

/** JSON with sorted keys: the same request gives the same text whatever the key order. */
const canonical = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined)
    return `{${
      entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`)
        .join(",")
    }}`
  }
  return JSON.stringify(value)
}

type OrderBody = { readonly controlFunctions?: { readonly online?: Record<string, unknown> } }

/** The body without its payment page's validity (`controlFunctions.online.paymentPageValidFor`). */
const withoutValidity = (body: unknown): unknown => {
  const online = body !== null && typeof body === "object" ? (body as OrderBody).controlFunctions?.online : undefined
  if (online === undefined || online === null || typeof online !== "object") return body
  const { paymentPageValidFor: _, ...rest } = online
  const order = body as OrderBody
  return { ...order, controlFunctions: { ...order.controlFunctions, online: rest } }
}

/**
 * What makes two keyed calls "the same request": method, path and body. A payment page's validity is
 * relative ("15m") and so differs between a first attempt and its retry a moment later: it is left
 * out, and the first attempt's validity stands.
 */
export const fingerprintOf = (method: string, path: string, body: unknown) => {
  return createHash("sha256").update(`${method.toUpperCase()} ${path}\n${canonical(withoutValidity(body))}`).digest(
    "hex"
  )
}

export interface Answer {
  readonly status: number
  readonly body: unknown
}

export type SwitchesFor = (merchantId: string) => Effect.Effect<SurfboardSwitches>

export const makeStore = (clock: SandboxClock, switchesFor: SwitchesFor) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const now = clock.now

    // ---------------------------------------------------------------- partners, merchants, terminals

    const createPartner = (name: string) =>
      Effect.gen(function*() {
        const row: PartnerRow & { created_at: Date } = {
          id: newId("partner"),
          name,
          api_key: newSecret("sbx_key"),
          api_secret: newSecret("sbx_secret"),
          created_at: yield* now
        }
        yield* sql`INSERT INTO surfboard_sandbox.partners ${sql.insert(row)}`
        return row as PartnerRow
      })

    const createMerchant = (input: {
      readonly partnerId: string
      readonly name: string
      readonly country: string
      readonly terminals: ReadonlyArray<{ readonly name: string; readonly kind: "card" | "PaymentPage" }>
    }) =>
      sql.withTransaction(Effect.gen(function*() {
        const merchant: MerchantRow & { created_at: Date } = {
          id: newId("merchant"),
          partner_id: input.partnerId,
          name: input.name,
          country: input.country,
          created_at: yield* now
        }
        yield* sql`INSERT INTO surfboard_sandbox.merchants ${sql.insert(merchant)}`
        const terminals: Array<TerminalRow> = input.terminals.map((t) => ({
          id: newId("terminal"),
          merchant_id: merchant.id,
          name: t.name,
          kind: t.kind
        }))
        if (terminals.length > 0) yield* sql`INSERT INTO surfboard_sandbox.terminals ${sql.insert(terminals)}`
        return { merchant: merchant as MerchantRow, terminals }
      }))

    const partnerById = (id: string) =>
      sql<PartnerRow>`SELECT id, name, api_key, api_secret FROM surfboard_sandbox.partners WHERE id = ${id}`.pipe(
        Effect.flatMap((rows) => (rows[0] ? Effect.succeed(rows[0]) : Effect.fail(notFound(`Partner ${id}`))))
      )

    const partnerByKey = (apiKey: string) =>
      sql<PartnerRow>`SELECT id, name, api_key, api_secret FROM surfboard_sandbox.partners WHERE api_key = ${apiKey}`
        .pipe(
          Effect.map((rows) => rows[0])
        )

    const merchantById = (id: string) =>
      sql<MerchantRow>`SELECT id, partner_id, name, country FROM surfboard_sandbox.merchants WHERE id = ${id}`.pipe(
        Effect.map((rows) => rows[0])
      )

    const terminalsOf = (merchantId: string) =>
      sql<TerminalRow>`
        SELECT id, merchant_id, name, kind FROM surfboard_sandbox.terminals WHERE merchant_id = ${merchantId} ORDER BY name, id`

    const terminalOf = (merchantId: string, terminalId: string) =>
      sql<TerminalRow>`
        SELECT id, merchant_id, name, kind FROM surfboard_sandbox.terminals
        WHERE id = ${terminalId} AND merchant_id = ${merchantId}`.pipe(
        Effect.flatMap((rows) =>
          rows[0]
            ? Effect.succeed(rows[0])
            : Effect.fail(badRequest(`Terminal ${terminalId} not found for this merchant.`, "TERMINAL_NOT_FOUND"))
        )
      )

    // ---------------------------------------------------------------- reading

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

    // ---------------------------------------------------------------- settlement

    const completeRefund = (paymentId: string, at: Date) =>
      Effect.gen(function*() {
        const [row] = yield* sql<{ order_id: string; settle_amount_minor: number | null; amount_minor: number }>`
          UPDATE surfboard_sandbox.payments
          SET status = 'PAYMENT_COMPLETED', completed_at = ${at}, settles_at = NULL, settle_on_request = false
          WHERE id = ${paymentId}
          RETURNING order_id, settle_amount_minor, amount_minor`
        if (!row) return
        const [order] = yield* sql<OrderRow>`SELECT * FROM surfboard_sandbox.orders WHERE id = ${row.order_id}`
        const returned = row.settle_amount_minor ?? row.amount_minor
        if (returned > 0) {
          yield* insertTransaction(order!, paymentId, newId("transaction"), "RETURN", returned, at)
        }
        const status = returned < order!.amount_minor ? "PARTIAL_PAYMENT_COMPLETED" : "PAYMENT_COMPLETED"
        yield* sql`UPDATE surfboard_sandbox.orders SET status = ${status}, updated_at = ${at} WHERE id = ${order!.id}`
      })

    const completeVoid = (paymentId: string, at: Date) =>
      Effect.zipRight(
        sql`
          UPDATE surfboard_sandbox.payments SET void_status = 'VOIDED', void_settles_at = NULL, void_on_request = false
          WHERE id = ${paymentId}`,
        sql`UPDATE surfboard_sandbox.transactions SET voided = true WHERE payment_id = ${paymentId}`
      ).pipe(
        Effect.zipRight(sql`
        UPDATE surfboard_sandbox.orders o SET updated_at = ${at}
        FROM surfboard_sandbox.payments p WHERE p.id = ${paymentId} AND o.id = p.order_id`),
        Effect.asVoid
      )

    /** Refunds and voids whose time has come complete; payment pages past their validity close. */
    const settleDue: Effect.Effect<void, never> = Effect.gen(function*() {
      const at = yield* now
      yield* sql.withTransaction(Effect.gen(function*() {
        const refunds = yield* sql<{ id: string; settles_at: Date }>`
          SELECT id, settles_at FROM surfboard_sandbox.payments
          WHERE status = 'PAYMENT_PROCESSING' AND settles_at IS NOT NULL AND settles_at <= ${at}
          ORDER BY settles_at FOR UPDATE SKIP LOCKED`
        for (const r of refunds) yield* completeRefund(r.id, r.settles_at)
        const voids = yield* sql<{ id: string; void_settles_at: Date }>`
          SELECT id, void_settles_at FROM surfboard_sandbox.payments
          WHERE void_status = 'VOID_INITIATED' AND void_settles_at IS NOT NULL AND void_settles_at <= ${at}
          FOR UPDATE SKIP LOCKED`
        for (const v of voids) yield* completeVoid(v.id, v.void_settles_at)
        const expired = yield* sql<{ id: string }>`
          UPDATE surfboard_sandbox.orders SET status = 'PAYMENT_CANCELLED', updated_at = ${at}
          WHERE status = 'PENDING' AND page_expires_at IS NOT NULL AND page_expires_at <= ${at}
          RETURNING id`
        if (expired.length > 0) {
          yield* sql`
            UPDATE surfboard_sandbox.payments SET status = 'PAYMENT_CANCELLED', failure_reason = 'PAYMENT_PAGE_EXPIRED'
            WHERE order_id IN ${
            sql.in(expired.map((o) => o.id))
          } AND status IN ('PAYMENT_INITIATED', 'PAYMENT_PROCESSING')`
        }
      }))
    }).pipe(Effect.orDie)

    /** Completes refunds and voids that wait to be told (settlement `manual`); all, or one order's or payment's. */
    const settleNow = (
      filter: { readonly orderId?: string | undefined; readonly paymentId?: string | undefined } = {}
    ) =>
      Effect.gen(function*() {
        const at = yield* now
        const orderId = filter.orderId ?? null
        const paymentId = filter.paymentId ?? null
        const refunds = yield* sql<{ id: string }>`
          UPDATE surfboard_sandbox.payments p SET settles_at = ${at}
          FROM surfboard_sandbox.orders o
          WHERE o.id = p.order_id AND p.status = 'PAYMENT_PROCESSING'
            AND (p.settle_on_request OR p.settles_at IS NOT NULL)
            AND (${orderId}::text IS NULL OR o.id = ${orderId} OR o.purchase_order_id = ${orderId})
            AND (${paymentId}::text IS NULL OR p.id = ${paymentId})
          RETURNING p.id`
        const voids = yield* sql<{ id: string }>`
          UPDATE surfboard_sandbox.payments p SET void_settles_at = ${at}
          WHERE p.void_status = 'VOID_INITIATED'
            AND (${orderId}::text IS NULL OR p.order_id = ${orderId})
            AND (${paymentId}::text IS NULL OR p.id = ${paymentId})
          RETURNING p.id`
        yield* settleDue
        return refunds.length + voids.length
      })

    // ---------------------------------------------------------------- idempotency

    /**
     * Runs a call that changes something in one transaction, and once per Idempotency-Key when it
     * carries one: a stored answer is replayed when
     * the request is the same, refused (422) when it is not. Definite refusals (4xx) are not stored:
     * nothing happened, so asking again is asked afresh.
     */
    const keyed = <E, R>(
      merchantId: string,
      key: string | null,
      fingerprint: string,
      run: Effect.Effect<Answer, E, R>
    ) =>
      key === null ? sql.withTransaction(run) : sql.withTransaction(Effect.gen(function*() {
        yield* sql`SELECT pg_advisory_xact_lock(hashtext(${`surfboard_sandbox.idempotency:${merchantId}:${key}`}))`
        const [stored] = yield* sql<{ fingerprint: string; status: number; body: unknown }>`
          SELECT fingerprint, status, body FROM surfboard_sandbox.idempotency WHERE merchant_id = ${merchantId} AND key = ${key}`
        if (stored) {
          if (stored.fingerprint !== fingerprint) {
            return yield* new SandboxFailure({
              status: 422,
              message: "Idempotency-Key was already used with a different request.",
              errorCode: "IDEMPOTENCY_KEY_REUSED"
            })
          }
          return { status: stored.status, body: stored.body } satisfies Answer
        }
        const answer = yield* run
        if (answer.status >= 200 && answer.status < 300) {
          yield* sql`INSERT INTO surfboard_sandbox.idempotency ${
            sql.insert({
              merchant_id: merchantId,
              key,
              fingerprint,
              status: answer.status,
              body: JSON.stringify(answer.body),
              created_at: yield* now
            })
          }`
        }
        return answer
      }))

    // ---------------------------------------------------------------- orders

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

    return {
      sql,
      now,
      createPartner,
      createMerchant,
      partnerById,
      partnerByKey,
      merchantById,
      terminalsOf,
      orderView,
      pageOrder,
      refundsOf,
      settleDue,
      settleNow,
      keyed,
      createOrder,
      pay,
      voidPayment,
      cancelPayment,
      cancelOrder
    }
  })

export type Store = Effect.Effect.Success<ReturnType<typeof makeStore>>
