/**
 * CLI for publishable keys (`keys publishable create|list|revoke`): a site's public key for its
 * catalogue widgets and checkout script, with the origins browsers may read its answers from.
 */
import { Args, Command, Options } from "@effect/cli"
import { Console, Effect, Layer, Option } from "effect"
import { Operators } from "../operators/Operators.js"
import { PublishableKeys } from "../partner/auth/PublishableKeys.js"
import { DatabaseForCli } from "./database.js"

const ServicesForCli = Layer.mergeAll(PublishableKeys.Default, Operators.Default).pipe(
  Layer.provideMerge(DatabaseForCli)
)

const print = (value: unknown) => Console.log(JSON.stringify(value, null, 2))

const create = Command.make(
  "create",
  {
    site: Options.text("site").pipe(Options.withDescription("site id")),
    user: Options.text("user").pipe(Options.withDescription("creator's email (owner or admin of the site's operator)")),
    name: Options.text("name").pipe(Options.withDefault("Website widgets")),
    origins: Options.text("origin").pipe(
      Options.repeated,
      Options.withDescription(
        "a domain or origin browsers may read answers from (repeat): fjordexplorer.no, *.fjordexplorer.no, http://localhost:8080"
      )
    )
  },
  (o) =>
    Effect.gen(function*() {
      const admin = yield* Operators
      const keys = yield* PublishableKeys
      const createdBy = yield* admin.userByEmail(o.user)
      return yield* keys.create({ siteId: o.site, createdBy, name: o.name, origins: o.origins })
    }).pipe(Effect.provide(ServicesForCli), Effect.flatMap(print))
).pipe(Command.withDescription("a publishable key (pk_widget_...) for a site; not secret, safe in web pages"))

const list = Command.make(
  "list",
  { site: Options.optional(Options.text("site").pipe(Options.withDescription("site id"))) },
  (o) =>
    Effect.flatMap(PublishableKeys, (k) => k.list({ siteId: Option.getOrUndefined(o.site) })).pipe(
      Effect.provide(ServicesForCli),
      Effect.flatMap(print)
    )
)

const revoke = Command.make(
  "revoke",
  { id: Args.text({ name: "key" }) },
  (o) =>
    Effect.flatMap(PublishableKeys, (k) => k.revoke(o.id)).pipe(
      Effect.provide(ServicesForCli),
      Effect.zipRight(Console.log(`publishable key ${o.id} revoked`))
    )
)

export const publishableKeys = Command.make("publishable").pipe(
  Command.withDescription("publishable keys (pk_widget_...) of sites"),
  Command.withSubcommands([create, list, revoke])
)
