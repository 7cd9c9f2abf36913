/**
 * GET /api/v1/tours, /tours/{id} and /tours/{id}/availability with a secret key: resolve the key's
 * operators (or `partner_id`), their sites, and read the catalogue of those sites (availability: live
 * from the booking system of a tour those sites sell). A publishable key will pass its own site.
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Either } from "effect"
import { InvalidRequest } from "../../domain/errors.js"
import { catalogueLocale, TOUR_LIST_DEFAULT } from "../../domain/tour.js"
import { checkRange } from "../../domain/tourAvailability.js"
import { operatorIdsFor } from "../../domain/visibility.js"
import { CursorSigner } from "../../services/CursorSigner.js"
import { TourAvailability } from "../../services/TourAvailability.js"
import { Tours } from "../../services/Tours.js"
import { jsonBody } from "../json.js"
import { PartnerApi } from "./Api.js"
import { DB_ROUTE } from "./handlers.js"
import { CurrentKey } from "./security.js"

/** The sites a secret key reads: those of its operators, or of `partner_id` (404 outside the key). */
const keySites = (tours: Tours, partnerId: string | undefined) =>
  Effect.gen(function*() {
    const key = yield* CurrentKey
    return yield* tours.sitesOf(yield* operatorIdsFor(key, partnerId))
  })

export const ToursLive = HttpApiBuilder.group(PartnerApi, "tours", (handlers) =>
  Effect.gen(function*() {
    const tours = yield* Tours
    const availability = yield* TourAvailability
    const cursors = yield* CursorSigner
    return handlers
      .handle("list", ({ urlParams: p }) =>
        Effect.gen(function*() {
          const siteIds = yield* keySites(tours, p.partner_id)
          // The cursor is bound to the set being paged (not to `locale`, which only changes the text).
          const filters = { list: "tours", partner_id: p.partner_id }
          const after = yield* cursors.decode(p.cursor, filters)
          const page = yield* tours.list(
            { siteIds, locale: catalogueLocale(p.locale) },
            { limit: p.limit ?? TOUR_LIST_DEFAULT, after }
          )
          return jsonBody({ data: page.rows, next_cursor: page.next ? cursors.encode(page.next, filters) : null })
        }), DB_ROUTE)
      .handle("get", ({ path, urlParams: p }) =>
        Effect.gen(function*() {
          const siteIds = yield* keySites(tours, p.partner_id)
          return jsonBody(yield* tours.get(path.id, { siteIds, locale: catalogueLocale(p.locale) }))
        }), DB_ROUTE)
      .handle("availability", ({ path, urlParams: p }) =>
        Effect.gen(function*() {
          const range = checkRange(p.from, p.to)
          if (Either.isLeft(range)) return yield* new InvalidRequest(range.left)
          const siteIds = yield* keySites(tours, p.partner_id)
          return jsonBody(yield* availability.read(path.id, { siteIds }, { from: p.from, to: p.to, pax: p.pax ?? 1 }))
        }), DB_ROUTE)
  }))
