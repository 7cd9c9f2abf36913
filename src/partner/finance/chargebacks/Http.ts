/** GET /api/v1/finance/chargebacks: decode (done by HttpApi), check the range, resolve the operators in view, read. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer } from "effect"
import { CursorSigner } from "../../../http/CursorSigner.js"
import { jsonBody } from "../../../http/json.js"
import { PartnerApi } from "../../Api.js"
import { financeOperatorIds, signedPage } from "../params.js"
import { ChargebackPage } from "./Api.js"
import { Chargebacks } from "./Chargebacks.js"

export const ChargebacksLive = HttpApiBuilder.group(PartnerApi, "chargebacks", (handlers) =>
  Effect.gen(function*() {
    const chargebacks = yield* Chargebacks
    const cursors = yield* CursorSigner
    return handlers.handle("list", ({ urlParams: p }) =>
      Effect.gen(function*() {
        const operatorIds = yield* financeOperatorIds(p)
        const filters = { list: "chargebacks", from: p.from, to: p.to, partner_id: p.partner_id }
        const page = yield* signedPage(
          cursors,
          { cursor: p.cursor, filters },
          (after) => chargebacks.list({ operatorIds, from: p.from, to: p.to, after, limit: p.limit ?? 50 })
        )
        return jsonBody(ChargebackPage, page)
      }))
  })).pipe(Layer.provide([Chargebacks.Default, CursorSigner.Default]))
