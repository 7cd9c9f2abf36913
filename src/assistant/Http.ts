/**
 * The assistant-facing surface (issue 16; docs/assistant.md), served by the same process:
 * - `/mcp`: the MCP endpoint (./mcp/endpoint.ts);
 * - `/.well-known/oauth-protected-resource/mcp`: its RFC 9728 metadata;
 * - the authorization server (./oauth/provider.ts: oidc-provider, a Koa app handed the raw Node
 *   request and response): `/oauth/*`, RFC 8414 metadata at `/.well-known/oauth-authorization-server`
 *   (and `/.well-known/openid-configuration`);
 * - our sign-in and consent pages at `/oauth/interaction/*` (./oauth/interactions.ts);
 * - rate limits per client address on registration and the token endpoint (./oauth/endpointLimits.ts).
 * Each request gets a request id (`X-Request-Id`) and an access-log line (path only: no query).
 */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect, Option, Runtime } from "effect"
import { randomUUID } from "node:crypto"
import type { KoaContextWithOIDC } from "oidc-provider"
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnreachable, isDatabaseUnreachableError } from "../db/unreachable.js"
import { RateLimiter } from "../http/RateLimiter.js"
import { recordRequest } from "../observability/metrics.js"
import { annotateSpan } from "../observability/spanFn.js"
import { KeyAuth } from "../partner/auth/KeyAuth.js"
import { SCOPES } from "../partner/auth/scopes.js"
import { databaseUnavailableProblem, problemResponse } from "../partner/problem.js"
import { AssistantConfig } from "./config.js"
import { BearerRepo } from "./mcp/BearerRepo.js"
import { allowlists, makeMcpEndpoint } from "./mcp/endpoint.js"
import { Connections } from "./oauth/Connections.js"
import { makeOAuthEndpointLimits } from "./oauth/endpointLimits.js"
import { makeInteractions } from "./oauth/interactions.js"
import { OAuthStoreRepo } from "./oauth/OAuthStoreRepo.js"
import { messagePage } from "./oauth/pages.js"
import { INTERACTION_PREFIX, makeProvider, OAUTH_ROUTES } from "./oauth/provider.js"
import { SignInRepo } from "./oauth/SignInRepo.js"

export const MCP_PATH = "/mcp"
const PROTECTED_RESOURCE = "/.well-known/oauth-protected-resource"
const AS_METADATA = "/.well-known/oauth-authorization-server"
const OIDC_METADATA = "/.well-known/openid-configuration"

/**
 * The route of an assistant request as metrics and span names give it: a fixed path as it is, an
 * OAuth interaction `/oauth/interaction/{uid}…`, another OAuth endpoint by its first two segments
 * (`/oauth/token`), anything else `unmatched`; never an id.
 */
const assistantRoute = (path: string) => {
  if (path === MCP_PATH || path === AS_METADATA || path === OIDC_METADATA || path.startsWith(PROTECTED_RESOURCE)) {
    return path.startsWith(PROTECTED_RESOURCE) ? PROTECTED_RESOURCE : path
  }
  if (path.startsWith(INTERACTION_PREFIX)) return `${INTERACTION_PREFIX}{uid}`
  if (path.startsWith("/oauth/")) return `/oauth/${path.split("/")[2]?.replace(/[^a-z_-]/gi, "") || "unmatched"}`
  return "unmatched"
}

const pathOf = (url: string) => {
  const q = url.indexOf("?")
  return q === -1 ? url : url.slice(0, q)
}

/** Whether a request is the assistant surface's (src/Http.ts routes it here). */
export const isAssistantUrl = (url: string) => {
  const path = pathOf(url)
  return path === MCP_PATH || path.startsWith("/oauth/") || path.startsWith("/.well-known/oauth-") ||
    path === OIDC_METADATA
}

/** The MCP resource URL for a base URL: MCP_PUBLIC_URL, else `{base}/mcp`. */
export const mcpUrlOf = (config: AssistantConfig, baseUrl: string) =>
  Option.getOrElse(config.mcpPublicUrl, () => `${baseUrl.replace(/\/$/, "")}${MCP_PATH}`)

/** The RFC 9728 document's URL for a resource: the well-known prefix before the resource's path. */
export const resourceMetadataUrlOf = (resource: string) => {
  const url = new URL(resource)
  return `${url.origin}${PROTECTED_RESOURCE}${url.pathname === "/" ? "" : url.pathname}`
}

