/**
 * The demo's payouts and chargebacks (issue 15 part A), on every demo start after the payment
 * sandbox's merchants exist (src/demo/paymentProvider.ts); idempotent: a second start adds nothing
 * but the settlement reports of the days since.
 *
 * - **A shared payout account**: Nordkapp Coastal Tours AS is paid through Fjord Explorer AS's
 *   sandbox merchant. Nordkapp sells no tours here, so moving its account moves no payment; in the
 *   demo it is a trading name of the same company (its legal name and org number are set to Fjord
 *   Explorer AS's: operators sharing a payout account are one legal entity). Keys of either operator
 *   see the same payouts, with both in `partners`.
 * - **90 days of card sales** (NOK, what the sandbox settles) at every demo merchant, once, with a
 *   refund every few days, so that each payout account has a DAILY payout for each of the last 90
 *   days; adjustments of several types: a monthly service-provider fee, weekly partner fees, a
 *   goodwill credit, chargebacks with their fees.
 * - **A pending liability**: a large partner fee makes one of Arctic Whale Safari AS's payouts
 *   negative; the next payout carries it as a previous pending liability.
 * - **Chargebacks** on Fjord Explorer and Lisboa Tejo Cruises bookings (matched through the order's
 *   reference, the booking's confirmation code) in several dispute states (triage, evidence
 *   requested, won, lost, and one only the settlement report knows of), and one on a walk-in sale
 *   that matches no booking (stored, never listed: `npm run cli -- settlements chargebacks --unmatched`).
 *
 * The reports are then imported as the `settlement-import` job does (SettlementImport.run).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { PaymentProvider } from "../ports/PaymentProvider.js"
import type { Sandbox } from "../sandbox/surfboard/index.js"
import { SettlementImport } from "../settlements/SettlementImport.js"

const DAYS = 90
const DAY_MS = 86_400_000
const SHARED_OWNER = "Fjord Explorer AS"
const SHARED_WITH = "Nordkapp Coastal Tours AS"
const LIABILITY_AT = "Arctic Whale Safari AS"
const MARKER = "DEMO-PAYOUT-"

/** A small deterministic generator per merchant, so every demo database looks alike. */
const generator = (seed: string) => {
  let state = [...seed].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7)
  return () => {
    state = (state * 1103515245 + 12345) >>> 0
    return state / 2 ** 32
  }
}

const dayStart = (daysAgo: number) => new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS - daysAgo * DAY_MS)
const dayOf = (daysAgo: number) => dayStart(daysAgo).toISOString().slice(0, 10)
const at = (daysAgo: number, hour: number) => new Date(dayStart(daysAgo).getTime() + hour * 3_600_000)

interface DemoMerchant {
  readonly merchant_id: string
  readonly names: ReadonlyArray<string>
}

const DISPUTES: ReadonlyArray<
  { status: string | null; reason: string | null; respondIn: number | null; registeredAgo: number | null }
> = [
  { status: "triage", reason: "Card holder does not recognise the transaction", respondIn: 12, registeredAgo: 2 },
  { status: "won", reason: "Service not provided (weather cancellation disputed)", respondIn: null, registeredAgo: 20 },
  { status: "lost", reason: "Duplicate processing", respondIn: null, registeredAgo: 30 },
  { status: null, reason: null, respondIn: null, registeredAgo: null }
]

