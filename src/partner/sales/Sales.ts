/**
 * The sales summary of the operators a request acts for (spec §2 "Sales summary"): the rollups read
 * (SalesRepo), own sales as they are, other-channel sales converted to the requested currency at
 * each day's rate (src/rates/), or `available: false` with the reasons when the sales ledger or a
 * rate cannot give them (./rules.ts decides).
 */
import { Clock, Effect, Either } from "effect"
import { InvalidRequest } from "../../domain/errors.js"
import { DailyRates } from "../../rates/DailyRates.js"
import { SalesConfig } from "../../sales/config.js"
import type { AuthenticatedKey } from "../auth/KeyAuth.js"
import { operatorIdsFor } from "../auth/visibility.js"
import type { SalesParams, SalesSummary } from "./Api.js"
import * as rules from "./rules.js"
import { SalesRepo } from "./SalesRepo.js"

export interface SalesRequest {
  /** The operators in view, with their names. */
  readonly partners: ReadonlyArray<rules.Partner>
  readonly from: string
  readonly to: string
  readonly currency: rules.SalesCurrency
}

export class Sales extends Effect.Service<Sales>()("Partner/Sales", {
  effect: Effect.gen(function*() {
    const repo = yield* SalesRepo
    const rates = yield* DailyRates
    const config = yield* SalesConfig
    const staleAfterMs = config.ledgerStaleAfterMinutes * 60_000

    /** What the answer is made of: the rollups' rows, the ledger's gaps, the rates the rows need. */
    const read = Effect.fn("Sales.summary")(function*(r: SalesRequest) {
      const operatorIds = r.partners.map((p) => p.id)
      const range = { operatorIds, from: r.from, to: r.to }
      const [own, channelRows, accounts] = yield* Effect.all(
        [repo.ownDays(range), repo.channelDays(range), repo.coverage(operatorIds)],
        { concurrency: 3 }
      )
      const gaps = rules.ledgerGaps(accounts, r, new Date(yield* Clock.currentTimeMillis), staleAfterMs)
      const foreign = gaps.length === 0 ? rules.foreignCurrencies(channelRows, r.currency) : []
      const table = foreign.length === 0
        ? null
        : yield* rates.table({ currencies: [...foreign, r.currency], from: r.from, to: r.to })
      return { ...r, own, channelRows, accounts, gaps, table } satisfies rules.SummaryInput
    })

    /** The request of GET /sales for a key: the range checked, the operators in view. */
    const requestFor = Effect.fn("Sales.forKey")(function*(key: AuthenticatedKey, p: typeof SalesParams.Type) {
      const range = rules.checkSalesRange(p.from, p.to)
      if (Either.isLeft(range)) return yield* new InvalidRequest(range.left)
      const operatorIds = yield* operatorIdsFor(key, p.partner_id)
      return yield* read({
        partners: key.partners.filter((k) => operatorIds.includes(k.id)),
        from: p.from,
        to: p.to,
        currency: p.currency ?? "NOK"
      })
    })

    /** GET /sales for a key, as a value (the assistant's `get_sales`). */
    const forKey = (key: AuthenticatedKey, p: typeof SalesParams.Type) =>
      Effect.map(requestFor(key, p), (i): SalesSummary => rules.salesSummary(i))

    /** GET /sales for a key as the JSON text of a `SalesSummary` (the REST handler: rules.salesSummaryJson). */
    const forKeyJson = (key: AuthenticatedKey, p: typeof SalesParams.Type) =>
      Effect.map(requestFor(key, p), rules.salesSummaryJson)

    return { forKey, forKeyJson } as const
  }),
  dependencies: [SalesRepo.Default, DailyRates.Default]
}) {}
