/** GET /api/v1/finance/pay-later: decode (done by HttpApi), check the range, resolve the operators in view, list. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer } from "effect"
import { PartnerApi } from "../../Api.js"
import { financeOperatorIds } from "../params.js"
import { PayLaterCharges } from "./PayLaterCharges.js"
import { PAY_LATER_DEFAULT_LIMIT } from "./rules.js"

export const PayLaterLive = HttpApiBuilder.group(PartnerApi, "payLater", (handlers) =>
  Effect.gen(function*() {
    const charges = yield* PayLaterCharges
    return handlers.handle("list", ({ urlParams: p }) =>
      Effect.gen(function*() {
        const operatorIds = yield* financeOperatorIds(p)
        return yield* charges.list({
          operatorIds,
          state: p.state,
          from: p.from,
          to: p.to,
          partnerId: p.partner_id,
          limit: p.limit ?? PAY_LATER_DEFAULT_LIMIT,
          cursor: p.cursor
        })
      }))
  })).pipe(Layer.provide(PayLaterCharges.Default))
