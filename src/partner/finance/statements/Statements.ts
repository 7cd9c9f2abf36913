/**
 * The monthly commission statements of the operators a request acts for (spec §2 Statement): more
 * than STATEMENTS_MAX_OPERATORS in view answers `too_many` without reading; else the month's
 * sections, numbers and first entries (StatementsRepo), shaped by ./rules.ts.
 */
import { Effect } from "effect"
import { both } from "../../../lib/both.js"
import type { StatementsResponse } from "./Api.js"
import * as rules from "./rules.js"
import { StatementsRepo } from "./StatementsRepo.js"

export interface StatementsRequest {
  /** The operators in view, with their names. */
  readonly partners: ReadonlyArray<rules.Partner>
  readonly period: rules.MonthPeriod
}

export class Statements extends Effect.Service<Statements>()("Partner/Statements", {
  effect: Effect.gen(function*() {
    const repo = yield* StatementsRepo

    const month = Effect.fn("Statements.month")(function*(r: StatementsRequest) {
      const head = {
        month: r.period.month,
        period_start: r.period.start.toISOString(),
        period_end: r.period.end.toISOString()
      }
      if (rules.tooMany(r.partners.length)) {
        return { ...head, too_many: true, statements: [] } satisfies StatementsResponse
      }
      const range = { operatorIds: r.partners.map((p) => p.id), start: r.period.start, end: r.period.end }
      const [sections, numbers] = yield* both(repo.sections(range), repo.numbers(range))
      const entries = sections.length === 0 ? [] : yield* repo.entries({
        ...range,
        operatorIds: sections.map((s) => s.operator_id),
        currencies: sections.map((s) => s.currency),
        limit: rules.STATEMENT_MAX_ENTRIES
      })
      const statements = rules.statements({
        partners: r.partners,
        numbers: new Map(numbers.map((n) => [n.operator_id, n.number])),
        sections,
        entries
      })
      return { ...head, too_many: false, statements } satisfies StatementsResponse
    })

    return { month } as const
  }),
  dependencies: [StatementsRepo.Default]
}) {}
