/**
 * The demo's payment provider: the Surfboard sandbox, started in-process, with one sandbox merchant
 * per demo operator recorded in `operator_payment_accounts` together with the sandbox's address
 * and the merchant's credentials, so that balance payment links work in the demo without any
 * SURFBOARD_* setting. Runs on every demo start: a merchant seeded earlier is found again (the
 * sandbox's tables outlive restarts) and the address is updated (the port may change). An
 * operator whose row has no address of its own (a live merchant) is left alone.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Sandbox } from "../sandbox/surfboard/index.js"

export const setUpDemoPaymentProvider = (sandbox: Sandbox) =>
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
        INSERT INTO operator_payment_accounts (operator_id, merchant_id, payment_page_terminal_id, base_url, api_key, api_secret)
        VALUES (${op.id}, ${merchant.id}, ${merchant.paymentPageTerminalId}, ${sandbox.baseUrl}, ${merchant.apiKey}, ${merchant.apiSecret})
        ON CONFLICT (operator_id) DO UPDATE SET merchant_id = excluded.merchant_id,
          payment_page_terminal_id = excluded.payment_page_terminal_id, base_url = excluded.base_url,
          api_key = excluded.api_key, api_secret = excluded.api_secret, updated_at = now()`
    }
  }).pipe(Effect.withSpan("Demo.setUpPaymentProvider"))
