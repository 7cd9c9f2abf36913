/**
 * The admin CLI (`npm run cli -- <command>`): operators, users, memberships, sites and keys,
 * until the operators' dashboard exists. Each command opens the database (embedded or
 * DATABASE_URL) with migrations applied.
 */
import { Args, Command, Options } from "@effect/cli"
import { SqlClient } from "@effect/sql"
import { Console, Effect, Layer, Option, Redacted } from "effect"
import { AppConfig } from "../config.js"
import { BookingSystemAccounts } from "../operators/BookingSystemAccounts.js"
import { Operators } from "../operators/Operators.js"
import { SCOPES } from "../partner/auth/scopes.js"
import { assistant } from "./assistant.js"
import { DatabaseForCli } from "./database.js"
import { invoices } from "./invoices.js"
import { mail } from "./mail.js"
import { mirror } from "./mirror.js"
import { openapi } from "./openapi.js"
import { payLater } from "./payLater.js"
import { paymentAccounts } from "./paymentAccounts.js"
import { publishableKeys } from "./publishableKeys.js"
import { quickbook } from "./quickbook.js"
import { refunds } from "./refunds.js"
import { settlements } from "./settlements.js"
import { tours } from "./tours.js"
import { audit, keysLimits } from "./writes.js"

const OperatorsForCli = Operators.Default.pipe(Layer.provideMerge(DatabaseForCli))

const withDb = <A, E>(effect: Effect.Effect<A, E, Operators | SqlClient.SqlClient>) =>
  effect.pipe(Effect.provide(OperatorsForCli))

const print = (value: unknown) => Console.log(JSON.stringify(value, null, 2))

const roleOption = Options.choice("role", ["owner", "admin", "member"])
const operatorOption = Options.text("operator").pipe(Options.withDescription("operator id"))
const userOption = Options.text("user").pipe(Options.withDescription("user email"))

// operators
const operatorsCreate = Command.make(
  "create",
  {
    name: Options.text("name"),
    timezone: Options.text("timezone").pipe(Options.withDefault("Europe/Oslo")),
    legalName: Options.optional(Options.text("legal-name")),
    orgNumber: Options.optional(Options.text("org-number"))
  },
  (o) =>
    withDb(Effect.flatMap(Operators, (admin) =>
      admin.createOperator({
        name: o.name,
        timezone: o.timezone,
        ...Option.match(o.legalName, { onNone: () => ({}), onSome: (legalName) => ({ legalName }) }),
        ...Option.match(o.orgNumber, { onNone: () => ({}), onSome: (orgNumber) => ({ orgNumber }) })
      }))).pipe(Effect.flatMap((id) => print({ id })))
)
const operatorsList = Command.make(
  "list",
  {},
  () =>
    withDb(
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql`SELECT id, name, timezone, created_at FROM operators ORDER BY name`)
    ).pipe(Effect.flatMap(print))
)
const operators = Command.make("operators").pipe(Command.withSubcommands([operatorsCreate, operatorsList]))

// users and memberships
const usersCreate = Command.make(
  "create",
  { email: Options.text("email"), name: Options.text("name") },
  (o) => withDb(Effect.flatMap(Operators, (admin) => admin.createUser(o))).pipe(Effect.flatMap((id) => print({ id })))
)
const users = Command.make("users").pipe(Command.withSubcommands([usersCreate]))

const membersAdd = Command.make(
  "add",
  { operator: operatorOption, user: userOption, role: roleOption },
  (o) =>
    withDb(Effect.gen(function*() {
      const admin = yield* Operators
      yield* admin.setMembership(o.operator, yield* admin.userByEmail(o.user), o.role)
    })).pipe(Effect.zipRight(Console.log(`${o.user} is ${o.role} of ${o.operator}`)))
)
const membersSetRole = Command.make(
  "set-role",
  { operator: operatorOption, user: userOption, role: roleOption },
  (o) =>
    withDb(Effect.gen(function*() {
      const admin = yield* Operators
      yield* admin.changeRole(o.operator, yield* admin.userByEmail(o.user), o.role)
    })).pipe(Effect.zipRight(Console.log(`${o.user} is now ${o.role} of ${o.operator}`)))
)
const members = Command.make("members").pipe(Command.withSubcommands([membersAdd, membersSetRole]))

// sites
const sitesCreate = Command.make(
  "create",
  {
    domain: Options.text("domain"),
    name: Options.text("name"),
    owner: Options.text("owner").pipe(Options.withDescription("owning operator id"))
  },
  (o) =>
    withDb(
      Effect.flatMap(
        Operators,
        (admin) => admin.createSite({ domain: o.domain, name: o.name, ownerOperatorId: o.owner })
      )
    )
      .pipe(Effect.flatMap((id) => print({ id })))
)
const sitesAddOperator = Command.make(
  "add-operator",
  { site: Options.text("site"), operator: operatorOption },
  (o) =>
    withDb(Effect.flatMap(Operators, (admin) => admin.addSiteOperator(o.site, o.operator))).pipe(
      Effect.zipRight(Console.log(`operator ${o.operator} added to site ${o.site}`))
    )
)
const sites = Command.make("sites").pipe(Command.withSubcommands([sitesCreate, sitesAddOperator]))

