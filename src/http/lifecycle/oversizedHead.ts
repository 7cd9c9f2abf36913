/**
 * A request whose line and headers pass node's limit (16 KiB; a query or path parameter far too long)
 * never reaches the app: node answers it `431` with no body, which no client of ours can read. Here
 * it is answered as the surface its path names refuses a bad request: 400, problem+json `invalid-request`
 * on the partner API (and anything else), `{error:{code:"invalid_request",…}}` on quickbook, a JSON-RPC
 * `invalid request` error on /mcp, the OAuth `invalid_request` error on the authorization server's
 * endpoints and a page on its sign-in pages. The path is read from the start of the bytes node was
 * parsing (the request line); then the socket closes.
 */
import { HttpServerResponse } from "@effect/platform"
import { randomUUID } from "node:crypto"
import { MCP_PATH } from "../../assistant/Http.js"
import { messagePage } from "../../assistant/oauth/pages.js"
import { INTERACTION_PREFIX } from "../../assistant/oauth/provider.js"
import { InvalidRequest } from "../../domain/errors.js"
import { problemFor, problemResponse } from "../../partner/problem.js"
import { quickbookResponseFor } from "../../quickbook/errorMapping.js"
import { QbBadRequest } from "../../quickbook/errors.js"

const DETAIL = "the request line and headers are over 16 KiB: a parameter is far too long"

/** The path of the request line `start` begins with ("" when it is not one). */
const pathOf = (start: string) => /^[A-Z]+ ([^ ?]*)/.exec(start)?.[1] ?? ""

/** The response to a request head too large, for the surface named by `start` (the first bytes received). */
export const oversizedHeadResponse = (start: string): HttpServerResponse.HttpServerResponse => {
  const path = pathOf(start)
  if (path.startsWith("/api/quickbook/")) {
    return quickbookResponseFor(new QbBadRequest({ code: "invalid_request", detail: DETAIL }), "en")!
  }
  if (path === MCP_PATH) {
    return HttpServerResponse.unsafeJson({
      jsonrpc: "2.0",
      id: null,
      error: { code: JSONRPC_INVALID_REQUEST, message: `Invalid request: ${DETAIL}` }
    }, { status: 400 })
  }
  if (path.startsWith(INTERACTION_PREFIX)) {
    return messagePage("Request too large", `The request could not be read: ${DETAIL}.`, 400)
  }
  if (path.startsWith("/oauth/")) {
    return HttpServerResponse.unsafeJson({ error: "invalid_request", error_description: DETAIL }, { status: 400 })
  }
  return problemResponse(problemFor(new InvalidRequest({ detail: DETAIL }), randomUUID(), "GET", "/")!)
}

/** JSON-RPC 2.0's "Invalid Request" code, as the MCP SDK answers a request it cannot take. */
const JSONRPC_INVALID_REQUEST = -32600

/** The response as raw HTTP/1.1 bytes, closing the connection (node's parser can read nothing more). */
export const rawHttp = (response: HttpServerResponse.HttpServerResponse): Buffer => {
  const body = response.body._tag === "Uint8Array" ? Buffer.from(response.body.body) : Buffer.alloc(0)
  const contentType = response.body._tag === "Uint8Array" ? response.body.contentType : undefined
  const headers: Record<string, string> = {
    ...(contentType ? { "content-type": contentType } : {}),
    ...response.headers,
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    "content-length": String(body.length),
    connection: "close"
  }
  const head = [`HTTP/1.1 ${response.status} Bad Request`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)]
  return Buffer.concat([Buffer.from(head.join("\r\n") + "\r\n\r\n", "latin1"), body])
}
