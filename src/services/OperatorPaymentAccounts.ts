/**
 * An operator's merchant at the payment provider (`operator_payment_accounts`, migration 0009) with
 * the credentials to act for it: the partner credentials and base URL from configuration
 * (SURFBOARD_*), or the row's own (sandbox merchants of the demo and the tests).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Redacted } from "effect"
import { PaymentProviderConfig } from "../config.js"
import type { PaymentAccount } from "../ports/PaymentProvider.js"

export class OperatorPaymentAccounts extends Effect.Service<OperatorPaymentAccounts>()("OperatorPaymentAccounts", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = yield* PaymentProviderConfig

    /** None when the operator has no merchant, or no credentials reach it. */
    const forOperator = (operatorId: string) =>
      Effect.gen(function*() {
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

    return { forOperator } as const
  })
}) {}
