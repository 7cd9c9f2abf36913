/**
 * The OpenAPI 3.1 document, generated from the HttpApi definitions and finished in one pass:
 * every error response becomes `application/problem+json` with the shared Problem schema and is
 * described by the problem types its endpoint declares (their descriptions, written once on the
 * error classes: src/domain/errors.ts), and the 400 answer (built into every endpoint) is
 * documented like any other problem.
 */
import { HttpApiBuilder, HttpServerResponse, OpenApi } from "@effect/platform"
import { Effect } from "effect"
import { type ProblemType, problemTypeOfAst, problemTypeOfClass, RateLimited } from "../domain/errors.js"
import { withOperationExamples } from "../http/openapiExamples.js"
import { rateLimitHeaderDocs, withDocumentFacts } from "../http/openapiFacts.js"
import { addErrorBodySchema, declaredErrors, dropUnreachableSchemas, type Json } from "../http/openapiSchemas.js"
import { PartnerApi } from "./Api.js"
import { requiredScopes } from "./auth/middleware.js"
import { PARTNER_EXAMPLES } from "./examples.js"
import { DECODE_ERROR, INTERNAL, Problem, PROBLEM_CONTENT_TYPE } from "./problem.js"
import { problemExamples } from "./problemExamples.js"

const HEADER_DOCS: Json = {
  "X-Request-Id": {
    description: "Id of this request; also `request_id` in problem bodies.",
    schema: { type: "string" }
  }
}

const RATE_LIMIT_HEADERS: Json = rateLimitHeaderDocs(
  "`\"default\";q=300;w=60` for secret keys (RATE_LIMIT_PER_MINUTE), `\"publishable\";q=…;w=60` for a publishable key"
)

/** Per operation and status, the problem types of the errors it declares (each once, in order). */
const declaredProblems = new Map(
  [...declaredErrors(PartnerApi)].map(([operation, statuses]) => [
    operation,
    new Map([...statuses].map(([status, members]) => {
      const types = new Map<string, ProblemType>()
      for (const member of members) {
        // HttpApi's own decoding error carries no problem type: the mapping shows it as DECODE_ERROR.
        const type = problemTypeOfAst(member) ?? (Number(status) === DECODE_ERROR.status ? DECODE_ERROR : undefined)
        if (type !== undefined) types.set(type.slug, type)
      }
      return [status, [...types.values()]] as const
    }))
  ])
)

/** One answer's description: each problem type's `type` slug and description. */
const describe = (types: ReadonlyArray<ProblemType>) =>
  types.map((type) => `\`${type.slug}\`: ${type.description}`).join(" ")

const RATE_LIMITED = problemTypeOfClass(RateLimited)

export const finishDocument = (spec: Json): Json => {
  const problemRef = addErrorBodySchema(spec, "Problem", Problem)

  for (const [path, item] of Object.entries<Json>(spec.paths ?? {})) {
    for (const [method, op] of Object.entries<Json>(item)) {
      if (typeof op !== "object" || !op.responses) continue
      const secured = Array.isArray(op.security) && op.security.length > 0
      const problems = declaredProblems.get(`${method} ${path}`)
      for (const [status, response] of Object.entries<Json>(op.responses)) {
        const code = Number(status)
        // 401 is decided before the rate limiter runs; every other answer to a valid key carries its headers.
        response.headers = {
          ...HEADER_DOCS,
          ...(secured && code !== 401 ? RATE_LIMIT_HEADERS : {}),
          ...response.headers
        }
        if (code >= 400) {
          const types = problems?.get(status) ?? []
          if (types.length > 0) response.description = describe(types)
          response.content = {
            [PROBLEM_CONTENT_TYPE]: { schema: problemRef, examples: problemExamples(types, method, path, op) }
          }
          if (code === 429) {
            response.headers["Retry-After"] = { description: "Seconds to wait.", schema: { type: "integer" } }
          }
          if (code === 401) {
            response.headers["WWW-Authenticate"] = {
              description: "`Bearer realm=\"partner-api\"`",
              schema: { type: "string" }
            }
          }
        }
      }
      if (secured && !op.responses["429"]) {
        op.responses["429"] = {
          description: describe([RATE_LIMITED]),
          headers: {
            ...HEADER_DOCS,
            ...RATE_LIMIT_HEADERS,
            "Retry-After": { description: "Seconds to wait.", schema: { type: "integer" } }
          },
          content: {
            [PROBLEM_CONTENT_TYPE]: { schema: problemRef, examples: problemExamples([RATE_LIMITED], method, path, op) }
          }
        }
      }
      op.responses["500"] ??= {
        description: describe([INTERNAL]),
        headers: { ...HEADER_DOCS, ...(secured ? RATE_LIMIT_HEADERS : {}) },
        content: {
          [PROBLEM_CONTENT_TYPE]: { schema: problemRef, examples: problemExamples([INTERNAL], method, path, op) }
        }
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

const CONTACT = { name: "Partner API support (quote `X-Request-Id`)" }

export const partnerOpenApi = (): Json =>
  withOperationExamples(
    withDocumentFacts(withScopes(finishDocument(structuredClone(OpenApi.fromApi(PartnerApi)) as Json)), CONTACT),
    PARTNER_EXAMPLES
  )

export const openApiLayer = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const document = JSON.stringify(partnerOpenApi())
    yield* router.get(
      "/api/v1/openapi.json",
      Effect.succeed(HttpServerResponse.text(document, { contentType: "application/json" }))
    )
  })
)
