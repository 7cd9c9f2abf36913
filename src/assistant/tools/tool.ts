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
import type { Effect, Schema } from "effect"
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
  /**
   * The output's type is its JSON form already, as the REST handler sends it (`jsonBody`,
   * src/http/json.ts): it goes out as it is, without the full pass through `output`'s encoder that
   * REST skips too (a day's manifest is some 1,000 passengers).
   */
  readonly outputIsJson?: true
  /** The scope the tool needs; null: any connection may call it (as REST `GET /me` takes any key). */
  readonly scope: Scope | null
  readonly annotations: ToolAnnotations
  /** Fails with the domain's tagged errors; the server turns them into problems. */
  readonly run: (input: I) => Effect.Effect<O, unknown, CurrentKey | AssistantConnection | AssistantToolServices>
  /** A short text rendering of the output for clients that show text only. */
  readonly text: (output: O) => string
}
/* eslint-enable @typescript-eslint/no-explicit-any */
