/**
 * GET /api/v1/tours, /tours/{id} and /tours/{id}/availability: the sites the caller reads (a secret
 * key: its operators' sites, or `partner_id`'s; a publishable key: its own site), then the catalogue
 * of those sites (availability: live from the booking system of a tour those sites sell). Answers to
 * a publishable key are public and cacheable (spec §8).
 */
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Either, Layer, type Schema } from "effect"
import { checkRange, TourAvailability as TourAvailabilitySchema } from "../../catalogue/availability.js"
import { InvalidRequest } from "../../domain/errors.js"
import { CursorSigner } from "../../http/CursorSigner.js"
import { jsonBody } from "../../http/json.js"
import { RateLimiter } from "../../http/RateLimiter.js"
import { addResponseHeaders } from "../../http/requestContext.js"
import { PartnerApi } from "../Api.js"
import { KeyAuth } from "../auth/KeyAuth.js"
import { PUBLIC_CACHE_CONTROL } from "../auth/publishableKey.js"
import { PublishableKeys } from "../auth/PublishableKeys.js"
import { CurrentCaller } from "../auth/security.js"
import { operatorIdsFor } from "../auth/visibility.js"
import { CatalogueAuthLive, CatalogueCorsRoutes } from "./catalogueAuth.js"
import { answerBytes, PUBLIC_TTL_SECONDS, PublicCatalogueCache } from "./PublicCatalogueCache.js"
import { catalogueLocale, TOUR_LIST_DEFAULT, TourDetail, TourPage } from "./tour.js"
import { TourAvailability } from "./TourAvailability.js"
import { Tours } from "./Tours.js"

/**
 * The sites the caller reads: a publishable key's own site (`partner_id` is for secret keys: 400);
 * a secret key's operators' sites, or `partner_id`'s (404 outside the key).
 */
const callerSites = (tours: Tours, partnerId: string | undefined) =>
  Effect.gen(function*() {
    const caller = yield* CurrentCaller
    if (caller._tag === "Secret") return yield* tours.sitesOf(yield* operatorIdsFor(caller.key, partnerId))
    if (partnerId !== undefined) {
      return yield* new InvalidRequest({
        detail: "partner_id is for secret keys; a publishable key reads its own site",
        field: "partner_id"
      })
    }
    return [caller.key.siteId]
  })

/**
 * The answer: for a secret key, `compute`d; for a publishable key, public and cacheable (spec §8),
 * from the service's own copy while it is fresh (`X-Cache: HIT`), else computed and kept (`MISS`).
 */
const answer = <A, I, E, R>(
  cache: PublicCatalogueCache,
  kind: keyof typeof PUBLIC_CACHE_CONTROL,
  schema: Schema.Schema<A, I>,
  compute: Effect.Effect<NoInfer<A>, E, R>
) =>
  Effect.gen(function*() {
    const caller = yield* CurrentCaller
    if (caller._tag === "Secret") return jsonBody(schema, yield* compute)
    const request = yield* HttpServerRequest.HttpServerRequest
    const key = cache.keyOf(caller.key.id, request)
    const held = yield* cache.get(key)
    const body = held ?? answerBytes(yield* compute)
    if (held === undefined) yield* cache.set(key, body, PUBLIC_TTL_SECONDS[kind])
    yield* addResponseHeaders({
      "Cache-Control": PUBLIC_CACHE_CONTROL[kind],
      "X-Cache": held === undefined ? "MISS" : "HIT"
    })
    return HttpServerResponse.uint8Array(body, { contentType: "application/json" })
  })

const ToursHandlers = HttpApiBuilder.group(PartnerApi, "tours", (handlers) =>
  Effect.gen(function*() {
    const tours = yield* Tours
    const availability = yield* TourAvailability
    const cursors = yield* CursorSigner
    const cache = yield* PublicCatalogueCache
    return handlers
      .handle("list", ({ urlParams: p }) =>
        answer(
          cache,
          "list",
          TourPage,
          Effect.gen(function*() {
            const siteIds = yield* callerSites(tours, p.partner_id)
            // The cursor is bound to the set being paged (not to `locale`, which only changes the text).
            const filters = { list: "tours", partner_id: p.partner_id }
            const after = yield* cursors.decode(p.cursor, filters)
            const page = yield* tours.list(
              { siteIds, locale: catalogueLocale(p.locale) },
              { limit: p.limit ?? TOUR_LIST_DEFAULT, after }
            )
            return { data: page.rows, next_cursor: page.next ? cursors.encode(page.next, filters) : null }
          })
        ))
      .handle("get", ({ path, urlParams: p }) =>
        answer(
          cache,
          "detail",
          TourDetail,
          Effect.gen(function*() {
            const siteIds = yield* callerSites(tours, p.partner_id)
            return yield* tours.get(path.id, { siteIds, locale: catalogueLocale(p.locale) })
          })
        ))
      .handle("availability", ({ path, urlParams: p }) =>
        answer(
          cache,
          "availability",
          TourAvailabilitySchema,
          Effect.gen(function*() {
            const range = checkRange(p.from, p.to)
            if (Either.isLeft(range)) return yield* new InvalidRequest(range.left)
            const siteIds = yield* callerSites(tours, p.partner_id)
            return yield* availability.read(path.id, { siteIds }, { from: p.from, to: p.to, pax: p.pax ?? 1 })
          })
        ))
  }))

/**
 * The tours group with what it needs: its services, its own security (secret or publishable key,
 * ./catalogueAuth.ts) and the CORS preflight routes of its paths. The public cache is one instance,
 * shared by the handlers and the security (which serves a held answer without counting it).
 */
export const ToursLive = Layer.merge(ToursHandlers, CatalogueCorsRoutes).pipe(
  Layer.provide(CatalogueAuthLive),
  Layer.provide([
    Tours.Default,
    TourAvailability.Default,
    CursorSigner.Default,
    PublicCatalogueCache.Default,
    PublishableKeys.Default,
    KeyAuth.Default,
    RateLimiter.Default
  ])
)
