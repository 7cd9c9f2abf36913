/**
 * GET /api/v1/finance/chargebacks through the real server: every field (the settlement's and the
 * dispute desk's), scoping to the operator of the booking's tour, unmatched disputes never listed,
 * the `from`/`to` day the service recorded them, newest first, limit and the signed cursor bound to
 * the filters. Chargebacks come from settlement files as the import stores them.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { parseSettlementFile } from "../../../../src/settlements/rules.js"
import { SettlementImport } from "../../../../src/settlements/SettlementImport.js"
import { SettlementsRepo } from "../../../../src/settlements/SettlementsRepo.js"
import { createKey, insertBooking, makeWorld } from "../../../support/fixtures.js"
import { get } from "../../../support/http.js"
import { conforms, dereferencedSpec } from "../../../support/openapi.js"
import { testServer } from "../../../support/server.js"

const DAY = 86_400_000
/** Today (UTC midnight) once for the file: a run across midnight keeps its days. */
const TODAY = Math.floor(Date.now() / DAY) * DAY
const day = (n: number) => new Date(TODAY + n * DAY).toISOString().slice(0, 10)

const importCharges = (merchantId: string, settlementDay: number, charges: ReadonlyArray<Record<string, unknown>>) =>
  Effect.gen(function*() {
    const parsed = parseSettlementFile({
      merchantId,
      reports: [{
        payoutId: `po-${randomUUID().slice(0, 8)}`,
        settlementDate: day(settlementDay),
        totalSale: 0,
        totalRefund: 0,
        fee: 0,
        feeVat: 0,
        payout: 0,
        charges
      }]
    })
    if (parsed._tag === "Left") return yield* Effect.dieMessage(parsed.left)
    return yield* Effect.flatMap(SettlementImport, (s) => s.importFile(parsed.right)).pipe(
      Effect.provide(SettlementImport.Default)
    )
  })

/** A booking of the operator paid at the merchant with payment `paymentId`. */
const paidBooking = (operatorId: string, merchantId: string, paymentId: string, o: { status?: string } = {}) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const id = yield* insertBooking({ operatorId, amountMinor: 129000, experienceDate: day(10), ...o })
    yield* sql`
      INSERT INTO booking_payments (booking_id, purpose, merchant_id, provider_order_id, provider_payment_id, amount_minor, currency, paid_at)
      VALUES (${id}, 'full', ${merchantId}, ${"o-" + paymentId}, ${paymentId}, 129000, 'NOK', now())`.pipe(Effect.orDie)
    const [row] = yield* sql<{ confirmation_code: string }>`SELECT confirmation_code FROM bookings WHERE id = ${id}`
      .pipe(Effect.orDie)
    return { id, code: row!.confirmation_code }
  })

const chargeback = (paymentId: string, amount: number, extra: Record<string, unknown> = {}) => ({
  chargeId: `cb-${randomUUID().slice(0, 8)}`,
  type: "CHARGEBACK",
  debit: amount,
  paymentId,
  transactionDate: day(-20),
  transactionAmount: amount,
  transactionCurrency: "NOK",
  ...extra
})

const list = (query: string, key: string, status = 200) =>
  Effect.map(get(`/api/v1/finance/chargebacks${query}`, key), (res) => {
    expect(res.status, res.text).toBe(status)
    return res.body
  })

const chargebackWorld = Effect.gen(function*() {
  const w = yield* makeWorld
  const sql = yield* SqlClient.SqlClient
  const shared = `m-shared-${w.tag}`
  const own = `m-cetus-${w.tag}`
  yield* sql`
    INSERT INTO operator_payment_accounts (operator_id, merchant_id)
    VALUES (${w.alpha}, ${shared}), (${w.beta}, ${shared}), (${w.cetus}, ${own})`.pipe(Effect.orDie)
  const finance = (operators: ReadonlyArray<string>, by = w.bob) =>
    Effect.map(createKey({ by, operators, scopes: ["finance:read"] }), (k) => k.token)
  return { ...w, shared, own, finance }
})

