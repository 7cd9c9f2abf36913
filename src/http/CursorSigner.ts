/** Signs and checks list cursors with the secret all instances share (service_secrets.cursor). */
import { Effect, Either, Option } from "effect"
import { InvalidRequest } from "../domain/errors.js"
import { type CursorPosition, decodeCursor, encodeCursor, filterFingerprint } from "./cursor.js"
import { ServiceSecretsRepo } from "./ServiceSecretsRepo.js"

export class CursorSigner extends Effect.Service<CursorSigner>()("Http/CursorSigner", {
  effect: Effect.gen(function*() {
    const secrets = yield* ServiceSecretsRepo
    const row = yield* secrets.cursorSecret()
    if (Option.isNone(row)) return yield* Effect.dieMessage("service_secrets has no cursor secret; run the migrations")
    const secret = row.value.value

    // No spans (the house rule's exception): encode and decode are a few microseconds of pure work
    // on every list request (`npm run bench`), less than the span would cost even with tracing off.

    const encode = (position: CursorPosition, filters: Record<string, unknown>) =>
      encodeCursor(secret, position, filterFingerprint(filters))

    const decode = (cursor: string | undefined, filters: Record<string, unknown>) =>
      cursor === undefined
        ? Effect.succeed(undefined)
        : Either.match(decodeCursor(secret, cursor, filterFingerprint(filters)), {
          onLeft: (why) => Effect.fail(new InvalidRequest({ detail: `cursor ${why}`, field: "cursor" })),
          onRight: (position) => Effect.succeed(position)
        })

    return { encode, decode } as const
  }),
  dependencies: [ServiceSecretsRepo.Default]
}) {}
