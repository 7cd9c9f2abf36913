/** GET /api/v1/analytics/tours and /analytics/sites: decode (done by HttpApi), check the range, resolve the operators in view, read. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Either, Layer } from "effect"
import { InvalidRequest } from "../../domain/errors.js"
import { jsonBody } from "../../http/json.js"
import { PartnerApi } from "../Api.js"
import { CurrentKey } from "../auth/security.js"
import { operatorIdsFor } from "../auth/visibility.js"
import { Analytics } from "./Analytics.js"
import { AnalyticsSites, AnalyticsTours } from "./Api.js"
import { checkAnalyticsRange } from "./rules.js"

/** The key, its operators in view (`partner_id` narrows; 404 outside the key) and the checked range. */
const inView = (p: { readonly from: string; readonly to: string; readonly partner_id?: string | undefined }) =>
  Effect.gen(function*() {
    const range = checkAnalyticsRange(p.from, p.to)
    if (Either.isLeft(range)) return yield* new InvalidRequest(range.left)
    const key = yield* CurrentKey
    const operatorIds = yield* operatorIdsFor(key, p.partner_id)
    return {
      keyId: key.id,
      partners: key.partners.filter((k) => operatorIds.includes(k.id)),
      from: p.from,
      to: p.to
    }
  })

export const AnalyticsLive = HttpApiBuilder.group(PartnerApi, "analytics", (handlers) =>
  Effect.gen(function*() {
    const analytics = yield* Analytics
    return handlers
      .handle("tours", ({ urlParams: p }) =>
        Effect.gen(function*() {
          const base = yield* inView(p)
          const body = yield* analytics.tours({
            ...base,
            granularity: p.granularity ?? "day",
            tourId: p.tour_id,
            surface: p.surface?.toLowerCase()
          })
          return jsonBody(AnalyticsTours, body)
        }))
      .handle("sites", ({ urlParams: p }) =>
        Effect.gen(function*() {
          const base = yield* inView(p)
          return jsonBody(AnalyticsSites, yield* analytics.sites({ ...base, site: p.site?.toLowerCase() }))
        }))
  })).pipe(Layer.provide(Analytics.Default))
