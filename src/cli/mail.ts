/**
 * CLI for email (docs/email.md): the local mailbox (`mail list`, `mail show`), the outbox
 * (`mail outbox`, `mail retry`) and `mail flush` (send what is due now, through SMTP when
 * SMTP_URL is set, else into the local mailbox). Output is JSON.
 */
import { Args, Command, Options } from "@effect/cli"
import { Console, Effect, Layer, Option } from "effect"
import { listMailbox, showMailbox } from "../adapters/mailbox.js"
import { Outbox, type OutboxStatus } from "../email/Outbox.js"
import { AdminError } from "../operators/Operators.js"
import { DatabaseForCli } from "./database.js"

const print = (value: unknown) => Console.log(JSON.stringify(value, null, 2))

/** The outbox with its mailer (SMTP or the local mailbox), loaded by the commands that need it. */
const OutboxForCli = Layer.unwrapEffect(
  Effect.promise(() => import("../adapters/live.js")).pipe(
    Effect.map(({ OutboxLive }) => OutboxLive.pipe(Layer.provideMerge(DatabaseForCli)))
  )
)

const list = Command.make(
  "list",
  {
    to: Options.optional(Options.text("to")).pipe(Options.withDescription("only messages to this address")),
    limit: Options.integer("limit").pipe(Options.withDefault(20))
  },
  (o) =>
    listMailbox({ to: Option.getOrUndefined(o.to), limit: o.limit }).pipe(
      Effect.flatMap(print),
      Effect.provide(DatabaseForCli)
    )
).pipe(Command.withDescription("messages the local mailbox received (SMTP_URL unset), newest first"))

const show = Command.make("show", { id: Args.integer({ name: "id" }) }, (o) =>
  showMailbox(o.id).pipe(
    Effect.flatMap((entry) =>
      entry === null
        ? Effect.fail(new AdminError({ message: `no message #${o.id} in the local mailbox` }))
        : print(entry)
    ),
    Effect.provide(DatabaseForCli)
  )).pipe(Command.withDescription("one message of the local mailbox in full"))

const STATUSES: ReadonlyArray<OutboxStatus> = ["pending", "sending", "sent", "failed"]

const outbox = Command.make(
  "outbox",
  {
    status: Options.optional(Options.choice("status", STATUSES)),
    booking: Options.optional(Options.text("booking")).pipe(Options.withDescription("booking (or manifest row) id")),
    limit: Options.integer("limit").pipe(Options.withDefault(50))
  },
  (o) =>
    Effect.flatMap(
      Outbox,
      (box) =>
        box.list({
          status: Option.getOrUndefined(o.status),
          bookingId: Option.getOrUndefined(o.booking),
          limit: o.limit
        })
    ).pipe(
      Effect.flatMap(print),
      Effect.provide(OutboxForCli)
    )
).pipe(Command.withDescription("the outbox, newest first: status, attempts, last error"))

const flush = Command.make(
  "flush",
  {},
  () =>
    Effect.flatMap(
      Outbox,
      (box) => Effect.flatMap(box.flush(), (summary) => print({ transport: box.transport, ...summary }))
    ).pipe(
      Effect.provide(OutboxForCli)
    )
).pipe(Command.withDescription("send every due message now"))

const retry = Command.make("retry", { id: Args.text({ name: "outbox-id" }) }, (o) =>
  Effect.gen(function*() {
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(o.id)) {
      return yield* Effect.fail(new AdminError({ message: `not an outbox id: ${o.id}` }))
    }
    const box = yield* Outbox
    if (!(yield* box.retry(o.id))) {
      return yield* Effect.fail(new AdminError({ message: `outbox message ${o.id} is not failed` }))
    }
    yield* Console.log(`outbox message ${o.id} queued again`)
  }).pipe(Effect.provide(OutboxForCli))).pipe(
    Command.withDescription("queue a failed message again, with fresh attempts")
  )

export const mail = Command.make("mail").pipe(
  Command.withDescription("email: the local mailbox and the outbox"),
  Command.withSubcommands([list, show, outbox, flush, retry])
)
