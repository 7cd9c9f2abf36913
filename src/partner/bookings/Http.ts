/** GET /api/v1/bookings and /bookings/{id}: decode (done by HttpApi), resolve the operators in view, read. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer } from "effect"
import { InvalidRequest } from "../../domain/errors.js"
import { CursorSigner } from "../../http/CursorSigner.js"
import { jsonBody } from "../../http/json.js"
import { PartnerApi } from "../Api.js"
import { CurrentKey } from "../auth/security.js"
import { operatorIdsFor } from "../auth/visibility.js"
import { BookingDetail, BookingPage } from "./booking.js"
import { Bookings } from "./Bookings.js"

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
          return jsonBody(BookingPage, {
            data: page.rows,
            next_cursor: page.next ? cursors.encode(page.next, filters) : null
          })
        }))
      .handle("get", ({ path, urlParams }) =>
        Effect.gen(function*() {
          const key = yield* CurrentKey
          const operatorIds = yield* operatorIdsFor(key, urlParams.partner_id)
          return jsonBody(
            BookingDetail,
            yield* bookings.get(path.id, operatorIds, key.scopes.includes("guests.contact:read"))
          )
        }))
  })).pipe(Layer.provide([Bookings.Default, CursorSigner.Default]))
