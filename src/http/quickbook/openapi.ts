/**
 * The Quickbook OpenAPI 3.1 document at /api/quickbook/v1/openapi.json, generated from
 * QuickbookApi and finished in one pass: every error answer is the QuickbookError body, the auth
 * statuses (400, 401, 403, 429) and 500 are on every operation, with their headers.
 */
import { HttpApiBuilder, HttpServerResponse, OpenApi } from "@effect/platform"
import { Effect, JSONSchema } from "effect"
import { QUICKBOOK_PREFIX, QuickbookApi } from "./Api.js"
import { QuickbookErrorBody } from "./errors.js"

type Json = Record<string, any>

const STATUS_TEXT: Record<string, string> = {
  "400": "`terminal_not_registered`: the Quickbook-Terminal header is missing or malformed; `invalid_request`: a " +
    "parameter or the body does not validate.",
  "401": "`unauthorized`: key missing, invalid, expired, revoked, not a quickbook key, or sent in the URL.",
  "403": "`terminal_not_registered`: the terminal is not registered, not active or not bound to the key; " +
    "`tour_not_sellable_here`: the terminal cannot sell or charge for the tour (not sold on its operator's sites; no " +
    "merchant or card terminal to charge with; or a test key on live accounts, or a live key on sandbox accounts).",
  "404": "`not_found`: no such sale or hold for this terminal.",
  "409": "`sold_out`: not enough seats on the departure; `price_changed`: the live price differs from the quote past " +
    "`validUntil`, or a guest type the tour does not sell.",
  "503": "`provider_unavailable`: the operator's booking system did not answer in time; try again shortly (`Retry-After`).",
  "429": "`rate_limited`: this terminal's budget for the endpoint is spent; `Retry-After` says when to retry.",
  "500": "`internal`: unexpected failure on our side; quote `X-Request-Id`."
}

const COMMON_HEADERS: Json = {
  "X-Request-Id": { description: "Id of this request (quote it to support).", schema: { type: "string" } },
  "Cache-Control": { description: "Always `no-store`.", schema: { type: "string" } }
}

export const quickbookOpenApi = (): Json => {
  const spec = structuredClone(OpenApi.fromApi(QuickbookApi)) as Json
  const defs: Json = {}
  const schema = JSONSchema.fromAST(QuickbookErrorBody.ast, {
    definitions: defs,
    definitionPath: "#/components/schemas/",
    target: "openApi3.1"
  }) as Json
  spec.components ??= {}
  spec.components.schemas ??= {}
  Object.assign(spec.components.schemas, defs)
  if (!defs.QuickbookError) spec.components.schemas.QuickbookError = schema
  const errorContent = { "application/json": { schema: { $ref: "#/components/schemas/QuickbookError" } } }
  for (const item of Object.values<Json>(spec.paths ?? {})) {
    for (const op of Object.values<Json>(item)) {
      if (typeof op !== "object" || !op.responses) continue
      op.parameters = [
        ...(op.parameters ?? []),
        {
          name: "Quickbook-Terminal",
          in: "header",
          required: true,
          description: "The terminal id (UUID) this key is bound to.",
          schema: { type: "string", format: "uuid" }
        },
        {
          name: "Accept-Language",
          in: "header",
          required: false,
          description: "Language of `clerkMessage`: Norwegian when nb, no or nn ranks above en; English otherwise.",
          schema: { type: "string" }
        }
      ]
      for (const status of ["400", "401", "403", "429", "500"]) op.responses[status] ??= {}
      for (const [status, response] of Object.entries<Json>(op.responses)) {
        response.headers = { ...COMMON_HEADERS, ...response.headers }
        if (Number(status) >= 400) {
          response.description = STATUS_TEXT[status] ?? response.description ?? "Error"
          response.content = errorContent
          if (status === "401") {
            response.headers["WWW-Authenticate"] = { description: "`Bearer realm=\"svc-quickbook\"`", schema: { type: "string" } }
          }
          if (status === "429") response.headers["Retry-After"] = { description: "Seconds to wait.", schema: { type: "integer" } }
        }
      }
    }
  }
  // The per-error schemas are replaced by QuickbookError; drop schemas no longer referenced.
  const schemas: Json = spec.components.schemas
  const refsIn = (value: unknown) => [...JSON.stringify(value).matchAll(/"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!)
  const reachable = new Set<string>()
  const queue = refsIn(spec.paths)
  while (queue.length > 0) {
    const name = queue.pop()!
    if (reachable.has(name)) continue
    reachable.add(name)
    queue.push(...refsIn(schemas[name] ?? {}))
  }
  for (const name of Object.keys(schemas)) if (!reachable.has(name)) delete schemas[name]
  return spec
}

export const quickbookOpenApiLayer = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const document = JSON.stringify(quickbookOpenApi())
    yield* router.get(
      `${QUICKBOOK_PREFIX}/openapi.json`,
      Effect.succeed(HttpServerResponse.text(document, { contentType: "application/json" }))
    )
  })
)
