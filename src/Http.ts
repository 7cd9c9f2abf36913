/**
 * The HTTP server: each API is an HttpApp of its own (its routes, documents, middleware and error
 * mapping: src/http/apiApp.ts), mounted here by path.
 */
import { HttpServer, HttpServerRequest } from "@effect/platform"
import { Effect, Layer } from "effect"
import { isAssistantUrl, makeAssistantHttp } from "./assistant/Http.js"
import { AppConfig, baseUrlOf } from "./config.js"
import { compressResponse } from "./http/compression.js"
import { withDocumentCaching } from "./http/documentCaching.js"
import { withHtmlSecurityHeaders } from "./http/securityHeaders.js"
import { PartnerHttp } from "./partner/Http.js"
import { QuickbookHttp } from "./quickbook/Http.js"
import { isQuickbookUrl } from "./quickbook/schemas.js"

/**
 * Everything served, needing a SqlClient, the config, an HttpServer, and for the writes the
 * BookingSystem and PaymentProvider ports and the Outbox (`ExternalSystemsLive` in src/app.ts).
 * Access logs come from each API's middleware (with the request id, secrets redacted).
 */
export const HttpLive = Layer.unwrapScoped(
  Effect.gen(function*() {
    const quickbook = yield* QuickbookHttp // /api/quickbook/…
    const partner = yield* PartnerHttp // everything else: /api/v1/…, /healthz, /readyz, unknown paths
    const server = yield* HttpServer.HttpServer
    const config = yield* AppConfig
    const port = server.address._tag === "TcpAddress" ? server.address.port : config.port
    // /mcp, /oauth/…, /.well-known/oauth-…: the assistant-facing MCP server and its authorization server.
    const assistant = yield* makeAssistantHttp(baseUrlOf(config, port))
    return HttpServer.serve(
      Effect.flatMap(
        HttpServerRequest.HttpServerRequest,
        (request) =>
          Effect.flatMap(
            isQuickbookUrl(request.url) ? quickbook : isAssistantUrl(request.url) ? assistant : partner,
            // One step per response (plain functions, no effect each): every HTML page gets CSP,
            // nosniff, referrer policy, no framing (src/http/securityHeaders.ts); the documents and
            // reference pages ETag, 5 minutes' lifetime, 304 (src/http/documentCaching.ts); large JSON,
            // HTML and text are gzip- or brotli-encoded when the client asks (src/http/compression.ts).
            (response) => compressResponse(request)(withDocumentCaching(request)(withHtmlSecurityHeaders(response)))
          )
      )
    )
  })
).pipe(HttpServer.withLogAddress)

/** The node:http server: listens before the app is ready, drains on shutdown (src/http/lifecycle/nodeServer.ts). */
export { nodeServer } from "./http/lifecycle/nodeServer.js"
