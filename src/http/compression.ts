/**
 * Response compression (issue 17 item 12): a JSON, HTML, markdown or text answer of at least
 * COMPRESS_MIN_BYTES is sent gzip- or brotli-encoded when the client's `Accept-Encoding` allows it
 * (brotli preferred, at a fast quality), compressed on libuv's thread pool (node:zlib, async) after
 * the handler, so the event loop never waits for it. A body written as text (a raw string) is
 * compressed as its UTF-8 bytes. Every answer that could be compressed says
 * `Vary: Accept-Encoding`, so a shared cache keeps the variants apart. Smaller answers, streamed
 * bodies (the invoice and ticket files, already compressed formats) and HEAD are left alone: a small
 * read pays one header look-up.
 */
import { HttpBody, type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { promisify } from "node:util"
import * as zlib from "node:zlib"

/** Below this a body is sent as it is: compression would save little and cost a thread-pool round trip. */
export const COMPRESS_MIN_BYTES = 2048

const COMPRESSIBLE = /^(application\/([a-z.+-]*\+)?json|text\/|application\/javascript)/i

const gzip = promisify(zlib.gzip)
const brotli = promisify(zlib.brotliCompress)

const BROTLI_OPTIONS: zlib.BrotliOptions = {
  params: {
    [zlib.constants.BROTLI_PARAM_QUALITY]: 4,
    [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT
  }
}

type Encoding = "br" | "gzip"

/** The encoding to use for an `Accept-Encoding` header (q-values honoured; `q=0` refuses), if any. */
export const chooseEncoding = (accept: string | undefined): Encoding | undefined => {
  if (accept === undefined || accept === "") return undefined
  const q = new Map<string, number>()
  for (const part of accept.toLowerCase().split(",")) {
    const [name = "", ...params] = part.trim().split(";")
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith("q="))
    const value = qParam === undefined ? 1 : Number(qParam.slice(2))
    q.set(name.trim(), Number.isFinite(value) ? value : 0)
  }
  const weight = (encoding: Encoding) => q.get(encoding) ?? q.get("*") ?? 0
  const br = weight("br")
  const gz = weight("gzip")
  if (br <= 0 && gz <= 0) return undefined
  return br >= gz ? "br" : "gzip"
}

/**
 * Bodies built once and served many times (the API references: several MiB of script) are compressed
 * once per encoding; a body built per request is a new array, so its entry goes with it.
 */
const compressedByBody = new WeakMap<Uint8Array, Map<Encoding, Promise<Uint8Array>>>()

const compressed = (body: Uint8Array, encoding: Encoding): Promise<Uint8Array> => {
  let byEncoding = compressedByBody.get(body)
  if (byEncoding === undefined) compressedByBody.set(body, byEncoding = new Map())
  let result = byEncoding.get(encoding)
  if (result === undefined) {
    result = encoding === "br" ? brotli(body, BROTLI_OPTIONS) : gzip(body)
    byEncoding.set(encoding, result)
  }
  return result
}

const withVary = (response: HttpServerResponse.HttpServerResponse) => {
  const vary = response.headers["vary"]
  if (vary !== undefined && /(^|,)\s*(accept-encoding|\*)\s*(,|$)/i.test(vary)) return response
  return HttpServerResponse.setHeader(response, "Vary", vary ? `${vary}, Accept-Encoding` : "Accept-Encoding")
}

/**
 * The bytes of a body that could be compressed: a `Uint8Array` body, or a raw body that is a string
 * (an answer written as JSON text, e.g. GET /sales: src/partner/sales/Http.ts), as UTF-8.
 */
const bytesOf = (body: HttpBody.HttpBody): Uint8Array | undefined =>
  body._tag === "Uint8Array"
    ? body.body
    : body._tag === "Raw" && typeof body.body === "string"
    ? Buffer.from(body.body, "utf8")
    : undefined

/** The response for `request`, compressed when it is worth it and the client takes it (see the module comment). */
export const compressResponse = (request: HttpServerRequest.HttpServerRequest) =>
(
  response: HttpServerResponse.HttpServerResponse
): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  const body = response.body
  const contentType = body.contentType
  const size = body._tag === "Uint8Array"
    ? body.contentLength
    : body._tag === "Raw" && typeof body.body === "string"
    ? body.body.length // UTF-16 units: at most the UTF-8 length, enough to pass small answers by
    : 0
  if (
    size < COMPRESS_MIN_BYTES || request.method === "HEAD" || contentType === undefined ||
    response.headers["content-encoding"] !== undefined || !COMPRESSIBLE.test(contentType)
  ) {
    return Effect.succeed(response)
  }
  const varied = withVary(response)
  const encoding = chooseEncoding(request.headers["accept-encoding"])
  if (encoding === undefined) return Effect.succeed(varied)
  const bytes = bytesOf(body)!
  return Effect.promise(() => compressed(bytes, encoding)).pipe(
    Effect.map((compressed) =>
      HttpServerResponse.setBody(varied, HttpBody.uint8Array(compressed, contentType)).pipe(
        HttpServerResponse.setHeader("Content-Encoding", encoding)
      )
    )
  )
}
