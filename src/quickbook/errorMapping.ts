/**
 * The one place where Quickbook failures become responses: `{error: {code, clerkMessage,
 * reference?}}` (spec §7), with the clerk message in the clerk's language (`Accept-Language`,
 * see clerkLanguage). Installed by the Quickbook API alone (src/quickbook/Http.ts), inside the
 * middleware every API shares (src/http/apiApp.ts: request id, bodies, 405, access log);
 * `Cache-Control: no-store` is added here. A key anywhere in the URL is refused with 401 before
 * anything else runs.
 */
import { HttpApiError, HttpServerError, type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Cause, Effect, Option, Schema } from "effect"
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnreachable } from "../db/unreachable.js"
import { statusOf } from "../domain/errors.js"
import { BodyTooLarge, MalformedBody, UnsupportedMediaType } from "../http/requestBody.js"
import { MethodNotAllowed, quotablePath } from "../http/routing.js"
import { decodedUrl } from "../partner/auth/apiKey.js"
import {
  CLERK_MESSAGE_VARIANTS,
  CLERK_MESSAGES,
  type ClerkLanguage,
  clerkLanguage,
  invalidFieldMessage,
  REQUEST_MESSAGES,
  unknownEndpointMessage,
  wrongMethodMessage
} from "./clerkMessages.js"
import {
  QbBadRequest,
  QbConflict,
  QbForbidden,
  QbGone,
  QbNotFound,
  QbRateLimited,
  QbUnauthorized,
  QbUnavailable,
  QbUnprocessable,
  QuickbookCode,
  type QuickbookFailure
} from "./errors.js"

export const WWW_AUTHENTICATE = `Bearer realm="svc-quickbook"`

/** The error body as documented (components.schemas.QuickbookError). */
export const QuickbookErrorBody = Schema.Struct({
  error: Schema.Struct({
    code: QuickbookCode.annotations({ description: "What happened; branch on this." }),
    clerkMessage: Schema.String.annotations({
      description: "Show this to the clerk. Norwegian (bokmål) when Accept-Language prefers nb/no/nn, else English."
    }),
    reference: Schema.optional(Schema.String).annotations({
      description: "The sale reference, when the failure concerns one."
    })
  })
}).annotations({ identifier: "QuickbookError", title: "Quickbook error" })

/** Any key of ours in the URL (partner or quickbook), raw or percent-encoded. */
const KEY_IN_URL = /(svc_live_|svcqb_live_|svcqb_test_)/i
export const urlCarriesAnyKey = (url: string) => KEY_IN_URL.test(url) || KEY_IN_URL.test(decodedUrl(url))

const respond = (
  status: number,
  code: QuickbookCode,
  lang: ClerkLanguage,
  extra: { reference?: string | undefined; headers?: Record<string, string>; clerkMessage?: string | undefined } = {}
) =>
  HttpServerResponse.unsafeJson(
    {
      error: {
        code,
        clerkMessage: extra.clerkMessage ?? CLERK_MESSAGES[code][lang],
        ...(extra.reference !== undefined ? { reference: extra.reference } : {})
      }
    },
    { status, headers: { "Content-Language": lang, ...extra.headers } }
  )

/** The parameter or field a decode error is about (its first issue), `body` for the body as a whole. */
const decodeIssue = (error: HttpApiError.HttpApiDecodeError) => {
  const issue = error.issues[0]
  return {
    field: issue && issue.path.length > 0 ? issue.path.map(String).join(".") : "body",
    missing: issue?._tag === "Missing"
  }
}

/** Refusals of the request itself (its body, its method: src/http), all answered with code `invalid_request`. */
export const REQUEST_REFUSAL_CODE: QuickbookCode = "invalid_request"

const isQuickbookFailure = (error: unknown): error is QuickbookFailure =>
  error instanceof QbBadRequest || error instanceof QbUnauthorized || error instanceof QbForbidden ||
  error instanceof QbNotFound || error instanceof QbConflict || error instanceof QbGone ||
  error instanceof QbUnprocessable || error instanceof QbUnavailable || error instanceof QbRateLimited

/** A refusal's clerk message where it is more precise than its code's: a variant, or the field at fault. */
const clerkMessageOf = (error: QuickbookFailure, lang: ClerkLanguage): string | undefined => {
  if (
    (error instanceof QbBadRequest || error instanceof QbForbidden || error instanceof QbNotFound ||
      error instanceof QbUnavailable) && error.variant !== undefined
  ) {
    return CLERK_MESSAGE_VARIANTS[error.variant][lang]
  }
  return error instanceof QbBadRequest && error.field !== undefined
    ? invalidFieldMessage(error.field, false, lang)
    : undefined
}

