/**
 * CLI for commission invoices and credit notes (src/invoices/; docs/api/invoices.md):
 * `invoices reissue --number INV-000042` (or `--id <uuid>`) makes the document's PDF and CSV again
 * from its stored content and stores them in place of the old ones (the same content: a lost or
 * damaged file is restored; the document itself never changes);
 * `invoices close --month 2026-10 [--merchant <id>]` issues a month's documents now, as the
 * commission-close job does (a month already issued for a legal entity is skipped). Output is JSON.
 */
import { Command, Options } from "@effect/cli"
import { Console, Effect, Layer, Option } from "effect"
import { InvoiceIssuing } from "../invoices/InvoiceIssuing.js"
import { DatabaseForCli } from "./database.js"

const print = (value: unknown) => Console.log(JSON.stringify(value, null, 2))

const IssuingForCli = InvoiceIssuing.Default.pipe(Layer.provideMerge(DatabaseForCli))

const reissue = Command.make(
  "reissue",
  {
    number: Options.optional(
      Options.text("number").pipe(Options.withDescription("the document's number, e.g. INV-000042"))
    ),
    id: Options.optional(Options.text("id").pipe(Options.withDescription("the document's id")))
  },
  (o) =>
    Effect.gen(function*() {
      const which = Option.isSome(o.number)
        ? { number: o.number.value }
        : Option.isSome(o.id)
        ? { id: o.id.value }
        : undefined
      if (which === undefined) return yield* Effect.fail(new Error("give --number or --id"))
      const issuing = yield* InvoiceIssuing
      const done = yield* issuing.reissueFiles(which)
      if (Option.isNone(done)) return yield* Effect.fail(new Error(`no such document: ${JSON.stringify(which)}`))
      yield* print({ reissued: done.value })
    }).pipe(Effect.provide(IssuingForCli))
).pipe(Command.withDescription("make a commission document's PDF and CSV again from its stored content and store them"))

const close = Command.make(
  "close",
  {
    month: Options.text("month").pipe(Options.withDescription("delivery month YYYY-MM (UTC)")),
    merchant: Options.optional(Options.text("merchant").pipe(Options.withDescription("only this payout account")))
  },
  (o) =>
    Effect.gen(function*() {
      if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(o.month)) return yield* Effect.fail(new Error("--month must be YYYY-MM"))
      const issuing = yield* InvoiceIssuing
      yield* print(
        yield* issuing.closeMonth(o.month, Option.isSome(o.merchant) ? { merchantIds: [o.merchant.value] } : {})
      )
    }).pipe(Effect.provide(IssuingForCli))
).pipe(Command.withDescription("issue a month's commission invoices and credit notes now (what commission-close does)"))

export const invoices = Command.make("invoices").pipe(Command.withSubcommands([reissue, close]))
