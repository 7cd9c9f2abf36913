/**
 * Who may read the tour catalogue (spec §5 items 3–4, §8): a secret key with `tours:read` in
 * `Authorization` (the Partner API's usual path: 401, 429 at 300/min, 403), or a publishable key
 * `pk_widget_...` as query `key` with no Authorization header. A publishable key reads only its own
 * site; its answers carry CORS headers for the key's allowed origins, `Vary: Origin`, and
 * `Cache-Control: no-store` until a handler succeeds and sets the public cache header of §8; 1200
 * uncached requests per minute per key, 429 with `Retry-After` past it: an answer the service
 * still holds (PublicCatalogueCache, as long as `s-maxage` allows) is served without counting.
 * Preflight (OPTIONS) for the tours paths: `CatalogueCorsRoutes`.
 */
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Layer } from "effect"
import { AppConfig } from "../../config.js"
import { RateLimited, Unauthorized } from "../../domain/errors.js"
import { RateLimiter, rateLimitHeaders } from "../../http/RateLimiter.js"
import { addResponseHeaders } from "../../http/requestContext.js"
import { makeSecretKeyAuth, queryKeys } from "../auth/middleware.js"
import { originAllowed } from "../auth/publishableKey.js"
import { type PublishableKey, PublishableKeys } from "../auth/PublishableKeys.js"
import { CatalogueAuth, type CatalogueCaller } from "../auth/security.js"
import { PublicCatalogueCache } from "./PublicCatalogueCache.js"

/** Response headers a browser page may read besides the CORS-safelisted ones. */
const EXPOSED =
  "X-Request-Id, Retry-After, RateLimit, RateLimit-Policy, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset"

/** Request headers a page may send (the preflight answers these). */
const ALLOWED_REQUEST_HEADERS = ["accept", "accept-language", "content-language", "content-type", "x-request-id"]

/** CORS headers for a browser at `origin` (none when it is not allowed, so the browser refuses). */
const corsHeaders = (origin: string | undefined, key: PublishableKey): Record<string, string> =>
  origin !== undefined && originAllowed(origin, key.allowedOrigins)
    ? { "Access-Control-Allow-Origin": origin, "Access-Control-Expose-Headers": EXPOSED }
    : {}

export const CatalogueAuthLive = Layer.effect(
  CatalogueAuth,
  Effect.gen(function*() {
    const secret = yield* makeSecretKeyAuth
    const publishable = yield* PublishableKeys
    const limiter = yield* RateLimiter
    const cache = yield* PublicCatalogueCache
    const { publishableRateLimitPerMinute } = yield* AppConfig
    const authenticate = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const keys = queryKeys(request.url)
      const hasHeader = (request.headers.authorization ?? "") !== ""
      if (hasHeader && keys.length > 0) {
        return yield* new Unauthorized({
          detail: "send a secret key in `Authorization` or a publishable key as query `key`, not both"
        })
      }
      if (hasHeader || keys.length === 0) {
        if (!hasHeader) {
          return yield* new Unauthorized({
            detail:
              "send a publishable key as query `key=pk_widget_...`, or a secret key as `Authorization: Bearer svc_live_...`"
          })
        }
        return { _tag: "Secret", key: yield* secret } satisfies CatalogueCaller
      }
      if (keys.length > 1) return yield* new Unauthorized({ detail: "send one `key`" })
      const key = yield* publishable.authenticate(keys[0]!)
      yield* addResponseHeaders({
        ...corsHeaders(request.headers.origin, key),
        "Cache-Control": "no-store",
        "Vary": "Origin"
      })
      // An answer the service still holds is served as a CDN would: not counted.
      if ((yield* cache.get(cache.keyOf(key.id, request))) !== undefined) {
        return { _tag: "Publishable", key } satisfies CatalogueCaller
      }
      const decision = yield* limiter.hit(`publishable:${key.id}`, publishableRateLimitPerMinute, 60)
      yield* addResponseHeaders(rateLimitHeaders(decision, "publishable"))
      if (!decision.allowed) {
        return yield* new RateLimited({
          detail: `more than ${decision.limit} requests in ${decision.windowSeconds} seconds with this publishable key`,
          retryAfterSeconds: decision.resetSeconds
        })
      }
      return { _tag: "Publishable", key } satisfies CatalogueCaller
    })
    return CatalogueAuth.of({ publishable: () => authenticate })
  })
)

/** The paths of the catalogue, for the preflight routes. */
const CATALOGUE_PATHS = ["/api/v1/tours", "/api/v1/tours/:id", "/api/v1/tours/:id/availability"] as const

/**
 * CORS preflight for the catalogue: for an allowed origin of a valid publishable key, 204 with the
 * method (GET), the request headers asked for (of those a page may send) and a 10-minute max age;
 * otherwise 204 without CORS headers, which the browser treats as a refusal. Never counted against
 * the key's limit.
 */
export const CatalogueCorsRoutes = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const publishable = yield* PublishableKeys
    const preflight = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const keys = queryKeys(request.url)
      const key = keys.length === 1 ? yield* Effect.option(publishable.authenticate(keys[0]!)) : undefined
      const origin = request.headers.origin
      const cors = key !== undefined && key._tag === "Some" ? corsHeaders(origin, key.value) : {}
      if (!("Access-Control-Allow-Origin" in cors)) {
        return HttpServerResponse.empty({ status: 204, headers: { Vary: "Origin" } })
      }
      const asked = (request.headers["access-control-request-headers"] ?? "")
        .split(",").map((h) => h.trim().toLowerCase()).filter((h) => h !== "")
      const allowedHeaders = asked.filter((h) => ALLOWED_REQUEST_HEADERS.includes(h))
      return HttpServerResponse.empty({
        status: 204,
        headers: {
          ...cors,
          "Access-Control-Allow-Methods": "GET",
          ...(allowedHeaders.length > 0 ? { "Access-Control-Allow-Headers": allowedHeaders.join(", ") } : {}),
          "Access-Control-Max-Age": "600",
          "Vary": "Origin, Access-Control-Request-Headers"
        }
      })
    })
    for (const path of CATALOGUE_PATHS) yield* router.options(path, preflight)
  })
)
