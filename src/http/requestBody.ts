/**
 * How both APIs take a request body (Partner API and Quickbook alike): JSON only, at most
 * BODY_LIMIT_BYTES, valid UTF-8 (a leading byte order mark is dropped), nested at most
 * BODY_MAX_DEPTH levels. Anything else is refused with one of the three errors below, which each
 * API maps to its own error body (src/partner/problem.ts, src/quickbook/errorMapping.ts).
 *
 * Every API's middleware (./apiApp.ts) wraps each request that may carry a body (`withJsonBody`); the body
 * is read only when an endpoint's payload is decoded, so the route, the key and the scope are
 * checked first, and endpoints without a payload (GET, DELETE /reserve/{holdRef}) never read it:
 * a body sent to them is ignored. The read stops at the limit: a declared `Content-Length` over it
 * is refused before a byte is read, and a chunked body is refused as soon as it passes it.
 *
 * One route differs (ROUTE_RULES): POST /api/v1/collect, which browsers call with `navigator.sendBeacon`
 * or `fetch(..., { keepalive: true })` and a `text/plain` body so that no CORS preflight is needed,
 * also takes `Content-Type: text/plain` (its text must be the same JSON, UTF-8), and at most
 * COLLECT_BODY_LIMIT_BYTES. Every other check is the same.
 *
 * HttpApiBuilder reads the payload with `Effect.orDie(request.json)`, so a refusal reaches the
 * middleware as a defect; `refailBodyRejections` turns it back into the failure it is.
 */
import { Headers, HttpMethod, type HttpServerRequest } from "@effect/platform"
import { Cause, Effect, Option, Schema, Stream } from "effect"
import { Readable } from "node:stream"
import { problemType } from "../domain/errors.js"

/** The largest body any endpoint takes (the largest real one, a sale's booking, is about 1 KiB). */
export const BODY_LIMIT_BYTES = 64 * 1024

/** The deepest nesting of arrays and objects accepted (the deepest real body nests 3 levels). */
export const BODY_MAX_DEPTH = 32

/** The largest body POST /api/v1/collect takes (a real event is about 300 bytes). */
export const COLLECT_BODY_LIMIT_BYTES = 8 * 1024

/** How a route takes its body: whether `text/plain` is read as JSON too, and its size limit. */
interface BodyRules {
  readonly textPlain: boolean
  readonly limitBytes: number
}

const DEFAULT_RULES: BodyRules = { textPlain: false, limitBytes: BODY_LIMIT_BYTES }

/** Routes (method and exact path) whose body rules differ from the default. */
const ROUTE_RULES: Readonly<Record<string, BodyRules>> = {
  "POST /api/v1/collect": { textPlain: true, limitBytes: COLLECT_BODY_LIMIT_BYTES }
}

const rulesOf = (request: HttpServerRequest.HttpServerRequest): BodyRules =>
  ROUTE_RULES[`${request.method} ${request.url.split("?")[0]}`] ?? DEFAULT_RULES

export class BodyTooLarge extends Schema.TaggedError<BodyTooLarge>()(
  "BodyTooLarge",
  { detail: Schema.String, limitBytes: Schema.Int },
  problemType({
    status: 413,
    slug: "payload-too-large",
    title: "Body too large",
    description: `The body is larger than the endpoint takes (${BODY_LIMIT_BYTES / 1024} KiB; ${
      COLLECT_BODY_LIMIT_BYTES / 1024
    } KiB for POST /collect); nothing was read past the limit.`
  })
) {}

export class UnsupportedMediaType extends Schema.TaggedError<UnsupportedMediaType>()(
  "UnsupportedMediaType",
  { detail: Schema.String },
  problemType({
    status: 415,
    slug: "unsupported-media-type",
    title: "Body is not JSON",
    description: "The body is not sent as `Content-Type: application/json`."
  })
) {}

/** The body is JSON by its content type but cannot be read as JSON. */
export class MalformedBody extends Schema.TaggedError<MalformedBody>()(
  "MalformedBody",
  {
    detail: Schema.String,
    /** json: not valid JSON; encoding: not UTF-8; depth: nested deeper than BODY_MAX_DEPTH. */
    problem: Schema.Literal("json", "encoding", "depth")
  },
  problemType({
    status: 400,
    slug: "invalid-request",
    title: "Invalid request",
    description: "The body is not valid JSON (or not UTF-8, or nested too deeply)."
  })
) {}

