/**
 * The Quickbook API's handlers: each feature folder's `Http.ts` (its group, providing its own
 * services) behind the bearer + terminal security (./auth.ts); the signed PDF link takes no key.
 */
import { HttpApiBuilder } from "@effect/platform"
import { Layer } from "effect"
import { apiHttpApp } from "../http/apiApp.js"
import { RateLimiter } from "../http/RateLimiter.js"
import { QuickbookApi } from "./Api.js"
import { QuickbookAuthLive } from "./auth.js"
import { QuickbookBookLive } from "./book/Http.js"
import { handleQuickbook } from "./errorMapping.js"
import { quickbookDocsLayer, quickbookOpenApiLayer } from "./openapi.js"
import { QuickbookSalesLive } from "./sales/Http.js"
import { QuickbookKeys } from "./terminals/QuickbookKeys.js"
import { QuickbookTicketPdfLive, QuickbookTicketsLive } from "./tickets/Http.js"
import { QuickbookToursLive } from "./tours/Http.js"

const QuickbookGroupsLive = Layer.mergeAll(
  QuickbookToursLive,
  QuickbookSalesLive,
  QuickbookTicketsLive,
  QuickbookBookLive
).pipe(
  Layer.provide(QuickbookAuthLive),
  Layer.provide([QuickbookKeys.Default, RateLimiter.Default]),
  Layer.merge(QuickbookTicketPdfLive)
)

/** The Quickbook API with every group implemented. */
export const QuickbookApiLive = HttpApiBuilder.api(QuickbookApi).pipe(Layer.provide(QuickbookGroupsLive))

/**
 * The Quickbook API as served: its routes, its OpenAPI document and reference page (./openapi.ts),
 * on a router of its own, with its `{error: {code, clerkMessage}}` mapping (which also marks every
 * answer `Cache-Control: no-store`).
 */
export const QuickbookHttp = apiHttpApp(
  Layer.mergeAll(quickbookOpenApiLayer, quickbookDocsLayer).pipe(Layer.provideMerge(QuickbookApiLive)),
  handleQuickbook
)
