/** GET /tours, GET /tours/{activityId}/slots and POST /quote: decode, ask QuickbookTours, encode. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { guestTypesOf } from "./rules.js"
import { QuickbookHolds } from "./QuickbookHolds.js"
import { QuickbookTours } from "./QuickbookTours.js"
import { QuickbookApi } from "../Api.js"
import { CurrentTerminal } from "../security.js"

export const QuickbookToursLive = HttpApiBuilder.group(QuickbookApi, "tours", (handlers) =>
  Effect.gen(function*() {
    const tours = yield* QuickbookTours
    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentTerminal
          const { terminal } = caller
          const rows = yield* tours.list(caller, yield* tours.deskDay("date", urlParams.date))
          return {
            terminal: { id: terminal.id, name: terminal.name, operatorName: terminal.operatorName },
            tours: rows.map(({ available, date, tour: r }) => ({
              activityId: r.id,
              operatorName: r.operator_name,
              tourName: r.title,
              timeZone: r.timezone,
              currency: r.currency,
              durationMinutes: r.duration_minutes,
              departureTimes: r.departure_times,
              guestTypes: guestTypesOf(r.categories).map(({ categoryId: _, ...g }) => g),
              date,
              available
            }))
          }
        }))
      .handle("slots", ({ path, urlParams }) =>
        Effect.gen(function*() {
          const day = yield* tours.deskDay("date", urlParams.date)
          const { date, slots, tour } = yield* tours.slots(yield* CurrentTerminal, path.activityId, day)
          return {
            activityId: tour.id,
            date,
            timeZone: tour.timezone,
            currency: tour.currency,
            slots: slots.map((s) => ({ time: s.time, seatsLeft: s.seatsLeft, soldOut: s.soldOut, guests: s.guests }))
          }
        }))
  }))

export const QuickbookSalesLive = HttpApiBuilder.group(QuickbookApi, "sales", (handlers) =>
  Effect.gen(function*() {
    const tours = yield* QuickbookTours
    const holds = yield* QuickbookHolds
    return handlers
      .handle("quote", ({ payload }) => Effect.flatMap(CurrentTerminal, (caller) => tours.quote(caller, payload)))
      .handle("reserve", ({ payload }) => Effect.flatMap(CurrentTerminal, (caller) => holds.reserve(caller, payload)))
      .handle("release", ({ path }) => Effect.flatMap(CurrentTerminal, (caller) => holds.release(caller, path.holdRef)))
  }))
