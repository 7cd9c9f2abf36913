/** Check-in handlers: the write machinery (idempotency, daily limit, audit) around Checkins.set. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer } from "effect"
import { PartnerApi } from "../Api.js"
import { Writes } from "../writes/Writes.js"
import { CheckinResult } from "./Api.js"
import { Checkins } from "./Checkins.js"

export const CheckinsLive = HttpApiBuilder.group(PartnerApi, "checkins", (handlers) =>
  Effect.gen(function*() {
    const writes = yield* Writes
    const checkins = yield* Checkins
    return handlers.handle("checkin", ({ path, payload }) =>
      writes.run(
        { action: "checkins", success: CheckinResult, targetId: path.id, payload, transactional: true },
        (ctx) => checkins.set(path.id, payload, ctx)
      ))
  })).pipe(Layer.provide([Checkins.Default, Writes.Default]))
