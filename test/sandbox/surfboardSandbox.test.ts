/**
 * The Surfboard sandbox itself, over raw HTTP: its authentication, Surfboard's envelope and
 * validation, Idempotency-Key replay and conflicts (also under concurrency), the hosted pay page,
 * its admin endpoints (switches, request log, clock, seeding, paying, settling) and its schema being
 * created idempotently.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { PaymentProvider } from "../../src/ports/PaymentProvider.js"
import {
  NO_SWITCHES,
  SANDBOX_TABLES,
  type SandboxMerchant,
  startSandbox,
  SurfboardSandbox
} from "../../src/sandbox/surfboard/index.js"
import { call } from "../support/http.js"
import { surfboardEnv } from "./surfboardEnv.js"

const headersOf = (merchant: SandboxMerchant) => ({
  "API-KEY": merchant.apiKey,
  "API-SECRET": merchant.apiSecret,
  "MERCHANT-ID": merchant.id
})

/** A purchase body as a desk client sends it. */
const purchase = (merchant: SandboxMerchant, referenceId: string, total = 49900) => ({
  "terminal$id": merchant.terminalId,
  referenceId,
  orderLines: [{ id: "1", name: "Harbour Cruise", quantity: 1, amount: { regular: total, total, currency: "578" } }],
  totalOrderAmount: {
    regular: total,
    total,
    currency: "578",
    tax: [{ amount: Math.round(total * 0.12 / 1.12), percentage: 12, type: "VAT" }]
  },
  controlFunctions: { initiatePaymentsOptions: { paymentMethod: "CARD" } }
})

const refundBody = (merchant: SandboxMerchant, purchaseOrderId: string, amount: number, referenceId: string) => ({
  "terminal$id": merchant.terminalId,
  referenceId,
  type: "return",
  orderLines: [{
    id: "1",
    name: "Refund",
    quantity: -1,
    purchaseOrderId,
    amount: { regular: amount, total: -amount, currency: "578" }
  }],
  totalOrderAmount: { regular: amount, total: -amount, currency: "578" },
  controlFunctions: { initiatePaymentsOptions: { paymentMethod: "CARD_NP" } }
})

