/**
 * The sales summary of the operators a request acts for (spec §2 "Sales summary"): the rollups read
 * (SalesRepo), own sales as they are, other-channel sales converted to the requested currency at
 * each day's rate (src/rates/), or `available: false` with the reasons when the sales ledger or a
 * rate cannot give them (./rules.ts decides).
 */
import { Clock, Effect, Either } from "effect"
import { SalesConfig } from "../../config.js"
import { DailyRates } from "../../rates/DailyRates.js"
import { convertMinor } from "../../rates/rules.js"
import type { SalesSummary } from "./Api.js"
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

    const summary = Effect.fn("Sales.summary")(function*(r: SalesRequest) {
      const operatorIds = r.partners.map((p) => p.id)
      const byId = new Map(r.partners.map((p) => [p.id, p]))
      const partnerOf = (id: string): rules.Partner => byId.get(id) ?? { id, name: id }
      const range = { operatorIds, from: r.from, to: r.to }
      const [own, channelRows, accounts] = yield* Effect.all(
        [repo.ownDays(range), repo.channelDays(range), repo.coverage(operatorIds)],
        { concurrency: 3 }
      )
      const now = new Date(yield* Clock.currentTimeMillis)

      let unavailable: ReadonlyArray<rules.Gap> = rules.ledgerGaps(accounts, r, now, staleAfterMs)
      let figures = rules.NO_FIGURES
      if (unavailable.length === 0) {
        const foreign = [...new Set(channelRows.map((c) => c.currency))].filter((c) => c !== r.currency)
        const table = foreign.length === 0
          ? null
          : yield* rates.table({ currencies: [...foreign, r.currency], from: r.from, to: r.to })
        const converted = rules.otherChannelFigures(
          channelRows,
          (amount, currency, day) =>
            currency === r.currency ? amount : table && convertMinor(table, amount, currency, r.currency, day)
        )
        if (Either.isRight(converted)) figures = converted.right
        else {
          const first = converted.left.slice(0, 3).map((m) => `${m.currency} on ${m.day}`).join(", ")
          unavailable = [{
            operatorIds: accounts.flatMap((a) => a.operator_ids),
            reason: "rate_missing",
            detail: `no exchange rate to ${r.currency} for ${first}${converted.left.length > 3 ? " and more" : ""}`
          }]
        }
      }

      const covered = [...new Set(accounts.flatMap((a) => a.operator_ids))].map(partnerOf)
      const untilTimes = accounts.map((a) => a.covered_until?.getTime() ?? null)
      const asOf = untilTimes.length === 0 || untilTimes.includes(null)
        ? null
        : new Date(Math.min(...(untilTimes as Array<number>))).toISOString()
      return {
        from: r.from,
        to: r.to,
        panion: rules.ownSales(own, partnerOf),
        other_channels: {
          currency: r.currency,
          partners: covered.sort((a, b) => a.name.localeCompare(b.name)),
          available: unavailable.length === 0,
          as_of: asOf,
          ...(unavailable.length === 0 ? figures : rules.NO_FIGURES),
          unavailable: unavailable.map((g) => ({
            partners: g.operatorIds.map(partnerOf),
            reason: g.reason,
            detail: g.detail
          }))
        }
      } satisfies SalesSummary
    })

    return { summary } as const
  }),
  dependencies: [SalesRepo.Default, DailyRates.Default]
}) {}
