/** The HTTP server: the Partner API, its documents, and the middleware they share. */
import { HttpApiBuilder, HttpApiScalar, HttpRouter, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Layer } from "effect"
import { createServer } from "node:http"
import { Bookings } from "./partner/bookings/Bookings.js"
import { BookingSystemAccounts } from "./operators/BookingSystemAccounts.js"
import { Cancels } from "./partner/cancels/Cancels.js"
import { Checkins } from "./partner/checkins/Checkins.js"
import { Reschedules } from "./partner/reschedules/Reschedules.js"
import { PaymentLinks } from "./partner/paymentLinks/PaymentLinks.js"
import { CursorSigner } from "./http/CursorSigner.js"
import { KeyAuth } from "./partner/auth/KeyAuth.js"
import { Manifest } from "./partner/manifest/Manifest.js"
import { PublicCatalogueCache } from "./partner/tours/PublicCatalogueCache.js"
import { PublishableKeys } from "./partner/auth/PublishableKeys.js"
import { TourAvailability } from "./partner/tours/TourAvailability.js"
import { Tours } from "./partner/tours/Tours.js"
import { RateLimiter } from "./http/RateLimiter.js"
import { DocsRoutes } from "./http/docs/routes.js"
import { PartnerApi } from "./partner/Api.js"
import { BookingsLive, HealthLive, MeLive } from "./partner/Http.js"
import { ManifestLive } from "./partner/manifest/Http.js"
import { CheckinsLive } from "./partner/checkins/Http.js"
import { ReschedulesLive } from "./partner/reschedules/Http.js"
import { PaymentLinksLive } from "./partner/paymentLinks/Http.js"
import { CancelsLive } from "./partner/cancels/Http.js"
import { ToursLive } from "./partner/tours/Http.js"
import { Writes } from "./partner/writes/Writes.js"
import { openApiLayer } from "./partner/openapi.js"
import { PartnerAuthLive } from "./partner/auth/middleware.js"
import { CatalogueAuthLive, CatalogueCorsRoutes } from "./partner/tours/catalogueAuth.js"
import { problemMiddleware } from "./http/problem.js"
import { QuickbookKeys } from "./quickbook/terminals/QuickbookKeys.js"
import { QuickbookBook } from "./quickbook/book/QuickbookBook.js"
import { QuickbookHolds } from "./quickbook/sales/QuickbookHolds.js"
import { QuickbookTickets } from "./quickbook/tickets/QuickbookTickets.js"
import { QuickbookTours } from "./quickbook/sales/QuickbookTours.js"
import { QuickbookAuthLive } from "./quickbook/auth.js"
import { QuickbookBookLive } from "./quickbook/book/Http.js"
import { quickbookDocsLayer, quickbookOpenApiLayer } from "./quickbook/openapi.js"
import { QuickbookTicketPdfLive, QuickbookTicketsLive } from "./quickbook/tickets/Http.js"
import { QuickbookSalesLive } from "./quickbook/sales/Http.js"
import { QuickbookToursLive } from "./quickbook/tours/Http.js"

const ServicesLive = Layer.mergeAll(
  Bookings.Default,
  CursorSigner.Default,
  KeyAuth.Default,
  RateLimiter.Default,
  Manifest.Default,
  Writes.Default,
  Checkins.Default,
  Reschedules.Default,
  PaymentLinks.Default.pipe(Layer.provide(BookingSystemAccounts.Default)),
  Cancels.Default,
  Tours.Default,
  PublishableKeys.Default,
  PublicCatalogueCache.Default,
  TourAvailability.Default,
  QuickbookKeys.Default,
  QuickbookTours.Default,
  QuickbookHolds.Default,
  QuickbookTickets.Default,
  QuickbookBook.Default
)

/**
 * The Quickbook API's groups join the same router as the partner API's (the routes do not
 * overlap); the server-wide middleware (problem.ts) hands its requests to its own error mapping.
 */
const QuickbookRoutesLive = Layer.mergeAll(QuickbookToursLive, QuickbookSalesLive, QuickbookTicketsLive, QuickbookBookLive).pipe(
  Layer.provide(QuickbookAuthLive),
  Layer.merge(QuickbookTicketPdfLive)
)

export const ApiLive = HttpApiBuilder.api(PartnerApi).pipe(
  Layer.provide([MeLive, BookingsLive, HealthLive, ManifestLive, CheckinsLive, ReschedulesLive, PaymentLinksLive, CancelsLive, ToursLive]),
  Layer.provide([PartnerAuthLive, CatalogueAuthLive]),
  Layer.provide(QuickbookRoutesLive),
  Layer.provide(ServicesLive)
)

/**
 * Everything served, needing a SqlClient, the config, an HttpServer, and for the writes the
 * BookingSystem and PaymentProvider ports and the Outbox (`ExternalSystemsLive` in src/app.ts).
 */
/** Node refuses request heads over 16 KiB (431), so no path parameter is longer. */
const MAX_PATH_PARAM_LENGTH = 16 * 1024

/** Access logs come from the problem middleware (with the request id, secrets redacted). */
export const HttpLive = HttpApiBuilder.serve().pipe(
  // The router's default refuses a path parameter over 100 characters as "no route" (404 "no such
  // endpoint"); the parameter's own schema answers it instead (a UUID: 400, a sale reference: 404).
  Layer.provide(HttpRouter.setRouterConfig({ maxParamLength: MAX_PATH_PARAM_LENGTH })),
  Layer.provide(openApiLayer),
  Layer.provide(quickbookOpenApiLayer),
  Layer.provide(quickbookDocsLayer),
  Layer.provide(HttpApiScalar.layer({ path: "/api/v1/docs" })),
  Layer.provide(DocsRoutes),
  Layer.provide(CatalogueCorsRoutes.pipe(Layer.provide(PublishableKeys.Default))),
  Layer.provide(problemMiddleware),
  Layer.provideMerge(ApiLive),
  HttpServer.withLogAddress
)

export const nodeServer = (host: string, port: number) => NodeHttpServer.layer(createServer, { host, port })
