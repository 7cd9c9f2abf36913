/**
 * Quickbook authentication, in this order and before any parameter is decoded (spec §5):
 * `Authorization: Bearer svcqb_...` (401 `unauthorized`), the `Quickbook-Terminal` header (400
 * `terminal_not_registered` when missing or malformed), the terminal itself (403
 * `terminal_not_registered` when unknown, deactivated or not bound to the key), then the
 * terminal's budget for the endpoint (429 `rate_limited`). A key in the URL never gets here:
 * src/quickbook/errorMapping.ts refuses it with 401 first.
 */
import { HttpApi, HttpRouter, HttpServerRequest } from "@effect/platform"
import { Context, Effect, Layer, Option } from "effect"
import { RateLimiter, rateLimitHeaders } from "../http/RateLimiter.js"
import { addResponseHeaders } from "../http/requestContext.js"
import { QuickbookApi } from "./Api.js"
import { QbBadRequest, QbRateLimited, unauthorized } from "./errors.js"
import { QUICKBOOK_BUDGETS, QUICKBOOK_WINDOW_SECONDS, quickbookBucket, type QuickbookBudget } from "./limits.js"
import { Budget, QuickbookAuth } from "./security.js"
import { parseTerminalHeader } from "./terminals/key.js"
import { QuickbookKeys } from "./terminals/QuickbookKeys.js"

/** "GET /api/quickbook/v1/tours" → its budget, from the endpoint (or group) annotations; reads when unset. */
export const endpointBudgets = (() => {
  const budgets = new Map<string, QuickbookBudget>()
  HttpApi.reflect(QuickbookApi, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, mergedAnnotations }) => {
      budgets.set(
        `${endpoint.method} ${endpoint.path}`,
        Option.getOrElse(Context.getOption(mergedAnnotations, Budget), () => "reads")
      )
    }
  })
  return budgets
})()

const BEARER = /^Bearer[ ]+(\S+)[ ]*$/i
export const TERMINAL_HEADER = "quickbook-terminal"

export const QuickbookAuthLive = Layer.effect(
  QuickbookAuth,
  Effect.gen(function*() {
    const keys = yield* QuickbookKeys
    const limiter = yield* RateLimiter
    const authenticate = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const header = request.headers.authorization ?? ""
      const token = BEARER.exec(header)?.[1]
      if (header !== "" && token === undefined) {
        return yield* unauthorized("use the Bearer scheme: `Authorization: Bearer svcqb_live_...`")
      }
      const key = yield* keys.authenticateKey(token ?? "")
      const terminalId = parseTerminalHeader(request.headers[TERMINAL_HEADER])
      if (terminalId === undefined) {
        return yield* new QbBadRequest({
          code: "terminal_not_registered",
          detail: request.headers[TERMINAL_HEADER] === undefined
            ? "send the terminal id in the Quickbook-Terminal header"
            : "the Quickbook-Terminal header is not a terminal id"
        })
      }
      const terminal = yield* keys.terminalFor(key, terminalId)
      const { route } = yield* HttpRouter.RouteContext
      const budget = endpointBudgets.get(`${route.method} ${route.path}`) ?? "reads"
      const { perMinute } = QUICKBOOK_BUDGETS[budget]
      const decision = yield* limiter.hit(quickbookBucket(budget, terminal.id), perMinute, QUICKBOOK_WINDOW_SECONDS)
      yield* addResponseHeaders(rateLimitHeaders(decision, budget))
      if (!decision.allowed) {
        return yield* new QbRateLimited({
          code: "rate_limited",
          detail: `more than ${perMinute} ${budget} in ${QUICKBOOK_WINDOW_SECONDS} seconds from this terminal`,
          retryAfterSeconds: decision.resetSeconds
        })
      }
      return { key, terminal }
    })
    return QuickbookAuth.of({ bearer: () => authenticate })
  })
)
