/**
 * The demo's payment provider: the Surfboard sandbox, started in-process, with one sandbox merchant
 * per demo operator recorded in `operator_payment_accounts` together with the sandbox's address
 * and the merchant's credentials, so that balance payment links work in the demo without any
 * SURFBOARD_* setting. Runs on every demo start: a merchant seeded earlier is found again (the
 * sandbox's tables outlive restarts) and the address is updated (the port may change). An
 * operator whose row has no address of its own (a live merchant) is left alone. The demo's
 * merchants are marked as sandboxes (Quickbook test keys charge only those), and the demo's desk
 * terminals take card payments on their operator's merchant's card terminal (`deskCardTerminals`).
 *
 * The demo's live bookings with departures from yesterday on are paid at the sandbox (a card
 * order per payment, recorded in `booking_payments`), so that cancelling one refunds real sandbox
 * money: the whole price of a pay-now booking; for a pay-later booking its reservation fee, plus its
 * balance when collected. Bookings paid earlier are skipped, so this runs quickly on later starts.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Sandbox } from "../sandbox/surfboard/index.js"

export const setUpDemoPaymentProvider = (sandbox: Sandbox) =>
  Effect.zipRight(setUpDemoMerchants(sandbox), recordDemoPayments(sandbox)).pipe(
    Effect.withSpan("Demo.setUpPaymentProvider")
  )

/** A sandbox merchant per demo operator (found again on later starts), recorded as its payment account. */
export const setUpDemoMerchants = (sandbox: Sandbox) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const operators = yield* sql<{ id: string; name: string; merchant_id: string | null }>`
      SELECT o.id, o.name, a.merchant_id
      FROM operators o LEFT JOIN operator_payment_accounts a ON a.operator_id = o.id
      WHERE a.operator_id IS NULL OR a.base_url IS NOT NULL
      ORDER BY o.name, o.id`
    for (const op of operators) {
      const known = op.merchant_id === null ? undefined : yield* sandbox.findMerchant(op.merchant_id)
      const merchant = known ?? (yield* sandbox.createMerchant({ name: op.name }))
      yield* sql`
        INSERT INTO operator_payment_accounts (operator_id, merchant_id, payment_page_terminal_id, base_url, api_key, api_secret, sandbox)
        VALUES (${op.id}, ${merchant.id}, ${merchant.paymentPageTerminalId}, ${sandbox.baseUrl}, ${merchant.apiKey}, ${merchant.apiSecret}, true)
        ON CONFLICT (operator_id) DO UPDATE SET merchant_id = excluded.merchant_id,
          payment_page_terminal_id = excluded.payment_page_terminal_id, base_url = excluded.base_url,
          api_key = excluded.api_key, api_secret = excluded.api_secret, sandbox = true, updated_at = now()`
    }
  })

/**
 * The demo's desk terminals (ids from demo.json) take card payments on their operator's sandbox
 * merchant's card terminal: set on every start, since the merchant is made on the first start after
 * seeding (and again if the sandbox's tables are gone). Answers terminal id → card terminal id.
 */
export const deskCardTerminals = (sandbox: Sandbox, terminalIds: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const assigned = new Map<string, string | null>()
    if (terminalIds.length === 0) return assigned
    const desks = yield* sql<{ id: string; merchant_id: string | null }>`
      SELECT t.id, a.merchant_id FROM quickbook_terminals t
        LEFT JOIN operator_payment_accounts a ON a.operator_id = t.operator_id AND a.sandbox AND a.base_url IS NOT NULL
      WHERE t.id IN ${sql.in(terminalIds)}`
    for (const desk of desks) {
      const merchant = desk.merchant_id === null ? undefined : yield* sandbox.findMerchant(desk.merchant_id)
      const card = merchant?.terminalId ?? null
      if (card !== null) yield* sql`UPDATE quickbook_terminals SET payment_terminal_id = ${card} WHERE id = ${desk.id}`
      assigned.set(desk.id, card)
    }
    return assigned
  }).pipe(Effect.withSpan("Demo.deskCardTerminals"))

const recordDemoPayments = (sandbox: Sandbox) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const due = yield* sql<{
      id: string
      confirmation_code: string
      merchant_id: string
      currency: string
      purpose: "full" | "reservation_fee" | "balance"
      amount_minor: number
      paid_at: Date
    }>`
      WITH live AS (
        SELECT b.*, a.merchant_id FROM bookings b JOIN operator_payment_accounts a ON a.operator_id = b.operator_id
        WHERE b.status IN ('CONFIRMED', 'RESERVED') AND b.experience_date >= current_date - 1 AND a.base_url IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM booking_payments p WHERE p.booking_id = b.id)
      )
      SELECT id, confirmation_code, merchant_id, currency, 'full' AS purpose, amount_minor::int AS amount_minor,
        coalesce(booked_at, created_at) AS paid_at
      FROM live WHERE payment_strategy = 'pay_now' AND amount_minor > 0
      UNION ALL
      SELECT id, confirmation_code, merchant_id, currency, 'reservation_fee', (amount_minor - pay_later_amount_minor)::int,
        coalesce(booked_at, created_at)
      FROM live WHERE payment_strategy = 'pay_later' AND amount_minor > pay_later_amount_minor
      UNION ALL
      SELECT id, confirmation_code, merchant_id, currency, 'balance', pay_later_amount_minor::int,
        coalesce(pay_later_paid_at, booked_at, created_at)
      FROM live WHERE payment_strategy = 'pay_later' AND pay_later_status = 'collected' AND pay_later_amount_minor > 0`
    yield* Effect.forEach(due, (p) =>
      Effect.gen(function*() {
        const sale = yield* sandbox.createPaidOrder({
          merchantId: p.merchant_id,
          amountMinor: p.amount_minor,
          currency: p.currency.trim(),
          referenceId: p.confirmation_code
        })
        yield* sql`
          INSERT INTO booking_payments (booking_id, purpose, merchant_id, provider_order_id, provider_payment_id, amount_minor, currency, paid_at)
          VALUES (${p.id}, ${p.purpose}, ${p.merchant_id}, ${sale.orderId}, ${sale.paymentId}, ${p.amount_minor}, ${p.currency}, ${p.paid_at})`
      }), { concurrency: 4, discard: true })
    if (due.length > 0) {
      yield* Effect.logInfo(`demo: ${due.length} payments of live bookings made at the payment sandbox`)
    }
  }).pipe(Effect.withSpan("Demo.recordPayments"))
