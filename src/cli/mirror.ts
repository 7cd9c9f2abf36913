/**
 * CLI for the booking-system mirror: `mirror refresh` runs a refresh now (every account, or one),
 * `mirror runs` lists the latest refreshes per account. Output is JSON.
 */
import { Command, Options } from "@effect/cli"
import { SqlClient } from "@effect/sql"
import { Console, Effect, Layer, Option } from "effect"
import { MirrorConfig } from "../mirror/config.js"
import { Mirror } from "../mirror/Mirror.js"
import { DatabaseForCli } from "./database.js"

const print = (value: unknown) => Console.log(JSON.stringify(value, null, 2))

const refresh = Command.make(
  "refresh",
  {
    account: Options.optional(Options.text("account")).pipe(
      Options.withDescription("one account id (default: every account)")
    ),
    days: Options.optional(Options.integer("days")).pipe(
      Options.withDescription("days ahead of today to mirror (default: the nightly window, MIRROR_NIGHTLY_DAYS)")
    )
  },
  (o) =>
    Effect.gen(function*() {
      const mirror = yield* Mirror
      const config = yield* MirrorConfig
      const summary = yield* mirror.refresh({
        kind: "manual",
        daysAhead: Option.getOrElse(o.days, () => config.nightlyDays),
        ...(Option.isSome(o.account) ? { accountId: o.account.value } : {})
      })
      yield* print(summary)
      if (summary.failed > 0) {
        return yield* Effect.fail(new Error(`${summary.failed} of ${summary.accounts} accounts failed`))
      }
    }).pipe(Effect.provide(Layer.unwrapEffect(
      Effect.promise(() => import("../app.js"))
        .pipe(Effect.map(({ MirrorLive }) => MirrorLive.pipe(Layer.provideMerge(DatabaseForCli))))
    )))
)

const runs = Command.make(
  "runs",
  { limit: Options.integer("limit").pipe(Options.withDefault(20)) },
  (o) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql`
        SELECT r.started_at, r.finished_at, a.name AS account, r.kind, r.date_from, r.date_to, r.outcome,
          r.lines_seen, r.inserted, r.updated, r.cancelled, r.error
        FROM mirror_runs r JOIN booking_system_accounts a ON a.id = r.account_id
        ORDER BY r.started_at DESC LIMIT ${o.limit}`).pipe(Effect.flatMap(print), Effect.provide(DatabaseForCli))
)

export const mirror = Command.make("mirror").pipe(
  Command.withDescription("the mirror of the operators' booking systems behind the manifest"),
  Command.withSubcommands([refresh, runs])
)
