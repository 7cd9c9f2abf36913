/**
 * Calls the assistant's tools (src/assistant/tools/) the way the MCP server does (contract "The tool
 * call"), without MCP: a real key (KeyAuth, as a connection's backing key) becomes `CurrentKey`, the
 * tool's scope is checked, the arguments are decoded with its input schema (decodeArguments, as
 * REST shows a bad parameter), `run` gets
 * `AssistantConnection` and `AssistantToolsLive` (the real services on the test database and
 * sandboxes), and the answer is shaped like a `tools/call` result: `structuredContent` (the output
 * encoded with the output schema, through JSON) and the text, or `isError` with the RFC 9457 problem.
 * Test bodies use only `callTool` and `ToolReply`, so they can run through the MCP client later.
 */
import { Clock, Duration, Effect, Either, Layer, Schema } from "effect"
import { randomUUID } from "node:crypto"
import type { AssistantConnectionInfo } from "../../src/assistant/connection.js"
import { AssistantConnection } from "../../src/assistant/connection.js"
import { decodeArguments } from "../../src/assistant/tools/arguments.js"
import { assistantTools, AssistantToolsLive } from "../../src/assistant/tools/index.js"
import { CurrentRequest } from "../../src/http/requestContext.js"
import { KeyAuth } from "../../src/partner/auth/KeyAuth.js"
import { CurrentKey } from "../../src/partner/auth/security.js"
import { problemFor } from "../../src/partner/problem.js"

export type ToolReply =
  | { readonly kind: "result"; readonly isError: false; readonly structuredContent: any; readonly text: string }
  | { readonly kind: "result"; readonly isError: true; readonly structuredContent: any; readonly text: string }
  /** The MCP server answers these as HTTP 401 / 403 insufficient_scope, not as tool results. */
  | { readonly kind: "unauthorized" }
  | { readonly kind: "insufficient_scope"; readonly scope: string }

export interface Caller {
  /** A secret key (`svc_live_…`) standing for the connection's backing key. */
  readonly key: string
  /** The connection; default: a test connection of "Test Assistant" for `person@example.com`. */
  readonly connection?: Partial<AssistantConnectionInfo>
  /** Moves the service's clock (Clock) by this much for the call (the confirmations' expiry). */
  readonly clockOffsetMs?: number
}

/** The tools' services on the test server's database, sandboxes and adapters, plus key auth. */
export const withAssistantTools = <A, E, R>(server: Layer.Layer<A, E, R>) =>
  Layer.mergeAll(AssistantToolsLive, KeyAuth.Default).pipe(Layer.provideMerge(server))

const shiftedClock = (base: Clock.Clock, offsetMs: number): Clock.Clock => ({
  [Clock.ClockTypeId]: Clock.ClockTypeId,
  currentTimeMillis: Effect.map(base.currentTimeMillis, (t) => t + offsetMs),
  currentTimeNanos: Effect.map(base.currentTimeNanos, (t) => t + BigInt(offsetMs) * 1_000_000n),
  unsafeCurrentTimeMillis: () => base.unsafeCurrentTimeMillis() + offsetMs,
  unsafeCurrentTimeNanos: () => base.unsafeCurrentTimeNanos() + BigInt(offsetMs) * 1_000_000n,
  sleep: (d: Duration.Duration) => base.sleep(d)
})

export const callTool = (name: string, args: unknown, caller: Caller) =>
  Effect.gen(function*() {
    const tool = assistantTools.find((t) => t.name === name)
    if (tool === undefined) return yield* Effect.dieMessage(`no tool ${name}`)
    const requestId = `req_${randomUUID().replaceAll("-", "").slice(0, 16)}`
    const auth = yield* KeyAuth
    const key = yield* Effect.either(auth.authenticate(caller.key))
    if (Either.isLeft(key)) return { kind: "unauthorized" } as ToolReply
    if (tool.scope !== null && !key.right.scopes.includes(tool.scope)) {
      return { kind: "insufficient_scope", scope: tool.scope } as ToolReply
    }
    const connection: AssistantConnectionInfo = {
      connectionId: key.right.id,
      userId: "00000000-0000-4000-8000-000000000001",
      userEmail: "person@example.com",
      clientId: "test-client",
      clientName: "Test Assistant",
      ...caller.connection
    }
    const problem = (error: unknown): ToolReply => {
      const p = problemFor(error, requestId, "POST", "/mcp")
      if (p === undefined) throw new Error(`tool ${name} failed with a defect-like error: ${String(error)}`)
      return { kind: "result", isError: true, structuredContent: p.body, text: p.body.detail }
    }
    const input = yield* Effect.either(decodeArguments(tool, args))
    if (Either.isLeft(input)) return problem(input.left)
    const base = yield* Effect.clock
    const outcome = yield* tool.run(input.right).pipe(
      Effect.provideService(CurrentKey, key.right),
      Effect.provideService(AssistantConnection, connection),
      Effect.locally(CurrentRequest, { requestId, headers: {} }),
      caller.clockOffsetMs ? Effect.withClock(shiftedClock(base, caller.clockOffsetMs)) : (e) => e,
      Effect.either
    )
    if (Either.isLeft(outcome)) return problem(outcome.left)
    // What the server sends: the output encoded with the tool's output schema, as JSON.
    const encoded = yield* Effect.orDie(Schema.encode(tool.output)(outcome.right))
    return {
      kind: "result",
      isError: false,
      structuredContent: JSON.parse(JSON.stringify(encoded)),
      text: tool.text(outcome.right)
    } as ToolReply
  })

/** The structured result of a successful call (fails the test with the problem otherwise). */
export const resultOf = (reply: ToolReply): any => {
  if (reply.kind !== "result" || reply.isError) {
    throw new Error(`expected a result, got ${JSON.stringify(reply)}`)
  }
  return reply.structuredContent
}

/** The problem of a failed call (fails the test otherwise). */
export const problemOf = (reply: ToolReply): any => {
  if (reply.kind !== "result" || !reply.isError) throw new Error(`expected an error, got ${JSON.stringify(reply)}`)
  return reply.structuredContent
}
