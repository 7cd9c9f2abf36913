/** Collect handler: the request's origin, user agent and address beside the body, to the Collector. */
import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Effect, Layer, Option } from "effect"
import { Collector } from "../../analytics/Collector.js"
import { clientIp } from "../../analytics/events.js"
import { AnalyticsCollectConfig } from "../../config.js"
import { PartnerApi } from "../Api.js"

export const CollectLive = HttpApiBuilder.group(PartnerApi, "collect", (handlers) =>
  Effect.gen(function*() {
    const collector = yield* Collector
    const ipHeader = Option.getOrUndefined((yield* AnalyticsCollectConfig).clientIpHeader)
    return handlers.handle("collect", ({ payload }) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const headers = request.headers
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
