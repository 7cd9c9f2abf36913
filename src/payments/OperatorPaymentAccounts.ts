/**
 * An operator's merchant at the payment provider (`operator_payment_accounts`, migration 0009) with
 * the credentials to act for it: the partner credentials and base URL from configuration
 * (SURFBOARD_*), or the row's own (sandbox merchants of the demo and the tests). `sandbox` marks a
 * sandbox merchant (migration 0018): Quickbook test keys charge only sandbox merchants, live keys never.
 * SQL: OperatorPaymentAccountsRepo.
 */
import { Effect, Option, Redacted } from "effect"
import { AdminError } from "../operators/Operators.js"
import type { PaymentAccount } from "../ports/PaymentProvider.js"
import { PaymentProviderConfig } from "./config.js"
import { OperatorPaymentAccountsRepo } from "./OperatorPaymentAccountsRepo.js"

export interface PaymentAccountInput {
  readonly operatorId: string
  readonly merchantId: string
  readonly paymentPageTerminalId: string | null
  /** Its own base URL and credentials (a sandbox merchant), instead of SURFBOARD_*. */
  readonly own: { readonly baseUrl: string; readonly apiKey: string; readonly apiSecret: string } | null
  readonly sandbox: boolean
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export class OperatorPaymentAccounts
  extends Effect.Service<OperatorPaymentAccounts>()("Payments/OperatorPaymentAccounts", {
    effect: Effect.gen(function*() {
      const repo = yield* OperatorPaymentAccountsRepo
      const config = yield* PaymentProviderConfig

      /** None when the operator has no merchant, or no credentials reach it. */
      const forOperator = Effect.fn("OperatorPaymentAccounts.forOperator")(function*(operatorId: string) {
        const found = yield* repo.merchantOf(operatorId)
        if (Option.isNone(found)) return Option.none<PaymentAccount>()
        const row = found.value
        const parts = row.base_url !== null && row.api_key !== null && row.api_secret !== null
          ? Option.some({
            baseUrl: row.base_url,
            apiKey: Redacted.make(row.api_key),
            apiSecret: Redacted.make(row.api_secret)
          })
          : Option.all({ baseUrl: config.baseUrl, apiKey: config.apiKey, apiSecret: config.apiSecret })
        if (Option.isNone(parts)) return Option.none<PaymentAccount>()
        return Option.some(
          {
            id: "surfboard",
            ...parts.value,
            merchantId: row.merchant_id,
            paymentPageTerminalId: row.payment_page_terminal_id ?? Option.getOrNull(config.paymentPageTerminalId)
          } satisfies PaymentAccount
        )
      })

      /** Records (or replaces) the operator's merchant. */
      const set = Effect.fn("OperatorPaymentAccounts.set")(function*(a: PaymentAccountInput) {
        const exists = UUID.test(a.operatorId) && (yield* repo.operatorExists(a.operatorId)).found
        if (!exists) return yield* new AdminError({ message: `operator ${a.operatorId} not found` })
        yield* repo.upsert({
          operatorId: a.operatorId,
          merchantId: a.merchantId,
          paymentPageTerminalId: a.paymentPageTerminalId,
          baseUrl: a.own?.baseUrl.replace(/\/+$/, "") ?? null,
          apiKey: a.own?.apiKey ?? null,
          apiSecret: a.own?.apiSecret ?? null,
          sandbox: a.sandbox
        })
      })

      /** Every operator's merchant (no credentials). */
      const list = Effect.fn("OperatorPaymentAccounts.list")(() => repo.list())

      return { forOperator, set, list } as const
    }),
    dependencies: [OperatorPaymentAccountsRepo.Default]
  })
{}
