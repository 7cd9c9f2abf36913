/**
 * GET /api/v1/finance/payouts through the real server: every field, the bounds, the signed cursor
 * bound to the filters, and the scoping (a payout belongs to the payout account: operators sharing
 * it each see it; another operator's never appears). Payouts are stored as the settlement file
 * import stores them (SettlementImport.importFile, the job's own storing).
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { parseSettlementFile } from "../../../../src/settlements/rules.js"
import { SettlementImport } from "../../../../src/settlements/SettlementImport.js"
import { createKey, makeWorld } from "../../../support/fixtures.js"
import { get } from "../../../support/http.js"
import { conforms, dereferencedSpec } from "../../../support/openapi.js"
import { testServer } from "../../../support/server.js"

const DAY = 86_400_000
/** Today (UTC midnight) once for the file: a run across midnight keeps its days. */
const TODAY = Math.floor(Date.now() / DAY) * DAY
const day = (n: number) => new Date(TODAY + n * DAY).toISOString().slice(0, 10)

/** A settlement file's report on settlement day `n` (relative to today), with optional charges. */
const report = (n: number | null, payout: number, charges: ReadonlyArray<Record<string, unknown>> = []) => ({
  payoutId: `po-${randomUUID().slice(0, 8)}`,
  settlementDate: n === null ? null : day(n),
  transactionStartDate: n === null ? null : day(n - 1),
  transactionEndDate: n === null ? null : day(n - 1),
  reportType: "DAILY",
  totalSale: 100000,
  totalRefund: 5000,
  fee: 1500,
  feeVat: 375,
  payout,
  url: "https://reports.example/po.pdf",
  charges
})

const importReports = (merchantId: string, reports: ReadonlyArray<ReturnType<typeof report>>) =>
  Effect.gen(function*() {
    const parsed = parseSettlementFile({ merchantId, reports })
    if (parsed._tag === "Left") return yield* Effect.dieMessage(parsed.left)
    return yield* Effect.flatMap(SettlementImport, (s) => s.importFile(parsed.right)).pipe(
      Effect.provide(SettlementImport.Default)
    )
  })

const account = (operatorId: string, merchantId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`INSERT INTO operator_payment_accounts (operator_id, merchant_id) VALUES (${operatorId}, ${merchantId})`
  ).pipe(
    Effect.orDie
  )

const payouts = (query: string, key: string, status = 200) =>
  Effect.map(get(`/api/v1/finance/payouts${query}`, key), (res) => {
    expect(res.status, res.text).toBe(status)
    return res.body
  })

/** Alpha and Beta paid through one account (one legal entity), Cetus through its own. */
const payoutWorld = Effect.gen(function*() {
  const w = yield* makeWorld
  const shared = `m-shared-${w.tag}`
  const own = `m-cetus-${w.tag}`
  yield* account(w.alpha, shared)
  yield* account(w.beta, shared)
  yield* account(w.cetus, own)
  const finance = (operators: ReadonlyArray<string>, by = w.bob) =>
    Effect.map(createKey({ by, operators, scopes: ["finance:read"] }), (k) => k.token)
  return { ...w, shared, own, finance }
})

