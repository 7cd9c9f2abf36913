/**
 * An MCP tool of the assistant-facing server (issue 16): its name, the REST endpoint's own parameters
 * and body fields as input, the REST response body as output (both Effect Schemas, published as JSON
 * Schema with `JSONSchema.make`, so the tool and the endpoint never drift), the scope it needs and
 * what it does. The server (src/assistant/mcp/) registers every tool of `assistantTools`
 * (./index.ts), checks the scope (403 `insufficient_scope` as an MCP authorization error), decodes
 * the arguments, runs the tool with `CurrentKey` (the connection's key) and `AssistantConnection` in
 * context, and answers `structuredContent` (the encoded output) with `text(output)` as the text
 * content, or an `isError` result carrying the RFC 9457 problem of a failure (src/partner/problem.ts).
 */
import { type Effect, JSONSchema, type Schema } from "effect"
import type { Scope } from "../../partner/auth/scopes.js"
import type { CurrentKey } from "../../partner/auth/security.js"
import type { AssistantConnection } from "../connection.js"
import type { AssistantToolServices } from "./index.js"

export interface ToolAnnotations {
  readonly readOnlyHint?: boolean
  readonly destructiveHint?: boolean
  readonly idempotentHint?: boolean
  readonly openWorldHint?: boolean
}

/* eslint-disable @typescript-eslint/no-explicit-any -- a heterogeneous list of tools, each typed where it is made */
export interface AssistantTool<I = any, O = any> {
  readonly name: string
  readonly title: string
  readonly description: string
  /** A Struct of the REST endpoint's parameters and body fields, with the same names. */
  readonly input: Schema.Schema<I, any, never>
  /** The REST response body (a write's first call answers `requires_confirmation` instead: see the tool). */
  readonly output: Schema.Schema<O, any, never>
  readonly scope: Scope
  readonly annotations: ToolAnnotations
  /** Fails with the domain's tagged errors; the server turns them into problems. */
  readonly run: (input: I) => Effect.Effect<O, unknown, CurrentKey | AssistantConnection | AssistantToolServices>
  /** A short text rendering of the output for clients that show text only. */
  readonly text: (output: O) => string
}
/* eslint-enable @typescript-eslint/no-explicit-any */

/**
 * The JSON Schema of a tool's input or output (`JSONSchema.make`) with `type: "object"` at its root,
 * as MCP's 2025-11-25 revision wants of `inputSchema` and `outputSchema` (else clients see the result
 * wrapped as `{result: …}`): a root that is a `$ref` to a named schema (a REST body with an
 * identifier) is replaced by that schema, and a union of objects (a write tool's output:
 * `requires_confirmation` or the REST result) gets `type: "object"`.
 */
/* eslint-disable-next-line @typescript-eslint/no-explicit-any -- any tool's schema */
export const toolJsonSchema = (schema: Schema.Schema<any, any, never>): Record<string, unknown> => {
  const json = JSONSchema.make(schema) as unknown as Record<string, unknown>
  const defs = (json.$defs ?? {}) as Record<string, Record<string, unknown>>
  const defOf = (ref: unknown) =>
    typeof ref === "string" && ref.startsWith("#/$defs/") ? defs[ref.slice("#/$defs/".length)] : undefined
  const named = defOf(json.$ref)
  if (named !== undefined && json.type === undefined) {
    const { $ref: _ref, ...rest } = json
    return { ...rest, ...named }
  }
  if (json.type !== undefined || !Array.isArray(json.anyOf)) return json
  const isObject = (member: Record<string, unknown>) =>
    member.type === "object" || defOf(member.$ref)?.type === "object"
  return (json.anyOf as Array<Record<string, unknown>>).every(isObject) ? { ...json, type: "object" } : json
}
