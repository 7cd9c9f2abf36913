/**
 * The MCP endpoint (`{base}/mcp`, Streamable HTTP): the official SDK's web-standard handler
 * (`createMcpHandler`: protocol 2025-11-25 served statelessly, and the 2026-07-28 stateless revision)
 * mounted in the Effect HTTP server (request → web Request → handler → response: ./webBridge.ts).
 * In front of it: Host and Origin validation (403, DNS rebinding), then the bearer token (401 with
 * the RFC 9728 challenge: ./bearer.ts). The SDK answers the protocol itself (version header 400,
 * notifications 202, GET/DELETE 405 as a stateless server), the per-tool scope check (403
 * `insufficient_scope`) and the tools/list; each tools/call runs through ./toolCall.ts.
 */
import { type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import {
  createMcpHandler,
  hostHeaderValidationResponse,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  McpServer,
  type McpServerFactory,
  originValidationResponse,
  validateOriginHeader
} from "@modelcontextprotocol/server"
import { Context, Effect, Layer, Runtime } from "effect"
import type Provider from "oidc-provider"
import { AppConfig } from "../../config.js"
import type { RateLimiter } from "../../http/RateLimiter.js"
import { BODY_LIMIT_BYTES } from "../../http/requestBody.js"
import { assistantTools, AssistantToolsLive } from "../tools/index.js"
import type { AssistantTool } from "../tools/tool.js"
import { challenge, makeBearerAuth } from "./bearer.js"
import { callTool, problemResult, type ToolCaller } from "./toolCall.js"
import { standardOf } from "./toolSchema.js"
import { serverResponseOf, webRequestOf, withBody } from "./webBridge.js"

/** The tools served: every tool of `assistantTools` (tests serve extra probes through this reference). */
export class AssistantToolList extends Context.Reference<AssistantToolList>()("Assistant/ToolList", {
  defaultValue: (): ReadonlyArray<AssistantTool> => assistantTools
}) {}

export interface McpEndpointSettings {
  /** The MCP resource: MCP_PUBLIC_URL, else `{base}/mcp`. */
  readonly resource: string
  readonly resourceMetadataUrl: string
  /** Hostnames a request may name in `Host`, and browser origins (hostnames) allowed in `Origin`. */
  readonly allowedHosts: ReadonlyArray<string>
  readonly allowedOrigins: ReadonlyArray<string>
}

const INSTRUCTIONS = "Tools for a tour operator's day: bookings, manifests, sales and analytics, and (when the " +
  "person allowed them) check-ins, payment links, cancellations and reschedules. Call `me` first for the operators " +
  "this connection acts for. Every write takes two calls: the first answers a summary and a confirm_token; show " +
  "the summary to the person and call again with the confirm_token only after they agree."

/** Hostnames that are the loopback interface: with a local base URL, local clients are allowed too. */
export const isLocalHost = (hostname: string) => localhostAllowedHostnames().includes(hostname)

export const makeMcpEndpoint = (provider: Provider, settings: McpEndpointSettings) =>
  Effect.gen(function*() {
    const authenticate = yield* makeBearerAuth(provider, settings.resource)
    const { rateLimitPerMinute } = yield* AppConfig
    const toolServices = yield* Layer.build(AssistantToolsLive)
    const runtime = yield* Effect.runtime<RateLimiter>()
    const tools = yield* AssistantToolList
    // What does not depend on the caller, made once: the SDK builds a server per request (stateless),
    // and `JSONSchema.make` of every tool's schemas was a visible share of each call's CPU (bench/README.md).
    const registrations = tools.map((tool) => ({
      tool,
      config: {
        title: tool.title,
        description: tool.description,
        inputSchema: standardOf(tool.input),
        outputSchema: standardOf(tool.output),
        annotations: { title: tool.title, ...tool.annotations }
      }
    }))

    const byName = new Map(registrations.map((r) => [r.tool.name, r]))
    /**
     * The registrations a request needs: a single `tools/call` of a served tool needs only that tool's
     * (the SDK looks the called tool up by name and nothing else); anything else (tools/list, a batch,
     * an unknown tool, which the SDK answers with its own error) gets them all.
     */
    const registrationsFor = (parsedBody: unknown) => {
      const message = parsedBody as { method?: unknown; params?: { name?: unknown } } | null | undefined
      if (typeof message !== "object" || message === null || Array.isArray(message)) return registrations
      if (message.method !== "tools/call" || typeof message.params?.name !== "string") return registrations
      const one = byName.get(message.params.name)
      return one === undefined ? registrations : [one]
    }

    const factory: McpServerFactory = (ctx) => {
      const extra = ctx.authInfo?.extra as
        | { caller?: ToolCaller; registrations?: typeof registrations }
        | undefined
      const caller = extra?.caller
      const server = new McpServer(
        { name: "tour-partner-service", title: "Tour operator assistant", version: "1.0.0" },
        // The tool list is fixed for the life of the process: no `tools/list_changed` is ever sent,
        // so none is promised (the SDK would advertise `listChanged: true` by default).
        { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS }
      )
      for (const { config, tool } of extra?.registrations ?? registrations) {
        server.registerTool(
          tool.name,
          {
            ...config,
            scopeChallenge: () =>
              caller === undefined || tool.scope === null || caller.key.scopes.includes(tool.scope)
                ? undefined
                : {
                  scopes: [...new Set([...caller.key.scopes, tool.scope])] as [string, ...Array<string>],
                  errorDescription: `this connection lacks the scope ${tool.scope}`
                }
          },
          (args) =>
            caller === undefined
              ? problemResult({
                type: "/api/v1/docs/errors.md#unauthorized",
                title: "Unauthorized",
                status: 401,
                detail: "no connection",
                request_id: "none"
              })
              : Runtime.runPromise(runtime)(callTool(tool, args, caller, rateLimitPerMinute, toolServices))
        )
      }
      return server
    }

    const handler = createMcpHandler(factory, {
      legacy: "stateless",
      // As every body of the REST APIs (src/http/requestBody.ts): past it the SDK answers 413 with a JSON-RPC error.
      maxRequestBodySize: BODY_LIMIT_BYTES,
      onerror: (error) => Runtime.runFork(runtime)(Effect.logDebug("MCP request refused", error.message))
    })
    yield* Effect.addFinalizer(() => Effect.promise(() => handler.close()))

    const allowedHosts = [...settings.allowedHosts]
    const allowedOrigins = [...settings.allowedOrigins]

    const unauthorized = (error: string | undefined, description: string) =>
      HttpServerResponse.unsafeJson(
        { error: error ?? "invalid_token", error_description: description },
        {
          status: 401,
          headers: {
            "WWW-Authenticate": challenge(settings.resourceMetadataUrl, error, error ? description : undefined),
            "Cache-Control": "no-store"
          }
        }
      )

    /** CORS for a browser client on an allowed origin (others were refused with 403 already). */
    const cors = (origin: string | undefined): Record<string, string> =>
      origin === undefined ? {} : {
        "Access-Control-Allow-Origin": origin,
        "Access-Control-Expose-Headers": "WWW-Authenticate, Mcp-Session-Id, MCP-Protocol-Version",
        "Vary": "Origin"
      }

    const unreadable = HttpServerResponse.unsafeJson({ error: "the request could not be read" }, { status: 400 })

    const serve = (request: HttpServerRequest.HttpServerRequest, requestId: string) =>
      Effect.gen(function*() {
        const web = webRequestOf(request)
        if (web === undefined) return unreadable
        const rejected = hostHeaderValidationResponse(web.headersOnly, allowedHosts) ??
          originValidationResponse(web.headersOnly, allowedOrigins)
        if (rejected) return HttpServerResponse.fromWeb(rejected)
        if (request.method === "OPTIONS") {
          return HttpServerResponse.empty({
            status: 204,
            headers: {
              "Access-Control-Allow-Methods": "POST, GET, DELETE, OPTIONS",
              "Access-Control-Allow-Headers":
                "Authorization, Content-Type, Accept, MCP-Protocol-Version, Mcp-Session-Id, Last-Event-ID",
              "Access-Control-Max-Age": "600"
            }
          })
        }
        const auth = yield* authenticate(request.headers.authorization)
        if (auth._tag === "Refused") return unauthorized(auth.error, auth.description)
        const body = yield* withBody(request, web)
        const response = yield* Effect.promise(() =>
          handler.fetch(body.request, {
            ...(body.parsedBody === undefined ? {} : { parsedBody: body.parsedBody }),
            authInfo: {
              token: auth.token,
              clientId: auth.clientId,
              scopes: [...auth.caller.key.scopes],
              expiresAt: auth.expiresAt,
              resource: new URL(settings.resource),
              resourceMetadataUrl: settings.resourceMetadataUrl,
              extra: {
                caller: { ...auth.caller, requestId } satisfies ToolCaller,
                registrations: registrationsFor(body.parsedBody)
              }
            }
          })
        )
        return yield* serverResponseOf(response, body)
      }).pipe(Effect.catchTag("RequestError", () => Effect.succeed(unreadable)))

    return (request: HttpServerRequest.HttpServerRequest, requestId: string) => {
      const origin = request.headers.origin
      const allowed = origin !== undefined && validateOriginHeader(origin, allowedOrigins).ok ? origin : undefined
      return Effect.map(
        serve(request, requestId),
        (response) => allowed === undefined ? response : HttpServerResponse.setHeaders(response, cors(allowed))
      )
    }
  })

/** Allowed hostnames and origins for `resource` and `base`: theirs, loopback ones when local, and the setting's. */
export const allowlists = (urls: ReadonlyArray<string>, extraOrigins: ReadonlyArray<string>) => {
  const hosts = new Set<string>()
  for (const url of urls) {
    const hostname = new URL(url).hostname
    hosts.add(hostname.includes(":") && !hostname.startsWith("[") ? `[${hostname}]` : hostname)
  }
  const local = [...hosts].some(isLocalHost)
  const origins = new Set<string>([...hosts, ...(local ? localhostAllowedOrigins() : [])])
  for (const origin of extraOrigins) {
    const trimmed = origin.trim()
    if (trimmed === "") continue
    try {
      origins.add(trimmed.includes("://") ? new URL(trimmed).hostname : trimmed)
    } catch {
      origins.add(trimmed)
    }
  }
  return {
    hosts: [...new Set([...hosts, ...(local ? localhostAllowedHostnames() : [])])],
    origins: [...origins]
  }
}