layer(testServer(), { excludeTestServices: true, timeout: 120_000 })("GET /api/v1/finance/payouts", (it) => {
  it.effect("every field, as the provider reported it; adjustments in order; every operator of the account", () =>
    Effect.gen(function*() {
      const w = yield* payoutWorld
      const charges = [
        {
          chargeId: "c1",
          type: "SERVICE_PROVIDER_FEE",
          description: "Service provider fee",
          date: day(-3),
          debit: 900
        },
        { chargeId: "c2", type: "CHARGEBACK", description: "Chargeback", date: day(-3), debit: 20000, paymentId: "p1" },
        { chargeId: "c3", type: "CHARGEBACK_FEE", description: "Chargeback fee", date: day(-3), debit: 1500 },
        { chargeId: "c4", type: "PARTNER_FEE", description: "Partner fee", debit: 300 },
        { chargeId: "c5", type: "PREVIOUS_PENDING_LIABILITY", description: "Previous pending liability", debit: 7000 },
        { chargeId: "c6", type: "Goodwill credit", description: "Goodwill", credit: 2500 }
      ]
      const r = report(-3, 65925, charges)
      const first = yield* importReports(w.shared, [r])
      expect(first).toEqual(expect.objectContaining({ payouts: 1, skipped: 0 }))

      const key = yield* w.finance([w.alpha])
      const res = yield* get("/api/v1/finance/payouts", key)
      expect(res.status, res.text).toBe(200)
      conforms(yield* dereferencedSpec, "get", "/api/v1/finance/payouts", res)
      const names = [
        { id: w.alpha, name: `Alpha Tours ${w.tag}` },
        { id: w.beta, name: `Beta Boats ${w.tag}` }
      ]
      expect(res.body).toEqual({
        data: [{
          partners: names,
          payout_id: r.payoutId,
          settlement_date: day(-3),
          transactions_from: day(-4),
          transactions_to: day(-4),
          report_type: "DAILY",
          currency: "NOK",
          sales_minor: 100000,
          refunds_minor: -5000,
          fees_minor: 1500,
          fee_vat_minor: 375,
          payout_minor: 65925,
          adjustments: [
            {
              type: "service_provider_fee",
              description: "Service provider fee",
              date: day(-3),
              debit_minor: 900,
              credit_minor: 0,
              net_minor: -900
            },
            {
              type: "chargeback",
              description: "Chargeback",
              date: day(-3),
              debit_minor: 20000,
              credit_minor: 0,
              net_minor: -20000
            },
            {
              type: "chargeback_fee",
              description: "Chargeback fee",
              date: day(-3),
              debit_minor: 1500,
              credit_minor: 0,
              net_minor: -1500
            },
            {
              type: "partner_fee",
              description: "Partner fee",
              date: null,
              debit_minor: 300,
              credit_minor: 0,
              net_minor: -300
            },
            {
              type: "previous_pending_liability",
              description: "Previous pending liability",
              date: null,
              debit_minor: 7000,
              credit_minor: 0,
              net_minor: -7000
            },
            {
              type: "goodwill_credit",
              description: "Goodwill",
              date: null,
              debit_minor: 0,
              credit_minor: 2500,
              net_minor: 2500
            }
          ]
        }],
        next_cursor: null
      })
      // The same file again stores nothing.
      expect(yield* importReports(w.shared, [r])).toEqual(expect.objectContaining({ payouts: 0, skipped: 1 }))
      expect((yield* payouts("", key)).data).toHaveLength(1)
      // No guest or card data anywhere in the answer.
      expect(res.text).not.toMatch(/guest|email|phone|card|pan/i)
    }))

  it.effect("scoped to the payout accounts in view: shared accounts seen by each operator, others never", () =>
    Effect.gen(function*() {
      const w = yield* payoutWorld
      const sharedReport = report(-2, 1000)
      const cetusReport = report(-2, 2000)
      yield* importReports(w.shared, [sharedReport])
      yield* importReports(w.own, [cetusReport])
      const ids = (body: any) => body.data.map((p: any) => p.payout_id)
      expect(ids(yield* payouts("", yield* w.finance([w.alpha])))).toEqual([sharedReport.payoutId])
      expect(ids(yield* payouts("", yield* w.finance([w.beta])))).toEqual([sharedReport.payoutId])
      const cetusKey = yield* w.finance([w.cetus], w.carol)
      expect(ids(yield* payouts("", cetusKey))).toEqual([cetusReport.payoutId])
      // A key over Alpha and Beta: the shared payout once.
      expect(ids(yield* payouts("", yield* w.finance([w.alpha, w.beta])))).toEqual([sharedReport.payoutId])
      // partner_id narrows; one outside the key is 404.
      expect(ids(yield* payouts(`?partner_id=${w.beta}`, yield* w.finance([w.alpha, w.beta])))).toEqual([
        sharedReport.payoutId
      ])
      yield* payouts(`?partner_id=${w.cetus}`, yield* w.finance([w.alpha]), 404)
      yield* payouts(`?partner_id=not-an-operator`, yield* w.finance([w.alpha]), 404)
      // What cannot be an id at all (past the document's 36 characters, other characters): 400 naming partner_id.
      for (const notAnId of ["a".repeat(37), "alpha;beta"]) {
        const refused = yield* payouts(`?partner_id=${notAnId}`, yield* w.finance([w.alpha]), 400)
        expect(refused.invalid_params[0].name).toBe("partner_id")
      }
      // An operator without a payout account sees none.
      const sql = yield* SqlClient.SqlClient
      yield* sql`DELETE FROM operator_payment_accounts WHERE operator_id = ${w.beta}`
      expect(ids(yield* payouts("", yield* w.finance([w.beta])))).toEqual([])
      // Without finance:read: 403.
      const bookingsKey = (yield* createKey({ by: w.bob, operators: [w.alpha], scopes: ["bookings:read"] })).token
      yield* payouts("", bookingsKey, 403)
    }))

  it.effect("from and to bound the settlement day; newest first; limit and the signed cursor bound to the filters", () =>
    Effect.gen(function*() {
      const w = yield* payoutWorld
      // 55 payouts, one per day from −60 to −6, and one without a settlement day.
      const dated = Array.from({ length: 55 }, (_, i) => report(-60 + i, i))
      const undated = report(null, 999)
      yield* importReports(w.shared, [...dated, undated])
      const key = yield* w.finance([w.alpha])

      // Default limit 50, newest first; the undated payout (imported now) first.
      const page1 = yield* payouts("", key)
      expect(page1.data).toHaveLength(50)
      expect(page1.data[0].payout_id).toBe(undated.payoutId)
      expect(page1.data[0].settlement_date).toBeNull()
      expect(page1.data.slice(1).map((p: any) => p.settlement_date)).toEqual(
        dated.slice(-49).reverse().map((r) => r.settlementDate)
      )
      const page2 = yield* payouts(`?cursor=${encodeURIComponent(page1.next_cursor)}`, key)
      expect(page2.data.map((p: any) => p.payout_id)).toEqual(dated.slice(0, 6).reverse().map((r) => r.payoutId))
      expect(page2.next_cursor).toBeNull()

      // from/to inclusive; the undated one is outside any range.
      const ranged = yield* payouts(`?from=${day(-20)}&to=${day(-18)}`, key)
      expect(ranged.data.map((p: any) => p.settlement_date)).toEqual([day(-18), day(-19), day(-20)])
      expect((yield* payouts(`?from=${day(-7)}`, key)).data.map((p: any) => p.settlement_date)).toEqual([
        day(-6),
        day(-7)
      ])
      expect((yield* payouts(`?to=${day(-59)}`, key)).data).toHaveLength(2)

      // Paging with limit 2 through a range: every payout once, in order.
      const seen: Array<string> = []
      let cursor: string | null = null
      do {
        const q: string = `?from=${day(-30)}&to=${day(-21)}&limit=2${
          cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""
        }`
        const body: any = yield* payouts(q, key)
        expect(body.data.length).toBeLessThanOrEqual(2)
        seen.push(...body.data.map((p: any) => p.settlement_date))
        cursor = body.next_cursor
      } while (cursor !== null)
      expect(seen).toEqual(Array.from({ length: 10 }, (_, i) => day(-21 - i)))

      // The cursor is bound to its filters and its signature.
      const first = yield* payouts(`?from=${day(-30)}&to=${day(-21)}&limit=2`, key)
      const c = encodeURIComponent(first.next_cursor)
      const other = yield* get(`/api/v1/finance/payouts?from=${day(-31)}&to=${day(-21)}&limit=2&cursor=${c}`, key)
      expect(other.status).toBe(400)
      expect(other.body.detail).toMatch(/cursor/)
      yield* payouts(`?from=${day(-30)}&to=${day(-21)}&cursor=${c}`, key) // the limit is not a filter
      yield* payouts(`?from=${day(-30)}&to=${day(-21)}&partner_id=${w.alpha}&cursor=${c}`, key, 400)
      yield* payouts(`?from=${day(-30)}&to=${day(-21)}&cursor=${c.slice(0, -2)}xx`, key, 400)

      // Bounds: 366 days with both ends counted is the most; to before from; bad days; limit 1–100.
      yield* payouts(`?from=2025-01-01&to=2026-01-01`, key)
      const long = yield* payouts(`?from=2025-01-01&to=2026-01-02`, key, 400)
      expect(long.type).toMatch(/invalid-request/)
      yield* payouts(`?from=${day(-1)}&to=${day(-2)}`, key, 400)
      yield* payouts(`?from=2026-02-30`, key, 400)
      yield* payouts(`?to=yesterday`, key, 400)
      yield* payouts(`?limit=0`, key, 400)
      yield* payouts(`?limit=101`, key, 400)
      yield* payouts(`?limit=abc`, key, 400)
      expect((yield* payouts(`?limit=100`, key)).data).toHaveLength(56)
      yield* payouts(`?cursor=${"x".repeat(201)}`, key, 400)
    }))
})
