/**
 * An operator's merchant at the payment provider (`operator_payment_accounts`, migration 0009) with
 * the credentials to act for it: the partner credentials and base URL from configuration
 * (SURFBOARD_*), or the row's own (sandbox merchants of the demo and the tests). `sandbox` marks a
 * sandbox merchant (migration 0018): Quickbook test keys charge only sandbox merchants, live keys never.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Redacted } from "effect"
import { PaymentProviderConfig } from "../config.js"
import type { PaymentAccount } from "../ports/PaymentProvider.js"
import { AdminError } from "../operators/Operators.js"

export interface PaymentAccountInput {
  readonly operatorId: string
  readonly merchantId: string
  readonly paymentPageTerminalId: string | null
  /** Its own base URL and credentials (a sandbox merchant), instead of SURFBOARD_*. */
  readonly own: { readonly baseUrl: string; readonly apiKey: string; readonly apiSecret: string } | null
  readonly sandbox: boolean
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export class OperatorPaymentAccounts extends Effect.Service<OperatorPaymentAccounts>()("Payments/OperatorPaymentAccounts", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = yield* PaymentProviderConfig

    /** None when the operator has no merchant, or no credentials reach it. */
    const forOperator = Effect.fn("OperatorPaymentAccounts.forOperator")(function*(operatorId: string) {
      const [row] = yield* sql<{
        merchant_id: string
        payment_page_terminal_id: string | null
        base_url: string | null
        api_key: string | null
        api_secret: string | null
      }>`
        SELECT merchant_id, payment_page_terminal_id, base_url, api_key, api_secret
        FROM operator_payment_accounts WHERE operator_id = ${operatorId}`.pipe(Effect.orDie)
      const parts = row?.base_url != null && row.api_key !== null && row.api_secret !== null
        ? Option.some({ baseUrl: row.base_url, apiKey: Redacted.make(row.api_key), apiSecret: Redacted.make(row.api_secret) })
        : Option.all({ baseUrl: config.baseUrl, apiKey: config.apiKey, apiSecret: config.apiSecret })
      if (row === undefined || Option.isNone(parts)) return Option.none<PaymentAccount>()
      return Option.some({
        id: "surfboard",
        ...parts.value,
        merchantId: row.merchant_id,
        paymentPageTerminalId: row.payment_page_terminal_id ?? Option.getOrNull(config.paymentPageTerminalId)
      } satisfies PaymentAccount)
    })

    /** Records (or replaces) the operator's merchant. */
    const set = Effect.fn("OperatorPaymentAccounts.set")(function*(a: PaymentAccountInput) {
      const [operator] = UUID.test(a.operatorId)
        ? yield* sql<{ id: string }>`SELECT id FROM operators WHERE id = ${a.operatorId}`.pipe(Effect.orDie)
        : []
      if (!operator) return yield* new AdminError({ message: `operator ${a.operatorId} not found` })
      yield* sql`
        INSERT INTO operator_payment_accounts (operator_id, merchant_id, payment_page_terminal_id, base_url, api_key, api_secret, sandbox)
        VALUES (${a.operatorId}, ${a.merchantId}, ${a.paymentPageTerminalId}, ${a.own?.baseUrl.replace(/\/+$/, "") ?? null},
          ${a.own?.apiKey ?? null}, ${a.own?.apiSecret ?? null}, ${a.sandbox})
        ON CONFLICT (operator_id) DO UPDATE SET merchant_id = excluded.merchant_id,
          payment_page_terminal_id = excluded.payment_page_terminal_id, base_url = excluded.base_url,
          api_key = excluded.api_key, api_secret = excluded.api_secret, sandbox = excluded.sandbox, updated_at = now()`.pipe(
        Effect.orDie
      )
    })

    /** Every operator's merchant (no credentials). */
    const list = Effect.fn("OperatorPaymentAccounts.list")(() =>
      sql<{ operator_id: string; operator_name: string; merchant_id: string; payment_page_terminal_id: string | null; base_url: string | null; sandbox: boolean }>`
        SELECT a.operator_id, o.name AS operator_name, a.merchant_id, a.payment_page_terminal_id, a.base_url, a.sandbox
        FROM operator_payment_accounts a JOIN operators o ON o.id = a.operator_id
        ORDER BY o.name, a.operator_id`.pipe(Effect.orDie))

    return { forOperator, set, list } as const
  })
}) {}
