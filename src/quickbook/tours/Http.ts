/**
 * GET /tours and GET /tours/{activityId}/slots: decode, ask QuickbookTours (the desk catalogue; it
 * lives in ../sales/ because it also quotes), encode. The answers are serialised directly
 * (http/json.ts: typed by the success schema, not encoded through it a second time; bench:desk).
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer } from "effect"
import { jsonBody } from "../../http/json.js"
import { QuickbookApi } from "../Api.js"
import { QuickbookTours } from "../sales/QuickbookTours.js"
import { guestTypesOf } from "../sales/rules.js"
import { CurrentTerminal } from "../security.js"
import { DeskSlots, DeskTourList } from "./Api.js"

export const QuickbookToursLive = HttpApiBuilder.group(QuickbookApi, "tours", (handlers) =>
  Effect.gen(function*() {
    const tours = yield* QuickbookTours
    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentTerminal
          const { terminal } = caller
          const rows = yield* tours.list(caller, yield* tours.deskDay("date", urlParams.date))
          return jsonBody(DeskTourList, {
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
          })
        }))
      .handle("slots", ({ path, urlParams }) =>
        Effect.gen(function*() {
          const day = yield* tours.deskDay("date", urlParams.date)
          const { date, slots, tour } = yield* tours.slots(yield* CurrentTerminal, path.activityId, day)
          return jsonBody(DeskSlots, {
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
          })
        }))
  })).pipe(Layer.provide(QuickbookTours.Default))