layer(surfboardEnv(), { excludeTestServices: true, timeout: 180_000 })("Surfboard sandbox", (it) => {
  describe("authentication", () => {
    it.effect("401 without the three headers or with a wrong key or secret, 403 for another partner's merchant, never echoing the secret", () =>
      Effect.gen(function*() {
        const sandbox = yield* SurfboardSandbox
        const merchant = yield* sandbox.createMerchant({ name: "Auth Tours" })
        const stranger = yield* sandbox.createMerchant({ name: "Stranger Tours" })
        const base = sandbox.baseUrl
        const sale = yield* sandbox.createPaidOrder({
          merchantId: merchant.id,
          amountMinor: 1000,
          currency: "NOK",
          referenceId: "SVC-AUTH000001"
        })
        const path = `/orders/${sale.orderId}/status`
        const ok = yield* call(path, { baseUrl: base, headers: headersOf(merchant) })
        expect(ok.status).toBe(200)
        expect(ok.body).toMatchObject({
          status: "SUCCESS",
          data: { orderStatus: "PAYMENT_COMPLETED" },
          message: expect.any(String)
        })

        const missing = yield* call(path, {
          baseUrl: base,
          headers: { "API-KEY": merchant.apiKey, "MERCHANT-ID": merchant.id }
        })
        expect(missing.status).toBe(401)
        expect(missing.body).toMatchObject({
          status: "ERROR",
          errorCode: "UNAUTHORIZED",
          message: expect.stringContaining("API-SECRET")
        })
        const guessed = "sbx_secret_guessed-by-someone"
        const wrongSecret = yield* call(path, {
          baseUrl: base,
          headers: { ...headersOf(merchant), "API-SECRET": guessed }
        })
        expect(wrongSecret.status).toBe(401)
        expect(wrongSecret.text).not.toContain(guessed)
        const wrongKey = yield* call(path, { baseUrl: base, headers: { ...headersOf(merchant), "API-KEY": "nobody" } })
        expect(wrongKey.status).toBe(401)
        const otherPartner = yield* call(path, {
          baseUrl: base,
          headers: { ...headersOf(stranger), "MERCHANT-ID": merchant.id }
        })
        expect(otherPartner.status).toBe(403)
        expect(otherPartner.body.errorCode).toBe("FORBIDDEN")
        // The stranger's own credentials are fine, but the order is not theirs.
        expect((yield* call(path, { baseUrl: base, headers: headersOf(stranger) })).status).toBe(404)
      }))
  })

  describe("orders", () => {
    it.effect("validates as Surfboard would: numeric currency, totals matching the lines, a return linked to a paid purchase", () =>
      Effect.gen(function*() {
        const sandbox = yield* SurfboardSandbox
        const merchant = yield* sandbox.createMerchant({ name: "Validating Tours" })
        const post = (body: unknown) =>
          call("/orders", { baseUrl: sandbox.baseUrl, method: "POST", headers: headersOf(merchant), body })
        const good = purchase(merchant, "SVC-VALID00001")
        expect((yield* post(good)).status).toBe(200)
        const alpha = yield* post({ ...good, totalOrderAmount: { ...good.totalOrderAmount, currency: "NOK" } })
        expect(alpha.status).toBe(400)
        expect(alpha.body.message).toContain("numeric ISO 4217")
        const mismatch = yield* post({
          ...good,
          totalOrderAmount: { ...good.totalOrderAmount, total: 50000, regular: 50000 }
        })
        expect(mismatch.status).toBe(400)
        expect(mismatch.body.message).toContain("order lines")
        const fractions = yield* post(purchase(merchant, "SVC-VALID00002", 499.5))
        expect(fractions.status).toBe(400)
        const notJson = yield* call("/orders", {
          baseUrl: sandbox.baseUrl,
          method: "POST",
          headers: { ...headersOf(merchant), "content-type": "application/json" }
        })
        expect(notJson.status).toBe(400)
        const noTerminal = yield* post({ ...good, "terminal$id": "missing" })
        expect(noTerminal.body).toMatchObject({ status: "ERROR", errorCode: "TERMINAL_NOT_FOUND" })
        const unlinked = refundBody(merchant, "x", 100, "r")
        const noPurchase = yield* post({
          ...unlinked,
          orderLines: [{ ...unlinked.orderLines[0], purchaseOrderId: undefined }]
        })
        expect(noPurchase.status).toBe(400)
        const unpaid = (yield* post(purchase(merchant, "SVC-VALID00003"))).body.data.orderId
        expect((yield* post(refundBody(merchant, unpaid, 100, "r-unpaid"))).body.errorCode).toBe("NOT_PAID")
      }))

    it.effect("an Idempotency-Key replays the same answer for the same request (key order aside), refuses another request with 422, and is per merchant", () =>
      Effect.gen(function*() {
        const sandbox = yield* SurfboardSandbox
        const merchant = yield* sandbox.createMerchant({ name: "Idempotent Tours" })
        const other = yield* sandbox.createMerchant({ name: "Other Idempotent Tours" })
        const post = (m: SandboxMerchant, body: unknown, key?: string) =>
          call("/orders", {
            baseUrl: sandbox.baseUrl,
            method: "POST",
            headers: { ...headersOf(m), ...(key ? { "Idempotency-Key": key } : {}) },
            body
          })
        const body = purchase(merchant, "SVC-IDEM000001")
        const first = yield* post(merchant, body, "key-1")
        const reordered = Object.fromEntries(Object.entries(body).reverse())
        const again = yield* post(merchant, reordered, "key-1")
        expect(again.status).toBe(200)
        expect(again.body).toEqual(first.body)
        const different = yield* post(merchant, purchase(merchant, "SVC-IDEM000001", 100), "key-1")
        expect(different.status).toBe(422)
        expect(different.body.errorCode).toBe("IDEMPOTENCY_KEY_REUSED")
        // Another merchant's key space is its own.
        const elsewhere = yield* post(other, purchase(other, "SVC-IDEM000002"), "key-1")
        expect(elsewhere.status).toBe(200)
        expect(elsewhere.body.data.orderId).not.toBe(first.body.data.orderId)
        // Without a key every call is a new order.
        const a = yield* post(merchant, body)
        const b = yield* post(merchant, body)
        expect(a.body.data.orderId).not.toBe(b.body.data.orderId)
        // A refused request is not remembered: fixed, the same key goes through.
        const refused = yield* post(merchant, { ...body, "terminal$id": "missing" }, "key-2")
        expect(refused.status).toBe(400)
        expect((yield* post(merchant, body, "key-2")).status).toBe(200)
      }))

    it.effect("concurrent refunds: the same key refunds once, two keys for the whole amount refund once between them", () =>
      Effect.gen(function*() {
        const sandbox = yield* SurfboardSandbox
        const merchant = yield* sandbox.createMerchant({ name: "Racing Refunds AS" })
        const sale = yield* sandbox.createPaidOrder({
          merchantId: merchant.id,
          amountMinor: 49900,
          currency: "NOK",
          referenceId: "SVC-RACE000001"
        })
        const refund = (key: string) =>
          call("/orders", {
            baseUrl: sandbox.baseUrl,
            method: "POST",
            headers: { ...headersOf(merchant), "Idempotency-Key": key },
            body: refundBody(merchant, sale.orderId, 49900, key)
          })
        const same = yield* Effect.all(Array.from({ length: 6 }, () => refund("race-same")), { concurrency: 6 })
        expect(same.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200])
        expect(new Set(same.map((r) => r.body.data.orderId)).size).toBe(1)
        expect(yield* sandbox.refundsOf(sale.orderId)).toHaveLength(1)

        const second = yield* sandbox.createPaidOrder({
          merchantId: merchant.id,
          amountMinor: 49900,
          currency: "NOK",
          referenceId: "SVC-RACE000002"
        })
        const twoKeys = yield* Effect.all(
          ["race-a", "race-b"].map((key) =>
            call("/orders", {
              baseUrl: sandbox.baseUrl,
              method: "POST",
              headers: { ...headersOf(merchant), "Idempotency-Key": key },
              body: refundBody(merchant, second.orderId, 49900, key)
            })
          ),
          { concurrency: 2 }
        )
        expect(twoKeys.map((r) => r.status).sort()).toEqual([200, 400])
        expect(twoKeys.find((r) => r.status === 400)!.body.errorCode).toBe("REFUND_EXCEEDS_PAID")
        expect(yield* sandbox.refundsOf(second.orderId)).toHaveLength(1)
      }))
  })

  describe("hosted pay page", () => {
    it.effect("a declined card leaves the page payable; paid, the page says so; the token in the link is required", () =>
      Effect.gen(function*() {
        const sandbox = yield* SurfboardSandbox
        const pp = yield* PaymentProvider
        const merchant = yield* sandbox.createMerchant({ name: "Pay Page Tours" })
        const account = sandbox.account(merchant)
        const link = yield* pp.createPaymentLink(account, {
          amountMinor: 12990,
          currency: "EUR",
          referenceId: "b-9",
          description: "Tram <tour>",
          idempotencyReference: "page-1"
        })
        const path = link.url.slice(sandbox.baseUrl.length)
        const page = yield* call(path, { baseUrl: sandbox.baseUrl })
        expect(page.status).toBe(200)
        expect(page.headers.get("content-type")).toContain("text/html")
        expect(page.text).toContain("€129.90")
        expect(page.text).toContain("Tram &lt;tour&gt;")
        const declined = yield* Effect.promise(() => fetch(link.url, { method: "POST", body: "outcome=declined" }))
        expect(declined.status).toBe(402)
        expect((yield* pp.paymentLinkStatus(account, link.linkId)).state).toBe("open")
        const noToken = yield* call(`/pay/${link.linkId}`, { baseUrl: sandbox.baseUrl, method: "POST" })
        expect(noToken.status).toBe(404)
        const paid = yield* sandbox.payLink(link.url)
        expect(paid.status).toBe("PAYMENT_COMPLETED")
        expect((yield* call(path, { baseUrl: sandbox.baseUrl })).text).toContain("is paid")
        expect(yield* pp.paymentLinkStatus(account, link.linkId)).toMatchObject({
          state: "paid",
          paidMinor: 12990,
          currency: "EUR"
        })
      }))
  })

  describe("admin endpoints", () => {
    it.effect("switch faults per merchant or for all, count requests, move the clock, and reset — over HTTP, even while the API is down", () =>
      Effect.gen(function*() {
        const sandbox = yield* SurfboardSandbox
        const pp = yield* PaymentProvider
        const base = sandbox.baseUrl
        const made = yield* call("/sandbox/merchants", { baseUrl: base, method: "POST", body: { name: "Admin Tours" } })
        expect(made.status).toBe(200)
        const merchant: SandboxMerchant = made.body
        expect(merchant).toMatchObject({
          name: "Admin Tours",
          apiKey: expect.any(String),
          terminalId: expect.any(String),
          paymentPageTerminalId: expect.any(String)
        })
        const bystander = yield* sandbox.createMerchant({ name: "Bystander Tours" })
        const sale = (yield* call("/sandbox/sales", {
          baseUrl: base,
          method: "POST",
          body: { merchantId: merchant.id, amountMinor: 20000, currency: "NOK", referenceId: "SVC-ADMIN00001" }
        })).body
        expect(sale).toMatchObject({ orderId: expect.any(String), paymentId: expect.any(String) })
        const account = sandbox.account(merchant)
        expect((yield* pp.orderStatus(account, sale.orderId)).paid).toBe(true)

        yield* call("/sandbox/reset", { baseUrl: base, method: "POST" })
        const put = yield* call("/sandbox/faults", {
          baseUrl: base,
          method: "PUT",
          body: { errorRate: 1, errorStatus: 502, merchantId: merchant.id }
        })
        expect(put.status).toBe(200)
        expect(put.body.merchants[merchant.id]).toMatchObject({ errorRate: 1, errorStatus: 502, loseAnswer: "no" })
        expect((yield* Effect.either(pp.orderStatus(account, sale.orderId)))._tag).toBe("Left")
        const bystanderSale = yield* sandbox.createPaidOrder({
          merchantId: bystander.id,
          amountMinor: 100,
          currency: "NOK",
          referenceId: "SVC-ADMIN00002"
        })
        expect((yield* pp.orderStatus(sandbox.account(bystander), bystanderSale.orderId)).paid).toBe(true)
        const counted = yield* call(`/sandbox/requests?method=GET&merchantId=${merchant.id}`, { baseUrl: base })
        expect(counted.body.count).toBe(3) // the order's read, three attempts

        const invalid = yield* call("/sandbox/faults", {
          baseUrl: base,
          method: "PUT",
          body: { partialRefundRatio: 1.5 }
        })
        expect(invalid.status).toBe(400)
        const down = yield* call("/sandbox/faults", { baseUrl: base, method: "PUT", body: { down: true } })
        expect(down.body.all.down).toBe(true)
        expect((yield* call("/sandbox/faults", { baseUrl: base })).status).toBe(200)

        // The clock: set, advanced, back to real time.
        const set = yield* call("/sandbox/clock", {
          baseUrl: base,
          method: "PUT",
          body: { now: "2030-06-01T22:00:00Z" }
        })
        expect(Date.parse(set.body.now) - Date.parse("2030-06-01T22:00:00Z")).toBeLessThan(5_000)
        const advanced = yield* call("/sandbox/clock", { baseUrl: base, method: "PUT", body: { advanceMs: 3_600_000 } })
        expect(advanced.body.now.startsWith("2030-06-01T23:0")).toBe(true)
        const real = yield* call("/sandbox/clock", { baseUrl: base, method: "DELETE" })
        expect(Math.abs(Date.parse(real.body.now) - Date.now())).toBeLessThan(5_000)

        const reset = yield* call("/sandbox/reset", { baseUrl: base, method: "POST" })
        expect(reset.status).toBe(200)
        expect((yield* call("/sandbox/faults", { baseUrl: base })).body).toEqual({ all: NO_SWITCHES, merchants: {} })
        expect((yield* call("/sandbox/requests", { baseUrl: base })).body).toEqual({ count: 0, requests: [] })
        expect((yield* pp.orderStatus(account, sale.orderId)).paid).toBe(true)
      }))

    it.effect("pay an order and a link, settle slow refunds and list refunds over HTTP", () =>
      Effect.gen(function*() {
        const sandbox = yield* SurfboardSandbox
        const pp = yield* PaymentProvider
        const base = sandbox.baseUrl
        const merchant = yield* sandbox.createMerchant({ name: "Remote Control Tours" })
        const account = sandbox.account(merchant)
        const order = yield* pp.createOrder(account, {
          terminalId: merchant.terminalId!,
          referenceId: "SVC-REMOTE0001",
          amountMinor: 30000,
          currency: "NOK",
          description: "RIB",
          idempotencyReference: "remote-1"
        })
        const paid = yield* call(`/sandbox/orders/${order.orderId}/pay`, { baseUrl: base, method: "POST", body: {} })
        expect(paid.body).toMatchObject({
          orderId: order.orderId,
          paymentId: order.paymentId,
          status: "PAYMENT_COMPLETED"
        })
        const again = yield* call(`/sandbox/orders/${order.orderId}/pay`, { baseUrl: base, method: "POST", body: {} })
        expect(again.status).toBe(409)
        const link = yield* pp.createPaymentLink(account, {
          amountMinor: 5000,
          currency: "NOK",
          referenceId: "b",
          description: "x",
          idempotencyReference: "remote-link"
        })
        expect(
          (yield* call("/sandbox/links/pay", { baseUrl: base, method: "POST", body: { url: link.url } })).body.status
        ).toBe("PAYMENT_COMPLETED")

        yield* call("/sandbox/faults", {
          baseUrl: base,
          method: "PUT",
          body: { settlement: "manual", merchantId: merchant.id }
        })
        const refund = yield* pp.refund(account, {
          purchaseOrderId: order.orderId,
          amountMinor: 30000,
          currency: "NOK",
          idempotencyReference: "remote-refund"
        })
        expect(refund.state).toBe("pending")
        const listed = yield* call(`/sandbox/orders/${order.orderId}/refunds`, { baseUrl: base })
        expect(listed.body).toEqual([{
          orderId: refund.refundOrderId,
          referenceId: "remote-refund",
          status: "PAYMENT_PROCESSED",
          requestedMinor: 30000,
          refundedMinor: 0
        }])
        const settled = yield* call("/sandbox/settle", {
          baseUrl: base,
          method: "POST",
          body: { orderId: order.orderId }
        })
        expect(settled.body).toEqual({ settled: 1 })
        expect((yield* pp.refundStatus(account, refund.refundOrderId)).state).toBe("completed")
        yield* sandbox.faults.reset
      }))
  })

  describe("schema", () => {
    it.effect("is created idempotently: a second sandbox on the same database starts and sees the same merchants and orders", () =>
      Effect.gen(function*() {
        const sandbox = yield* SurfboardSandbox
        const pp = yield* PaymentProvider
        const merchant = yield* sandbox.createMerchant({ name: "Shared Tours" })
        const sale = yield* sandbox.createPaidOrder({
          merchantId: merchant.id,
          amountMinor: 1000,
          currency: "NOK",
          referenceId: "SVC-SHARED0001"
        })
        const seen = yield* Effect.scoped(Effect.gen(function*() {
          const [second, third] = yield* Effect.all([startSandbox(), startSandbox()], { concurrency: 2 })
          expect(second.port).not.toBe(sandbox.port)
          expect(third.port).not.toBe(second.port)
          expect(yield* second.findMerchant(merchant.id)).toEqual(merchant)
          return yield* pp.orderStatus(second.account(merchant), sale.orderId)
        }))
        expect(seen.paid).toBe(true)
        expect(yield* sandbox.findMerchant("never-seeded")).toBeUndefined()
        const sql = yield* SqlClient.SqlClient
        const tables = yield* sql<{ n: number }>`
          SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'surfboard_sandbox'`
        expect(tables[0]!.n).toBe(SANDBOX_TABLES)
      }))
  })
})
