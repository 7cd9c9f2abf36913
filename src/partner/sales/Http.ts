/** GET /api/v1/sales: decode (done by HttpApi), sum for the key (Sales.forKey: range, operators in view), answer. */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect, Layer } from "effect"
import { PartnerApi } from "../Api.js"
import { CurrentKey } from "../auth/security.js"
import { Sales } from "./Sales.js"

export const SalesLive = HttpApiBuilder.group(PartnerApi, "sales", (handlers) =>
  Effect.gen(function*() {
    const sales = yield* Sales
    return handlers.handle("summary", ({ urlParams: p }) =>
      Effect.gen(function*() {
        // A year of days is about 600 KB of JSON, written directly as text (rules.salesSummaryJson:
        // the JSON of a SalesSummary without building one) and sent as it is, without a second copy
        // as bytes (jsonBody's): allocations that showed as garbage collection and tail latency in
        // bench:sales (bench/README.md, issue 13).
        const text = yield* sales.forKeyJson(yield* CurrentKey, p)
        return HttpServerResponse.raw(text, {
          contentType: "application/json",
          contentLength: Buffer.byteLength(text)
        })
      }))
  })).pipe(Layer.provide(Sales.Default))
