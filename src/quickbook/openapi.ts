/**
 * The Quickbook OpenAPI 3.1 document at /api/quickbook/v1/openapi.json, generated from
 * QuickbookApi and finished in one pass: every error answer is the QuickbookError body, the auth
 * statuses (400, 401, 403, 429) and 500 are on every operation that takes a key, with their
 * headers; the signed PDF link (`security: []`) gets 500 and no terminal header. The same document
 * is shown by the interactive reference at /api/quickbook/v1/docs (Scalar, as /api/v1/docs).
 */
import { HttpApiBuilder, HttpApiError, HttpServerResponse, OpenApi } from "@effect/platform"
import { Effect, Option, type Schema, SchemaAST } from "effect"
import { withOperationExamples } from "../http/openapiExamples.js"
import { rateLimitHeaderDocs, withDocumentFacts } from "../http/openapiFacts.js"
import { addErrorBodySchema, declaredErrors, dropUnreachableSchemas, type Json } from "../http/openapiSchemas.js"
import { referencePageLayer } from "../http/referencePage.js"
import { BodyTooLarge, MalformedBody, UnsupportedMediaType } from "../http/requestBody.js"
import { MethodNotAllowed } from "../http/routing.js"
import { QuickbookApi } from "./Api.js"
import { errorExamples } from "./errorExamples.js"
import { QuickbookErrorBody, REQUEST_REFUSAL_CODE } from "./errorMapping.js"
import { QUICKBOOK_EXAMPLES } from "./examples.js"
import { QUICKBOOK_PREFIX } from "./schemas.js"

/** A defect: the one answer without an error class. */
const INTERNAL_TEXT = "`internal`: unexpected failure on our side; quote `X-Request-Id`."

/** Refusals of the request itself (src/http), declared on the writes; answered with REQUEST_REFUSAL_CODE. */
const REQUEST_REFUSALS: ReadonlyArray<Schema.Schema.Any> = [
  MalformedBody,
  BodyTooLarge,
  UnsupportedMediaType,
  MethodNotAllowed
]

const isClass = (ast: SchemaAST.AST, cls: Schema.Schema.Any) =>
  ast === cls.ast || (ast._tag === "Transformation" && cls.ast._tag === "Transformation" && ast.to === cls.ast.to)

const descriptionOf = (ast: SchemaAST.AST): string | undefined =>
  Option.getOrUndefined(
    SchemaAST.getDescriptionAnnotation(ast).pipe(
      Option.orElse(() => ast._tag === "Transformation" ? SchemaAST.getDescriptionAnnotation(ast.to) : Option.none())
    )
  )

/**
 * What one declared error says in the document: a Quickbook failure its class's description (its
 * codes); a refusal of the request its description under `invalid_request`; HttpApi's own decoding
 * error nothing (QbBadRequest describes `invalid_request`).
 */
const describeError = (ast: SchemaAST.AST): string | undefined => {
  if (isClass(ast, HttpApiError.HttpApiDecodeError)) return undefined
  const description = descriptionOf(ast)
  if (description === undefined || !REQUEST_REFUSALS.some((cls) => isClass(ast, cls))) return description
  return `\`${REQUEST_REFUSAL_CODE}\`: ${description.charAt(0).toLowerCase()}${description.slice(1)}`
}

/** Per operation and status, the descriptions of the errors it declares (each once, in order). */
const declaredDescriptions = new Map(
  [...declaredErrors(QuickbookApi)].map(([operation, statuses]) => [
    operation,
    new Map(
      [...statuses].map(([status, members]) => [
        status,
        [...new Set(members.flatMap((m) => describeError(m) ?? []))].join(" ")
      ])
    )
  ])
)

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
    "409":
      "`payment_mismatch`: the payment does not match the sale (amount, currency, merchant, reference or terminal). " +
      "Nothing was booked, nothing is refunded, the service is alerted; a repeat answers the same.",
    "422":
      "`payment_not_found`: the provider does not show that payment completed on that order (not taken yet, declined, " +
      "voided, unknown). Nothing was booked; call again once the payment has completed.",
    "503":
      "`provider_unavailable`: the payment provider did not answer while verifying (nothing happened; send the same " +
      "call again), or the same payment is still being processed by an earlier call (read GET /sales/{reference})."
  }
}

const CONTACT = { name: "Quickbook integration support (quote `X-Request-Id`)" }

/** Counted per terminal once the key and terminal are known: every keyed answer but 401 carries them. */
const RATE_LIMIT_HEADERS: Json = rateLimitHeaderDocs(
  "`\"<budget>\";q=<per minute>;w=60`, the operation's budget: `writes` 60, `books` 60, `reads` 300"
)

const COMMON_HEADERS: Json = {
  "X-Request-Id": { description: "Id of this request (quote it to support).", schema: { type: "string" } },
  "Cache-Control": { description: "Always `no-store`.", schema: { type: "string" } }
}

export const quickbookOpenApi = (): Json => {
  const spec = structuredClone(OpenApi.fromApi(QuickbookApi)) as Json
  const errorContent = {
    "application/json": { schema: addErrorBodySchema(spec, "QuickbookError", QuickbookErrorBody) }
  }
  for (const [path, item] of Object.entries<Json>(spec.paths ?? {})) {
    for (const [method, op] of Object.entries<Json>(item)) {
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
        response.headers = {
          ...COMMON_HEADERS,
          ...(keyed && status !== "401" ? RATE_LIMIT_HEADERS : {}),
          ...response.headers
        }
        if (Number(status) >= 400) {
          response.description = OPERATION_STATUS_TEXT[path]?.[status] ||
            (status === "500" ? INTERNAL_TEXT : declaredDescriptions.get(`${method} ${path}`)?.get(status)) ||
            response.description || "Error"
          response.content = {
            "application/json": { ...errorContent["application/json"], examples: errorExamples(response.description) }
          }
          if (status === "401") {
            response.headers["WWW-Authenticate"] = {
              description: "`Bearer realm=\"svc-quickbook\"`",
              schema: { type: "string" }
            }
          }
          if (status === "429") {
            response.headers["Retry-After"] = { description: "Seconds to wait.", schema: { type: "integer" } }
          }
        }
      }
    }
  }
  return withOperationExamples(withDocumentFacts(dropUnreachableSchemas(spec), CONTACT), QUICKBOOK_EXAMPLES)
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

/** The interactive reference at /api/quickbook/v1/docs shows the finished document above. */
export const quickbookDocsLayer = referencePageLayer(`${QUICKBOOK_PREFIX}/docs`, QuickbookApi, quickbookOpenApi)
