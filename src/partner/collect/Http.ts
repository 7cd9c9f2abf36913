/**
 * Collect handler: the request's origin, user agent and address beside the body, to the Collector.
 * Answers carry CORS headers for the page's origin, and a preflight (a page that sends
 * `application/json` with `fetch`) is answered for any origin: the answer is empty, and the key's
 * allowed origins are checked on the POST itself (the key is in its body).
 */
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Layer, Option } from "effect"
import { Collector } from "../../analytics/Collector.js"
import { AnalyticsCollectConfig } from "../../analytics/config.js"
import { clientIp } from "../../analytics/events.js"
import { addResponseHeaders } from "../../http/requestContext.js"
import { PartnerApi } from "../Api.js"

const corsFor = (origin: string | undefined): Record<string, string> =>
  origin === undefined ? { Vary: "Origin" } : { "Access-Control-Allow-Origin": origin, Vary: "Origin" }

const CollectHandlers = HttpApiBuilder.group(PartnerApi, "collect", (handlers) =>
  Effect.gen(function*() {
    const collector = yield* Collector
    const ipHeader = Option.getOrUndefined((yield* AnalyticsCollectConfig).clientIpHeader)
    return handlers.handle("collect", ({ payload }) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const headers = request.headers
        yield* addResponseHeaders(corsFor(headers.origin))
        yield* collector.collect({
          key: payload.key,
          kind: payload.kind,
          url: payload.url,
          referrer: payload.referrer ?? null,
          newVisitor: payload.new_visitor,
          tourId: payload.tour_id ?? null,
          bookingCode: payload.booking_code ?? null,
          origin: headers.origin,
          userAgent: headers["user-agent"] ?? "",
          ip: clientIp(Option.getOrUndefined(request.remoteAddress), ipHeader && headers[ipHeader]),
          headers
        })
      }))
  })).pipe(Layer.provide(Collector.Default))

/** The CORS preflight of POST /api/v1/collect: 204, POST with `Content-Type`, cached for a day. */
const CollectCorsRoutes = HttpApiBuilder.Router.use((router) =>
  router.options(
    "/api/v1/collect",
    Effect.map(HttpServerRequest.HttpServerRequest, (request) =>
      HttpServerResponse.empty({
        status: 204,
        headers: {
          ...corsFor(request.headers.origin),
          "Access-Control-Allow-Methods": "POST",
          "Access-Control-Allow-Headers": "content-type",
          "Access-Control-Max-Age": "86400"
        }
      }))
  )
)

export const CollectLive = Layer.merge(CollectHandlers, CollectCorsRoutes)
