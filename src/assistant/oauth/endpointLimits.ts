/**
 * Rate limits of the authorization server's open endpoints, per client address: dynamic client
 * registration (anyone may register) and the token endpoint (code, refresh). Counted with the
 * service's RateLimiter (database clock, shared by every instance); past the limit the request never
 * reaches oidc-provider and answers 429 with `Retry-After` and an OAuth error body.
 */
import type { HttpServerRequest } from "@effect/platform"
import { HttpServerResponse } from "@effect/platform"
import { Effect, Option } from "effect"
import { RateLimiter } from "../../http/RateLimiter.js"

interface EndpointLimit {
  readonly bucket: string
  readonly limit: number
  readonly windowSeconds: number
}

/** The limited endpoints (POST only) and their budgets per client address. */
export const OAUTH_ENDPOINT_LIMITS: Readonly<Record<string, EndpointLimit>> = {
  "/oauth/register": { bucket: "oauth-register", limit: 100, windowSeconds: 60 * 60 },
  "/oauth/token": { bucket: "oauth-token", limit: 300, windowSeconds: 60 }
}

/** A check answering a 429 when `request` to `path` is over its limit, else none (also for other paths). */
export const makeOAuthEndpointLimits = Effect.gen(function*() {
  const limiter = yield* RateLimiter
  return (request: HttpServerRequest.HttpServerRequest, path: string) =>
    Effect.gen(function*() {
      const limit = OAUTH_ENDPOINT_LIMITS[path]
      if (limit === undefined || request.method !== "POST") return Option.none()
      const address = request.remoteAddress.pipe(Option.getOrElse(() => "unknown"))
      const decision = yield* limiter.hit(`${limit.bucket}:${address}`, limit.limit, limit.windowSeconds)
      if (decision.allowed) return Option.none()
      return Option.some(
        HttpServerResponse.unsafeJson(
          {
            error: "temporarily_unavailable",
            error_description: `too many requests from this address; retry after ${decision.resetSeconds} seconds`
          },
          { status: 429, headers: { "Retry-After": String(decision.resetSeconds), "Cache-Control": "no-store" } }
        )
      )
    })
})
