/**
 * The Surfboard adapter through the PaymentProvider port, over real HTTP against the sandbox on a
 * real PostgreSQL: credentials, every port operation, the wire format, idempotent money-moving calls
 * (a retry after a lost answer never refunds twice), void versus refund around 23:00 UTC, partial
 * refunds and slow settlement, payment links, and failures (5xx, timeouts, a provider that is down)
 * with reads retried and money-moving calls sent once.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Clock, Effect, Exit, Redacted, Tracer } from "effect"
import {
  canVoid,
  type PaymentAccount,
  PaymentProvider,
  type PaymentProviderError,
  voidDeadline
} from "../../src/ports/PaymentProvider.js"
import { type SandboxMerchant, SurfboardSandbox } from "../../src/sandbox/surfboard/index.js"
import { surfboardEnv } from "../sandbox/surfboardEnv.js"
import { captivePortal } from "../support/captivePortal.js"
import { freePort } from "../support/globalSetup.js"
import { call } from "../support/http.js"

const failureOf = <A>(effect: Effect.Effect<A, PaymentProviderError>) =>
  Effect.map(Effect.exit(effect), (exit) => {
    if (Exit.isSuccess(exit)) throw new Error(`expected a failure, got ${JSON.stringify(exit.value)}`)
    const failure = exit.cause._tag === "Fail" ? exit.cause.error : undefined
    if (!failure) throw new Error(`expected a PaymentProviderError, got ${String(exit.cause)}`)
    return failure
  })

const elapsed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const start = Date.now()
    const result = yield* effect
    return { result, ms: Date.now() - start }
  })

/** A merchant of its own (and its own partner credentials) for each test. */
const merchantWith = (name: string) =>
  Effect.gen(function*() {
    const sandbox = yield* SurfboardSandbox
    const merchant = yield* sandbox.createMerchant({ name })
    return { sandbox, merchant, account: sandbox.account(merchant), pp: yield* PaymentProvider }
  })

/** A paid desk sale of 499 NOK at the merchant's card terminal. */
const paidSale = (merchant: SandboxMerchant, referenceId: string, amountMinor = 49900) =>
  Effect.flatMap(
    SurfboardSandbox,
    (sandbox) => sandbox.createPaidOrder({ merchantId: merchant.id, amountMinor, currency: "NOK", referenceId })
  )

const withSwitchesReset = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(SurfboardSandbox, (sandbox) => Effect.ensuring(effect, sandbox.faults.reset))

/** The live clock, moved by `offsetMs`: the adapter's view of time in tests that move the sandbox's. */
const shiftedClock = (offsetMs: number): Clock.Clock => {
  const live = Clock.make()
  const millis = () => live.unsafeCurrentTimeMillis() + offsetMs
  return {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: millis,
    currentTimeMillis: Effect.sync(millis),
    unsafeCurrentTimeNanos: () => BigInt(millis()) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => BigInt(millis()) * 1_000_000n),
    sleep: (duration) => live.sleep(duration)
  }
}

/** A tracer that keeps every ended span's name and attributes. */
const spanCollector = () => {
  const spans: Array<{ name: string; attributes: Record<string, unknown> }> = []
  const tracer = Tracer.make({
    span: (name, parent, context, links, startTime, kind) => {
      const attributes = new Map<string, unknown>()
      const span: Tracer.Span = {
        _tag: "Span",
        name,
        spanId: Math.random().toString(16).slice(2),
        traceId: "t",
        parent,
        context,
        status: { _tag: "Started", startTime },
        attributes,
        links,
        sampled: true,
        kind,
        end: () => spans.push({ name, attributes: Object.fromEntries(attributes) }),
        attribute: (k, v) => attributes.set(k, v),
        event: () => {},
        addLinks: () => {}
      }
      return span
    },
    context: (f) => f()
  })
  return { spans, tracer }
}

/** The order as the sandbox holds it, read over raw HTTP with the account's headers (the wire format). */
const rawOrder = (account: PaymentAccount, merchant: SandboxMerchant, orderId: string) =>
  call(`/orders/${orderId}`, {
    baseUrl: account.baseUrl,
    headers: { "API-KEY": merchant.apiKey, "API-SECRET": merchant.apiSecret, "MERCHANT-ID": merchant.id }
  })

