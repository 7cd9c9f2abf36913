/**
 * CLI for operators' merchants at the payment provider (`operator_payment_accounts`,
 * src/payments/OperatorPaymentAccounts.ts): `payment-accounts set` records or replaces an operator's
 * merchant (with `--sandbox` for a sandbox merchant: Quickbook test keys charge only those, live keys
 * never); `payment-accounts list` shows them without credentials. Output is JSON.
 */
import { Command, Options } from "@effect/cli"
import { Console, Effect, Option, Redacted } from "effect"
import { OperatorPaymentAccounts } from "../payments/OperatorPaymentAccounts.js"
import { DatabaseForCli } from "./database.js"

const print = (value: unknown) => Console.log(JSON.stringify(value, null, 2))

const withAccounts = <A, E>(f: (accounts: OperatorPaymentAccounts) => Effect.Effect<A, E>) =>
  Effect.flatMap(OperatorPaymentAccounts, f).pipe(
    Effect.provide(OperatorPaymentAccounts.Default),
    Effect.provide(DatabaseForCli)
  )

const set = Command.make(
  "set",
  {
    operator: Options.text("operator").pipe(Options.withDescription("operator id")),
    merchant: Options.text("merchant").pipe(
      Options.withDescription("the operator's merchant id at the payment provider")
    ),
    paymentPageTerminal: Options.optional(Options.text("payment-page-terminal")).pipe(
      Options.withDescription("the merchant's online (PaymentPage) terminal, for balance payment links")
    ),
    baseUrl: Options.optional(Options.text("base-url")).pipe(
      Options.withDescription(
        "reach this merchant at its own address and credentials (a sandbox) instead of SURFBOARD_*"
      )
    ),
    apiKey: Options.optional(Options.text("api-key")),
    apiSecret: Options.optional(Options.redacted("api-secret")),
    sandbox: Options.boolean("sandbox").pipe(
      Options.withDescription("a sandbox merchant: Quickbook test keys charge only sandbox merchants, live keys never")
    )
  },
  (o) => {
    const own = Option.all({ baseUrl: o.baseUrl, apiKey: o.apiKey, apiSecret: Option.map(o.apiSecret, Redacted.value) })
    const given = [Option.isSome(o.baseUrl), Option.isSome(o.apiKey), Option.isSome(o.apiSecret)].filter(Boolean).length
    return given !== 0 && given !== 3
      ? Effect.fail(new Error("give --base-url, --api-key and --api-secret together, or none"))
      : withAccounts((a) =>
        a.set({
          operatorId: o.operator,
          merchantId: o.merchant,
          paymentPageTerminalId: Option.getOrNull(o.paymentPageTerminal),
          own: Option.getOrNull(own),
          sandbox: o.sandbox
        })
      ).pipe(
        Effect.zipRight(Console.log(`operator ${o.operator}: ${o.sandbox ? "sandbox " : ""}merchant ${o.merchant}`))
      )
  }
).pipe(Command.withDescription("record or replace an operator's merchant at the payment provider"))

const list = Command.make("list", {}, () => withAccounts((a) => a.list()).pipe(Effect.flatMap(print))).pipe(
  Command.withDescription("operators' merchants (no credentials)")
)

export const paymentAccounts = Command.make("payment-accounts").pipe(
  Command.withDescription("operators' merchants at the payment provider"),
  Command.withSubcommands([set, list])
)