/**
 * The largest body the sign-in forms and the authorization server's endpoints take (theirs are under
 * 2 KiB). A declared `Content-Length` over it is refused with 413 before anything reads it; a chunked
 * body over oidc-provider's own limit (56 KiB) is its 400 `invalid_request`. /mcp has the REST limit.
 */
export const OAUTH_BODY_LIMIT_BYTES = 16 * 1024

const bodyTooLarge = (path: string) => {
  const description = `the body is larger than ${OAUTH_BODY_LIMIT_BYTES} bytes, the most this endpoint takes`
  const close = { Connection: "close", "Cache-Control": "no-store" }
  return path.startsWith(INTERACTION_PREFIX)
    ? messagePage("Too large", `The form sent is too large: ${description}.`, 413, close)
    : HttpServerResponse.unsafeJson({ error: "invalid_request", error_description: description }, {
      status: 413,
      headers: close
    })
}

/** The OAuth error body when the database did not answer (the JSON endpoints' 503). */
const oauthUnavailable = {
  error: "temporarily_unavailable",
  error_description: "the service cannot answer right now: try again in a moment"
}

/** The authorization server's pages a person's browser opens (the rest of /oauth answers JSON). */
const isBrowserPath = (path: string) =>
  path.startsWith(INTERACTION_PREFIX) || path === OAUTH_ROUTES.authorization || path === OAUTH_ROUTES.end_session

/**
 * The database did not answer (src/db/unreachable.ts), all with `Retry-After`: on /mcp the 503
 * `unavailable` problem (JSON, as a tool error carries it), on the sign-in pages a 503 page, on the
 * authorization server's JSON endpoints (token, registration…) the OAuth error form.
 */
const databaseUnavailable = (path: string, requestId: string) => {
  const retryAfter = { "Retry-After": String(DATABASE_RETRY_AFTER_SECONDS), "Cache-Control": "no-store" }
  if (path === MCP_PATH) {
    return problemResponse(databaseUnavailableProblem(requestId)).pipe(HttpServerResponse.setHeaders(retryAfter))
  }
  if (isBrowserPath(path)) {
    return messagePage(
      "Temporarily unavailable",
      `The service cannot sign you in right now. Try again in a moment (reference: ${requestId}).`,
      503,
      retryAfter
    )
  }
  return HttpServerResponse.unsafeJson(oauthUnavailable, { status: 503, headers: retryAfter })
}

