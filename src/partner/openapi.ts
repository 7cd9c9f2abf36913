/**
 * The OpenAPI 3.1 document, generated from the HttpApi definitions and finished in one pass:
 * every error response becomes `application/problem+json` with the shared Problem schema, and the
 * 400 answer (built into every endpoint) is documented like any other problem.
 */
import { HttpApiBuilder, HttpServerResponse, OpenApi } from "@effect/platform"
import { Effect, JSONSchema } from "effect"
import { dropUnreachableSchemas, type Json } from "../http/openapiSchemas.js"
import { PartnerApi } from "./Api.js"
import { requiredScopes } from "./auth/middleware.js"
import { Problem, PROBLEM_CONTENT_TYPE } from "./problem.js"
import { BODY_LIMIT_BYTES } from "../http/requestBody.js"


const problemJsonSchema = () => {
  const defs: Json = {}
  const schema = JSONSchema.fromAST(Problem.ast, { definitions: defs, definitionPath: "#/components/schemas/", target: "openApi3.1" }) as Json
  return { schema, defs }
}

const HEADER_DOCS: Json = {
  "X-Request-Id": { description: "Id of this request; also `request_id` in problem bodies.", schema: { type: "string" } }
}

const RATE_LIMIT_HEADERS: Json = {
  "RateLimit-Policy": { description: "IETF draft-11: `\"default\";q=300;w=60`.", schema: { type: "string" } },
  "RateLimit": { description: "IETF draft-11: `\"default\";r=<remaining>;t=<seconds to reset>`.", schema: { type: "string" } },
  "RateLimit-Limit": { description: "Requests allowed per window.", schema: { type: "integer" } },
  "RateLimit-Remaining": { description: "Requests left in the current window.", schema: { type: "integer" } },
  "RateLimit-Reset": { description: "Seconds until the window resets.", schema: { type: "integer" } }
}

const STATUS_TEXT: Record<string, string> = {
  "400": "Invalid request: a parameter or the body breaks a rule (`invalid_params` names them).",
  "401": "Missing, malformed, unknown, expired or revoked key, or no operator left for the key.",
  "403": "The key lacks the scope this endpoint needs.",
  "404": "Not found, or not yours.",
  "413": `Writes: the body is larger than ${BODY_LIMIT_BYTES / 1024} KiB (\`payload-too-large\`); nothing was read past the limit.`,
  "415": "Writes: the body is not sent as `Content-Type: application/json` (`unsupported-media-type`).",
  "409": "Writes: an earlier request with this Idempotency-Key is still running; retry shortly with the same key.",
  "422": "Writes: the action is not possible for this booking or row (`not-possible`), or this Idempotency-Key " +
    "was used for a different request (`idempotency-key-reused`).",
  "429": "Rate limit reached, or (writes) the key's daily limit for the action (`limit` names it); `Retry-After` says when to retry.",
  "500": "Unexpected failure on our side; quote `request_id`.",
  "503": "Writes: a system the action depends on did not answer; nothing was kept. Retry with the same Idempotency-Key."
}

export const finishDocument = (spec: Json): Json => {
  const { schema, defs } = problemJsonSchema()
  spec.components ??= {}
  spec.components.schemas ??= {}
  Object.assign(spec.components.schemas, defs)
  const problemRef = { $ref: "#/components/schemas/Problem" }
  if (!defs.Problem) spec.components.schemas.Problem = schema

  for (const item of Object.values<Json>(spec.paths ?? {})) {
    for (const op of Object.values<Json>(item)) {
      if (typeof op !== "object" || !op.responses) continue
      const secured = Array.isArray(op.security) && op.security.length > 0
      for (const [status, response] of Object.entries<Json>(op.responses)) {
        const code = Number(status)
        // 401 is decided before the rate limiter runs; every other answer to a valid key carries its headers.
        response.headers = { ...HEADER_DOCS, ...(secured && code !== 401 ? RATE_LIMIT_HEADERS : {}), ...response.headers }
        if (code >= 400) {
          response.description = STATUS_TEXT[status] ?? response.description
          response.content = { [PROBLEM_CONTENT_TYPE]: { schema: problemRef } }
          if (code === 429) response.headers["Retry-After"] = { description: "Seconds to wait.", schema: { type: "integer" } }
          if (code === 401) {
            response.headers["WWW-Authenticate"] = { description: "`Bearer realm=\"partner-api\"`", schema: { type: "string" } }
          }
        }
      }
      if (secured && !op.responses["429"]) {
        op.responses["429"] = {
          description: STATUS_TEXT["429"],
          headers: { ...HEADER_DOCS, ...RATE_LIMIT_HEADERS, "Retry-After": { description: "Seconds to wait.", schema: { type: "integer" } } },
          content: { [PROBLEM_CONTENT_TYPE]: { schema: problemRef } }
        }
      }
      op.responses["500"] ??= {
        description: STATUS_TEXT["500"],
        headers: { ...HEADER_DOCS, ...(secured ? RATE_LIMIT_HEADERS : {}) },
        content: { [PROBLEM_CONTENT_TYPE]: { schema: problemRef } }
      }
    }
  }
  return dropUnreachableSchemas(spec)
}

/** OpenAPI 3.1 lets a non-OAuth security requirement name roles: we list the scope each operation needs. */
const withScopes = (spec: Json): Json => {
  const scoped = new Set<Json>()
  for (const [route, scope] of requiredScopes) {
    const [method, path] = route.split(" ") as [string, string]
    const op = spec.paths?.[path.replace(/:(\w+)/g, "{$1}")]?.[method.toLowerCase()]
    if (op) {
      // The bearer requirement names the scope; other ways in (a publishable key) stay as they are.
      const others = (Array.isArray(op.security) ? op.security : []).filter((r: Json) => !("bearer" in r))
      op.security = [{ bearer: [scope] }, ...others]
      scoped.add(op)
    }
  }
  // The security middleware can answer 403 only where a scope is required.
  for (const item of Object.values<Json>(spec.paths ?? {})) {
    for (const op of Object.values<Json>(item)) if (op?.responses && !scoped.has(op)) delete op.responses["403"]
  }
  return spec
}

export const partnerOpenApi = (): Json => withScopes(finishDocument(structuredClone(OpenApi.fromApi(PartnerApi)) as Json))

export const openApiLayer = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const document = JSON.stringify(partnerOpenApi())
    yield* router.get(
      "/api/v1/openapi.json",
      Effect.succeed(HttpServerResponse.text(document, { contentType: "application/json" }))
    )
  })
)
