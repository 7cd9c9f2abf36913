/** Reschedule handlers: options (a read) and the write through the shared write machinery. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer } from "effect"
import { PartnerApi } from "../Api.js"
import { CurrentKey } from "../auth/security.js"
import { Writes } from "../writes/Writes.js"
import { RescheduleResult } from "./Api.js"
import { RescheduleOptions } from "./RescheduleOptions.js"
import { Reschedules } from "./Reschedules.js"

export const ReschedulesLive = HttpApiBuilder.group(PartnerApi, "reschedules", (handlers) =>
  Effect.gen(function*() {
    const writes = yield* Writes
    const reschedules = yield* Reschedules
    const dayOptions = yield* RescheduleOptions
    return handlers
      .handle("options", ({ path, urlParams }) =>
        Effect.flatMap(CurrentKey, (key) =>
          dayOptions.options(
            path.id,
            urlParams.date,
            key.partners.map((p) => p.id)
          )))
      .handle("reschedule", ({ path, payload }) =>
        writes.run(
          { action: "reschedules", success: RescheduleResult, targetId: path.id, payload, slotBeforeChange: true },
          (ctx) => reschedules.reschedule(path.id, payload, ctx)
        ))
  })).pipe(Layer.provide([Reschedules.Default, RescheduleOptions.Default, Writes.Default]))
