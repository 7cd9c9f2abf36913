/** GET /api/v1/sales: decode (done by HttpApi), check the range, resolve the operators in view, sum. */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect, Either, Layer } from "effect"
import { InvalidRequest } from "../../domain/errors.js"
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
        const summary: SalesSummary = yield* sales.summary({
          partners: key.partners.filter((k) => operatorIds.includes(k.id)),
          from: p.from,
          to: p.to,
          currency: p.currency ?? "NOK"
        })
        // A year of days is about 600 KB of JSON: the string goes to the socket as it is (as jsonBody
        // would, without its second copy of the body as bytes: a large allocation per request that
        // showed as garbage collection and tail latency in bench:sales, bench/README.md).
        const text = JSON.stringify(summary)
        return HttpServerResponse.raw(text, {
          contentType: "application/json",
          contentLength: Buffer.byteLength(text)
        })
      }))
  })).pipe(Layer.provide(Sales.Default))
