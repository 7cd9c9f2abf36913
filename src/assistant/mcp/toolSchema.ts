/**
 * A tool's Effect Schema as the SDK takes it (Standard Schema with JSON Schema): the JSON Schema is
 * `JSONSchema.make` of the same schema the REST endpoint uses, so tool and endpoint never drift. The
 * root is inlined (an identified schema comes out as a `$ref` into `$defs`; MCP wants an object at
 * the root). Validation passes every value through: the server decodes the arguments itself with
 * the Effect Schema, so a bad argument is a tool error carrying a 400 problem that names the field
 * (./toolCall.ts), not a protocol error.
 */
import type { StandardSchemaWithJSON } from "@modelcontextprotocol/server"
import { JSONSchema, type Schema } from "effect"

type Json = Record<string, unknown>

/**
 * JSON Schema of the encoded side, root inlined, without `$schema`, with `type: "object"` at its root
 * as MCP's 2025-11-25 revision wants of `inputSchema` and `outputSchema` (else clients see a result
 * wrapped as `{result: …}`): a union of objects (a write tool's output: `requires_confirmation` or
 * the REST result) is marked an object too.
 */
export const toolJsonSchema = (schema: Schema.Schema.Any): Json => {
  const inlined = inlineRoot(schema)
  if (inlined.type !== undefined || !Array.isArray(inlined.anyOf)) return inlined
  const defs = (inlined.$defs ?? {}) as Record<string, Json>
  const isObject = (member: Json) =>
    member.type === "object" ||
    (typeof member.$ref === "string" && defs[member.$ref.slice("#/$defs/".length)]?.type === "object")
  return (inlined.anyOf as Array<Json>).every(isObject) ? { ...inlined, type: "object" } : inlined
}

const inlineRoot = (schema: Schema.Schema.Any): Json => {
  const { $schema: _schema, ...made } = JSONSchema.make(schema) as unknown as Json
  const ref = made.$ref
  const defs = (made.$defs ?? {}) as Record<string, Json>
  if (typeof ref === "string" && ref.startsWith("#/$defs/")) {
    const name = ref.slice("#/$defs/".length)
    const { [name]: root, ...others } = defs
    // Other definitions may still point at the root's own name: keep it under $defs too.
    const stillUsed = JSON.stringify(others).includes(`"#/$defs/${name}"`) ||
      JSON.stringify(root).includes(`"#/$defs/${name}"`)
    const rest = stillUsed ? defs : others
    return { ...root, ...(Object.keys(rest).length > 0 ? { $defs: rest } : {}) }
  }
  return made
}

/** The SDK's view of a tool schema: its JSON Schema, every value accepted as it is. */
export const standardOf = (schema: Schema.Schema.Any): StandardSchemaWithJSON<unknown, unknown> => {
  const json = toolJsonSchema(schema)
  return {
    "~standard": {
      version: 1,
      vendor: "effect",
      validate: (value: unknown) => ({ value }),
      jsonSchema: { input: () => json, output: () => json }
    }
  }
}
