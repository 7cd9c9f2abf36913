/** Shared post-processing of the generated OpenAPI documents (partner and quickbook). */
import { HttpApi, type HttpApiGroup } from "@effect/platform"
import { JSONSchema, Option, type Schema, SchemaAST } from "effect"

/**
 * An OpenAPI document (or a part of one) as HttpApi generates it, walked and rewritten by key: its
 * shape is OpenAPI's, read field by field where it is used.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = Record<string, any>

/**
 * Puts the one schema every error answer of an API has (the partner Problem, the QuickbookError body)
 * into the document's components as `name`, with the definitions it refers to; returns its `$ref`.
 */
export const addErrorBodySchema = (spec: Json, name: string, body: Schema.Schema.Any): Json => {
  const defs: Json = {}
  const schema = JSONSchema.fromAST(body.ast, {
    definitions: defs,
    definitionPath: "#/components/schemas/",
    target: "openApi3.1"
  }) as Json
  spec.components ??= {}
  spec.components.schemas ??= {}
  Object.assign(spec.components.schemas, defs)
  if (!defs[name]) spec.components.schemas[name] = schema
  return { $ref: `#/components/schemas/${name}` }
}

/**
 * Drops the component schemas no path reaches any more (directly or through other schemas): the
 * per-error schemas HttpApi generates are replaced by one error schema in both documents.
 */
export const dropUnreachableSchemas = (spec: Json): Json => {
  const schemas: Json = spec.components.schemas
  const refsIn = (value: unknown) =>
    [...JSON.stringify(value).matchAll(/"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!)
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

const membersOf = (ast: SchemaAST.AST): ReadonlyArray<SchemaAST.AST> =>
  SchemaAST.isUnion(ast) ? ast.types.flatMap(membersOf) : [ast]

/**
 * The errors each operation of `api` declares (its own, its group's, its security's and the API's),
 * as "get /api/v1/bookings/{id}" (the document's spelling) → status → the error schemas, in order.
 * The document gives each status one description; the finishers compose it from these.
 */
export const declaredErrors = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>
) => {
  const operations = new Map<string, ReadonlyMap<string, ReadonlyArray<SchemaAST.AST>>>()
  HttpApi.reflect(api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, errors }) => {
      const statuses = new Map<string, ReadonlyArray<SchemaAST.AST>>()
      for (const [status, { ast }] of errors) {
        statuses.set(String(status), Option.match(ast, { onNone: () => [], onSome: membersOf }))
      }
      operations.set(`${endpoint.method.toLowerCase()} ${endpoint.path.replace(/:(\w+)\??/g, "{$1}")}`, statuses)
    }
  })
  return operations
}
