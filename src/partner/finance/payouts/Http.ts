/** GET /api/v1/finance/payouts: decode (done by HttpApi), check the range, resolve the operators in view, read. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer } from "effect"
import { CursorSigner } from "../../../http/CursorSigner.js"
import { jsonBody } from "../../../http/json.js"
import { PartnerApi } from "../../Api.js"
import { financeOperatorIds, signedPage } from "../params.js"
import { PayoutPage } from "./Api.js"
import { Payouts } from "./Payouts.js"

export const PayoutsLive = HttpApiBuilder.group(PartnerApi, "payouts", (handlers) =>
  Effect.gen(function*() {
    const payouts = yield* Payouts
    const cursors = yield* CursorSigner
    return handlers.handle("list", ({ urlParams: p }) =>
      Effect.gen(function*() {
        const operatorIds = yield* financeOperatorIds(p)
        const filters = { list: "payouts", from: p.from, to: p.to, partner_id: p.partner_id }
        const page = yield* signedPage(
          cursors,
          { cursor: p.cursor, filters },
          (after) => payouts.list({ operatorIds, from: p.from, to: p.to, after, limit: p.limit ?? 50 })
        )
        return jsonBody(PayoutPage, page)
      }))
  })).pipe(Layer.provide([Payouts.Default, CursorSigner.Default]))
