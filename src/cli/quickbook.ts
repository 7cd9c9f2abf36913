/**
 * CLI for the Quickbook (desk sales) API: `quickbook terminals register|set-payment-terminal|deactivate|list`
 * and `quickbook keys issue|list|bind|unbind|revoke`. A terminal belongs to one selling operator and
 * takes card payments on its card terminal at the payment provider (without one it cannot charge); a
 * key (`svcqb_live_...` or, with `--test`, `svcqb_test_...`) is bound to one or more terminals.
 */
import { Args, Command, Options } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import { QuickbookKeys } from "../quickbook/terminals/QuickbookKeys.js"
import { DatabaseForCli } from "./database.js"

const withKeys = <A, E>(f: (keys: QuickbookKeys) => Effect.Effect<A, E>) =>
  Effect.flatMap(QuickbookKeys, f).pipe(Effect.provide(QuickbookKeys.Default), Effect.provide(DatabaseForCli))

const print = (value: unknown) => Console.log(JSON.stringify(value, null, 2))

const paymentTerminalOption = Options.text("payment-terminal").pipe(
  Options.withDescription("the desk's card terminal at the payment provider (without one the desk cannot charge)")
)

const terminalOption = Options.text("terminal").pipe(Options.withDescription("terminal id (repeat for several)"))

const register = Command.make(
  "register",
  {
    operator: Options.text("operator").pipe(Options.withDescription("the selling operator's id")),
    name: Options.text("name").pipe(Options.withDescription("the desk's name, e.g. Harbour desk 1")),
    paymentTerminal: Options.optional(paymentTerminalOption)
  },
  (o) =>
    withKeys((k) => k.registerTerminal(o.operator, o.name, Option.getOrNull(o.paymentTerminal))).pipe(
      Effect.flatMap(print)
    )
).pipe(Command.withDescription("register a desk terminal for a selling operator; prints its id"))

const setPaymentTerminal = Command.make(
  "set-payment-terminal",
  {
    id: Args.text({ name: "terminal-id" }),
    paymentTerminal: Options.optional(paymentTerminalOption),
    clear: Options.boolean("clear").pipe(
      Options.withDescription("remove the card terminal: the desk can no longer charge")
    )
  },
  (o) =>
    Option.isSome(o.paymentTerminal) === o.clear
      ? Effect.fail(new Error("give either --payment-terminal <id> or --clear"))
      : withKeys((k) => k.setPaymentTerminal(o.id, Option.getOrNull(o.paymentTerminal))).pipe(Effect.flatMap(print))
).pipe(Command.withDescription("set the card terminal a desk terminal takes payments on"))

const deactivate = Command.make(
  "deactivate",
  { id: Args.text({ name: "terminal-id" }) },
  (o) =>
    withKeys((k) => k.deactivateTerminal(o.id)).pipe(
      Effect.flatMap((found) =>
        found ? Console.log(`terminal ${o.id} deactivated`) : Effect.fail(new Error(`no terminal ${o.id}`))
      )
    )
)

const list = Command.make(
  "list",
  { operator: Options.optional(Options.text("operator").pipe(Options.withDescription("operator id"))) },
  (o) => withKeys((k) => k.listTerminals(Option.getOrUndefined(o.operator))).pipe(Effect.flatMap(print))
)

const terminals = Command.make("terminals").pipe(
  Command.withSubcommands([register, setPaymentTerminal, deactivate, list])
)

const issue = Command.make(
  "issue",
  {
    name: Options.text("name"),
    terminals: terminalOption.pipe(Options.repeated),
    test: Options.boolean("test").pipe(Options.withDescription("a test key (svcqb_test_...): sandboxes only"))
  },
  (o) =>
    (o.terminals.length === 0
      ? Effect.fail(new Error("bind the key to at least one terminal: --terminal <id>"))
      : withKeys((k) => k.issueKey({ mode: o.test ? "test" : "live", name: o.name, terminals: o.terminals }))).pipe(
        Effect.flatMap((k) =>
          Console.log(
            `${k.mode} key ${k.id} issued for terminals ${k.terminals.join(", ")}. ` +
              `The secret is shown once; store it now:\n\n  ${k.token}\n`
          )
        )
      )
).pipe(Command.withDescription("issue a quickbook key bound to terminals"))

const keysList = Command.make(
  "list",
  {
    operator: Options.optional(
      Options.text("operator").pipe(Options.withDescription("keys bound to this operator's terminals"))
    )
  },
  (o) => withKeys((k) => k.listKeys(Option.getOrUndefined(o.operator))).pipe(Effect.flatMap(print))
).pipe(Command.withDescription("list quickbook keys (no secrets): id, mode, name, terminals, created/expires/revoked"))

const bind = Command.make("bind", {
  id: Args.text({ name: "key-id" }),
  terminals: terminalOption.pipe(Options.repeated)
}, (o) =>
  withKeys((k) => k.bindKey(o.id, o.terminals)).pipe(
    Effect.zipRight(Console.log(`key ${o.id} bound to ${o.terminals.join(", ")}`))
  ))

const unbind = Command.make(
  "unbind",
  { id: Args.text({ name: "key-id" }), terminal: terminalOption },
  (o) =>
    withKeys((k) => k.unbindKey(o.id, o.terminal)).pipe(
      Effect.flatMap((was) =>
        Console.log(was ? `key ${o.id} no longer bound to ${o.terminal}` : `key ${o.id} was not bound to ${o.terminal}`)
      )
    )
)

const revoke = Command.make(
  "revoke",
  { id: Args.text({ name: "key-id" }) },
  (o) =>
    withKeys((k) => k.revokeKey(o.id)).pipe(
      Effect.flatMap((found) => found ? Console.log(`key ${o.id} revoked`) : Effect.fail(new Error(`no key ${o.id}`)))
    )
)

const keys = Command.make("keys").pipe(Command.withSubcommands([issue, keysList, bind, unbind, revoke]))

export const quickbook = Command.make("quickbook").pipe(
  Command.withDescription("desk terminals and quickbook keys (svcqb_live_..., svcqb_test_...)"),
  Command.withSubcommands([terminals, keys])
)
