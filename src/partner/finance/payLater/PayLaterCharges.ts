/** The pay-later read's use case: one page of charges and the totals over every matching charge. */
import { Effect } from "effect"
import { CursorSigner } from "../../../http/CursorSigner.js"
import { both } from "../../../lib/both.js"
import { type PayLaterFilter, PayLaterReadRepo } from "./PayLaterReadRepo.js"
import { toCharge } from "./rules.js"

export interface PayLaterListRequest {
  readonly operatorIds: ReadonlyArray<string>
  readonly state: string | undefined
  readonly from: string | undefined
  readonly to: string | undefined
  readonly partnerId: string | undefined
  readonly limit: number
  readonly cursor: string | undefined
}

export class PayLaterCharges extends Effect.Service<PayLaterCharges>()("Partner/PayLaterCharges", {
  effect: Effect.gen(function*() {
    const repo = yield* PayLaterReadRepo
    const cursors = yield* CursorSigner

    const list = Effect.fn("PayLaterCharges.list")(function*(r: PayLaterListRequest) {
      // The cursor is bound to every filter (and the operators asked for).
      const bound = { state: r.state ?? null, from: r.from ?? null, to: r.to ?? null, partner_id: r.partnerId ?? null }
      const after = yield* cursors.decode(r.cursor, bound)
      const filter: PayLaterFilter = { operatorIds: r.operatorIds, state: r.state, from: r.from, to: r.to }
      const [rows, totals] = yield* both(repo.page(filter, after, r.limit + 1), repo.totals(filter))
      const page = rows.slice(0, r.limit)
      const last = page[page.length - 1]
      return {
        totals: totals.map((t) => ({
          state: t.state,
          currency: t.currency,
          charges: t.charges,
          amount_minor: t.amount_minor
        })),
        data: page.map(toCharge),
        next_cursor: rows.length > r.limit && last !== undefined
          ? cursors.encode({ createdMicros: last.charge_micros, id: last.id }, bound)
          : null
      }
    })

    return { list } as const
  }),
  dependencies: [PayLaterReadRepo.Default, CursorSigner.Default]
}) {}
