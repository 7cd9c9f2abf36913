/**
 * One `tools/call` (contract "The tool call"): the per-key rate limit (as REST), the arguments
 * decoded with the tool's Effect Schema (../tools/arguments.ts: a bad one is the 400 problem REST answers,
 * `invalid_params` naming each argument), the tool run
 * with `CurrentKey` (the connection's key) and `AssistantConnection`, and the answer: the encoded
 * output (as it is when the tool says it is JSON already, as REST sends it) as `structuredContent` plus its text, or an `isError` result carrying the RFC 9457 problem
 * the REST API would answer (src/partner/problem.ts), `retry_after` included on limits.
 */
import type { CallToolResult } from "@modelcontextprotocol/server"
import { type Context, Effect, Schema } from "effect"
import { RateLimited } from "../../domain/errors.js"
import { RateLimiter } from "../../http/RateLimiter.js"
import type { AuthenticatedKey } from "../../partner/auth/KeyAuth.js"
import { CurrentKey } from "../../partner/auth/security.js"
import { internalProblem, type Problem, problemForCause } from "../../partner/problem.js"
import { AssistantConnection, type AssistantConnectionInfo } from "../connection.js"
import { decodeArguments } from "../tools/arguments.js"
import type { AssistantToolServices } from "../tools/index.js"
import type { AssistantTool } from "../tools/tool.js"

export interface ToolCaller {
  readonly key: AuthenticatedKey
  readonly connection: AssistantConnectionInfo
  readonly requestId: string
}

export const problemResult = (problem: Problem): CallToolResult => ({
  isError: true,
  content: [{ type: "text", text: `${problem.title} (${problem.status}): ${problem.detail}` }],
  structuredContent: problem as unknown as Record<string, unknown>
})

export const callTool = (
  tool: AssistantTool,
  args: unknown,
  caller: ToolCaller,
  rateLimitPerMinute: number,
  toolServices: Context.Context<AssistantToolServices>
) =>
  Effect.gen(function*() {
    const limiter = yield* RateLimiter
    const decision = yield* limiter.hit(`partner:${caller.key.id}`, rateLimitPerMinute, 60)
    if (!decision.allowed) {
      return yield* new RateLimited({
        detail: `more than ${decision.limit} requests in ${decision.windowSeconds} seconds with this connection`,
        retryAfterSeconds: decision.resetSeconds
      })
    }
    const input = yield* decodeArguments(tool, args)
    const output = yield* tool.run(input).pipe(
      Effect.provideService(CurrentKey, caller.key),
      Effect.provideService(AssistantConnection, caller.connection),
      Effect.provide(toolServices)
    )
    const encoded = tool.outputIsJson ? output : yield* Schema.encode(tool.output)(output).pipe(Effect.orDie)
    const result: CallToolResult = {
      content: [{ type: "text", text: tool.text(output) }],
      structuredContent: encoded as Record<string, unknown>
    }
    return result
  }).pipe(
    Effect.catchAllCause((cause) => {
      // The problem the REST API would answer (503 `unavailable` when the database did not answer).
      const mapped = problemForCause(cause, caller.requestId, "POST", "/mcp")
      if (mapped) return Effect.succeed(problemResult(mapped.body))
      return Effect.logError("tool call failed unexpectedly", cause).pipe(
        Effect.as(problemResult(internalProblem(caller.requestId).body))
      )
    }),
    Effect.annotateLogs({ request_id: caller.requestId, tool: tool.name }),
    Effect.withSpan("Assistant.toolCall", { attributes: { tool: tool.name } })
  )
