/** GET /api/v1/sales: decode (done by HttpApi), check the range, resolve the operators in view, sum. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Either, Layer } from "effect"
import { InvalidRequest } from "../../domain/errors.js"
import { jsonBody } from "../../http/json.js"
import { PartnerApi } from "../Api.js"
import { CurrentKey } from "../auth/security.js"
import { operatorIdsFor } from "../auth/visibility.js"
import { SalesSummary } from "./Api.js"
import { checkSalesRange } from "./rules.js"
import { Sales } from "./Sales.js"

export const SalesLive = HttpApiBuilder.group(PartnerApi, "sales", (handlers) =>
  Effect.gen(function*() {
    const sales = yield* Sales
    return handlers.handle("summary", ({ urlParams: p }) =>
      Effect.gen(function*() {
        const range = checkSalesRange(p.from, p.to)
        if (Either.isLeft(range)) return yield* new InvalidRequest(range.left)
        const key = yield* CurrentKey
        const operatorIds = yield* operatorIdsFor(key, p.partner_id)
        return jsonBody(
          SalesSummary,
          yield* sales.summary({
            partners: key.partners.filter((k) => operatorIds.includes(k.id)),
            from: p.from,
            to: p.to,
            currency: p.currency ?? "NOK"
          })
        )
      }))
  })).pipe(Layer.provide(Sales.Default))
