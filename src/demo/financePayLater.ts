/**
 * The demo's pay-later charges (issue 15, part B; docs/api/pay-later.md), on every start and
 * idempotent: the seeded pay-later bookings already have their charges (migration 0031's trigger),
 * in every state the seed leaves them (upcoming, failed for good, collected, cancelled, and cancelled
 * and refunded when the balance was collected before the cancel). This adds what the seed cannot:
 *
 * - a saved card at the Surfboard sandbox (a tokenised first payment) for every open charge of an
 *   operator paid through the sandbox, so the `pay-later-charger` job really charges them when due;
 * - the attempts behind the seeded outcomes (a failed balance was tried on every attempt, a
 *   collected one once);
 * - once per demo operator, a charge that is failed and retrying: its first attempt two hours ago
 *   was softly declined, the next one is in four hours (the job then charges it at the sandbox).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Sandbox } from "../sandbox/surfboard/index.js"

export const setUpDemoPayLater = (sandbox: Sandbox) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const open = yield* sql<{ id: string; booking_id: string; merchant_id: string; currency: string }>`
      SELECT c.id, c.booking_id, a.merchant_id, trim(c.currency) AS currency
      FROM pay_later_charges c JOIN operator_payment_accounts a ON a.operator_id = c.operator_id AND a.base_url IS NOT NULL
      JOIN bookings b ON b.id = c.booking_id
      WHERE c.token_id IS NULL AND b.status IN ('RESERVED', 'CONFIRMED') AND (c.state = 'upcoming' OR c.retrying)`
    yield* Effect.forEach(open, (c) =>
      Effect.gen(function*() {
        const card = yield* sandbox.saveCard({
          merchantId: c.merchant_id,
          amountMinor: 100,
          currency: c.currency,
          referenceId: `card:${c.booking_id}`
        })
        yield* sql`UPDATE pay_later_charges SET token_id = ${card.tokenId} WHERE id = ${c.id} AND token_id IS NULL`
      }), { concurrency: 4, discard: true })

    // The attempts behind the seeded outcomes.
    yield* sql`
      UPDATE pay_later_charges SET attempts = 4, last_attempt_at = least(final_deadline_at, now()),
        failure_message = 'the card was declined on every attempt (INSUFFICIENT_FUNDS)'
      WHERE state = 'failed' AND attempts = 0 AND NOT retrying`
    yield* sql`
      UPDATE pay_later_charges SET attempts = 1, last_attempt_at = collected_at
      WHERE state IN ('collected', 'cancelled') AND collected_at IS NOT NULL AND attempts = 0`
    yield* sql`
      UPDATE pay_later_charges SET attempts = 1, last_attempt_at = charge_at
      WHERE state = 'cancelled' AND refunded AND attempts = 0`

    // Once per operator: a charge failed and retrying (the demo's own attempt reference marks it done).
    const retrying = yield* sql<{ id: string; booking_id: string; merchant_id: string }>`
      SELECT DISTINCT ON (c.operator_id) c.id, c.booking_id, a.merchant_id
      FROM pay_later_charges c JOIN bookings b ON b.id = c.booking_id
        JOIN operator_payment_accounts a ON a.operator_id = c.operator_id AND a.base_url IS NOT NULL
      WHERE c.state = 'upcoming' AND c.attempts = 0 AND b.status IN ('RESERVED', 'CONFIRMED')
        AND b.experience_date >= current_date + 10
        -- Not the booking demo.json names as the payment-link example (the first such of its operator).
        AND b.id NOT IN (
          SELECT DISTINCT ON (x.operator_id) x.id FROM bookings x
          WHERE x.payment_strategy = 'pay_later' AND x.pay_later_status = 'upcoming' AND x.status = 'CONFIRMED'
            AND x.experience_date >= current_date + 7
          ORDER BY x.operator_id, x.experience_date, x.confirmation_code)
        AND NOT EXISTS (
          SELECT 1 FROM pay_later_attempts x JOIN pay_later_charges y ON y.id = x.charge_id
          WHERE y.operator_id = c.operator_id AND x.idempotency_reference LIKE 'demo:%')
      ORDER BY c.operator_id, c.charge_at, c.id`
    for (const c of retrying) {
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`UPDATE bookings SET pay_later_charge_at = now() - interval '2 hours' WHERE id = ${c.booking_id}`
        yield* sql`
          INSERT INTO pay_later_attempts (charge_id, number, idempotency_reference, merchant_id, amount_minor, currency,
            started_at, outcome, decline_reason, finished_at)
          SELECT id, 1, 'demo:' || id, ${c.merchant_id}, amount_minor, currency, now() - interval '2 hours', 'soft_decline',
            'INSUFFICIENT_FUNDS', now() - interval '2 hours'
          FROM pay_later_charges WHERE id = ${c.id}`
        yield* sql`UPDATE bookings SET pay_later_status = 'failed', updated_at = now() WHERE id = ${c.booking_id}`
        yield* sql`
          UPDATE pay_later_charges SET retrying = true, attempts = 1, last_attempt_at = now() - interval '2 hours',
            next_attempt_at = now() + interval '4 hours',
            failure_message = 'the card was declined for now (INSUFFICIENT_FUNDS); the charge is tried again'
          WHERE id = ${c.id}`
      }))
    }
    if (open.length > 0 || retrying.length > 0) {
      yield* Effect.logInfo(
        `demo pay-later: ${open.length} cards saved at the payment sandbox, ${retrying.length} charges retrying`
      )
    }
  }).pipe(Effect.withSpan("Demo.setUpPayLater"))
