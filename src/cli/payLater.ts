/**
 * CLI for pay-later charging (src/payLater/; docs/api/pay-later.md): `pay-later trouble` lists the
 * charges in trouble for the person who follows them up: failed ones (retrying or failed for good:
 * `retrying`, `failure_message`, whether the guest was sent the link, `link_emailed_at`) and upcoming
 * ones within `--within-hours` of their final deadline (e.g. an outcome not known yet:
 * `unknown_outcome`, or no saved card: `saved_card` false); soonest deadline first. Output is JSON.
 */
import { Command, Options } from "@effect/cli"
import { Clock, Console, Effect, Layer } from "effect"
import { PayLaterChargesRepo } from "../payLater/PayLaterChargesRepo.js"
import { DatabaseForCli } from "./database.js"

const trouble = Command.make(
  "trouble",
  {
    withinHours: Options.integer("within-hours").pipe(
      Options.withDefault(24),
      Options.withDescription("upcoming charges this close to their final deadline count as in trouble (default 24)")
    ),
    limit: Options.integer("limit").pipe(Options.withDefault(100), Options.withDescription("1 to 1000, default 100"))
  },
  (o) =>
    Effect.gen(function*() {
      const repo = yield* PayLaterChargesRepo
      const now = new Date(yield* Clock.currentTimeMillis)
      const rows = yield* repo.trouble({
        now,
        withinHours: Math.max(o.withinHours, 0),
        limit: Math.min(Math.max(o.limit, 1), 1000)
      })
      yield* Console.log(JSON.stringify(rows, null, 2))
    }).pipe(Effect.provide(PayLaterChargesRepo.Default.pipe(Layer.provide(DatabaseForCli))))
).pipe(Command.withDescription("pay-later charges in trouble: failed, or upcoming close to their final deadline"))

export const payLater = Command.make("pay-later").pipe(Command.withSubcommands([trouble]))
