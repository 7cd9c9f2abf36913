/** GET /api/v1/analytics/tours and /analytics/sites: decode (done by HttpApi), read for the key (Analytics), encode. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer } from "effect"
import { jsonBody } from "../../http/json.js"
import { PartnerApi } from "../Api.js"
import { CurrentKey } from "../auth/security.js"
import { Analytics } from "./Analytics.js"
import { AnalyticsSites, AnalyticsTours } from "./Api.js"

export const AnalyticsLive = HttpApiBuilder.group(PartnerApi, "analytics", (handlers) =>
  Effect.gen(function*() {
    const analytics = yield* Analytics
    return handlers
      .handle("tours", ({ urlParams }) =>
        Effect.flatMap(CurrentKey, (key) => analytics.toursFor(key, urlParams)).pipe(
          Effect.map((body) => jsonBody(AnalyticsTours, body))
        ))
      .handle("sites", ({ urlParams }) =>
        Effect.flatMap(CurrentKey, (key) => analytics.sitesFor(key, urlParams)).pipe(
          Effect.map((body) => jsonBody(AnalyticsSites, body))
        ))
  })).pipe(Layer.provide(Analytics.Default))
