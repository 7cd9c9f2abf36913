/** GET /api/v1/finance/pay-later: decode (done by HttpApi), check the range, resolve the operators in view, list. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer } from "effect"
import { jsonBody } from "../../../http/json.js"
import { PartnerApi } from "../../Api.js"
import { financeOperatorIds } from "../params.js"
import { PayLaterPage } from "./Api.js"
import { PayLaterCharges } from "./PayLaterCharges.js"
import { PAY_LATER_DEFAULT_LIMIT } from "./rules.js"

export const PayLaterLive = HttpApiBuilder.group(PartnerApi, "payLater", (handlers) =>
  Effect.gen(function*() {
    const charges = yield* PayLaterCharges
    return handlers.handle("list", ({ urlParams: p }) =>
      Effect.gen(function*() {
        const operatorIds = yield* financeOperatorIds(p)
        // Served as built (typed by the success schema, whose encoding is the identity here; the tests
        // check answers against the OpenAPI document), not encoded through the schema a second time,
        // as the payouts and chargebacks reads do (jsonBody, src/http/json.ts; bench/finance.ts).
        const page = yield* charges.list({
          operatorIds,
          state: p.state,
          from: p.from,
          to: p.to,
          partnerId: p.partner_id,
          limit: p.limit ?? PAY_LATER_DEFAULT_LIMIT,
          cursor: p.cursor
        })
        return jsonBody(PayLaterPage, page)
      }))
  })).pipe(Layer.provide(PayLaterCharges.Default))
