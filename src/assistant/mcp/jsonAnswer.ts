/**
 * A 2025-era POST (no per-request `_meta` envelope: `initialize`, `tools/list`, `tools/call`, a
 * notification) answered with one JSON body instead of a one-message event stream.
 *
 * The SDK's own stateless fallback (`createMcpHandler`'s `legacy: "stateless"`) serves such a request
 * with a fresh server on a `WebStandardStreamableHTTPServerTransport` built with only
 * `sessionIdGenerator: undefined`, so every answer is an SSE stream: a priming-free stream of one
 * `event: message` frame, piped through two web streams, which ./webBridge.ts then read back whole. The
 * Streamable HTTP transport lets a server answer a POST with `application/json` instead (2025-11-25,
 * "Sending Messages to the Server": the server MUST either return `text/event-stream` or
 * `application/json`; the client MUST support both), and the SDK's transport does it with
 * `enableJsonResponse`. This is that fallback, step for step (the same factory, the same transport
 * class and its checks: Accept 406, Content-Type 415, JSON-RPC shape, `MCP-Protocol-Version` 400, the
 * scope challenge 403, notifications 202), with `enableJsonResponse: true`; the server and transport
 * are closed once the answer is there. What JSON cannot carry are messages sent before the result
 * (progress, logging): no tool of this server sends any (no logging capability; a write's
 * confirmation is a second call).
 *
 * Only requests the SDK would route to that fallback come here (`isLegacyRequest`, the SDK's own
 * classification, on the already parsed body); a body that is not JSON, GET and DELETE, and every
 * 2026-07-28 request still go through `createMcpHandler`.
 */
import {
  type AuthInfo,
  isLegacyRequest,
  type McpServerFactory,
  WebStandardStreamableHTTPServerTransport
} from "@modelcontextprotocol/server"

/** Whether `createMcpHandler` would serve this POST (its body parsed as JSON) by its stateless fallback. */
export const isLegacyPost = (request: Request, parsedBody: unknown, maxRequestBodySize: number) =>
  request.method === "POST" && parsedBody !== undefined &&
  isLegacyRequest(request, parsedBody, { maxRequestBodySize })

/** The tool a single `tools/call` request names (undefined for anything else, batches included). */
export const calledTool = (body: unknown): string | undefined => {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return undefined
  const { method, params } = body as { method?: unknown; params?: { name?: unknown } }
  return method === "tools/call" && typeof params?.name === "string" ? params.name : undefined
}

/**
 * Serves one 2025-era POST with a fresh server from `factory` and answers JSON. `request` needs only
 * its method and headers: the body is `parsedBody`.
 */
export const answerAsJson = async (
  factory: McpServerFactory,
  request: Request,
  parsedBody: unknown,
  authInfo: AuthInfo,
  maxRequestBodySize: number,
  onerror: (error: Error) => void
): Promise<Response> => {
  try {
    const server = await factory({ era: "legacy", authInfo, requestInfo: request })
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      maxRequestBodySize
    })
    transport.onerror = onerror
    await server.connect(transport)
    try {
      return await transport.handleRequest(request, { authInfo, parsedBody })
    } finally {
      transport.close().catch(() => {})
      server.close().catch(() => {})
    }
  } catch (error) {
    // As the SDK's fallback: reported, and a JSON-RPC internal error naming the request's id.
    onerror(error instanceof Error ? error : new Error(String(error)))
    return Response.json(
      { jsonrpc: "2.0", error: { code: -32603, message: "Internal server error" }, id: requestIdOf(parsedBody) },
      { status: 500 }
    )
  }
}

const requestIdOf = (body: unknown) => {
  const id = typeof body === "object" && body !== null && !Array.isArray(body) ? (body as { id?: unknown }).id : null
  return typeof id === "string" || typeof id === "number" ? id : null
}
