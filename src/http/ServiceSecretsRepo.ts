/**
 * The SQL of the secrets all instances share (`service_secrets`, created by the migrations): read
 * once, when a service that signs with one starts (CursorSigner, QuickbookTicketLinks). A database
 * error or a row that does not decode is a defect at its edge (repoEdge: a span per method), once.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { repoEdge } from "../db/repoEdge.js"

export class ServiceSecretsRepo extends Effect.Service<ServiceSecretsRepo>()("Http/ServiceSecretsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** The shared secret list cursors are signed with (`cursor`); None before the migrations ran. */
    const cursorSecret = SqlSchema.findOne({
      Request: Schema.Void,
      Result: Schema.Struct({ value: Schema.Uint8ArrayFromSelf }),
      execute: () => sql`SELECT value FROM service_secrets WHERE name = 'cursor'`
    })

    return repoEdge("ServiceSecretsRepo", { cursorSecret })
  })
}) {}