layer(testServer(), { excludeTestServices: true, timeout: 120_000 })("GET /api/v1/finance/chargebacks", (it) => {
  it.effect("every field: the settlement's figures and the dispute desk's facts; unmatched disputes never listed", () =>
    Effect.gen(function*() {
      const w = yield* chargebackWorld
      const sql = yield* SqlClient.SqlClient
      const pay = `pay-${w.tag}`
      const eur = `eur-${w.tag}`
      const b = yield* paidBooking(w.alpha, w.shared, pay)
      const c = yield* paidBooking(w.alpha, w.shared, eur, { status: "CANCELLED" })
      // Cetus's booking, but reported on the shared account Cetus is not paid through: matches none.
      const foreign = yield* paidBooking(w.cetus, w.own, `cetus-${w.tag}`)
      yield* sql`UPDATE booking_payments SET merchant_id = ${w.shared} WHERE booking_id = ${foreign.id}`
      const imported = yield* importCharges(w.shared, -5, [
        chargeback(pay, 129000),
        { chargeId: `f-${w.tag}`, type: "CHARGEBACK_FEE", debit: 15000, paymentId: pay },
        chargeback(eur, 12500, { transactionAmount: 11000, transactionCurrency: "EUR" }),
        { chargeId: `f2-${w.tag}`, type: "CHARGEBACK_FEE", debit: 15000, paymentId: eur },
        chargeback(`unknown-${w.tag}`, 5000),
        chargeback(`cetus-${w.tag}`, 7000)
      ])
      expect(imported.chargebacks).toBe(4)
      const stored = yield* sql<{ n: number }>`
        SELECT count(*)::int AS n FROM chargebacks WHERE merchant_id = ${w.shared} AND booking_id IS NULL`
      expect(stored[0]!.n).toBe(2)

      const repo = yield* Effect.provide(SettlementsRepo, SettlementsRepo.Default)
      const [mine] = yield* sql<{ id: string }>`SELECT id FROM chargebacks WHERE payment_id = ${pay}`
      yield* repo.setDisputeFacts(mine!.id, {
        disputeReference: `DSP-${w.tag}`,
        disputeStatus: "triage",
        reason: "Not recognised",
        respondBy: day(9),
        registeredAt: day(-4)
      })

      const key = yield* w.finance([w.alpha])
      const res = yield* get("/api/v1/finance/chargebacks", key)
      expect(res.status, res.text).toBe(200)
      conforms(yield* dereferencedSpec, "get", "/api/v1/finance/chargebacks", res)
      const partner = { id: w.alpha, name: `Alpha Tours ${w.tag}` }
      const byBooking = Object.fromEntries(res.body.data.map((x: any) => [x.booking.id, x]))
      expect(res.body.data).toHaveLength(2)
      expect(byBooking[b.id]).toEqual({
        id: mine!.id,
        partner,
        booking: { id: b.id, confirmation_code: b.code, experience_date: day(10), status: "CONFIRMED" },
        amount_minor: 129000,
        currency: "NOK",
        fee_minor: 15000,
        settled: { currency: "NOK", amount_minor: 129000, fee_minor: 15000 },
        dispute_reference: `DSP-${w.tag}`,
        dispute_status: "triage",
        reason: "Not recognised",
        transaction_date: day(-20),
        registered_at: day(-4),
        respond_by: day(9),
        settled_on: day(-5),
        first_seen_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T.*Z$/)
      })
      // A EUR dispute: the disputed amount in EUR, the settled one in NOK; the fee known in NOK only.
      expect(byBooking[c.id]).toEqual(expect.objectContaining({
        booking: expect.objectContaining({ status: "CANCELLED" }),
        amount_minor: 11000,
        currency: "EUR",
        fee_minor: null,
        settled: { currency: "NOK", amount_minor: 12500, fee_minor: 15000 },
        dispute_reference: null,
        dispute_status: null
      }))
      expect(res.text).not.toMatch(/guest|email|phone/i)

      // Beta shares the account, not the bookings; Cetus never sees the dispute on its booking reported elsewhere.
      expect((yield* list("", yield* w.finance([w.beta]))).data).toEqual([])
      expect((yield* list("", yield* w.finance([w.cetus], w.carol))).data).toEqual([])
      // Four stored, two listed.
      const again = yield* sql<
        { n: number }
      >`SELECT count(*)::int AS n FROM chargebacks WHERE merchant_id = ${w.shared}`
      expect(again[0]!.n).toBe(4)
    }))

  it.effect("scoped to the operator of the booking's tour; partner_id; scope", () =>
    Effect.gen(function*() {
      const w = yield* chargebackWorld
      const a = yield* paidBooking(w.alpha, w.shared, `a-${w.tag}`)
      const c = yield* paidBooking(w.cetus, w.own, `c-${w.tag}`)
      yield* importCharges(w.shared, -3, [chargeback(`a-${w.tag}`, 1000)])
      yield* importCharges(w.own, -3, [chargeback(`c-${w.tag}`, 2000)])
      // A balance paid through a payment link: the chargeback names the link's order.
      const sql = yield* SqlClient.SqlClient
      const linked = yield* insertBooking({ operatorId: w.alpha, amountMinor: 30000 })
      yield* sql`
        INSERT INTO payment_links (id, target, booking_id, operator_id, kind, amount_minor, currency, merchant_id,
          idempotency_reference, provider_reference_id, description, state, provider_link_id, url)
        VALUES (gen_random_uuid(), ${"booking:" + linked}, ${linked}, ${w.alpha}, 'deferred_balance', 30000, 'NOK',
          ${w.shared}, ${"idem-" + w.tag}, 'REF', 'Balance', 'closed', ${
        "link-order-" + w.tag
      }, 'https://pay.example/x')`
      yield* importCharges(w.shared, -2, [{
        ...chargeback("none", 3000),
        paymentId: null,
        orderId: `link-order-${w.tag}`
      }])
      const ids = (body: any) => body.data.map((x: any) => x.booking.id)
      expect(ids(yield* list("", yield* w.finance([w.alpha])))).toEqual([linked, a.id])
      const cetusKey = yield* w.finance([w.cetus], w.carol)
      expect(ids(yield* list("", cetusKey))).toEqual([c.id])
      expect(ids(yield* list(`?partner_id=${w.beta}`, yield* w.finance([w.alpha, w.beta])))).toEqual([])
      yield* list(`?partner_id=${w.cetus}`, yield* w.finance([w.alpha]), 404)
      const noScope = (yield* createKey({ by: w.bob, operators: [w.alpha], scopes: ["bookings:read"] })).token
      yield* list("", noScope, 403)
      yield* list("", "pk_not_a_key", 401)
    }))

  it.effect("from and to: the UTC day the service recorded it; newest first; limit; cursor bound to the filters", () =>
    Effect.gen(function*() {
      const w = yield* chargebackWorld
      const sql = yield* SqlClient.SqlClient
      const charges = []
      for (let i = 0; i < 12; i++) {
        yield* paidBooking(w.alpha, w.shared, `p${i}-${w.tag}`)
        charges.push(chargeback(`p${i}-${w.tag}`, 100 + i))
      }
      yield* importCharges(w.shared, -2, charges)
      // Chargeback i was first seen on day −i − 1 at 23:59:59.999 UTC (i = 11: 00:00 the next day).
      for (let i = 0; i < 12; i++) {
        const seen = i === 11 ? `${day(-11)}T00:00:00.000Z` : `${day(-i - 1)}T23:59:59.999Z`
        yield* sql`UPDATE chargebacks SET first_seen_at = ${seen}::timestamptz WHERE payment_id = ${`p${i}-${w.tag}`}`
      }
      const key = yield* w.finance([w.alpha])
      const amounts = (body: any) => body.data.map((x: any) => x.settled.amount_minor)
      expect(amounts(yield* list("", key))).toEqual([100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111])
      expect(amounts(yield* list(`?from=${day(-3)}&to=${day(-2)}`, key))).toEqual([101, 102])
      expect(amounts(yield* list(`?from=${day(-11)}&to=${day(-11)}`, key))).toEqual([110, 111])
      expect(amounts(yield* list(`?to=${day(-10)}`, key))).toEqual([109, 110, 111])
      expect(amounts(yield* list(`?to=${day(-11)}`, key))).toEqual([110, 111])
      expect(amounts(yield* list(`?from=${day(-1)}`, key))).toEqual([100])

      // Pages of 5: every chargeback once.
      const seen: Array<number> = []
      let cursor: string | null = null
      do {
        const body: any = yield* list(`?limit=5${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`, key)
        seen.push(...amounts(body))
        cursor = body.next_cursor
      } while (cursor !== null)
      expect(seen).toEqual([100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111])
      const page = yield* list(`?limit=5&from=${day(-30)}`, key)
      const c = encodeURIComponent(page.next_cursor)
      yield* list(`?limit=5&from=${day(-30)}&cursor=${c}`, key)
      yield* list(`?limit=5&from=${day(-29)}&cursor=${c}`, key, 400)
      yield* list(`?limit=5&cursor=${c}`, key, 400)
      // A payouts cursor is not a chargebacks cursor.
      yield* sql`
        INSERT INTO settlement_payouts (merchant_id, payout_id, currency, sales_minor, refunds_minor, fees_minor,
          fee_vat_minor, payout_minor, source, sort_at, settlement_date)
        SELECT ${w.shared}, 'po-extra-' || g, 'NOK', 0, 0, 0, 0, 0, 'file', now() - g * interval '1 day', current_date - g
        FROM generate_series(1, 3) g`
      const payoutPage = yield* Effect.map(get(`/api/v1/finance/payouts?limit=1`, key), (r) => r.body)
      yield* list(`?limit=1&cursor=${encodeURIComponent(payoutPage.next_cursor)}`, key, 400)

      yield* list(`?from=2025-01-01&to=2026-01-02`, key, 400)
      yield* list(`?from=2025-01-01&to=2026-01-01`, key)
      yield* list(`?from=${day(0)}&to=${day(-1)}`, key, 400)
      yield* list(`?limit=0`, key, 400)
      yield* list(`?limit=101`, key, 400)
      yield* list(`?from=20250101`, key, 400)
    }))
})
