/**
 * The payouts of the operators a request acts for (spec §2 "Finance records"): the payouts of
 * every payout account (merchant) they are paid through, newest settlement day first, each with its
 * adjustments and the operators of its account. SQL: PayoutsRepo.
 */
import { Effect } from "effect"
import type { CursorPosition } from "../../../http/cursor.js"
import { both } from "../../../lib/both.js"
import type { Payout } from "./Api.js"
import { type PayoutListRequest, PayoutsRepo } from "./PayoutsRepo.js"
import { type AdjustmentRow, type MerchantPartnerRow, toPayout } from "./rules.js"

export interface PayoutListPage {
  readonly rows: ReadonlyArray<Payout>
  readonly next: CursorPosition | undefined
}

const groupBy = <A>(rows: ReadonlyArray<A>, key: (a: A) => string) => {
  const map = new Map<string, Array<A>>()
  for (const row of rows) {
    const k = key(row)
    const list = map.get(k)
    if (list) list.push(row)
    else map.set(k, [row])
  }
  return map
}

export class Payouts extends Effect.Service<Payouts>()("Partner/Payouts", {
  effect: Effect.gen(function*() {
    const repo = yield* PayoutsRepo

    const list = Effect.fn("Payouts.list")(function*(r: PayoutListRequest & { readonly limit: number }) {
      const rows = yield* repo.list(r, r.limit + 1)
      const page = rows.slice(0, r.limit)
      if (page.length === 0) return { rows: [], next: undefined } satisfies PayoutListPage
      const [adjustments, partners] = yield* both(
        repo.adjustments(page.map((p) => p.id)),
        repo.partners([...new Set(page.map((p) => p.merchant_id))])
      )
      const byPayout = groupBy<AdjustmentRow>(adjustments, (a) => a.payout_row_id)
      const byMerchant = groupBy<MerchantPartnerRow>(partners, (p) => p.merchant_id)
      const last = page[page.length - 1]!
      return {
        rows: page.map((p) => toPayout(p, byPayout.get(p.id) ?? [], byMerchant.get(p.merchant_id) ?? [])),
        next: rows.length > r.limit ? { createdMicros: last.sort_micros, id: last.id } : undefined
      } satisfies PayoutListPage
    })

    return { list } as const
  }),
  dependencies: [PayoutsRepo.Default]
}) {}
