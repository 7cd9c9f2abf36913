/**
 * The MCP endpoint's bridge between the Effect HTTP server and the SDK's web-standard handler,
 * without streams where none is needed (bench/README.md, "Issue 16: the MCP reads"): the platform's
 * own conversions (`HttpServerRequest.toWeb`, `HttpServerResponse.fromWeb`) pipe each body through an
 * Effect Stream and a web ReadableStream, and the SDK then clones the request to read it; for a
 * tool call that cost more CPU than the read behind it.
 *
 * - The request: its headers first (Host/Origin validation, the bearer token); the body is read
 *   only after authentication, once, and handed to the SDK parsed (`parsedBody`, with the body-less
 *   request: the SDK neither clones nor reads a body then). A body that is not JSON, or is over the
 *   SDK's bound, is passed as the web request's body: the SDK answers its parse error or its 413.
 * - The response: a finite answer (JSON, or the event stream of a 2025-era stateless POST, which the
 *   SDK closes after the last response) is read whole and sent as bytes; anything else (a 2026-07-28
 *   subscription stream, an upgraded call with progress) is streamed as before.
 */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { isLegacyRequest } from "@modelcontextprotocol/server"
import { Effect, Option } from "effect"
import { BODY_LIMIT_BYTES } from "../../http/requestBody.js"

export interface WebRequest {
  /** The request without its body: enough for the header checks. */
  readonly headersOnly: Request
  readonly url: URL
}

/** The web request's URL and headers (no body read yet); undefined when the URL cannot be made. */
export const webRequestOf = (request: HttpServerRequest.HttpServerRequest): WebRequest | undefined => {
  const url = HttpServerRequest.toURL(request)
  if (Option.isNone(url)) return undefined
  return { url: url.value, headersOnly: new Request(url.value, { method: request.method, headers: request.headers }) }
}

export interface WebBody {
  readonly request: Request
  /** The body parsed as JSON, when it is JSON. */
  readonly parsedBody: unknown
}

/**
 * The web request with its body, read once. The bound is the SDK's, set to the APIs' BODY_LIMIT_BYTES
 * (src/assistant/mcp/endpoint.ts; 413): a declared Content-Length over it is left to the SDK, which
 * answers without reading; a longer body without one is handed over unparsed, so the SDK measures it.
 */
export const withBody = (request: HttpServerRequest.HttpServerRequest, web: WebRequest) =>
  Effect.gen(function*() {
    const declared = Number(request.headers["content-length"])
    if (request.method !== "POST" || declared > BODY_LIMIT_BYTES) {
      return { request: web.headersOnly, parsedBody: undefined } satisfies WebBody
    }
    const text = yield* request.text
    let parsedBody: unknown = undefined
    if (text !== "" && Buffer.byteLength(text) <= BODY_LIMIT_BYTES) {
      try {
        parsedBody = JSON.parse(text)
      } catch {
        // Not JSON: the SDK reads the text and answers the parse error.
      }
    }
    // Parsed: the SDK reads `parsedBody` and never the request's body (its entry and its transport both take
    // the parsed value as given), so the body-less request serves; a second web Request carrying the text
    // (its body stream, its AbortSignal) was a visible share of a call (bench/README.md, issue 16, round 4).
    if (parsedBody !== undefined) return { request: web.headersOnly, parsedBody } satisfies WebBody
    return {
      request: new Request(web.url, { method: request.method, headers: request.headers, body: text }),
      parsedBody
    } satisfies WebBody
  })

/** Whether the SDK's answer ends with the request: then it is read whole and sent as bytes. */
const isFinite = async (response: Response, body: WebBody) => {
  const type = response.headers.get("content-type") ?? ""
  if (type.startsWith("application/json")) return true
  if (!type.startsWith("text/event-stream") || body.request.method !== "POST") return false
  return isLegacyRequest(body.request, body.parsedBody).catch(() => false)
}

/** The SDK's web response as the Effect server's response. */
export const serverResponseOf = (response: Response, body: WebBody) =>
  Effect.promise(async () => {
    if (response.body === null || !(await isFinite(response, body))) return HttpServerResponse.fromWeb(response)
    const bytes = await readWhole(response.body)
    let contentType: string | undefined
    const headers: Record<string, string> = {}
    response.headers.forEach((value, name) => {
      if (name === "content-type") contentType = value
      else if (name !== "content-length") headers[name] = value
    })
    return HttpServerResponse.uint8Array(bytes, {
      status: response.status,
      statusText: response.statusText,
      headers,
      ...(contentType === undefined ? {} : { contentType })
    })
  })

/**
 * A finite body's bytes. The SDK enqueues a 2025-era answer as one chunk (its one event): that chunk is
 * sent as it is, where `arrayBuffer()` copied it into a new buffer (for the manifest, 234 KB more garbage
 * per call, in the large-object space the full collections sweep).
 */
const readWhole = async (stream: ReadableStream<Uint8Array>) => {
  const reader = stream.getReader()
  const chunks: Array<Uint8Array> = []
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    chunks.push(value)
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
}
