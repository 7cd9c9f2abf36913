/** GET /api/v1/sales: decode (done by HttpApi), sum for the key (Sales.forKey: range, operators in view), answer. */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect, Layer } from "effect"
import { PartnerApi } from "../Api.js"
import { CurrentKey } from "../auth/security.js"
import type { SalesSummary } from "./Api.js"
import { Sales } from "./Sales.js"

export const SalesLive = HttpApiBuilder.group(PartnerApi, "sales", (handlers) =>
  Effect.gen(function*() {
    const sales = yield* Sales
    return handlers.handle("summary", ({ urlParams: p }) =>
      Effect.gen(function*() {
        const summary: SalesSummary = yield* sales.forKey(yield* CurrentKey, p)
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