layer(surfboardEnv(), { excludeTestServices: true, timeout: 120_000 })(
  "Surfboard adapter against the sandbox",
  (it) => {
    describe("credentials", () => {
      it.effect("a wrong secret or key is refused as unauthorized, another partner's merchant as forbidden, not retried", () =>
        Effect.gen(function*() {
          const { sandbox, merchant, account, pp } = yield* merchantWith("Credential Tours")
          const other = yield* sandbox.createMerchant({ name: "Someone Else AS" })
          const sale = yield* paidSale(merchant, "SVC-AUTH000001")
          yield* sandbox.requests.clear
          const wrongSecret = yield* failureOf(
            pp.orderStatus({ ...account, apiSecret: Redacted.make("guess") }, sale.orderId)
          )
          expect(wrongSecret).toMatchObject({
            _tag: "PaymentProviderRejected",
            reason: "unauthorized",
            operation: "fetchOrder"
          })
          const unknownKey = yield* failureOf(
            pp.orderStatus({ ...account, apiKey: Redacted.make("nobody") }, sale.orderId)
          )
          expect(unknownKey.reason).toBe("unauthorized")
          const notMine = yield* failureOf(pp.orderStatus({ ...account, merchantId: other.id }, sale.orderId))
          expect(notMine).toMatchObject({ _tag: "PaymentProviderRejected", reason: "forbidden" })
          // A refusal is definite: the first read of each status went out once, and the second not at all.
          expect(yield* sandbox.requests.count({ method: "GET" })).toBe(3)
          // A refused refund moved nothing.
          expect(
            yield* failureOf(pp.refund({ ...account, apiSecret: Redacted.make("guess") }, {
              purchaseOrderId: sale.orderId,
              amountMinor: 49900,
              currency: "NOK",
              idempotencyReference: "auth-refund"
            }))
          ).toMatchObject({ reason: "unauthorized" })
          expect(yield* sandbox.refundsOf(sale.orderId)).toEqual([])
          expect((yield* pp.orderStatus(account, sale.orderId)).paid).toBe(true)
        }))

      it.effect("the API key and secret never appear in errors or spans", () =>
        Effect.gen(function*() {
          const { sandbox, merchant, account, pp } = yield* merchantWith("Secret Keepers AS")
          const { spans, tracer } = spanCollector()
          const sale = yield* paidSale(merchant, "SVC-SECRET0001")
          yield* pp.orderStatus(account, sale.orderId).pipe(Effect.withTracer(tracer))
          yield* pp.refund(account, {
            purchaseOrderId: sale.orderId,
            amountMinor: 100,
            currency: "NOK",
            idempotencyReference: "s-1"
          })
            .pipe(Effect.withTracer(tracer))
          const refused = yield* failureOf(
            pp.orderStatus({ ...account, apiSecret: Redacted.make(`${merchant.apiSecret}x`) }, sale.orderId)
              .pipe(Effect.withTracer(tracer))
          )
          yield* sandbox.faults.set({ errorRate: 1, errorStatus: 500 }, { merchantId: merchant.id })
          const unavailable = yield* failureOf(pp.orderStatus(account, sale.orderId).pipe(Effect.withTracer(tracer)))
          yield* sandbox.faults.reset
          const everything = JSON.stringify({
            spans,
            refused,
            unavailable,
            text: [String(refused), String(unavailable)],
            account
          })
          expect(spans.map((s) => s.name)).toEqual(expect.arrayContaining([
            "Surfboard.fetchOrder",
            "Surfboard.fetchOrderStatus",
            "Surfboard.refund",
            "PaymentProvider.orderStatus",
            "PaymentProvider.refund"
          ]))
          expect(spans.find((s) => s.name === "Surfboard.refund")!.attributes).toMatchObject({
            "surfboard.account_id": account.id,
            "surfboard.merchant_id": merchant.id,
            "http.request.method": "POST",
            "http.route": "/orders",
            "http.response.status_code": 200,
            "surfboard.moves_money": true,
            "surfboard.idempotency_reference": "s-1"
          })
          expect(spans.find((s) => s.name === "Surfboard.fetchOrderStatus")!.attributes).toMatchObject({
            "http.route": "/orders/{orderId}/status",
            "surfboard.moves_money": false
          })
          expect(everything).toContain(merchant.id)
          expect(everything).not.toContain(merchant.apiKey)
          expect(everything).not.toContain(merchant.apiSecret)
        }))
    })

    describe("orders and their status", () => {
      it.effect("a card-terminal sale: pending until the card is presented, then paid with amount, currency, merchant, terminal, reference and transaction", () =>
        Effect.gen(function*() {
          const { sandbox, merchant, account, pp } = yield* merchantWith("Desk Sale Tours")
          const created = yield* pp.createOrder(account, {
            terminalId: merchant.terminalId!,
            referenceId: "SVC-AB12CD34EF",
            amountMinor: 99800,
            currency: "NOK",
            description: "Harbour Cruise 10:00",
            taxLines: [{ amountMinor: 10693, percentage: 12, type: "VAT" }],
            serviceProviders: [{ serviceProviderId: "svc-partner-1", amount: { percentage: 5 } }],
            idempotencyReference: "sale-1"
          })
          expect(created).toMatchObject({
            orderId: expect.stringMatching(/^[0-9a-f]{16}0b$/),
            paymentId: expect.any(String),
            paymentPageUrl: null
          })
          const pending = yield* pp.orderStatus(account, created.orderId)
          expect(pending).toMatchObject({ state: "pending", paid: false, paidMinor: 0, paidAt: null, transactions: [] })
          expect(pending.payments).toEqual([{
            paymentId: created.paymentId,
            status: "initiated",
            method: "CARD",
            amountMinor: 99800,
            failureReason: null
          }])

          const paid = yield* sandbox.payOrder(created.orderId)
          expect(paid.paymentId).toBe(created.paymentId)
          const status = yield* pp.orderStatus(account, created.orderId)
          expect(status).toEqual({
            orderId: created.orderId,
            merchantId: merchant.id,
            terminalId: merchant.terminalId,
            referenceId: "SVC-AB12CD34EF",
            type: "purchase",
            purchaseOrderId: null,
            state: "paid",
            providerStatus: "PAYMENT_COMPLETED",
            amountMinor: 99800,
            currency: "NOK",
            paidMinor: 99800,
            paid: true,
            voided: false,
            paidAt: expect.any(Date),
            taxLines: [{ amountMinor: 10693, percentage: 12, type: "VAT" }],
            payments: [{
              paymentId: created.paymentId,
              status: "completed",
              method: "CARD",
              amountMinor: 99800,
              failureReason: null
            }],
            transactions: [{
              transactionId: paid.transactionId,
              paymentId: created.paymentId,
              type: "purchase",
              amountMinor: 99800,
              currency: "NOK",
              voided: false,
              at: status.paidAt,
              merchantId: merchant.id,
              terminalId: merchant.terminalId,
              referenceId: "SVC-AB12CD34EF"
            }]
          })
          // On the wire: Surfboard's numeric currency, minor units, tax and service providers as sent.
          const wire = yield* rawOrder(account, merchant, created.orderId)
          expect(wire.status).toBe(200)
          expect(wire.body.data).toMatchObject({
            "terminal$id": merchant.terminalId,
            referenceId: "SVC-AB12CD34EF",
            orderLines: [{
              name: "Harbour Cruise 10:00",
              quantity: 1,
              amount: { regular: 99800, total: 99800, currency: "578" }
            }],
            totalOrderAmount: { total: 99800, currency: "578", tax: [{ amount: 10693, percentage: 12, type: "VAT" }] },
            controlFunctions: {
              initiatePaymentsOptions: { paymentMethod: "CARD" },
              serviceProviders: [{ serviceProviderId: "svc-partner-1", amount: { percentage: "5" } }]
            }
          })
        }))

      it.effect("an order made at the terminal without a reference (its line's name null) reads, with referenceId null", () =>
        Effect.gen(function*() {
          const { sandbox, merchant, account, pp } = yield* merchantWith("No Reference Tours")
          const made = yield* sandbox.createPaidOrder({ merchantId: merchant.id, amountMinor: 45000, currency: "NOK" })
          const raw = yield* rawOrder(account, merchant, made.orderId)
          expect(raw.body.data.orderLines[0].name).toBeNull()
          expect(raw.body.data.referenceId).toBeNull()
          expect(yield* pp.orderStatus(account, made.orderId)).toMatchObject({
            referenceId: null,
            state: "paid",
            paid: true,
            amountMinor: 45000,
            currency: "NOK",
            merchantId: merchant.id
          })
        }))

      it.effect("currencies: EUR and ISK convert to their numeric codes; an unknown one is refused before anything is sent", () =>
        Effect.gen(function*() {
          const { sandbox, merchant, account, pp } = yield* merchantWith("Currency Tours")
          const eur = yield* pp.createOrder(account, {
            terminalId: merchant.terminalId!,
            referenceId: "SVC-EUR0000001",
            amountMinor: 4500,
            currency: "eur",
            description: "Tram",
            idempotencyReference: "eur-1"
          })
          const isk = yield* pp.createOrder(account, {
            terminalId: merchant.terminalId!,
            referenceId: "SVC-ISK0000001",
            amountMinor: 12990,
            currency: "ISK",
            description: "Whales",
            idempotencyReference: "isk-1"
          })
          expect((yield* rawOrder(account, merchant, eur.orderId)).body.data.totalOrderAmount.currency).toBe("978")
          expect((yield* rawOrder(account, merchant, isk.orderId)).body.data.totalOrderAmount.currency).toBe("352")
          expect((yield* pp.orderStatus(account, eur.orderId)).currency).toBe("EUR")
          expect(yield* pp.orderStatus(account, isk.orderId)).toMatchObject({ currency: "ISK", amountMinor: 12990 })
          yield* sandbox.requests.clear
          const unknown = yield* failureOf(pp.createOrder(account, {
            terminalId: merchant.terminalId!,
            referenceId: "SVC-XTS0000001",
            amountMinor: 100,
            currency: "XTS",
            description: "?",
            idempotencyReference: "xts-1"
          }))
          expect(unknown).toMatchObject({ _tag: "PaymentProviderRejected", reason: "invalid" })
          const zero = yield* failureOf(pp.createOrder(account, {
            terminalId: merchant.terminalId!,
            referenceId: "SVC-ZERO000001",
            amountMinor: 0,
            currency: "NOK",
            description: "?",
            idempotencyReference: "zero-1"
          }))
          expect(zero.reason).toBe("invalid")
          expect(yield* sandbox.requests.count()).toBe(0)
          const foreignTerminal = yield* failureOf(pp.createOrder(account, {
            terminalId: "0000000000000000" + "04",
            referenceId: "SVC-TERM000001",
            amountMinor: 100,
            currency: "NOK",
            description: "?",
            idempotencyReference: "t-1"
          }))
          expect(foreignTerminal).toMatchObject({ _tag: "PaymentProviderRejected", reason: "terminal_not_found" })
        }))

      it.effect("creating an order again with the same reference answers the same order; the reference with another request is a conflict", () =>
        Effect.gen(function*() {
          const { sandbox, merchant, account, pp } = yield* merchantWith("Keyed Orders AS")
          const order = {
            terminalId: merchant.terminalId!,
            referenceId: "SVC-KEYED00001",
            amountMinor: 25000,
            currency: "NOK",
            description: "Kayak",
            idempotencyReference: "order-key-1"
          }
          const first = yield* pp.createOrder(account, order)
          const again = yield* pp.createOrder(account, order)
          expect(again).toEqual(first)
          const conflict = yield* failureOf(pp.createOrder(account, { ...order, amountMinor: 25100 }))
          expect(conflict).toMatchObject({ _tag: "PaymentProviderRejected", reason: "idempotency_conflict" })
          expect(yield* sandbox.requests.count({ method: "POST", path: "/orders", merchantId: merchant.id })).toBe(3)
          // One order exists: paying it once is all there is.
          yield* sandbox.payOrder(first.orderId)
          expect((yield* pp.orderStatus(account, first.orderId)).paidMinor).toBe(25000)
        }))

      it.effect("a declined card leaves the order payable; an unknown order or another merchant's is not found", () =>
        Effect.gen(function*() {
          const { sandbox, merchant, account, pp } = yield* merchantWith("Declined Tours")
          const sale = yield* sandbox.createPaidOrder({
            merchantId: merchant.id,
            amountMinor: 30000,
            currency: "NOK",
            referenceId: "SVC-DECLINE001",
            pay: false
          })
          const declined = yield* sandbox.payOrder(sale.orderId, { declined: true })
          expect(declined.status).toBe("PAYMENT_FAILED")
          const after = yield* pp.orderStatus(account, sale.orderId)
          expect(after).toMatchObject({ state: "pending", paid: false })
          expect(after.payments[0]).toMatchObject({ status: "failed", failureReason: "DECLINED" })
          yield* sandbox.payOrder(sale.orderId)
          expect((yield* pp.orderStatus(account, sale.orderId)).paid).toBe(true)

          expect(yield* failureOf(pp.orderStatus(account, "ffffffffffffffff0b"))).toMatchObject({
            _tag: "PaymentProviderRejected",
            reason: "not_found"
          })
          // A second merchant under the same partner credentials does not see the first one's orders.
          const sibling = yield* sandbox.createMerchant({ name: "Sibling Tours", partnerId: merchant.partnerId })
          expect(yield* failureOf(pp.orderStatus(sandbox.account(sibling), sale.orderId))).toMatchObject({
            reason: "not_found"
          })
        }))
    })

    describe("refunds", () => {
      it.effect("a full refund is a return order linked to the purchase: completed at once, the purchase stays paid", () =>
        Effect.gen(function*() {
          const { sandbox, merchant, account, pp } = yield* merchantWith("Refund Tours")
          const sale = yield* paidSale(merchant, "SVC-REFUND0001")
          const refund = yield* pp.refund(account, {
            purchaseOrderId: sale.orderId,
            amountMinor: 49900,
            currency: "NOK",
            idempotencyReference: "refund-1"
          })
          expect(refund).toEqual({
            refundOrderId: expect.any(String),
            paymentId: expect.any(String),
            purchaseOrderId: sale.orderId,
            state: "completed",
            requestedMinor: 49900,
            refundedMinor: 49900,
            currency: "NOK"
          })
          expect(yield* pp.refundStatus(account, refund.refundOrderId)).toEqual(refund)
          const asOrder = yield* pp.orderStatus(account, refund.refundOrderId)
          expect(asOrder).toMatchObject({
            type: "return",
            purchaseOrderId: sale.orderId,
            referenceId: "refund-1",
            paidMinor: 49900,
            paid: true
          })
          expect(asOrder.transactions.map((t) => [t.type, t.amountMinor])).toEqual([["return", 49900]])
          // On the wire: negative quantity and totals, CARD_NP with the purchase's payment.
          const wire = yield* rawOrder(account, merchant, refund.refundOrderId)
          expect(wire.body.data).toMatchObject({
            type: "return",
            purchaseOrderId: sale.orderId,
            orderLines: [{
              quantity: -1,
              purchaseOrderId: sale.orderId,
              amount: { regular: 49900, total: -49900, currency: "578" }
            }],
            totalOrderAmount: { total: -49900, currency: "578" },
            controlFunctions: {
              initiatePaymentsOptions: {
                paymentMethod: "CARD_NP",
                refundProcessingParams: { purchasePaymentId: sale.paymentId }
              }
            }
          })
          expect(yield* sandbox.refundsOf(sale.orderId)).toEqual([
            {
              orderId: refund.refundOrderId,
              referenceId: "refund-1",
              status: "PAYMENT_COMPLETED",
              requestedMinor: 49900,
              refundedMinor: 49900
            }
          ])
          expect((yield* pp.orderStatus(account, sale.orderId)).paid).toBe(true)
          // Nothing is left to refund: a new refund (another reference) is refused.
          expect(
            yield* failureOf(
              pp.refund(account, {
                purchaseOrderId: sale.orderId,
                amountMinor: 1,
                currency: "NOK",
                idempotencyReference: "refund-2"
              })
            )
          )
            .toMatchObject({ _tag: "PaymentProviderRejected", reason: "refund_exceeds_paid" })
        }))

      it.effect("the same reference refunds once: a repeat answers the same refund, another amount under it is a conflict", () =>
        Effect.gen(function*() {
          const { sandbox, merchant, account, pp } = yield* merchantWith("Repeat Refund AS")
          const sale = yield* paidSale(merchant, "SVC-REPEAT0001")
          const request = {
            purchaseOrderId: sale.orderId,
            amountMinor: 49900,
            currency: "NOK",
            idempotencyReference: "cancel:booking-42"
          }
          const first = yield* pp.refund(account, request)
          const second = yield* pp.refund(account, request)
          expect(second).toEqual(first)
          expect(yield* failureOf(pp.refund(account, { ...request, amountMinor: 100 })))
            .toMatchObject({ _tag: "PaymentProviderRejected", reason: "idempotency_conflict" })
          expect((yield* sandbox.refundsOf(sale.orderId)).length).toBe(1)
        }))

      it.effect("a lost answer (applied, then the connection dropped): Unavailable, and the retry with the same reference does not refund twice", () =>
        withSwitchesReset(Effect.gen(function*() {
          const { sandbox, merchant, account, pp } = yield* merchantWith("Lost Answer Tours")
          const sale = yield* paidSale(merchant, "SVC-LOST000001")
          const request = {
            purchaseOrderId: sale.orderId,
            amountMinor: 49900,
            currency: "NOK",
            idempotencyReference: "refund:lost-1"
          }
          yield* sandbox.faults.set({ loseAnswer: "drop" }, { merchantId: merchant.id })
          yield* sandbox.requests.clear
          const lost = yield* failureOf(pp.refund(account, request))
          expect(lost).toMatchObject({ _tag: "PaymentProviderUnavailable", reason: "connection", operation: "refund" })
          // The provider did refund; the adapter sent the refund once and did not retry it.
          expect(yield* sandbox.refundsOf(sale.orderId)).toMatchObject([{
            status: "PAYMENT_COMPLETED",
            refundedMinor: 49900
          }])
          expect(yield* sandbox.requests.count({ method: "POST", path: "/orders" })).toBe(1)

          yield* sandbox.faults.set({ loseAnswer: "no" }, { merchantId: merchant.id })
          const retried = yield* pp.refund(account, request)
          expect(retried).toMatchObject({ state: "completed", refundedMinor: 49900 })
          const refunds = yield* sandbox.refundsOf(sale.orderId)
          expect(refunds).toHaveLength(1)
          expect(retried.refundOrderId).toBe(refunds[0]!.orderId)
          expect(yield* sandbox.requests.count({ method: "POST", path: "/orders" })).toBe(2)
        })))

      it.effect("a lost answer that hangs: Unavailable timeout after one attempt's timeout, the retry finds the one refund", () =>
        withSwitchesReset(Effect.gen(function*() {
          const { sandbox, merchant, account, pp } = yield* merchantWith("Hung Answer Tours")
          const sale = yield* paidSale(merchant, "SVC-HUNG000001")
          const request = {
            purchaseOrderId: sale.orderId,
            amountMinor: 20000,
            currency: "NOK",
            idempotencyReference: "refund:hung-1"
          }
          yield* sandbox.faults.set({ loseAnswer: "hang" }, { merchantId: merchant.id })
          const hung = yield* elapsed(failureOf(pp.refund(account, request)))
          expect(hung.result).toMatchObject({ _tag: "PaymentProviderUnavailable", reason: "timeout" })
          expect(hung.ms).toBeLessThan(2_500) // one attempt of 1 s, never three
          yield* sandbox.faults.reset
          const retried = yield* pp.refund(account, request)
          expect(retried).toMatchObject({ state: "completed", refundedMinor: 20000 })
          expect(yield* sandbox.refundsOf(sale.orderId)).toHaveLength(1)
          // What is left is still refundable, once.
          expect(
            (yield* pp.refund(account, { ...request, amountMinor: 29900, idempotencyReference: "refund:hung-2" })).state
          ).toBe("completed")
          expect(
            yield* failureOf(pp.refund(account, { ...request, amountMinor: 1, idempotencyReference: "refund:hung-3" }))
          )
            .toMatchObject({ reason: "refund_exceeds_paid" })
        })))

      it.effect("a partial refund: the provider returns only part, the status says so, the rest can be refunded after", () =>
        withSwitchesReset(Effect.gen(function*() {
          const { sandbox, merchant, account, pp } = yield* merchantWith("Partial Refund AS")
          const sale = yield* paidSale(merchant, "SVC-PARTIAL001")
          yield* sandbox.faults.set({ partialRefundRatio: 0.4 }, { merchantId: merchant.id })
          const partial = yield* pp.refund(account, {
            purchaseOrderId: sale.orderId,
            amountMinor: 49900,
            currency: "NOK",
            idempotencyReference: "partial-1"
          })
          expect(partial).toMatchObject({ state: "partial", requestedMinor: 49900, refundedMinor: 19960 })
          const asOrder = yield* pp.orderStatus(account, partial.refundOrderId)
          expect(asOrder).toMatchObject({
            state: "partially_paid",
            providerStatus: "PARTIAL_PAYMENT_COMPLETED",
            paidMinor: 19960,
            paid: false
          })
          expect(yield* pp.refundStatus(account, partial.refundOrderId)).toEqual(partial)
          yield* sandbox.faults.set({ partialRefundRatio: null }, { merchantId: merchant.id })
          const rest = yield* pp.refund(account, {
            purchaseOrderId: sale.orderId,
            amountMinor: 49900 - 19960,
            currency: "NOK",
            idempotencyReference: "partial-2"
          })
          expect(rest).toMatchObject({ state: "completed", refundedMinor: 29940 })
          expect((yield* sandbox.refundsOf(sale.orderId)).reduce((sum, r) => sum + r.refundedMinor, 0)).toBe(49900)
        })))

      it.effect("slow settlement: a refund stays pending for the delay (sandbox time), or until the sandbox is told", () =>
        withSwitchesReset(Effect.gen(function*() {
          const { sandbox, merchant, account, pp } = yield* merchantWith("Slow Settlement AS")
          const sale = yield* paidSale(merchant, "SVC-SLOW000001", 60000)
          yield* sandbox.faults.set({ settlement: "delayed", settlementDelayMs: 3_600_000 }, {
            merchantId: merchant.id
          })
          const delayed = yield* pp.refund(account, {
            purchaseOrderId: sale.orderId,
            amountMinor: 20000,
            currency: "NOK",
            idempotencyReference: "slow-1"
          })
          expect(delayed).toMatchObject({ state: "pending", refundedMinor: 0 })
          expect(yield* pp.orderStatus(account, delayed.refundOrderId)).toMatchObject({
            state: "processed",
            providerStatus: "PAYMENT_PROCESSED",
            paidMinor: 0
          })
          // A settling refund counts against what is left: 40000 more is too much now.
          expect(
            yield* failureOf(
              pp.refund(account, {
                purchaseOrderId: sale.orderId,
                amountMinor: 40001,
                currency: "NOK",
                idempotencyReference: "slow-x"
              })
            )
          )
            .toMatchObject({ reason: "refund_exceeds_paid" })
          yield* sandbox.clock.advance("59 minutes")
          expect((yield* pp.refundStatus(account, delayed.refundOrderId)).state).toBe("pending")
          yield* sandbox.clock.advance("2 minutes")
          expect(yield* pp.refundStatus(account, delayed.refundOrderId)).toMatchObject({
            state: "completed",
            refundedMinor: 20000
          })

          yield* sandbox.faults.set({ settlement: "manual" }, { merchantId: merchant.id })
          const manual = yield* pp.refund(account, {
            purchaseOrderId: sale.orderId,
            amountMinor: 40000,
            currency: "NOK",
            idempotencyReference: "slow-2"
          })
          expect(manual.state).toBe("pending")
          yield* sandbox.clock.advance("3 days")
          expect((yield* pp.refundStatus(account, manual.refundOrderId)).state).toBe("pending")
          expect(yield* sandbox.settle({ orderId: manual.refundOrderId })).toBe(1)
          expect(yield* pp.refundStatus(account, manual.refundOrderId)).toMatchObject({
            state: "completed",
            refundedMinor: 40000
          })
        })))

      it.effect("definite refusals: an unpaid purchase, another currency, more than was paid, a refund of a refund", () =>
        Effect.gen(function*() {
          const { sandbox, merchant, account, pp } = yield* merchantWith("Refusing Refunds AS")
          const unpaid = yield* sandbox.createPaidOrder({
            merchantId: merchant.id,
            amountMinor: 10000,
            currency: "NOK",
            referenceId: "SVC-UNPAID0001",
            pay: false
          })
          expect(
            yield* failureOf(
              pp.refund(account, {
                purchaseOrderId: unpaid.orderId,
                amountMinor: 10000,
                currency: "NOK",
                idempotencyReference: "u-1"
              })
            )
          )
            .toMatchObject({ _tag: "PaymentProviderRejected", reason: "not_paid" })
          const sale = yield* paidSale(merchant, "SVC-REFUSE0001", 10000)
          expect(
            yield* failureOf(
              pp.refund(account, {
                purchaseOrderId: sale.orderId,
                amountMinor: 10000,
                currency: "EUR",
                idempotencyReference: "u-2"
              })
            )
          )
            .toMatchObject({ reason: "currency_mismatch" })
          expect(
            yield* failureOf(
              pp.refund(account, {
                purchaseOrderId: sale.orderId,
                amountMinor: 10001,
                currency: "NOK",
                idempotencyReference: "u-3"
              })
            )
          )
            .toMatchObject({ reason: "refund_exceeds_paid" })
          const refund = yield* pp.refund(account, {
            purchaseOrderId: sale.orderId,
            amountMinor: 5000,
            currency: "NOK",
            idempotencyReference: "u-4"
          })
          expect(
            yield* failureOf(
              pp.refund(account, {
                purchaseOrderId: refund.refundOrderId,
                amountMinor: 10,
                currency: "NOK",
                idempotencyReference: "u-5"
              })
            )
          )
            .toMatchObject({ reason: "invalid" })
          expect(
            yield* failureOf(
              pp.refund(account, {
                purchaseOrderId: "ffffffffffffffff0b",
                amountMinor: 10,
                currency: "NOK",
                idempotencyReference: "u-6"
              })
            )
          )
            .toMatchObject({ reason: "not_found" })
          expect(yield* failureOf(pp.refundStatus(account, sale.orderId))).toMatchObject({ reason: "not_found" })
          expect((yield* sandbox.refundsOf(sale.orderId)).map((r) => r.requestedMinor)).toEqual([5000])
        }))
    })

    describe("void or refund around 23:00 UTC", () => {
      it.effect("voidDeadline is 23:00 UTC of the payment's UTC day", () =>
        Effect.sync(() => {
          expect(voidDeadline(new Date("2030-03-01T08:15:00Z")).toISOString()).toBe("2030-03-01T23:00:00.000Z")
          expect(canVoid(new Date("2030-03-01T08:15:00Z"), new Date("2030-03-01T22:59:59Z"))).toBe(true)
          expect(canVoid(new Date("2030-03-01T08:15:00Z"), new Date("2030-03-01T23:00:00Z"))).toBe(false)
          expect(canVoid(new Date("2030-03-01T23:30:00Z"), new Date("2030-03-01T23:31:00Z"))).toBe(false)
        }))

      it.effect("paid at 22:30 UTC: voidable until 23:00; the void is idempotent, the money never moved, nothing is left to refund", () =>
        withSwitchesReset(Effect.gen(function*() {
          const { sandbox, merchant, account, pp } = yield* merchantWith("Same Day Void AS")
          yield* sandbox.clock.set(new Date("2030-03-01T22:30:00Z"))
          const sale = yield* paidSale(merchant, "SVC-VOID000001")
          yield* sandbox.clock.set(new Date("2030-03-01T22:59:00Z"))
          const voided = yield* pp.voidPayment(account, { paymentId: sale.paymentId!, idempotencyReference: "void-1" })
          expect(voided).toEqual({ paymentId: sale.paymentId, state: "voided" })
          expect(yield* pp.voidPayment(account, { paymentId: sale.paymentId!, idempotencyReference: "void-1" }))
            .toEqual(voided)
          // Another reference finds it voided too: a void cannot happen twice.
          expect(yield* pp.voidPayment(account, { paymentId: sale.paymentId!, idempotencyReference: "void-2" }))
            .toEqual(voided)
          const status = yield* pp.orderStatus(account, sale.orderId)
          expect(status).toMatchObject({ state: "paid", voided: true, paid: false, paidMinor: 0 })
          expect(status.transactions[0]!.voided).toBe(true)
          expect(
            yield* failureOf(
              pp.refund(account, {
                purchaseOrderId: sale.orderId,
                amountMinor: 49900,
                currency: "NOK",
                idempotencyReference: "after-void"
              })
            )
          )
            .toMatchObject({ reason: "not_paid" })
        })))

      it.effect("paid at 22:30 UTC, after 23:00 the void is refused (cannot_void) and a refund returns the money", () =>
        withSwitchesReset(Effect.gen(function*() {
          const { sandbox, merchant, account, pp } = yield* merchantWith("Late Void AS")
          yield* sandbox.clock.set(new Date("2030-03-01T22:30:00Z"))
          const sale = yield* paidSale(merchant, "SVC-LATEVOID01")
          yield* sandbox.clock.set(new Date("2030-03-01T23:00:30Z"))
          expect(
            yield* failureOf(pp.voidPayment(account, { paymentId: sale.paymentId!, idempotencyReference: "late-void" }))
          )
            .toMatchObject({ _tag: "PaymentProviderRejected", reason: "cannot_void" })
          expect((yield* pp.orderStatus(account, sale.orderId)).voided).toBe(false)
          expect(
            (yield* pp.refund(account, {
              purchaseOrderId: sale.orderId,
              amountMinor: 49900,
              currency: "NOK",
              idempotencyReference: "late-refund"
            })).state
          )
            .toBe("completed")
          // Once refunded, the next day's attempt to void is refused as well.
          yield* sandbox.clock.set(new Date("2030-03-02T10:00:00Z"))
          const next = yield* paidSale(merchant, "SVC-LATEVOID02")
          yield* pp.refund(account, {
            purchaseOrderId: next.orderId,
            amountMinor: 100,
            currency: "NOK",
            idempotencyReference: "partly"
          })
          expect(
            yield* failureOf(
              pp.voidPayment(account, { paymentId: next.paymentId!, idempotencyReference: "void-refunded" })
            )
          )
            .toMatchObject({ reason: "cannot_void" })
        })))

      it.effect("a void that settles slowly is pending, then visible in the order's status once settled", () =>
        withSwitchesReset(Effect.gen(function*() {
          const { sandbox, merchant, account, pp } = yield* merchantWith("Slow Void AS")
          // Paid in the morning, so the same-day void window (until 23:00 UTC) is open whatever the real time.
          yield* sandbox.clock.set(new Date("2030-03-02T10:00:00Z"))
          const sale = yield* paidSale(merchant, "SVC-SLOWVOID01")
          yield* sandbox.faults.set({ settlement: "manual" }, { merchantId: merchant.id })
          expect(yield* pp.voidPayment(account, { paymentId: sale.paymentId!, idempotencyReference: "sv-1" }))
            .toEqual({ paymentId: sale.paymentId, state: "pending" })
          expect((yield* pp.orderStatus(account, sale.orderId)).voided).toBe(false)
          expect((yield* pp.voidPayment(account, { paymentId: sale.paymentId!, idempotencyReference: "sv-2" })).state)
            .toBe("pending")
          expect(yield* sandbox.settle({ paymentId: sale.paymentId! })).toBe(1)
          expect(yield* pp.orderStatus(account, sale.orderId)).toMatchObject({ voided: true, paid: false })
          expect((yield* pp.voidPayment(account, { paymentId: sale.paymentId!, idempotencyReference: "sv-3" })).state)
            .toBe("voided")
        })))

      it.effect("cancel stops a payment that has not completed; a completed one is refused (void or refund it)", () =>
        Effect.gen(function*() {
          const { sandbox, merchant, account, pp } = yield* merchantWith("Cancel Payment AS")
          const open = yield* pp.createOrder(account, {
            terminalId: merchant.terminalId!,
            referenceId: "SVC-CANCEL0001",
            amountMinor: 15000,
            currency: "NOK",
            description: "Bike",
            idempotencyReference: "c-order"
          })
          expect(yield* pp.cancelPayment(account, { paymentId: open.paymentId!, idempotencyReference: "c-1" }))
            .toEqual({ paymentId: open.paymentId, state: "cancelled" })
          expect(yield* pp.orderStatus(account, open.orderId)).toMatchObject({ state: "cancelled", paid: false })
          expect((yield* pp.cancelPayment(account, { paymentId: open.paymentId!, idempotencyReference: "c-2" })).state)
            .toBe("cancelled")
          const sale = yield* paidSale(merchant, "SVC-CANCEL0002")
          expect(
            yield* failureOf(pp.cancelPayment(account, { paymentId: sale.paymentId!, idempotencyReference: "c-3" }))
          )
            .toMatchObject({ _tag: "PaymentProviderRejected", reason: "already_completed" })
          expect((yield* pp.orderStatus(account, sale.orderId)).paid).toBe(true)
          expect(yield* sandbox.requests.count({ method: "DELETE" })).toBe(3)
        }))
    })

    describe("payment links", () => {
      it.effect("a link is a hosted page on the payment page terminal; the guest opens and pays it; the status says paid", () =>
        Effect.gen(function*() {
          const { sandbox, merchant, account, pp } = yield* merchantWith("Balance Link Tours")
          const expiresAt = new Date(Date.now() + 2 * 86_400_000)
          const request = {
            amountMinor: 35000,
            currency: "NOK",
            referenceId: "booking-77",
            description: "Balance, Fjord Safari 12 June",
            expiresAt,
            idempotencyReference: "link:booking-77"
          }
          const link = yield* pp.createPaymentLink(account, request)
          expect(link).toEqual({
            linkId: expect.any(String),
            url: expect.stringMatching(new RegExp(`^${sandbox.baseUrl}/pay/${link.linkId}\\?pi=`)),
            state: "open",
            amountMinor: 35000,
            currency: "NOK",
            expiresAt
          })
          expect(yield* pp.createPaymentLink(account, request)).toEqual(link) // same reference: same link
          const wire = yield* rawOrder(account, merchant, link.linkId)
          expect(wire.body.data).toMatchObject({
            "terminal$id": merchant.paymentPageTerminalId,
            controlFunctions: { online: { paymentPageValidFor: "2880m" } }
          })
          expect(wire.body.data.controlFunctions.initiatePaymentsOptions).toBeUndefined()
          const open = yield* pp.paymentLinkStatus(account, link.linkId)
          expect(open).toMatchObject({ state: "open", paidMinor: 0, paidAt: null, paymentId: null })
          expect(Math.abs(open.expiresAt!.getTime() - expiresAt.getTime())).toBeLessThan(60_000)

          // The guest's side: the page shows the amount; paying it is a form post to the same URL.
          const shown = yield* call(link.url.slice(sandbox.baseUrl.length), { baseUrl: sandbox.baseUrl })
          expect(shown.status).toBe(200)
          expect(shown.text).toContain("NOK")
          expect(shown.text).toContain("350.00")
          expect(shown.text).toContain("Balance Link Tours")
          const wrongToken = yield* call(`/pay/${link.linkId}?pi=guess`, { baseUrl: sandbox.baseUrl })
          expect(wrongToken.status).toBe(404)
          const paid = yield* Effect.promise(() =>
            fetch(link.url, {
              method: "POST",
              headers: { "content-type": "application/x-www-form-urlencoded" },
              body: "outcome=approved"
            })
          )
          expect(paid.status).toBe(200)
          const status = yield* pp.paymentLinkStatus(account, link.linkId)
          expect(status).toMatchObject({
            linkId: link.linkId,
            state: "paid",
            amountMinor: 35000,
            currency: "NOK",
            paidMinor: 35000,
            paymentId: expect.any(String)
          })
          expect(status.paidAt).toBeInstanceOf(Date)
          // A paid link is a paid purchase: it can be refunded like a desk sale.
          expect(
            (yield* pp.refund(account, {
              purchaseOrderId: link.linkId,
              amountMinor: 35000,
              currency: "NOK",
              idempotencyReference: "link-refund"
            })).state
          )
            .toBe("completed")
          // Paying twice is refused by the page.
          expect((yield* Effect.promise(() => fetch(link.url, { method: "POST", body: "outcome=approved" }))).status)
            .toBe(409)
        }))

      it.effect("an expired link cannot be paid and reads expired; a closed one reads cancelled; a paid one cannot be closed", () =>
        withSwitchesReset(Effect.gen(function*() {
          const { sandbox, account, pp } = yield* merchantWith("Expiring Links AS")
          const link = yield* pp.createPaymentLink(account, {
            amountMinor: 1000,
            currency: "NOK",
            referenceId: "b-1",
            description: "Balance",
            expiresAt: new Date(Date.now() + 10 * 60_000),
            idempotencyReference: "exp-1"
          })
          yield* sandbox.clock.advance("11 minutes")
          const refused = yield* call(link.url.slice(sandbox.baseUrl.length), {
            baseUrl: sandbox.baseUrl,
            method: "POST"
          })
          expect(refused.status).toBe(410)
          const later = yield* pp.paymentLinkStatus(account, link.linkId).pipe(
            Effect.withClock(shiftedClock(11 * 60_000))
          )
          expect(later).toMatchObject({ state: "expired", paidMinor: 0 })
          yield* sandbox.clock.reset

          const closing = yield* pp.createPaymentLink(account, {
            amountMinor: 2000,
            currency: "NOK",
            referenceId: "b-2",
            description: "Balance",
            idempotencyReference: "close-1"
          })
          expect((yield* pp.paymentLinkStatus(account, closing.linkId)).expiresAt).toBeInstanceOf(Date) // the provider's default validity
          yield* pp.cancelPaymentLink(account, { linkId: closing.linkId, idempotencyReference: "close-1:cancel" })
          yield* pp.cancelPaymentLink(account, { linkId: closing.linkId, idempotencyReference: "close-1:cancel-again" })
          expect((yield* pp.paymentLinkStatus(account, closing.linkId)).state).toBe("cancelled")
          expect((yield* Effect.either(sandbox.payLink(closing.url).pipe(Effect.sandbox)))._tag).toBe("Left")

          const paid = yield* pp.createPaymentLink(account, {
            amountMinor: 3000,
            currency: "NOK",
            referenceId: "b-3",
            description: "Balance",
            idempotencyReference: "paid-1"
          })
          yield* sandbox.payLink(paid.url)
          expect(
            yield* failureOf(
              pp.cancelPaymentLink(account, { linkId: paid.linkId, idempotencyReference: "paid-1:cancel" })
            )
          )
            .toMatchObject({ _tag: "PaymentProviderRejected", reason: "already_paid" })
        })))

      it.effect("an account without a payment page terminal, or a link already expired, is refused before anything is sent", () =>
        Effect.gen(function*() {
          const { sandbox, account, pp } = yield* merchantWith("No Page Tours")
          yield* sandbox.requests.clear
          expect(
            yield* failureOf(pp.createPaymentLink({ ...account, paymentPageTerminalId: null }, {
              amountMinor: 1000,
              currency: "NOK",
              referenceId: "b",
              description: "x",
              idempotencyReference: "np-1"
            }))
          ).toMatchObject({ _tag: "PaymentProviderRejected", reason: "invalid" })
          expect(
            yield* failureOf(pp.createPaymentLink(account, {
              amountMinor: 1000,
              currency: "NOK",
              referenceId: "b",
              description: "x",
              expiresAt: new Date(Date.now() - 1000),
              idempotencyReference: "np-2"
            }))
          ).toMatchObject({ reason: "invalid" })
          expect(yield* sandbox.requests.count()).toBe(0)
        }))
    })

    describe("failures", () => {
      it.effect("5xx: a read is retried then Unavailable; a refund is sent exactly once and nothing moved", () =>
        withSwitchesReset(Effect.gen(function*() {
          const { sandbox, merchant, account, pp } = yield* merchantWith("Flaky Provider AS")
          const sale = yield* paidSale(merchant, "SVC-FLAKY00001")
          yield* sandbox.faults.set({ errorRate: 1, errorStatus: 503 }, { merchantId: merchant.id })
          yield* sandbox.requests.clear
          const read = yield* failureOf(pp.orderStatus(account, sale.orderId))
          expect(read).toMatchObject({ _tag: "PaymentProviderUnavailable", reason: "http_5xx" })
          expect(yield* sandbox.requests.count({ method: "GET", path: `/orders/${sale.orderId}` })).toBe(3)

          // The refund's first read of the purchase fails after its retries: no refund is sent at all.
          yield* sandbox.requests.clear
          expect(
            yield* failureOf(
              pp.refund(account, {
                purchaseOrderId: sale.orderId,
                amountMinor: 49900,
                currency: "NOK",
                idempotencyReference: "flaky-1"
              })
            )
          )
            .toMatchObject({ reason: "http_5xx" })
          expect(yield* sandbox.requests.count({ method: "POST" })).toBe(0)

          // Money-moving calls: one attempt each.
          yield* sandbox.faults.set({ errorStatus: 500 }, { merchantId: merchant.id })
          yield* sandbox.requests.clear
          expect(
            yield* failureOf(
              pp.voidPayment(account, { paymentId: sale.paymentId!, idempotencyReference: "flaky-void" })
            )
          )
            .toMatchObject({ _tag: "PaymentProviderUnavailable", reason: "http_5xx", operation: "voidPayment" })
          expect(
            yield* failureOf(pp.createOrder(account, {
              terminalId: merchant.terminalId!,
              referenceId: "SVC-FLAKY00002",
              amountMinor: 100,
              currency: "NOK",
              description: "x",
              idempotencyReference: "flaky-order"
            }))
          ).toMatchObject({ reason: "http_5xx" })
          expect(
            yield* failureOf(pp.createPaymentLink(account, {
              amountMinor: 100,
              currency: "NOK",
              referenceId: "b",
              description: "x",
              idempotencyReference: "flaky-link"
            }))
          ).toMatchObject({ reason: "http_5xx" })
          expect(yield* sandbox.requests.count({ method: "PUT" })).toBe(1)
          expect(yield* sandbox.requests.count({ method: "POST" })).toBe(2)

          yield* sandbox.faults.reset
          expect(yield* pp.orderStatus(account, sale.orderId)).toMatchObject({ paid: true, voided: false })
          expect(yield* sandbox.refundsOf(sale.orderId)).toEqual([])
        })))

      it.effect("a retry after a transient error succeeds (errors on only some calls)", () =>
        withSwitchesReset(Effect.gen(function*() {
          const { sandbox, merchant, account, pp } = yield* merchantWith("Wobbly Provider AS")
          const sale = yield* paidSale(merchant, "SVC-WOBBLY0001")
          yield* sandbox.faults.set({ errorRate: 0.5 }, { merchantId: merchant.id })
          yield* sandbox.requests.clear
          const results = yield* Effect.forEach(
            Array.from({ length: 10 }),
            () => Effect.either(pp.orderStatus(account, sale.orderId))
          )
          expect(
            results.filter((r) => r._tag === "Right").length
          ).toBeGreaterThan(0)
          expect(yield* sandbox.requests.count({ merchantId: merchant.id })).toBeGreaterThan(20)
        })))

      it.effect("a provider that hangs: a read times out after its retries, a money-moving call after one attempt", () =>
        withSwitchesReset(Effect.gen(function*() {
          const { sandbox, merchant, account, pp } = yield* merchantWith("Hanging Provider AS")
          const sale = yield* paidSale(merchant, "SVC-HANG000001")
          yield* sandbox.faults.set({ hang: true }, { merchantId: merchant.id })
          yield* sandbox.requests.clear
          const read = yield* elapsed(failureOf(pp.orderStatus(account, sale.orderId)))
          expect(read.result).toMatchObject({ _tag: "PaymentProviderUnavailable", reason: "timeout" })
          expect(read.ms).toBeGreaterThanOrEqual(2_900)
          expect(read.ms).toBeLessThan(8_000)
          expect(yield* sandbox.requests.count({ path: `/orders/${sale.orderId}` })).toBe(3)
          const write = yield* elapsed(
            failureOf(pp.cancelPayment(account, { paymentId: sale.paymentId!, idempotencyReference: "hang-cancel" }))
          )
          expect(write.result.reason).toBe("timeout")
          expect(write.ms).toBeLessThan(2_500)
          expect(yield* sandbox.requests.count({ method: "DELETE" })).toBe(1)
        })))

      it.effect("a provider that is down or not there: Unavailable connection; other merchants are unaffected", () =>
        withSwitchesReset(Effect.gen(function*() {
          const { sandbox, merchant, account, pp } = yield* merchantWith("Down Provider AS")
          const healthy = yield* merchantWith("Healthy Provider AS")
          const sale = yield* paidSale(merchant, "SVC-DOWN000001")
          const other = yield* paidSale(healthy.merchant, "SVC-DOWN000002")
          yield* sandbox.faults.set({ down: true }, { merchantId: merchant.id })
          expect(yield* failureOf(pp.orderStatus(account, sale.orderId))).toMatchObject({
            _tag: "PaymentProviderUnavailable",
            reason: "connection"
          })
          expect((yield* pp.orderStatus(healthy.account, other.orderId)).paid).toBe(true)
          const port = yield* Effect.promise(() => freePort())
          expect(yield* failureOf(pp.orderStatus({ ...account, baseUrl: `http://127.0.0.1:${port}` }, sale.orderId)))
            .toMatchObject({ reason: "connection" })
          expect(yield* failureOf(pp.orderStatus({ ...account, baseUrl: "not a url" }, sale.orderId))).toMatchObject({
            reason: "connection"
          })
        })))

      it.effect("an answer that is not Surfboard JSON is Unavailable bad_response, not retried", () =>
        Effect.scoped(Effect.gen(function*() {
          const { account, pp } = yield* merchantWith("Odd Proxy AS")
          const portal = yield* captivePortal
          const baseUrl = portal.baseUrl
          const error = yield* failureOf(pp.paymentLinkStatus({ ...account, baseUrl }, "x"))
          expect(error).toMatchObject({ _tag: "PaymentProviderUnavailable", reason: "bad_response" })
          expect(portal.hits()).toBe(1) // the order's read, once: not retried, and the status never asked
        })))
    })
  }
)
