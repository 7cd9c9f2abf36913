/**
 * The two APIs' OpenAPI documents and reference pages are built once per process (the reference
 * pages carry several MiB of script), so a browser or a client generator may keep them: they are
 * answered with a weak `ETag` (the body's SHA-256; weak because compression varies the bytes, not
 * the document) and `Cache-Control: public, max-age=300`, and a request whose `If-None-Match` names
 * that tag gets 304 with no body. Applied once for every response in src/Http.ts.
 */
import { type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { createHash } from "node:crypto"
import { QUICKBOOK_PREFIX } from "../quickbook/schemas.js"

export const DOCUMENT_PATHS: ReadonlySet<string> = new Set([
  "/api/v1/openapi.json",
  "/api/v1/docs",
  `${QUICKBOOK_PREFIX}/openapi.json`,
  `${QUICKBOOK_PREFIX}/docs`
])

export const DOCUMENT_CACHE_CONTROL = "public, max-age=300"

/** Each body's tag, computed once: the bodies are built once and served many times. */
const tags = new WeakMap<Uint8Array, string>()

const tagOf = (body: Uint8Array) => {
  let tag = tags.get(body)
  if (tag === undefined) {
    tag = `W/"${createHash("sha256").update(body).digest("base64url")}"`
    tags.set(body, tag)
  }
  return tag
}

/** Whether an `If-None-Match` header names `tag` (or `*`); weak comparison, as RFC 9110 asks for GET. */
const matches = (ifNoneMatch: string, tag: string) =>
  ifNoneMatch.split(",").some((t) => {
    const given = t.trim()
    return given === "*" || given.replace(/^W\//, "") === tag.replace(/^W\//, "")
  })

/** The response for `request`: with its tag and cache lifetime when it is a document, 304 when the client has it. */
export const withDocumentCaching =
  (request: HttpServerRequest.HttpServerRequest) =>
  (response: HttpServerResponse.HttpServerResponse): HttpServerResponse.HttpServerResponse => {
    const body = response.body
    if (
      (request.method !== "GET" && request.method !== "HEAD") || response.status !== 200 ||
      body._tag !== "Uint8Array" || !DOCUMENT_PATHS.has(request.url.split("?")[0]!)
    ) {
      return response
    }
    const tag = tagOf(body.body)
    const ifNoneMatch = request.headers["if-none-match"]
    if (ifNoneMatch !== undefined && matches(ifNoneMatch, tag)) {
      return HttpServerResponse.empty({
        status: 304,
        headers: { ETag: tag, "Cache-Control": DOCUMENT_CACHE_CONTROL, Vary: "Accept-Encoding" }
      })
    }
    return HttpServerResponse.setHeaders(response, { ETag: tag, "Cache-Control": DOCUMENT_CACHE_CONTROL })
  }
