/** The HTTP server: the Partner API and the Quickbook API, their documents, and the middleware they share. */
import { HttpApiBuilder, HttpApiScalar, HttpRouter, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Layer } from "effect"
import { createServer } from "node:http"
import { DocsRoutes } from "./http/docs/routes.js"
import { problemMiddleware } from "./http/problem.js"
import { PartnerApiLive } from "./partner/Http.js"
import { openApiLayer } from "./partner/openapi.js"
import { QuickbookGroupsLive } from "./quickbook/Http.js"
import { quickbookDocsLayer, quickbookOpenApiLayer } from "./quickbook/openapi.js"

/**
 * The Quickbook API's groups join the same router as the partner API's (the routes do not
 * overlap); the server-wide middleware (problem.ts) hands its requests to its own error mapping.
 */
const ApiLive = PartnerApiLive.pipe(Layer.provide(QuickbookGroupsLive))

/** Node refuses request heads over 16 KiB (431), so no path parameter is longer. */
const MAX_PATH_PARAM_LENGTH = 16 * 1024

/**
 * Everything served, needing a SqlClient, the config, an HttpServer, and for the writes the
 * BookingSystem and PaymentProvider ports and the Outbox (`ExternalSystemsLive` in src/app.ts).
 * Access logs come from the problem middleware (with the request id, secrets redacted).
 */
export const HttpLive = HttpApiBuilder.serve().pipe(
  // The router's default refuses a path parameter over 100 characters as "no route" (404 "no such
  // endpoint"); the parameter's own schema answers it instead (a UUID: 400, a sale reference: 404).
  Layer.provide(HttpRouter.setRouterConfig({ maxParamLength: MAX_PATH_PARAM_LENGTH })),
  Layer.provide(openApiLayer),
  Layer.provide(quickbookOpenApiLayer),
  Layer.provide(quickbookDocsLayer),
  Layer.provide(HttpApiScalar.layer({ path: "/api/v1/docs" })),
  Layer.provide(DocsRoutes),
  Layer.provide(problemMiddleware),
  Layer.provideMerge(ApiLive),
  HttpServer.withLogAddress
)

export const nodeServer = (host: string, port: number) => NodeHttpServer.layer(createServer, { host, port })
