/**
 * Settlement reports end to end: the Surfboard sandbox makes them from its own transactions (and
 * seeded charges), the adapter reads them over HTTP, the `settlement-import` job stores them (once,
 * incrementally, one failing merchant never stopping the others) and the finance reads show them.
 * Dates are relative to today (UTC) and every sandbox moment is set explicitly: any hour passes.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { ConfigProvider, Effect } from "effect"
import { runSettlementImport, SETTLEMENT_IMPORT } from "../../src/jobs/settlementImport.js"
import { PaymentProvider } from "../../src/ports/PaymentProvider.js"
import { SurfboardSandbox } from "../../src/sandbox/surfboard/index.js"
import { FEE_BASIS_POINTS, FEE_VAT_PERCENT } from "../../src/sandbox/surfboard/reports.js"
import { SettlementImport } from "../../src/settlements/SettlementImport.js"
import { createKey, insertBooking, makeWorld } from "../support/fixtures.js"
import { get } from "../support/http.js"
import { merchantFor, paidAtSandbox, PartnerId, paymentsEnv, ServerSettings } from "../support/payments.js"

const DAY = 86_400_000
/** Today (UTC midnight) once for the file: a run across midnight keeps its days. */
const TODAY = Math.floor(Date.now() / DAY) * DAY
/** Midnight UTC `n` days from today. */
const dayStart = (n: number) => new Date(TODAY + n * DAY)
const day = (n: number) => dayStart(n).toISOString().slice(0, 10)
const at = (n: number, hour: number) => new Date(dayStart(n).getTime() + hour * 3_600_000)

const fee = (amount: number) => Math.round(amount * FEE_BASIS_POINTS / 10000)
const vat = (f: number) => Math.round(f * FEE_VAT_PERCENT / 100)

/** The server's settings for the importer run in the test (SURFBOARD_* of the sandbox partner). */
const withServerConfig = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(
    ServerSettings,
    (s) => effect.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(s.env)))))
  )

/** One run of the job as the scheduler runs it (recorded in job_runs). */
const runJob = withServerConfig(runSettlementImport.pipe(Effect.provide(SettlementImport.Default)))

/** One run's result, straight from the service. */
const runImport = (only?: string) =>
  withServerConfig(Effect.flatMap(SettlementImport, (s) => s.run(only)).pipe(Effect.provide(SettlementImport.Default)))

