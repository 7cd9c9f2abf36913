/**
 * The chargebacks of the operators a request acts for (spec §2 "Finance records"): matched to a
 * booking of their tours, newest first, as the API shows them. Reads only. SQL: ChargebacksRepo.
 */
import { Effect } from "effect"
import type { CursorPosition } from "../../../http/cursor.js"
import type { Chargeback } from "./Api.js"
import { type ChargebackListRequest, ChargebacksRepo } from "./ChargebacksRepo.js"
import { toChargeback } from "./rules.js"

export interface ChargebackListPage {
  readonly rows: ReadonlyArray<Chargeback>
  readonly next: CursorPosition | undefined
}

export class Chargebacks extends Effect.Service<Chargebacks>()("Partner/Chargebacks", {
  effect: Effect.gen(function*() {
    const repo = yield* ChargebacksRepo

    const list = Effect.fn("Chargebacks.list")(function*(r: ChargebackListRequest & { readonly limit: number }) {
      const rows = yield* repo.list(r, r.limit + 1)
      const page = rows.slice(0, r.limit)
      const last = page[page.length - 1]
      return {
        rows: page.map(toChargeback),
        next: rows.length > r.limit && last ? { createdMicros: last.seen_micros, id: last.id } : undefined
      } satisfies ChargebackListPage
    })

    return { list } as const
  }),
  dependencies: [ChargebacksRepo.Default]
}) {}
