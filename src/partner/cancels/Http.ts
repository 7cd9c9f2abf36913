/** Cancel handler: the write machinery (idempotency, daily limit, audit) around Cancels.cancel. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer } from "effect"
import { PartnerApi } from "../Api.js"
import { Writes } from "../writes/Writes.js"
import { CancelResult } from "./Api.js"
import { Cancels } from "./Cancels.js"

export const CancelsLive = HttpApiBuilder.group(PartnerApi, "cancels", (handlers) =>
  Effect.gen(function*() {
    const writes = yield* Writes
    const cancels = yield* Cancels
    return handlers.handle("cancel", ({ path, payload }) =>
      writes.run(
        { action: "cancels", success: CancelResult, targetId: path.id, payload, slotBeforeChange: true },
        (ctx) => cancels.cancel(path.id, payload, ctx)
      ))
  })).pipe(Layer.provide([Cancels.Default, Writes.Default]))
