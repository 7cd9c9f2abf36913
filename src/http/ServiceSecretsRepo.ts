/**
 * The SQL of the secrets all instances share (`service_secrets`, created by the migrations): read
 * once, when a service that signs with one starts (CursorSigner, QuickbookTicketLinks). A database
 * error or a row that does not decode is a defect here, once.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"

export class ServiceSecretsRepo extends Effect.Service<ServiceSecretsRepo>()("Http/ServiceSecretsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** The shared secret list cursors are signed with (`cursor`); None before the migrations ran. */
    const cursorSecret = Effect.fn("ServiceSecretsRepo.cursorSecret")(
      SqlSchema.findOne({
        Request: Schema.Void,
        Result: Schema.Struct({ value: Schema.Uint8ArrayFromSelf }),
        execute: () => sql`SELECT value FROM service_secrets WHERE name = 'cursor'`
      }),
      Effect.orDie
    )

    return { cursorSecret } as const
  })
}) {}
