/** GET /api/v1/finance/statements: decode (done by HttpApi), the month, the operators in view, the statements. */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Clock, Effect, Either, Layer } from "effect"
import { PartnerApi } from "../../Api.js"
import { CurrentKey } from "../../auth/security.js"
import { operatorIdsFor } from "../../auth/visibility.js"
import { lastMonth, monthPeriod } from "./rules.js"
import { Statements } from "./Statements.js"

export const StatementsLive = HttpApiBuilder.group(PartnerApi, "statements", (handlers) =>
  Effect.gen(function*() {
    const statements = yield* Statements
    return handlers.handle("statements", ({ urlParams: p }) =>
      Effect.gen(function*() {
        const period = monthPeriod(p.month ?? lastMonth(yield* Clock.currentTimeMillis))
        if (Either.isLeft(period)) return yield* period.left
        const key = yield* CurrentKey
        const operatorIds = yield* operatorIdsFor(key, p.partner_id)
        const answer = yield* statements.month({
          partners: key.partners.filter((k) => operatorIds.includes(k.id)),
          period: period.right
        })
        // Up to six operators' thousands of entries (1.5 MB): written as the service built it (typed
        // as StatementsResponse there, and checked against the OpenAPI document by the tests), not
        // encoded entry by entry through the schema a second time (bench/statements.ts; as the sales
        // summary does).
        const text = JSON.stringify(answer)
        return HttpServerResponse.raw(text, { contentType: "application/json", contentLength: Buffer.byteLength(text) })
      }))
  })).pipe(Layer.provide(Statements.Default))
