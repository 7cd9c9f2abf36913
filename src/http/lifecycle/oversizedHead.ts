/**
 * A request whose line and headers pass node's limit (16 KiB; a query or path parameter far too long)
 * never reaches the app: node answers it `431` with no body, which no client of ours can read. Here
 * it is answered as the API its path names refuses a bad parameter: 400, problem+json `invalid-request`
 * on the partner API (and anything else), `{error:{code:"invalid_request",…}}` on quickbook. The path
 * is read from the start of the bytes node was parsing (the request line); then the socket closes.
 */
import type { HttpServerResponse } from "@effect/platform"
import { randomUUID } from "node:crypto"
import { InvalidRequest } from "../../domain/errors.js"
import { problemFor, problemResponse } from "../../partner/problem.js"
import { quickbookResponseFor } from "../../quickbook/errorMapping.js"
import { QbBadRequest } from "../../quickbook/errors.js"

const DETAIL = "the request line and headers are over 16 KiB: a parameter is far too long"
const QUICKBOOK_PATH = /^[A-Z]+ \/api\/quickbook\//

/** The response to a request head too large, for the API named by `start` (the first bytes received). */
export const oversizedHeadResponse = (start: string): HttpServerResponse.HttpServerResponse =>
  QUICKBOOK_PATH.test(start)
    ? quickbookResponseFor(new QbBadRequest({ code: "invalid_request", detail: DETAIL }), "en")!
    : problemResponse(problemFor(new InvalidRequest({ detail: DETAIL }), randomUUID(), "GET", "/")!)

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
