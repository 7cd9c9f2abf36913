/** POST /quote, POST /reserve and DELETE /reserve/{holdRef}: decode, ask QuickbookTours or QuickbookHolds, encode. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer } from "effect"
import { QuickbookApi } from "../Api.js"
import { CurrentTerminal } from "../security.js"
import { QuickbookHolds } from "./QuickbookHolds.js"
import { QuickbookTours } from "./QuickbookTours.js"

export const QuickbookSalesLive = HttpApiBuilder.group(QuickbookApi, "sales", (handlers) =>
  Effect.gen(function*() {
    const tours = yield* QuickbookTours
    const holds = yield* QuickbookHolds
    return handlers
      .handle("quote", ({ payload }) => Effect.flatMap(CurrentTerminal, (caller) => tours.quote(caller, payload)))
      .handle("reserve", ({ payload }) => Effect.flatMap(CurrentTerminal, (caller) => holds.reserve(caller, payload)))
      .handle("release", ({ path }) => Effect.flatMap(CurrentTerminal, (caller) => holds.release(caller, path.holdRef)))
  })).pipe(Layer.provide([QuickbookTours.Default, QuickbookHolds.Default]))