// keys
const keysCreate = Command.make(
  "create",
  {
    user: userOption.pipe(Options.withDescription("creator's email (owner or admin of every operator picked)")),
    operators: Options.text("operator").pipe(
      Options.repeated,
      Options.withDescription("operator id (repeat for several)")
    ),
    scopes: Options.choice("scope", SCOPES).pipe(Options.repeated),
    name: Options.text("name"),
    days: Options.integer("expires-in-days").pipe(Options.withDefault(365))
  },
  (o) =>
    withDb(Effect.gen(function*() {
      const admin = yield* Operators
      const createdBy = yield* admin.userByEmail(o.user)
      return yield* admin.createKey({
        createdBy,
        name: o.name,
        scopes: o.scopes,
        operatorIds: o.operators,
        expiresAt: new Date(Date.now() + o.days * 86_400_000)
      })
    })).pipe(
      Effect.flatMap((k) =>
        Console.log(`key ${k.id} created. The secret is shown once; store it now:\n\n  ${k.token}\n`)
      )
    )
)
const keysList = Command.make(
  "list",
  { operator: Options.optional(operatorOption) },
  (o) =>
    withDb(Effect.flatMap(Operators, (admin) => admin.listKeys({ operatorId: Option.getOrUndefined(o.operator) })))
      .pipe(
        Effect.flatMap(print)
      )
)
const keysRevoke = Command.make(
  "revoke",
  { id: Args.text({ name: "key-id" }) },
  (o) =>
    withDb(Effect.flatMap(Operators, (admin) => admin.revokeKey(o.id))).pipe(
      Effect.zipRight(Console.log(`key ${o.id} revoked`))
    )
)
const keys = Command.make("keys").pipe(
  Command.withSubcommands([keysCreate, keysList, keysRevoke, keysLimits, publishableKeys])
)

// booking-system accounts
const sandboxOption = Options.boolean("sandbox").pipe(
  Options.withDescription("a sandbox booking system: Quickbook test keys sell only through sandboxes, live keys never")
)
const withAccounts = <A, E>(f: (accounts: BookingSystemAccounts) => Effect.Effect<A, E, SqlClient.SqlClient>) =>
  withDb(Effect.flatMap(BookingSystemAccounts, f).pipe(Effect.provide(BookingSystemAccounts.Default)))
const accountsCreate = Command.make(
  "create",
  {
    name: Options.text("name"),
    kind: Options.choice("kind", ["bokun"]).pipe(Options.withDefault("bokun" as const)),
    baseUrl: Options.text("base-url").pipe(Options.withDescription("e.g. https://api.bokun.io")),
    accessKey: Options.text("access-key"),
    secretKey: Options.redacted("secret-key"),
    serviceChannel: Options.optional(Options.text("service-channel")).pipe(
      Options.withDescription("the booking system's id of the channel our checkout sells through")
    ),
    sandbox: sandboxOption
  },
  (o) =>
    withAccounts((a) =>
      a.create({
        kind: o.kind,
        name: o.name,
        baseUrl: o.baseUrl,
        accessKey: o.accessKey,
        secretKey: Redacted.value(o.secretKey),
        serviceChannelId: Option.getOrNull(o.serviceChannel),
        sandbox: o.sandbox
      })
    ).pipe(Effect.flatMap((id) => print({ id })))
)
const accountsMark = Command.make(
  "mark",
  {
    account: Options.text("account").pipe(Options.withDescription("account id")),
    as: Options.choice("as", ["sandbox", "live"])
  },
  (o) =>
    withAccounts((a) => a.setSandbox(o.account, o.as === "sandbox")).pipe(
      Effect.zipRight(Console.log(`account ${o.account} is ${o.as}`))
    )
).pipe(Command.withDescription("mark an account a sandbox or live (Quickbook test keys sell only through sandboxes)"))
const accountsList = Command.make("list", {}, () => withAccounts((a) => a.list()).pipe(Effect.flatMap(print)))
const accountsLink = Command.make(
  "link",
  { operator: operatorOption, account: Options.text("account").pipe(Options.withDescription("account id")) },
  (o) => withAccounts((a) => a.link(o.operator, o.account)).pipe(Effect.zipRight(Console.log("linked")))
)
const accountsMapTour = Command.make(
  "map-tour",
  {
    tour: Options.text("tour").pipe(Options.withDescription("tour id")),
    product: Options.text("product").pipe(Options.withDescription("the booking system's product (activity) id"))
  },
  (o) => withAccounts((a) => a.mapTour(o.tour, o.product)).pipe(Effect.zipRight(Console.log("mapped")))
)
const accounts = Command.make("accounts").pipe(
  Command.withDescription("booking-system accounts, the operators linked to them and the tours' products"),
  Command.withSubcommands([accountsCreate, accountsMark, accountsList, accountsLink, accountsMapTour])
)

// migrate
const migrate = Command.make("migrate", {}, () =>
  withDb(Effect.void).pipe(
    Effect.zipRight(Effect.flatMap(AppConfig, () => Console.log("migrations applied")))
  ))

export const adminCommands = [
  migrate,
  operators,
  users,
  members,
  sites,
  keys,
  accounts,
  mirror,
  tours,
  audit,
  mail,
  refunds,
  payLater,
  paymentAccounts,
  quickbook,
  settlements,
  invoices,
  assistant,
  openapi
] as const
