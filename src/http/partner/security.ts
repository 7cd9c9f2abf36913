/**
 * Partner API authentication: `Authorization: Bearer svc_live_...`, then the per-key rate limit.
 * Rate-limit headers go on every authenticated response (see requestContext.ts).
 */
import { HttpApiMiddleware, HttpApiSecurity, HttpServerRequest, OpenApi } from "@effect/platform"
import { Context, Effect, Layer, Schema } from "effect"
import { AppConfig } from "../../config.js"
import { Forbidden, RateLimited, Unauthorized } from "../../domain/errors.js"
import type { Scope } from "../../domain/scopes.js"
import { type AuthenticatedKey, KeyAuth } from "../../services/KeyAuth.js"
import { RateLimiter, rateLimitHeaders } from "../../services/RateLimiter.js"
import { addResponseHeaders } from "../requestContext.js"

export class CurrentKey extends Context.Tag("CurrentKey")<CurrentKey, AuthenticatedKey>() {}

export class PartnerAuth extends HttpApiMiddleware.Tag<PartnerAuth>()("PartnerAuth", {
  failure: Schema.Union(Unauthorized, RateLimited),
  provides: CurrentKey,
  security: {
    bearer: HttpApiSecurity.bearer.pipe(
      HttpApiSecurity.annotate(
        OpenApi.Description,
        "A secret key: `Authorization: Bearer svc_live_<id>_<secret>`. Never put a key in the URL."
      )
    )
  }
}) {}

const BEARER = /^Bearer[ ]+(\S+)[ ]*$/i

export const PartnerAuthLive = Layer.effect(
  PartnerAuth,
  Effect.gen(function*() {
    const keys = yield* KeyAuth
    const limiter = yield* RateLimiter
    const { rateLimitPerMinute } = yield* AppConfig
    return PartnerAuth.of({
      // The built-in bearer decoding slices any scheme; read the header strictly ourselves.
      bearer: () =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const header = request.headers.authorization ?? ""
          const token = BEARER.exec(header)?.[1] ?? (header === "" ? "" : "malformed")
          const key = yield* keys.authenticate(token)
          const decision = yield* limiter.hit(`partner:${key.id}`, rateLimitPerMinute, 60)
          yield* addResponseHeaders({ ...rateLimitHeaders(decision), "Cache-Control": "private, no-store" })
          if (!decision.allowed) {
            return yield* new RateLimited({
              detail: `more than ${decision.limit} requests in ${decision.windowSeconds} seconds with this key`,
              retryAfterSeconds: decision.resetSeconds
            })
          }
          return key
        })
    })
  })
)

/** The current key, once it is known to hold `scope`. */
export const keyWithScope = (scope: Scope) =>
  Effect.flatMap(CurrentKey, (key) =>
    key.scopes.includes(scope)
      ? Effect.succeed(key)
      : Effect.fail(new Forbidden({ detail: `this key lacks the scope ${scope}`, scope })))
