/**
 * CLI for the tour catalogue: `tours refresh-season` computes `from_price` and `season` from the
 * booking systems now (every linked published tour, or one), with the tours' booking-system facts
 * (rating, rates, pricing categories, duration, departure times), as the scheduled job does. Output is
 * JSON: the summary and each tour's result.
 */
import { Command, Options } from "@effect/cli"
import { Console, Effect, Layer, Option } from "effect"
import { TourSeason } from "../catalogue/TourSeason.js"
import { DatabaseForCli } from "./database.js"

const refreshSeason = Command.make(
  "refresh-season",
  {
    tour: Options.optional(Options.text("tour")).pipe(
      Options.withDescription("one tour id (default: every linked published tour)")
    )
  },
  (o) =>
    Effect.gen(function*() {
      const season = yield* TourSeason
      const summary = yield* season.refresh(Option.isSome(o.tour) ? { tourId: o.tour.value } : {})
      yield* Console.log(JSON.stringify(summary, null, 2))
      if (summary.unknown > 0) {
        return yield* Effect.fail(
          new Error(`${summary.unknown} of ${summary.tours} tours not known (their booking system did not answer)`)
        )
      }
    }).pipe(Effect.provide(Layer.unwrapEffect(
      Effect.promise(() => import("../app.js"))
        .pipe(Effect.map(({ MirrorLive }) => MirrorLive.pipe(Layer.provideMerge(DatabaseForCli))))
    )))
).pipe(Command.withDescription("compute from_price and season of the catalogue from the booking systems now"))

export const tours = Command.make("tours").pipe(
  Command.withDescription("the tour catalogue"),
  Command.withSubcommands([refreshSeason])
)
