/**
 * GET /tours and GET /tours/{activityId}/slots: decode, ask QuickbookTours (the desk catalogue; it
 * lives in ../sales/ because it also quotes), encode.
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer } from "effect"
import { QuickbookApi } from "../Api.js"
import { QuickbookTours } from "../sales/QuickbookTours.js"
import { guestTypesOf } from "../sales/rules.js"
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
            slots: slots.map((s) => ({
              time: s.time,
              seatsLeft: s.seatsLeft,
              soldOut: s.soldOut,
              guests: s.guests,
              bookingPriceMinor: s.bookingPriceMinor
            }))
          }
        }))
  })).pipe(Layer.provide(QuickbookTours.Default))
