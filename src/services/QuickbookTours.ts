/** The tours a desk terminal can sell: its selling operator's published tours, by name. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export interface DeskTourRow {
  readonly id: string
  readonly title: string
  readonly operator_name: string
  readonly timezone: string
  readonly currency: string
  readonly duration_minutes: number | null
  readonly departure_times: Array<string>
}

export class QuickbookTours extends Effect.Service<QuickbookTours>()("QuickbookTours", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const sellable = (operatorId: string) =>
      sql<DeskTourRow>`
        SELECT t.id, t.title, o.name AS operator_name, t.timezone, t.currency, t.duration_minutes, t.departure_times
        FROM tours t JOIN operators o ON o.id = t.operator_id
        WHERE t.operator_id = ${operatorId} AND t.status = 'published'
        ORDER BY t.title, t.id`.pipe(Effect.orDie, Effect.withSpan("QuickbookTours.sellable"))
    return { sellable } as const
  })
}) {}
