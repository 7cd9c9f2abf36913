/**
 * Puts the examples of each operation (written per API beside its features, keyed by operation id)
 * on the request body and the success answer of the finished OpenAPI document, where reference
 * pages and generated clients show them. A success answer without an example of its own shows the
 * whole example written on its schema (the finance reads).
 */
import type { Json } from "./openapiSchemas.js"

export interface Example {
  readonly summary: string
  readonly value: unknown
}

export interface OperationExamples {
  readonly request?: Example
  readonly response?: Example
}

const schemaExample = (spec: Json, schema: Json): Example | undefined => {
  const ref = typeof schema?.$ref === "string" ? schema.$ref.replace("#/components/schemas/", "") : undefined
  const target = ref === undefined ? schema : spec.components?.schemas?.[ref]
  const examples = target?.examples
  return Array.isArray(examples) && examples.length > 0
    ? { summary: target.title ?? ref ?? "Example", value: examples[0] }
    : undefined
}

const isSuccess = (status: string) => status.startsWith("2")

export const withOperationExamples = (
  spec: Json,
  examples: Readonly<Record<string, OperationExamples>>
): Json => {
  for (const item of Object.values<Json>(spec.paths ?? {})) {
    for (const op of Object.values<Json>(item)) {
      if (typeof op !== "object" || !op.responses) continue
      const own = examples[op.operationId] ?? {}
      if (own.request) {
        for (const media of Object.values<Json>(op.requestBody?.content ?? {})) {
          media.examples = { [op.operationId]: own.request }
        }
      }
      for (const [status, response] of Object.entries<Json>(op.responses)) {
        if (!isSuccess(status)) continue
        for (const [type, media] of Object.entries<Json>(response.content ?? {})) {
          if (!type.includes("json")) continue
          const example = own.response ?? schemaExample(spec, media.schema)
          if (example) media.examples = { [op.operationId]: example }
        }
      }
    }
  }
  return spec
}
