/**
 * Which of our merchants' accounts at the payment provider a desk payment is read or returned on
 * (POST /book: src/quickbook/book/QuickbookPaymentCheck.ts, QuickbookMoneyReturn.ts).
 */
import { Effect, Option } from "effect"
import { OperatorPaymentAccounts } from "../../payments/OperatorPaymentAccounts.js"
import type { PaymentAccount } from "../../ports/PaymentProvider.js"
import { QuickbookBookRepo } from "./QuickbookBookRepo.js"

export class QuickbookMerchants extends Effect.Service<QuickbookMerchants>()("Quickbook/Merchants", {
  effect: Effect.gen(function*() {
    const repo = yield* QuickbookBookRepo
    const paymentAccounts = yield* OperatorPaymentAccounts

    /**
     * The merchant's account at the provider: the selling operator's own merchant; with `merchantId`
     * (the merchant a payment was made on), that merchant, with the credentials of the operator it
     * belongs to (the selling operator's when it is theirs, or when no operator has it any more).
     */
    const accountFor = Effect.fn("QuickbookMerchants.accountFor")(function*(operatorId: string, merchantId?: string) {
      if (merchantId === undefined) return yield* paymentAccounts.forOperator(operatorId)
      const owner = yield* repo.merchantOwner({ merchantId, operatorId })
      const account = yield* paymentAccounts.forOperator(Option.getOrElse(owner, () => operatorId))
      return Option.map(account, (a): PaymentAccount => ({ ...a, merchantId }))
    })

    /**
     * Our merchants other than `exclude`, each with its operator's credentials: those of the same
     * kind (sandbox or live) as the operator's own merchant. Where a payment not found on the sale's
     * merchant is looked for (a payment on another merchant of ours is a mismatch, not "not found").
     */
    const otherAccounts = Effect.fn("QuickbookMerchants.otherAccounts")(
      function*(operatorId: string, exclude: ReadonlyArray<string>) {
        const rows = yield* repo.otherMerchants({ operatorId, exclude })
        const accounts = yield* Effect.forEach(rows, (r) =>
          Effect.map(
            paymentAccounts.forOperator(r.operator_id),
            Option.map((a): PaymentAccount => ({ ...a, merchantId: r.merchant_id }))
          ))
        return accounts.flatMap((a) => (Option.isSome(a) ? [a.value] : []))
      }
    )

    return { accountFor, otherAccounts } as const
  }),
  dependencies: [QuickbookBookRepo.Default, OperatorPaymentAccounts.Default]
}) {}