export const setUpDemoPayouts = (sandbox: Sandbox) =>
  Effect.gen(function*() {
    const startedAt = Date.now()
    const sql = yield* SqlClient.SqlClient
    const provider = yield* PaymentProvider
    const operatorNamed = (name: string) =>
      Effect.map(
        sql<{ id: string; legal_name: string | null; org_number: string | null; merchant_id: string | null }>`
          SELECT o.id, o.legal_name, o.org_number, a.merchant_id FROM operators o
          LEFT JOIN operator_payment_accounts a ON a.operator_id = o.id AND a.base_url IS NOT NULL
          WHERE o.name = ${name} ORDER BY o.created_at LIMIT 1`,
        (rows) => Option.fromNullable(rows[0])
      )

    // The shared account: Nordkapp paid through Fjord Explorer's merchant (one legal entity).
    const owner = yield* operatorNamed(SHARED_OWNER)
    const sharer = yield* operatorNamed(SHARED_WITH)
    if (Option.isSome(owner) && Option.isSome(sharer) && owner.value.merchant_id !== null) {
      yield* sql`
        UPDATE operator_payment_accounts t SET merchant_id = s.merchant_id,
          payment_page_terminal_id = s.payment_page_terminal_id, base_url = s.base_url, api_key = s.api_key,
          api_secret = s.api_secret, updated_at = now()
        FROM operator_payment_accounts s
        WHERE s.operator_id = ${owner.value.id} AND t.operator_id = ${sharer.value.id}
          AND t.merchant_id IS DISTINCT FROM s.merchant_id`
      yield* sql`
        UPDATE operators SET legal_name = ${owner.value.legal_name}, org_number = ${owner.value.org_number}
        WHERE id = ${sharer.value.id}
          AND (legal_name IS DISTINCT FROM ${owner.value.legal_name} OR org_number IS DISTINCT FROM ${owner.value.org_number})`
    }

    const merchants = yield* sql<DemoMerchant>`
      SELECT a.merchant_id, array_agg(o.name ORDER BY o.name) AS names
      FROM operator_payment_accounts a JOIN operators o ON o.id = a.operator_id
      WHERE a.base_url IS NOT NULL AND a.sandbox
      GROUP BY a.merchant_id ORDER BY min(o.name)`
    let seeded = 0
    for (const m of merchants) {
      const merchant = yield* sandbox.findMerchant(m.merchant_id)
      if (!merchant) continue
      yield* sql`
        INSERT INTO settlement_merchants (merchant_id, provider_partner_id) VALUES (${merchant.id}, ${merchant.partnerId})
        ON CONFLICT (merchant_id) DO UPDATE SET provider_partner_id = excluded.provider_partner_id`
      const [done] = yield* sql<{ found: boolean }>`
        SELECT EXISTS (SELECT 1 FROM surfboard_sandbox.orders WHERE merchant_id = ${merchant.id}
          AND reference_id LIKE ${MARKER + "%"}) AS found`
      if (done?.found) continue
      seeded++
      const random = generator(m.names.join("|"))
      const account = sandbox.account(merchant)
      const sale = (daysAgo: number, hour: number, amountMinor: number, referenceId: string) =>
        Effect.zipRight(
          sandbox.clock.set(at(daysAgo, hour)),
          sandbox.createPaidOrder({ merchantId: merchant.id, amountMinor, currency: "NOK", referenceId })
        )
      const charge = (daysAgo: number, type: string, o: { debit?: number; credit?: number; paymentId?: string }) =>
        sandbox.reports.seedCharge({
          merchantId: merchant.id,
          type,
          ...(o.debit !== undefined ? { debitMinor: o.debit } : {}),
          ...(o.credit !== undefined ? { creditMinor: o.credit } : {}),
          ...(o.paymentId !== undefined ? { paymentId: o.paymentId } : {}),
          settlementDate: dayOf(daysAgo)
        })
      yield* Effect.gen(function*() {
        for (let ago = DAYS + 1; ago >= 2; ago--) {
          const sales = random() < 0.35 ? 2 : 1
          for (let i = 0; i < sales; i++) {
            const amount = Math.round((150_000 + random() * 450_000) / 100) * 100
            const paid = yield* sale(ago, 8 + i * 3, amount, `${MARKER}${ago}-${i}`)
            if (random() < 0.12) {
              yield* sandbox.clock.set(at(ago, 18))
              yield* provider.refund(account, {
                purchaseOrderId: paid.orderId,
                amountMinor: Math.round(amount / 200) * 100,
                currency: "NOK",
                idempotencyReference: `demo-payout-refund-${paid.orderId}`
              })
            }
          }
          if (ago % 30 === 5) yield* charge(ago - 1, "SERVICE_PROVIDER_FEE", { debit: 29_900 })
          if (ago % 7 === 3) yield* charge(ago - 1, "PARTNER_FEE", { debit: 4_900 })
        }
        yield* charge(45, "GOODWILL_CREDIT", { credit: 10_000 })
        if (m.names.includes(LIABILITY_AT)) {
          // Larger than the day's sales: the payout is negative and carried into the next one.
          yield* charge(40, "PARTNER_FEE", { debit: 2_000_000 })
        }
        // Chargebacks on bookings of the account's operators (the order's reference is the booking's
        // code), and one on a walk-in sale that matches no booking.
        const bookings = yield* sql<{ confirmation_code: string; amount_minor: number }>`
          SELECT b.confirmation_code, b.amount_minor::int AS amount_minor FROM bookings b
          JOIN operator_payment_accounts a ON a.operator_id = b.operator_id
          WHERE a.merchant_id = ${merchant.id} AND b.status IN ('CONFIRMED', 'CANCELLED', 'REFUNDED')
            AND b.amount_minor > 0
          ORDER BY b.created_at, b.id LIMIT 4`
        const disputed = m.names.includes(SHARED_OWNER) ? bookings : bookings.slice(0, 1)
        for (const [i, b] of disputed.entries()) {
          const paid = yield* sale(30 - i * 5, 12, b.amount_minor, b.confirmation_code)
          yield* charge(22 - i * 5, "CHARGEBACK", { debit: b.amount_minor, paymentId: paid.paymentId! })
          yield* charge(22 - i * 5, "CHARGEBACK_FEE", { debit: 15_000, paymentId: paid.paymentId! })
        }
        if (m.names.includes(SHARED_OWNER)) {
          const walkIn = yield* sale(26, 15, 45_000, "WALK-IN-4471")
          yield* charge(18, "CHARGEBACK", { debit: 45_000, paymentId: walkIn.paymentId! })
        }
      }).pipe(Effect.ensuring(sandbox.clock.reset))
    }

    const seededAt = Date.now()
    const imported = yield* Effect.flatMap(SettlementImport, (s) => s.run()).pipe(
      Effect.provide(SettlementImport.Default)
    )
    const importedAt = Date.now()

    // The dispute desk's facts, in several states (the same facts on every start).
    // Fjord Explorer's first (triage, won, lost, one only the report knows of), then the others'.
    const ownerMerchant = Option.isSome(owner) ? owner.value.merchant_id : null
    const chargebacks = yield* sql<{ id: string }>`
      SELECT c.id FROM chargebacks c
      WHERE c.booking_id IS NOT NULL AND c.merchant_id IN ${sql.in(merchants.map((m) => m.merchant_id).concat(""))}
      ORDER BY c.merchant_id IS NOT DISTINCT FROM ${ownerMerchant} DESC, c.transaction_date, c.id`
    for (const [i, c] of chargebacks.entries()) {
      const facts = i < DISPUTES.length ? DISPUTES[i]! : {
        status: "evidence_requested",
        reason: "Card holder says the tour was not as described",
        respondIn: 9,
        registeredAgo: 5
      }
      yield* sql`
        UPDATE chargebacks SET dispute_reference = ${
        facts.status === null ? null : `DSP-${c.id.slice(0, 8).toUpperCase()}`
      },
          dispute_status = ${facts.status}, reason = ${facts.reason},
          respond_by = ${facts.respondIn === null ? null : dayOf(-facts.respondIn)}::date,
          registered_at = ${facts.registeredAgo === null ? null : dayOf(facts.registeredAgo)}::date
        WHERE id = ${c.id} AND dispute_reference IS NULL AND dispute_status IS NULL`
    }
    yield* Effect.logInfo(
      `demo payouts: ${seeded} payout accounts given 90 days of sandbox sales; imported ${imported.payouts} payouts ` +
        `and ${imported.chargebacks} chargebacks (${imported.failed} accounts failed); sales made in ` +
        `${seededAt - startedAt} ms, reports imported in ${importedAt - seededAt} ms`
    )
  }).pipe(Effect.withSpan("Demo.setUpPayouts"))