/** The assistant surface for a service reachable at `baseUrl`; needs the database-backed services. */
export const makeAssistantHttp = (baseUrl: string) =>
  Effect.gen(function*() {
    const config = yield* AssistantConfig
    const issuer = Option.getOrElse(config.oauthIssuer, () => baseUrl.replace(/\/$/, ""))
    const resource = mcpUrlOf(config, baseUrl)
    const resourceMetadataUrl = resourceMetadataUrlOf(resource)
    const connections = yield* Connections
    const keys = yield* KeyAuth
    const runtime = yield* Effect.runtime<never>()
    const provider = yield* makeProvider({
      issuer,
      resource,
      hasActiveConnection: (grantId) =>
        Runtime.runPromise(runtime)(
          Effect.flatMap(connections.byGrant(grantId), (found) =>
            Option.isNone(found)
              ? Effect.succeed(false)
              : keys.authenticateConnection(found.value.id).pipe(Effect.as(true), Effect.orElseSucceed(() => false)))
        )
    })
    // A grant revoked by the authorization server (a reused refresh token, the revocation endpoint)
    // ends its connection too.
    provider.on("grant.revoked", (_ctx: unknown, grantId: string) => {
      Runtime.runFork(runtime)(connections.grantRevoked(grantId))
    })
    // The provider's own failures go to our log (its error, never a token: they are not in the message).
    // The database not answering is no server error: the JSON endpoints (token, registration…) answer
    // 503 with Retry-After, as the pages do (renderError in ./oauth/provider.ts). The provider emits
    // this after setting its answer and before it is sent, so the answer can still be changed here.
    provider.on("server_error", (ctx: KoaContextWithOIDC, error: Error) => {
      if (isDatabaseUnreachableError(error)) {
        if (ctx.status === 500 && ctx.type === "application/json") {
          ctx.status = 503
          ctx.set("Retry-After", String(DATABASE_RETRY_AFTER_SECONDS))
          ctx.body = oauthUnavailable
        }
        return
      }
      Runtime.runFork(runtime)(Effect.logError("authorization server error", error.message))
    })
    const interactions = yield* makeInteractions(provider, resource)
    const lists = allowlists([resource, baseUrl, issuer], config.mcpAllowedOrigins)
    const mcp = yield* makeMcpEndpoint(provider, {
      resource,
      resourceMetadataUrl,
      allowedHosts: lists.hosts,
      allowedOrigins: lists.origins
    })
    const koa = provider.callback()
    const overOAuthLimit = yield* makeOAuthEndpointLimits

    const resourceMetadata = {
      resource,
      authorization_servers: [issuer],
      scopes_supported: [...SCOPES],
      bearer_methods_supported: ["header"],
      resource_name: "Tour operator assistant (MCP)"
    }

    /** Hands the request to oidc-provider, which writes the response itself. */
    const toProvider = (request: HttpServerRequest.HttpServerRequest, rewriteTo?: string) =>
      Effect.async<HttpServerResponse.HttpServerResponse>((resume) => {
        const req = NodeHttpServerRequest.toIncomingMessage(request)
        const res = NodeHttpServerRequest.toServerResponse(request)
        if (rewriteTo !== undefined) req.url = rewriteTo
        let done = false
        const finished = () => {
          if (done) return
          done = true
          resume(Effect.succeed(HttpServerResponse.empty({ status: res.statusCode })))
        }
        res.once("finish", finished)
        res.once("close", finished)
        void koa(req, res)
      })

    const notFound = messagePage("Not found", "There is nothing here.", 404)

    const route = (request: HttpServerRequest.HttpServerRequest, requestId: string) => {
      const path = pathOf(request.url)
      if (path === MCP_PATH) return mcp(request, requestId)
      if (path === PROTECTED_RESOURCE + new URL(resource).pathname || path === PROTECTED_RESOURCE) {
        return Effect.succeed(
          HttpServerResponse.unsafeJson(resourceMetadata, {
            headers: { "Access-Control-Allow-Origin": "*", "Cache-Control": "public, max-age=300" }
          })
        )
      }
      if (path === AS_METADATA || path === OIDC_METADATA) return toProvider(request, OIDC_METADATA)
      if (path.startsWith("/oauth/") && Number(request.headers["content-length"]) > OAUTH_BODY_LIMIT_BYTES) {
        return Effect.succeed(bodyTooLarge(path))
      }
      if (path.startsWith(INTERACTION_PREFIX)) return interactions(request, path) ?? Effect.succeed(notFound)
      if (path.startsWith("/oauth/")) {
        return Effect.flatMap(
          overOAuthLimit(request, path),
          Option.match({ onNone: () => toProvider(request), onSome: Effect.succeed })
        )
      }
      return Effect.succeed(notFound)
    }

    return Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const given = request.headers["x-request-id"]
      const requestId = given && /^[A-Za-z0-9._:-]{8,64}$/.test(given) ? given : randomUUID()
      const started = performance.now()
      const routeLabel = assistantRoute(pathOf(request.url))
      yield* annotateSpan({ "http.route": routeLabel, request_id: requestId })
      const response = yield* route(request, requestId).pipe(
        Effect.catchAllCause((cause) =>
          isDatabaseUnreachable(cause)
            ? Effect.logWarning("database did not answer", cause).pipe(
              Effect.as(databaseUnavailable(pathOf(request.url), requestId))
            )
            : Effect.logError("assistant request failed unexpectedly", cause).pipe(
              Effect.as(messagePage("Something went wrong", `Quote this reference: ${requestId}`, 500))
            )
        ),
        Effect.annotateLogs("request_id", requestId)
      )
      const ms = performance.now() - started
      yield* recordRequest(
        { api: "assistant", method: request.method, route: routeLabel, status: response.status },
        ms / 1000
      )
      yield* Effect.logInfo("request").pipe(
        Effect.annotateLogs({
          request_id: requestId,
          method: request.method,
          url: pathOf(request.url),
          status: response.status,
          ms: Math.round(ms)
        })
      )
      return HttpServerResponse.setHeader(response, "X-Request-Id", requestId)
    })
  }).pipe(
    Effect.provide(Connections.Default),
    Effect.provide(BearerRepo.Default),
    Effect.provide(SignInRepo.Default),
    Effect.provide(OAuthStoreRepo.Default),
    Effect.provide(KeyAuth.Default),
    Effect.provide(RateLimiter.Default)
  )