export type BodyRejected = BodyTooLarge | UnsupportedMediaType | MalformedBody

export const isBodyRejected = (u: unknown): u is BodyRejected =>
  u instanceof BodyTooLarge || u instanceof UnsupportedMediaType || u instanceof MalformedBody

const tooLarge = (limit: number) =>
  new BodyTooLarge({
    detail: `the body is larger than ${limit} bytes (${limit / 1024} KiB), the most this endpoint takes`,
    limitBytes: limit
  })

const mediaTypeOf = (contentType: string | undefined) => {
  const [type = "", ...params] = (contentType ?? "").split(";").map((p) => p.trim().toLowerCase())
  return { type, params }
}

/**
 * `application/json` (or, where the route takes it, `text/plain`), with no charset or charset utf-8;
 * undefined when acceptable, else why not.
 */
const mediaTypeProblem = (contentType: string | undefined, textPlain = false): string | undefined => {
  if (contentType === undefined || contentType.trim() === "") {
    return "the body has no Content-Type; send it as JSON with `Content-Type: application/json`"
  }
  const { params, type } = mediaTypeOf(contentType)
  if (type !== "application/json" && !(textPlain && type === "text/plain")) {
    return `the body must be JSON sent as \`Content-Type: application/json\`, not \`${contentType.slice(0, 100)}\``
  }
  const charset = params.find((p) => p.startsWith("charset="))?.slice(8).replace(/"/g, "")
  if (charset !== undefined && charset !== "utf-8" && charset !== "utf8") {
    return `JSON bodies are UTF-8; \`charset=${charset.slice(0, 40)}\` is not accepted`
  }
  return undefined
}

/** Whether the request says it carries a body (without reading it). */
const announcesBody = (headers: Readonly<Record<string, string | undefined>>) => {
  const length = headers["content-length"]
  return headers["transfer-encoding"] !== undefined || (length !== undefined && length.trim() !== "0")
}

/** Reads a Node request stream up to the limit; past it, stops listening and fails (the rest is discarded). */
const readNode = (source: Readable, limit: number) =>
  Effect.async<Uint8Array, BodyTooLarge | MalformedBody>((resume) => {
    const chunks: Array<Buffer> = []
    let size = 0
    const cleanup = () => {
      source.off("data", onData)
      source.off("end", onEnd)
      source.off("error", onError)
      source.off("aborted", onError)
    }
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size > limit) {
        cleanup()
        // Keep the socket readable so the 413 can be answered; what is left is thrown away.
        source.resume()
        return resume(Effect.fail(tooLarge(limit)))
      }
      chunks.push(chunk)
    }
    const onEnd = () => {
      cleanup()
      resume(Effect.succeed(Buffer.concat(chunks, size)))
    }
    const onError = () => {
      cleanup()
      resume(Effect.fail(new MalformedBody({ detail: "the body was cut off before its end", problem: "json" })))
    }
    source.on("data", onData)
    source.once("end", onEnd)
    source.once("error", onError)
    source.once("aborted", onError)
    return Effect.sync(cleanup)
  })

/** Other requests (e.g. a web Request in tests): the same limit, by stream. */
const readStream = (request: HttpServerRequest.HttpServerRequest, limit: number) =>
  request.stream.pipe(
    Stream.mapError(() => new MalformedBody({ detail: "the body could not be read", problem: "json" })),
    Stream.runFoldEffect(
      { chunks: [] as Array<Uint8Array>, size: 0 },
      (acc, chunk): Effect.Effect<{ chunks: Array<Uint8Array>; size: number }, BodyTooLarge> =>
        acc.size + chunk.length > limit
          ? Effect.fail(tooLarge(limit))
          : Effect.succeed({ chunks: [...acc.chunks, chunk], size: acc.size + chunk.length })
    ),
    Effect.map(({ chunks }) => Buffer.concat(chunks))
  )

/** The deepest nesting of arrays and objects in a JSON text, stopping as soon as it passes `max`. */
export const jsonDepthExceeds = (text: string, max: number): boolean => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92 /* \ */) i++
      else if (c === 34 /* " */) inString = false
    } else if (c === 34) {
      inString = true
    } else if (c === 91 /* [ */ || c === 123 /* { */) {
      if (++depth > max) return true
    } else if (c === 93 /* ] */ || c === 125 /* } */) {
      depth--
    }
  }
  return false
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false })

