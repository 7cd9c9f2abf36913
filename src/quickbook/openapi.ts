/**
 * The Quickbook OpenAPI 3.1 document at /api/quickbook/v1/openapi.json, generated from
 * QuickbookApi and finished in one pass: every error answer is the QuickbookError body, the auth
 * statuses (400, 401, 403, 429) and 500 are on every operation that takes a key, with their
 * headers; the signed PDF link (`security: []`) gets 500 and no terminal header. The same document
 * is shown by the interactive reference at /api/quickbook/v1/docs (Scalar, as /api/v1/docs).
 */
import { HttpApi, HttpApiBuilder, HttpApiScalar, HttpServerResponse, OpenApi } from "@effect/platform"
import { Context, Effect, JSONSchema, Layer } from "effect"
import { dropUnreachableSchemas, type Json } from "../http/openapiSchemas.js"
import { QuickbookApi } from "./Api.js"
import { QUICKBOOK_PREFIX } from "./schemas.js"
import { BODY_LIMIT_BYTES } from "../http/requestBody.js"
import { QuickbookErrorBody } from "./errorMapping.js"


const STATUS_TEXT: Record<string, string> = {
  "400": "`terminal_not_registered`: the Quickbook-Terminal header is missing or malformed; `invalid_request`: a " +
    "parameter or the body does not validate.",
  "401": "`unauthorized`: key missing, invalid, expired, revoked, not a quickbook key, or sent in the URL.",
  "403": "`terminal_not_registered`: the terminal is not registered, not active or not bound to the key; " +
    "`tour_not_sellable_here`: the terminal cannot sell or charge for the tour (not sold on its operator's sites; no " +
    "merchant or card terminal to charge with; or a test key on live accounts, or a live key on sandbox accounts), or " +
    "the sale was quoted with a key of the other mode (test or live; the clerk message says which).",
  "404": "`not_found`: no such sale or hold for this terminal (an unknown or malformed reference, or another " +
    "terminal's); on the ticket endpoints also a sale not confirmed (no ticket yet, with its own clerk message); for a " +
    "PDF link also a signature that does not verify or a link that has lapsed.",
  "413": `\`invalid_request\`: the body is larger than ${BODY_LIMIT_BYTES / 1024} KiB.`,
  "415": "`invalid_request`: the body is not sent as `Content-Type: application/json`.",
  "409": "`sold_out`: not enough seats on the departure; `price_changed`: the live price differs from the quote past " +
    "`validUntil`, or a guest type the tour does not sell.",
  "503": "`provider_unavailable`: the operator's booking system did not answer in time; try again shortly (`Retry-After`).",
  "429": "`rate_limited`: this terminal's budget for the endpoint is spent; `Retry-After` says when to retry.",
  "500": "`internal`: unexpected failure on our side; quote `X-Request-Id`."
}

/** Where an operation's refusals differ from the common text above. */
const OPERATION_STATUS_TEXT: Record<string, Record<string, string>> = {
  // The signed PDF link: no key, no terminal header.
  [`${QUICKBOOK_PREFIX}/tickets/{file}`]: {
    "400": "`invalid_request`: a query parameter does not validate (e.g. `lang` other than en or nb).",
    "429": "`rate_limited`: the reads budget of the sale's terminal is spent; `Retry-After` says when to retry."
  },
  [`${QUICKBOOK_PREFIX}/book`]: {
    "400": "`invalid_request`: the body does not validate (missing or malformed field; a phone not in international " +
      "format; a `holdRef` that is not the sale's reference); `terminal_not_registered`: the Quickbook-Terminal header " +
      "is missing or malformed. Nothing was recorded, booked or refunded.",
    "403": "`terminal_not_registered`: the terminal is not registered, not active or not bound to the key; " +
      "`tour_not_sellable_here`: the terminal cannot charge for the tour's operator, or the sale was quoted with a key " +
      "of the other mode (test or live). Nothing was booked or refunded.",
    "404": "`not_found`: no such sale for this terminal.",
    "409": "`payment_mismatch`: the payment does not match the sale (amount, currency, merchant, reference or terminal). " +
      "Nothing was booked, nothing is refunded, the service is alerted; a repeat answers the same.",
    "422": "`payment_not_found`: the provider does not show that payment completed on that order (not taken yet, declined, " +
      "voided, unknown). Nothing was booked; call again once the payment has completed.",
    "503": "`provider_unavailable`: the payment provider did not answer while verifying (nothing happened; send the same " +
      "call again), or the same payment is still being processed by an earlier call (read GET /sales/{reference})."
  }
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
  for (const [path, item] of Object.entries<Json>(spec.paths ?? {})) {
    for (const op of Object.values<Json>(item)) {
      if (typeof op !== "object" || !op.responses) continue
      // An operation with `security: []` (the signed PDF link) takes no key and no terminal.
      const keyed = !(Array.isArray(op.security) && op.security.length === 0)
      op.parameters = [
        ...(op.parameters ?? []),
        ...(keyed
          ? [{
            name: "Quickbook-Terminal",
            in: "header",
            required: true,
            description: "The terminal id (UUID) this key is bound to.",
            schema: { type: "string", format: "uuid" }
          }]
          : []),
        {
          name: "Accept-Language",
          in: "header",
          required: false,
          description: "Language of `clerkMessage`: Norwegian when nb, no or nn ranks above en; English otherwise.",
          schema: { type: "string" }
        }
      ]
      for (const status of keyed ? ["400", "401", "403", "429", "500"] : ["500"]) op.responses[status] ??= {}
      for (const [status, response] of Object.entries<Json>(op.responses)) {
        response.headers = { ...COMMON_HEADERS, ...response.headers }
        if (Number(status) >= 400) {
          response.description = OPERATION_STATUS_TEXT[path]?.[status] ?? STATUS_TEXT[status] ?? response.description ?? "Error"
          response.content = errorContent
          if (status === "401") {
            response.headers["WWW-Authenticate"] = { description: "`Bearer realm=\"svc-quickbook\"`", schema: { type: "string" } }
          }
          if (status === "429") response.headers["Retry-After"] = { description: "Seconds to wait.", schema: { type: "integer" } }
        }
      }
    }
  }
  return dropUnreachableSchemas(spec)
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

/**
 * The interactive reference of the Quickbook API at /api/quickbook/v1/docs: the Scalar page the
 * partner API has at /api/v1/docs, fed with the finished document above (terminal header, error
 * bodies) instead of the bare generated one.
 */
export const quickbookDocsLayer = HttpApiScalar.layer({ path: `${QUICKBOOK_PREFIX}/docs` }).pipe(
  Layer.provide(Layer.sync(HttpApi.Api, () => ({
    api: QuickbookApi.annotate(OpenApi.Transform, () => quickbookOpenApi() as OpenApi.OpenAPISpec) as unknown as HttpApi.Api["Type"]["api"],
    context: Context.empty()
  })))
)
