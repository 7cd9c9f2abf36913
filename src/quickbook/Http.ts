/**
 * The Quickbook API's handlers: each feature folder's `Http.ts` (its group, providing its own
 * services) behind the bearer + terminal security (./auth.ts); the signed PDF link takes no key.
 */
import { Layer } from "effect"
import { RateLimiter } from "../http/RateLimiter.js"
import { QuickbookAuthLive } from "./auth.js"
import { QuickbookBookLive } from "./book/Http.js"
import { QuickbookSalesLive } from "./sales/Http.js"
import { QuickbookKeys } from "./terminals/QuickbookKeys.js"
import { QuickbookTicketPdfLive, QuickbookTicketsLive } from "./tickets/Http.js"
import { QuickbookToursLive } from "./tours/Http.js"

export const QuickbookGroupsLive = Layer.mergeAll(QuickbookToursLive, QuickbookSalesLive, QuickbookTicketsLive, QuickbookBookLive).pipe(
  Layer.provide(QuickbookAuthLive),
  Layer.provide([QuickbookKeys.Default, RateLimiter.Default]),
  Layer.merge(QuickbookTicketPdfLive)
)
