/**
 * Partner API handlers: decode (done by HttpApi), call a service, shape the answer. Routes that
 * query the database run uninterruptibly (`DB_ROUTE`, src/http/dbRoute.ts).
 */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { InvalidRequest } from "../domain/errors.js"
import { operatorIdsFor } from "./auth/visibility.js"
import { Bookings } from "./bookings/Bookings.js"
import { CursorSigner } from "../http/CursorSigner.js"
import { PartnerApi } from "./Api.js"
import { jsonBody } from "../http/json.js"
import { CurrentKey } from "./auth/security.js"
import { DB_ROUTE } from "../http/dbRoute.js"

export const MeLive = HttpApiBuilder.group(PartnerApi, "me", (handlers) =>
  handlers.handle("me", () =>
    Effect.map(CurrentKey, (key) => ({
      key: {
        id: key.id,
        name: key.name,
        scopes: key.scopes,
        created_at: key.createdAt.toISOString(),
        expires_at: key.expiresAt.toISOString()
      },
      partner: key.partners[0]!,
      partners: key.partners
    })), DB_ROUTE))

export const BookingsLive = HttpApiBuilder.group(PartnerApi, "bookings", (handlers) =>
  Effect.gen(function*() {
    const bookings = yield* Bookings
    const cursors = yield* CursorSigner
    return handlers
      .handle("list", ({ urlParams: p }) =>
        Effect.gen(function*() {
          const key = yield* CurrentKey
          if (p.date_from && p.date_to && p.date_from > p.date_to) {
            return yield* new InvalidRequest({ detail: "date_from must not be after date_to", field: "date_from" })
          }
          const operatorIds = yield* operatorIdsFor(key, p.partner_id)
          const filters = {
            date_from: p.date_from,
            date_to: p.date_to,
            // The instant, not its spelling: "…T13:00:00+01:00" and "…T12:00:00Z" are one filter.
            updated_since: p.updated_since === undefined ? undefined : new Date(p.updated_since).toISOString(),
            status: p.status,
            partner_id: p.partner_id
          }
          const after = yield* cursors.decode(p.cursor, filters)
          const page = yield* bookings.list({
            operatorIds,
            limit: p.limit ?? 50,
            after,
            dateFrom: p.date_from,
            dateTo: p.date_to,
            updatedSince: p.updated_since,
            status: p.status,
            includeContact: key.scopes.includes("guests.contact:read")
          })
          return jsonBody({ data: page.rows, next_cursor: page.next ? cursors.encode(page.next, filters) : null })
        }), DB_ROUTE)
      .handle("get", ({ path, urlParams }) =>
        Effect.gen(function*() {
          const key = yield* CurrentKey
          const operatorIds = yield* operatorIdsFor(key, urlParams.partner_id)
          return jsonBody(yield* bookings.get(path.id, operatorIds, key.scopes.includes("guests.contact:read")))
        }), DB_ROUTE)
  }))

export const HealthLive = HttpApiBuilder.group(PartnerApi, "health", (handlers) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return handlers
      .handle("healthz", () => Effect.succeed({ status: "ok" as const }))
      .handle("readyz", () =>
        // The probe itself is never interrupted (see DB_ROUTE); past 2 s we answer without it.
        sql`SELECT 1`.pipe(
          Effect.uninterruptible,
          Effect.disconnect,
          Effect.timeout("2 seconds"),
          Effect.as({ status: "ok" as const }),
          Effect.catchAllCause(() =>
            Effect.succeed(HttpServerResponse.unsafeJson({ status: "unavailable" }, { status: 503 }))
          )
        ) as Effect.Effect<{ readonly status: "ok" }>)
  }))
