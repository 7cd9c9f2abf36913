/** GET /tours: decode, read the terminal's sellable tours, encode. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { QuickbookTours } from "../../services/QuickbookTours.js"
import { QuickbookApi } from "./Api.js"
import { CurrentTerminal } from "./security.js"

export const QuickbookToursLive = HttpApiBuilder.group(QuickbookApi, "tours", (handlers) =>
  Effect.gen(function*() {
    const tours = yield* QuickbookTours
    return handlers.handle("list", () =>
      Effect.gen(function*() {
        const { terminal } = yield* CurrentTerminal
        const rows = yield* tours.sellable(terminal.operatorId)
        return {
          terminal: { id: terminal.id, name: terminal.name, operatorName: terminal.operatorName },
          tours: rows.map((r) => ({
            activityId: r.id,
            operatorName: r.operator_name,
            tourName: r.title,
            timeZone: r.timezone,
            currency: r.currency,
            durationMinutes: r.duration_minutes,
            departureTimes: r.departure_times
          }))
        }
      }))
  }))
