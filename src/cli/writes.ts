/**
 * CLI for the writes' shared machinery: per-key daily limits (`keys limits ...`) and the audit log
 * (`audit list`). Output is JSON.
 */
import { Args, Command, Options } from "@effect/cli"
import { Console, Effect, Layer, Option } from "effect"
import { AdminError } from "../operators/Operators.js"
import { Audit } from "../partner/writes/Audit.js"
import { DailyLimits } from "../partner/writes/DailyLimits.js"
import { WRITE_ACTIONS, type WriteAction } from "../partner/writes/rules.js"
import { DatabaseForCli } from "./database.js"

const ServicesForCli = Layer.mergeAll(DailyLimits.Default, Audit.Default).pipe(Layer.provide(DatabaseForCli))

const run = <A, E extends { readonly detail: string }>(effect: Effect.Effect<A, E, DailyLimits | Audit>) =>
  effect.pipe(
    Effect.mapError((e) => new AdminError({ message: e.detail })),
    Effect.provide(ServicesForCli)
  )

const print = (value: unknown) => Console.log(JSON.stringify(value, null, 2))

const keyId = Args.text({ name: "key-id" })
const limitOption = (name: string, action: WriteAction) =>
  Options.integer(name).pipe(
    Options.optional,
    Options.withDescription(`daily ${action} limit for this key (0 or more)`)
  )

const show = (id: string) => Effect.flatMap(DailyLimits, (limits) => limits.statusOf(id))

const limitsSet = Command.make(
  "set",
  {
    id: keyId,
    checkins: limitOption("checkins", "checkins"),
    paymentLinks: limitOption("payment-links", "payment_links"),
    cancels: limitOption("cancels", "cancels"),
    reschedules: limitOption("reschedules", "reschedules")
  },
  (o) => {
    const given: Partial<Record<WriteAction, number>> = {
      checkins: Option.getOrUndefined(o.checkins),
      payment_links: Option.getOrUndefined(o.paymentLinks),
      cancels: Option.getOrUndefined(o.cancels),
      reschedules: Option.getOrUndefined(o.reschedules)
    }
    if (Object.values(given).every((v) => v === undefined)) {
      return Effect.fail(
        new AdminError({ message: "give at least one of --checkins, --payment-links, --cancels, --reschedules" })
      )
    }
    return run(
      Effect.flatMap(DailyLimits, (limits) => limits.setOverrides(o.id, given)).pipe(
        Effect.zipRight(show(o.id))
      )
    ).pipe(Effect.flatMap(print))
  }
).pipe(Command.withDescription("set this key's own daily limits; the others keep theirs"))

const limitsShow = Command.make("show", { id: keyId }, (o) => run(show(o.id)).pipe(Effect.flatMap(print))).pipe(
  Command.withDescription("each daily limit of the key (default or its own) and what it used today (UTC)")
)

const limitsReset = Command.make(
  "reset",
  { id: keyId, actions: Options.choice("action", WRITE_ACTIONS).pipe(Options.repeated) },
  (o) =>
    run(
      Effect.flatMap(DailyLimits, (limits) =>
        limits.clearOverrides(o.id, o.actions.length > 0 ? o.actions : WRITE_ACTIONS)).pipe(
          Effect.zipRight(show(o.id))
        )
    ).pipe(Effect.flatMap(print))
).pipe(Command.withDescription("back to the default limits (all, or each --action given)"))

export const keysLimits = Command.make("limits").pipe(Command.withSubcommands([limitsSet, limitsShow, limitsReset]))

const auditList = Command.make(
  "list",
  {
    key: Options.text("key").pipe(Options.optional, Options.withDescription("API key id")),
    operator: Options.text("operator").pipe(Options.optional, Options.withDescription("operator id")),
    limit: Options.integer("limit").pipe(Options.withDefault(50), Options.withDescription("1 to 1000, default 50"))
  },
  (o) =>
    run(
      Effect.flatMap(Audit, (audit) =>
        audit.list({
          keyId: Option.getOrUndefined(o.key),
          operatorId: Option.getOrUndefined(o.operator),
          limit: o.limit
        }))
    )
      .pipe(Effect.flatMap(print))
).pipe(Command.withDescription("write attempts, newest first"))

export const audit = Command.make("audit").pipe(Command.withSubcommands([auditList]))