/** A sandbox merchant for the operator whose reports the service may read (its partner recorded). */
const payoutAccount = (operatorId: string) =>
  Effect.gen(function*() {
    const merchant = yield* merchantFor(operatorId)
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO settlement_merchants (merchant_id, provider_partner_id) VALUES (${merchant.id}, ${yield* PartnerId})`
      .pipe(Effect.orDie)
    return merchant
  })

const sale = (merchantId: string, amountMinor: number, when: Date, currency = "NOK") =>
  Effect.gen(function*() {
    const surfboard = yield* SurfboardSandbox
    yield* surfboard.clock.set(when)
    return yield* surfboard.createPaidOrder({ merchantId, amountMinor, currency, referenceId: `SALE-${amountMinor}` })
  })

const count = (table: string, merchantId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(table)} WHERE merchant_id = ${merchantId}`.pipe(
        Effect.map((rows) => rows[0]!.n),
        Effect.orDie
      )
  )

layer(paymentsEnv(), { excludeTestServices: true, timeout: 180_000 })("settlement reports", (it) => {
  it.effect("the sandbox's reports add up from its transactions; a negative payout is carried as a pending liability", () =>
    Effect.gen(function*() {
      const surfboard = yield* SurfboardSandbox
      const provider = yield* PaymentProvider
      const w = yield* makeWorld
      const merchant = yield* payoutAccount(w.alpha)
      const account = surfboard.account(merchant)
      // Day −10: two NOK sales, one refunded in part; a EUR sale (not in the NOK report); a voided sale.
      const first = yield* sale(merchant.id, 100000, at(-10, 9))
      yield* sale(merchant.id, 49900, at(-10, 9))
      yield* sale(merchant.id, 5000, at(-10, 9), "EUR")
      const voided = yield* sale(merchant.id, 7000, at(-10, 9))
      yield* provider.voidPayment(account, { paymentId: voided.paymentId!, idempotencyReference: "void-1" })
      yield* surfboard.clock.set(at(-10, 10))
      yield* provider.refund(account, {
        purchaseOrderId: first.orderId,
        amountMinor: 20000,
        currency: "NOK",
        idempotencyReference: "refund-1"
      })
      // Day −9: one sale, and a partner fee larger than the day's sales settles with it.
      yield* sale(merchant.id, 30000, at(-9, 9))
      yield* surfboard.reports.seedCharge({
        merchantId: merchant.id,
        type: "PARTNER_FEE",
        debitMinor: 200000,
        settlementDate: day(-8)
      })
      // Day −8: one more sale.
      yield* sale(merchant.id, 80000, at(-8, 9))
      yield* surfboard.clock.set(at(-1, 12))
      const reports = yield* provider.settlementReports(account, { partnerId: yield* PartnerId })
      yield* surfboard.clock.reset

      expect(reports.map((r) => r.settlementDate)).toEqual([day(-9), day(-8), day(-7)])
      const [r1, r2, r3] = reports as [typeof reports[0], typeof reports[0], typeof reports[0]]
      const fee1 = fee(100000) + fee(49900)
      expect(r1).toEqual({
        payoutId: expect.stringMatching(/^po_/),
        merchantId: merchant.id,
        settlementDate: day(-9),
        transactionsFrom: day(-10),
        transactionsTo: day(-10),
        reportType: "DAILY",
        currency: "NOK",
        salesMinor: 149900,
        refundsMinor: -20000,
        feesMinor: fee1,
        payoutMinor: 149900 - 20000 - fee1 - vat(fee1),
        pdfUrl: expect.stringContaining(r1.payoutId)
      })
      const c1 = yield* provider.settlementCharges(account, { partnerId: yield* PartnerId, payoutId: r1.payoutId })
      expect(c1).toEqual({ payoutId: r1.payoutId, feeVatMinor: vat(fee1), charges: [] })

      // Day −8's report: negative, as reported.
      const p2 = 30000 - fee(30000) - vat(fee(30000)) - 200000
      expect(r2.salesMinor).toBe(30000)
      expect(r2.payoutMinor).toBe(p2)
      expect(p2).toBeLessThan(0)
      // Day −7's report carries it as a previous pending liability.
      const c3 = yield* provider.settlementCharges(account, { partnerId: yield* PartnerId, payoutId: r3.payoutId })
      expect(c3.charges).toEqual([expect.objectContaining({
        type: "PREVIOUS_PENDING_LIABILITY",
        debitMinor: -p2,
        creditMinor: 0
      })])
      expect(r3.payoutMinor).toBe(80000 - fee(80000) - vat(fee(80000)) + p2)

      // Another partner's credentials, or another merchant in the path: refused.
      const other = yield* surfboard.createMerchant({ name: "Other partner's merchant" })
      const refused = yield* Effect.flip(
        provider.settlementReports(surfboard.account(other), { partnerId: yield* PartnerId })
      )
      expect(refused._tag).toBe("PaymentProviderRejected")
    }))

  it.effect("the job stores each payout once (twice: the same rows) and reads on from the last settlement day", () =>
    Effect.gen(function*() {
      const surfboard = yield* SurfboardSandbox
      const sql = yield* SqlClient.SqlClient
      const w = yield* makeWorld
      const merchant = yield* payoutAccount(w.alpha)
      yield* sale(merchant.id, 50000, at(-6, 8))
      yield* sale(merchant.id, 60000, at(-5, 8))
      yield* surfboard.reports.seedCharge({
        merchantId: merchant.id,
        type: "SERVICE_PROVIDER_FEE",
        debitMinor: 1200,
        settlementDate: day(-4)
      })
      yield* surfboard.clock.reset
      yield* surfboard.requests.clear

      yield* runJob
      const charges = () => surfboard.requests.count({ path: /\/charges$/, merchantId: merchant.id })
      expect(yield* count("settlement_payouts", merchant.id)).toBe(2)
      expect(yield* charges()).toBe(2)
      const [run] = yield* sql<{ outcome: string; summary: any }>`
        SELECT outcome, summary FROM job_runs WHERE job = ${SETTLEMENT_IMPORT} ORDER BY started_at DESC LIMIT 1`
      expect(run!.outcome).toBe("ok")
      expect(run!.summary.results).toContainEqual(
        expect.objectContaining({ merchantId: merchant.id, outcome: "ok", payouts: 2 })
      )
      const rows = () =>
        sql`SELECT p.*, (SELECT json_agg(a ORDER BY position) FROM settlement_adjustments a WHERE a.payout_row_id = p.id) AS adj
            FROM settlement_payouts p WHERE merchant_id = ${merchant.id} ORDER BY settlement_date`
      const before = yield* rows()
      expect((before[1] as any).adj).toEqual([expect.objectContaining({
        type: "SERVICE_PROVIDER_FEE",
        debit_minor: 1200,
        net_minor: -1200
      })])

      // Twice: nothing new, no charges read again.
      const again = yield* runImport(merchant.id)
      expect(again.results).toEqual([expect.objectContaining({ outcome: "ok", reports: 1, payouts: 0 })])
      expect(yield* rows()).toEqual(before)
      expect(yield* charges()).toBe(2)

      // A day later: only the new report is read and stored.
      yield* sale(merchant.id, 70000, at(-4, 8))
      yield* surfboard.clock.reset
      const third = yield* runImport(merchant.id)
      expect(third.results).toEqual([expect.objectContaining({ outcome: "ok", reports: 2, payouts: 1 })])
      expect(yield* count("settlement_payouts", merchant.id)).toBe(3)
      expect(yield* charges()).toBe(3)
    }))

  it.effect("a merchant whose reports fail is recorded and the others are imported", () =>
    Effect.gen(function*() {
      const surfboard = yield* SurfboardSandbox
      const sql = yield* SqlClient.SqlClient
      const w = yield* makeWorld
      const failing = yield* payoutAccount(w.alpha)
      const fine = yield* payoutAccount(w.cetus)
      yield* sale(failing.id, 10000, at(-3, 8))
      yield* sale(fine.id, 20000, at(-3, 8))
      yield* surfboard.clock.reset

      for (const mode of ["error", "drop"] as const) {
        yield* surfboard.faults.set({ reportReads: mode }, { merchantId: failing.id })
        yield* surfboard.requests.clear
        const result = yield* runImport()
        // A read: retried once (SURFBOARD_RETRIES=1), then the merchant's failure.
        expect(yield* surfboard.requests.count({ path: /\/reports$/, merchantId: failing.id })).toBe(2)
        const mine = result.results.filter((r) => r.merchantId === failing.id || r.merchantId === fine.id)
        expect(mine).toEqual(expect.arrayContaining([
          expect.objectContaining({ merchantId: failing.id, outcome: "failed", error: expect.any(String) }),
          expect.objectContaining({ merchantId: fine.id, outcome: "ok" })
        ]))
        const [state] = yield* sql<{ last_outcome: string; last_error: string }>`
          SELECT last_outcome, last_error FROM settlement_merchants WHERE merchant_id = ${failing.id}`
        expect(state!.last_outcome).toBe("failed")
        expect(yield* count("settlement_payouts", failing.id)).toBe(0)
        expect(yield* count("settlement_payouts", fine.id)).toBe(1)
      }
      // The job run itself ends ok, the failure counted.
      yield* runJob
      const [run] = yield* sql<{ outcome: string; summary: any }>`
        SELECT outcome, summary FROM job_runs WHERE job = ${SETTLEMENT_IMPORT} ORDER BY started_at DESC LIMIT 1`
      expect(run!.outcome).toBe("ok")
      expect(run!.summary.failed).toBeGreaterThanOrEqual(1)

      // Switched back on: the next run catches up.
      yield* surfboard.faults.set({ reportReads: "ok" }, { merchantId: failing.id })
      yield* runImport(failing.id)
      expect(yield* count("settlement_payouts", failing.id)).toBe(1)
    }))

  it.effect("chargebacks match the booking whose payment they name; an unmatched one is stored and never listed", () =>
    Effect.gen(function*() {
      const surfboard = yield* SurfboardSandbox
      const sql = yield* SqlClient.SqlClient
      const w = yield* makeWorld
      const merchant = yield* payoutAccount(w.alpha)
      // Beta is paid through the same account (one legal entity).
      yield* sql`
        INSERT INTO operator_payment_accounts (operator_id, merchant_id, sandbox) VALUES (${w.beta}, ${merchant.id}, true)`
      const bookingId = yield* insertBooking({ operatorId: w.alpha, amountMinor: 129000, experienceDate: day(5) })
      const [{ confirmation_code: code }] = (yield* sql<{ confirmation_code: string }>`
        SELECT confirmation_code FROM bookings WHERE id = ${bookingId}`) as [{ confirmation_code: string }]
      const paid = yield* paidAtSandbox({ bookingId, code }, merchant.id, 129000, { at: at(-3, 9) })
      const stray = yield* sale(merchant.id, 45000, at(-3, 10))
      yield* surfboard.clock.set(at(-3, 11))
      for (const [paymentId, amount] of [[paid.paymentId!, 129000], [stray.paymentId!, 45000]] as const) {
        yield* surfboard.reports.seedCharge({
          merchantId: merchant.id,
          type: "CHARGEBACK",
          paymentId,
          debitMinor: amount
        })
      }
      yield* surfboard.reports.seedCharge({
        merchantId: merchant.id,
        type: "CHARGEBACK_FEE",
        paymentId: paid.paymentId!,
        debitMinor: 15000
      })
      yield* surfboard.clock.reset
      const result = yield* runImport(merchant.id)
      expect(result.results[0]).toEqual(expect.objectContaining({ outcome: "ok", chargebacks: 2 }))
      const stored = yield* sql<{ booking_id: string | null }>`
        SELECT booking_id FROM chargebacks WHERE merchant_id = ${merchant.id} ORDER BY booking_id NULLS LAST`
      expect(stored.map((s) => s.booking_id)).toEqual([bookingId, null])

      const alphaKey = yield* createKey({ by: w.bob, operators: [w.alpha], scopes: ["finance:read"] })
      const betaKey = yield* createKey({ by: w.bob, operators: [w.beta], scopes: ["finance:read"] })
      const listed = yield* get("/api/v1/finance/chargebacks", alphaKey.token)
      expect(listed.status, listed.text).toBe(200)
      expect(listed.body.data).toEqual([{
        id: expect.any(String),
        partner: { id: w.alpha, name: `Alpha Tours ${w.tag}` },
        booking: { id: bookingId, confirmation_code: code, experience_date: day(5), status: "CONFIRMED" },
        amount_minor: 129000,
        currency: "NOK",
        fee_minor: 15000,
        settled: { currency: "NOK", amount_minor: 129000, fee_minor: 15000 },
        dispute_reference: null,
        dispute_status: null,
        reason: null,
        transaction_date: day(-3),
        registered_at: null,
        respond_by: null,
        settled_on: day(-2),
        first_seen_at: expect.any(String)
      }])
      // Beta shares the account but not the booking: no chargeback; the payout is Beta's too.
      expect((yield* get("/api/v1/finance/chargebacks", betaKey.token)).body.data).toEqual([])
      const payouts = (yield* get("/api/v1/finance/payouts", betaKey.token)).body.data
      expect(payouts).toHaveLength(1)
      expect(payouts[0].partners.map((p: any) => p.id).sort()).toEqual([w.alpha, w.beta].sort())
      expect(payouts[0].adjustments.map((a: any) => a.type).sort()).toEqual([
        "chargeback",
        "chargeback",
        "chargeback_fee"
      ])
      expect(payouts[0].payout_minor).toBe(
        129000 + 45000 - fee(129000) - fee(45000) -
          vat(fee(129000) + fee(45000)) - 129000 - 45000 - 15000
      )

      // The stray payment turns out to be a booking's (its payment recorded later): the next import matches it.
      const late = yield* insertBooking({ operatorId: w.alpha, amountMinor: 45000 })
      yield* sql`
        INSERT INTO booking_payments (booking_id, purpose, merchant_id, provider_order_id, provider_payment_id, amount_minor, currency, paid_at)
        VALUES (${late}, 'full', ${merchant.id}, ${stray.orderId}, ${stray.paymentId}, 45000, 'NOK', now())`
      const rerun = yield* runImport(merchant.id)
      expect(rerun.results[0]).toEqual(expect.objectContaining({ rematched: 1, payouts: 0 }))
      expect((yield* get("/api/v1/finance/chargebacks", alphaKey.token)).body.data).toHaveLength(2)
    }))
})
