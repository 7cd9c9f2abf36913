/** GET /api/v1/finance/payouts: decode (done by HttpApi), check the range, resolve the operators in view, read. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Either, Layer } from "effect"
import { CursorSigner } from "../../../http/CursorSigner.js"
import { jsonBody } from "../../../http/json.js"
import { PartnerApi } from "../../Api.js"
import { CurrentKey } from "../../auth/security.js"
import { operatorIdsFor } from "../../auth/visibility.js"
import { checkFinanceRange } from "../params.js"
import { PayoutPage } from "./Api.js"
import { Payouts } from "./Payouts.js"

export const PayoutsLive = HttpApiBuilder.group(PartnerApi, "payouts", (handlers) =>
  Effect.gen(function*() {
    const payouts = yield* Payouts
    const cursors = yield* CursorSigner
    return handlers.handle("list", ({ urlParams: p }) =>
      Effect.gen(function*() {
        const range = checkFinanceRange(p)
        if (Either.isLeft(range)) return yield* range.left
        const key = yield* CurrentKey
        const operatorIds = yield* operatorIdsFor(key, p.partner_id)
        const filters = { list: "payouts", from: p.from, to: p.to, partner_id: p.partner_id }
        const after = yield* cursors.decode(p.cursor, filters)
        const page = yield* payouts.list({ operatorIds, from: p.from, to: p.to, after, limit: p.limit ?? 50 })
        return jsonBody(PayoutPage, {
          data: page.rows,
          next_cursor: page.next ? cursors.encode(page.next, filters) : null
        })
      }))
  })).pipe(Layer.provide([Payouts.Default, CursorSigner.Default]))
