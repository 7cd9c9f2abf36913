/**
 * Partner API authentication, in this order and before any parameter is decoded:
 * `Authorization: Bearer svc_live_...` (401), the per-key rate limit (429), the scope the endpoint
 * declares (403). Rate-limit headers go on every authenticated response (see requestContext.ts).
 * The tours endpoints also take a publishable key (catalogueAuth.ts), which every other endpoint
 * refuses with a 401 that says so.
 */
import { HttpApi, HttpRouter, HttpServerRequest } from "@effect/platform"
import { Context, Effect, Layer, Option } from "effect"
import { AppConfig } from "../../config.js"
import { Forbidden, RateLimited, Unauthorized } from "../../domain/errors.js"
import { RateLimiter, rateLimitHeaders } from "../../http/RateLimiter.js"
import { CurrentRequest } from "../../http/requestContext.js"
import { PartnerApi } from "../Api.js"
import { type AuthenticatedKey, KeyAuth } from "./KeyAuth.js"
import { looksLikePublishableKey } from "./publishableKey.js"
import type { Scope } from "./scopes.js"
import { PartnerAuth, RequiredScope } from "./security.js"

/** "GET /api/v1/bookings/:id" → the scope it needs, from the endpoint (or group) annotations. */
export const requiredScopes = (() => {
  const scopes = new Map<string, Scope>()
  HttpApi.reflect(PartnerApi, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, mergedAnnotations }) => {
      const scope = Context.getOption(mergedAnnotations, RequiredScope)
      if (Option.isSome(scope)) scopes.set(`${endpoint.method} ${endpoint.path}`, scope.value)
    }
  })
  return scopes
})()

const BEARER = /^Bearer[ ]+(\S+)[ ]*$/i

/**
 * The secret-key path every Partner API request takes: the bearer token (401), the per-key rate
 * limit (429, headers on every answer), the scope the route declares (403). Built once; the
 * effect it returns runs per request.
 */
export const makeSecretKeyAuth = Effect.gen(function*() {
  const keys = yield* KeyAuth
  const limiter = yield* RateLimiter
  const { rateLimitPerMinute } = yield* AppConfig
  // Few effect steps per request: what the request carries is read from the fiber at once
  // (bench/README.md, "Issue 18: the framework's overhead").
  return Effect.withFiberRuntime<AuthenticatedKey, Unauthorized | RateLimited | Forbidden>((fiber) => {
    const context = fiber.currentContext
    const request = Context.unsafeGet(context, HttpServerRequest.HttpServerRequest)
    // The built-in bearer decoding slices off any scheme; read the header strictly ourselves.
    const header = request.headers.authorization ?? ""
    const token = BEARER.exec(header)?.[1]
    if (header !== "" && token === undefined) {
      return new Unauthorized({ detail: "use the Bearer scheme: `Authorization: Bearer svc_live_...`" })
    }
    if (header === "" && queryKeys(request.url).some(looksLikePublishableKey)) {
      return new Unauthorized({
        detail: "a publishable key (pk_widget_...) reads only the tours endpoints (/api/v1/tours...); this endpoint " +
          "needs a secret key in `Authorization: Bearer svc_live_...`"
      })
    }
    const { route } = Context.unsafeGet(context, HttpRouter.RouteContext)
    const scope = requiredScopes.get(`${route.method} ${route.path}`)
    return Effect.flatMap(keys.authenticate(token ?? ""), (key) =>
      Effect.flatMap(
        limiter.hit(`partner:${key.id}`, rateLimitPerMinute, 60),
        (decision): Effect.Effect<AuthenticatedKey, RateLimited | Forbidden> => {
          Object.assign(fiber.getFiberRef(CurrentRequest).headers, {
            ...rateLimitHeaders(decision),
            "Cache-Control": "private, no-store"
          })
          if (!decision.allowed) {
            return new RateLimited({
              detail: `more than ${decision.limit} requests in ${decision.windowSeconds} seconds with this key`,
              retryAfterSeconds: decision.resetSeconds
            })
          }
          if (scope !== undefined && !key.scopes.includes(scope)) {
            return new Forbidden({ detail: `this key lacks the scope ${scope}`, scope })
          }
          return Effect.succeed(key)
        }
      ))
  })
})

/** Every value of the query parameter `key`. */
export const queryKeys = (url: string) => new URL(url, "http://localhost").searchParams.getAll("key")

export const PartnerAuthLive = Layer.effect(
  PartnerAuth,
  Effect.map(makeSecretKeyAuth, (authenticate) => PartnerAuth.of({ bearer: () => authenticate }))
)