/** The body as JSON (null when empty), checked in the order: type, declared size, size read, UTF-8, depth, syntax. */
const readJson = (
  request: HttpServerRequest.HttpServerRequest,
  rules: BodyRules
): Effect.Effect<unknown, BodyRejected> =>
  Effect.suspend((): Effect.Effect<unknown, BodyRejected> => {
    const headers = request.headers
    if (!announcesBody(headers)) return Effect.succeed(null)
    const unsupported = mediaTypeProblem(headers["content-type"], rules.textPlain)
    if (unsupported !== undefined) return Effect.fail(new UnsupportedMediaType({ detail: unsupported }))
    const limit = rules.limitBytes
    const declared = Number(headers["content-length"])
    if (Number.isFinite(declared) && declared > limit) return Effect.fail(tooLarge(limit))
    const read = request.source instanceof Readable ? readNode(request.source, limit) : readStream(request, limit)
    return Effect.flatMap(read, (bytes): Effect.Effect<unknown, BodyRejected> => {
      let text: string
      try {
        // A leading UTF-8 byte order mark is dropped (RFC 8259 §8.1 lets a parser ignore it).
        text = utf8.decode(bytes)
      } catch {
        return Effect.fail(new MalformedBody({ detail: "the body is not valid UTF-8 text", problem: "encoding" }))
      }
      if (text.trim() === "") return Effect.succeed(null)
      if (jsonDepthExceeds(text, BODY_MAX_DEPTH)) {
        return Effect.fail(
          new MalformedBody({
            detail: `the body nests arrays or objects more than ${BODY_MAX_DEPTH} levels deep`,
            problem: "depth"
          })
        )
      }
      try {
        return Effect.succeed(JSON.parse(text) as unknown)
      } catch (e) {
        const reason = e instanceof SyntaxError ? e.message.slice(0, 200) : "it does not parse"
        return Effect.fail(new MalformedBody({ detail: `the body is not valid JSON: ${reason}`, problem: "json" }))
      }
    })
  })

/**
 * The request with its body accessors replaced: `json` reads and checks the body as described
 * above (once); every other way of reading the body (form, text, bytes, multipart) answers 415,
 * because every endpoint that takes a body takes JSON.
 */
export const withJsonBody = (request: HttpServerRequest.HttpServerRequest): HttpServerRequest.HttpServerRequest => {
  if (!HttpMethod.hasBody(request.method)) return request
  const rules = rulesOf(request)
  const json = Effect.runSync(Effect.cached(readJson(request, rules)))
  // A text/plain body the route takes is JSON: say so, so that HttpApi reads it with `json` (above).
  const asJson = rules.textPlain && mediaTypeOf(request.headers["content-type"]).type === "text/plain"
    ? request.modify({ headers: Headers.set(request.headers, "content-type", "application/json") })
    : request
  return wrap(asJson, json)
}

const wrap = (
  request: HttpServerRequest.HttpServerRequest,
  json: Effect.Effect<unknown, BodyRejected>
): HttpServerRequest.HttpServerRequest => {
  const notJson = Effect.suspend(() =>
    Effect.fail(
      new UnsupportedMediaType({ detail: mediaTypeProblem(request.headers["content-type"]) ?? "the body must be JSON" })
    )
  )
  return Object.create(request, {
    json: { get: () => json },
    text: { get: () => notJson },
    arrayBuffer: { get: () => notJson },
    urlParamsBody: { get: () => notJson },
    multipart: { get: () => notJson },
    multipartStream: { get: () => Stream.fromEffect(notJson) },
    modify: {
      value: (options: Parameters<HttpServerRequest.HttpServerRequest["modify"]>[0]) =>
        wrap(request.modify(options), json)
    }
  }) as HttpServerRequest.HttpServerRequest
}

/** A body refusal that the platform turned into a defect becomes a failure again; anything else is unchanged. */
export const refailBodyRejections = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | BodyRejected, R> =>
  Effect.catchAllCause(effect, (cause): Effect.Effect<never, E | BodyRejected> => {
    const defect = Cause.dieOption(cause)
    return Option.isSome(defect) && isBodyRejected(defect.value) ? Effect.fail(defect.value) : Effect.failCause(cause)
  })