/** The headers that go with a refusal: how to authenticate, when to retry. */
const headersOf = (error: QuickbookFailure): Record<string, string> =>
  error instanceof QbUnauthorized
    ? { "WWW-Authenticate": WWW_AUTHENTICATE }
    : error instanceof QbRateLimited
    ? { "Retry-After": String(error.retryAfterSeconds) }
    : error instanceof QbUnavailable
    ? { "Retry-After": "5" }
    : {}

/**
 * Maps one failure to its response, its status read from the error's class; undefined for a failure
 * we do not know (answered 500).
 */
export const quickbookResponseFor = (
  error: unknown,
  lang: ClerkLanguage,
  request?: { readonly method: string; readonly url: string }
) => {
  if (isQuickbookFailure(error)) {
    // 401 and 429 never name a sale.
    const reference = error instanceof QbUnauthorized || error instanceof QbRateLimited ? undefined : error.reference
    return respond(statusOf(error), error.code, lang, {
      reference,
      clerkMessage: clerkMessageOf(error, lang),
      headers: headersOf(error)
    })
  }
  if (error instanceof HttpApiError.HttpApiDecodeError) {
    const { field, missing } = decodeIssue(error)
    return respond(statusOf(error), REQUEST_REFUSAL_CODE, lang, {
      clerkMessage: invalidFieldMessage(field, missing, lang)
    })
  }
  // The request itself is wrong (the desk app's doing): the code is invalid_request, the status says what.
  if (error instanceof MalformedBody) {
    const message = error.problem === "encoding"
      ? "body_not_utf8"
      : error.problem === "depth"
      ? "body_too_deep"
      : "body_not_json"
    return respond(statusOf(error), REQUEST_REFUSAL_CODE, lang, { clerkMessage: REQUEST_MESSAGES[message][lang] })
  }
  if (error instanceof BodyTooLarge) {
    return respond(statusOf(error), REQUEST_REFUSAL_CODE, lang, { clerkMessage: REQUEST_MESSAGES.body_too_large[lang] })
  }
  if (error instanceof UnsupportedMediaType) {
    return respond(statusOf(error), REQUEST_REFUSAL_CODE, lang, {
      clerkMessage: REQUEST_MESSAGES.body_not_json_type[lang]
    })
  }
  if (error instanceof MethodNotAllowed) {
    return respond(statusOf(error), REQUEST_REFUSAL_CODE, lang, {
      clerkMessage: wrongMethodMessage(error.method, error.path, error.allow, lang),
      headers: { Allow: error.allow.join(", ") }
    })
  }
  if (error instanceof HttpServerError.RouteNotFound) {
    const method = request?.method ?? error.request.method
    const path = quotablePath(request?.url ?? error.request.url)
    return respond(404, "not_found", lang, { clerkMessage: unknownEndpointMessage(method, path, lang) })
  }
  return undefined
}

/** Runs a Quickbook request: refuses a key in the URL, maps every failure, never leaks internals. */
export const handleQuickbook = <R>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, R>,
  request: HttpServerRequest.HttpServerRequest
): Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, R> => {
  const lang = clerkLanguage(request.headers["accept-language"])
  const run = urlCarriesAnyKey(request.url)
    ? Effect.succeed(respond(401, "unauthorized", lang, { headers: { "WWW-Authenticate": WWW_AUTHENTICATE } }))
    : app.pipe(
      Effect.catchAllCause((cause) => {
        if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
        const failure = Cause.failureOption(cause)
        if (Option.isSome(failure)) {
          const mapped = quickbookResponseFor(failure.value, lang, request)
          if (mapped) {
            const detail = (failure.value as { detail?: unknown }).detail
            return Effect.logDebug("quickbook refusal", detail).pipe(Effect.as(mapped))
          }
        }
        // The database did not answer (src/db/unreachable.ts): 503 provider_unavailable, retry shortly.
        if (isDatabaseUnreachable(cause)) {
          return Effect.logWarning("database did not answer", cause).pipe(
            Effect.as(respond(503, "provider_unavailable", lang, {
              clerkMessage: CLERK_MESSAGE_VARIANTS.database[lang],
              headers: { "Retry-After": String(DATABASE_RETRY_AFTER_SECONDS) }
            }))
          )
        }
        return Effect.logError("request failed unexpectedly", cause).pipe(Effect.as(respond(500, "internal", lang)))
      })
    )
  return Effect.map(run, (response) => HttpServerResponse.setHeader(response, "Cache-Control", "no-store"))
}
