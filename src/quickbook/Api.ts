/**
 * The Quickbook (desk sales) API v1 contract: the groups of its feature folders (each
 * `<feature>/Api.ts`). Its OpenAPI document is generated from these definitions (./openapi.ts).
 */
import { HttpApi, OpenApi } from "@effect/platform"
import { BookGroup } from "./book/Api.js"
import { SalesGroup } from "./sales/Api.js"
import { TicketPdfGroup, TicketsGroup } from "./tickets/Api.js"
import { ToursGroup } from "./tours/Api.js"

export class QuickbookApi extends HttpApi.make("quickbook")
  .add(ToursGroup)
  .add(SalesGroup)
  .add(BookGroup)
  .add(TicketsGroup)
  .add(TicketPdfGroup)
  .annotate(OpenApi.Title, "Quickbook API")
  .annotate(OpenApi.Version, "1.0.0")
  .annotate(
    OpenApi.Description,
    "Desk sales for approved integration clients. Every call sends `Authorization: Bearer svcqb_live_...` (or " +
      "`svcqb_test_...`) and `Quickbook-Terminal: <terminal id>`. Errors are `{error: {code, clerkMessage, reference?}}`; " +
      "branch on `code`, show `clerkMessage`. The clerk message is in Norwegian (bokmål) when `Accept-Language` ranks " +
      "`nb`, `no` or `nn` above English, otherwise in English. Every response carries `X-Request-Id` and " +
      "`Cache-Control: no-store`. Request bodies are JSON (`Content-Type: application/json`, else 415), at most 64 KiB (else " +
      "413); both answer `invalid_request`, like a body that does not parse (400). Per-terminal limits a minute: writes (quote, reserve, release) 60, books 60, " +
      "reads (tours, slots, sales, ticket) 300; past one, 429 `rate_limited` with `Retry-After`."
  )
{}
