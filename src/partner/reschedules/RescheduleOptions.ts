/**
 * The reschedule options of one day (spec §2 "Reschedule options", GET
 * /bookings/{id}/reschedule-options): the booking's line and ONE day of availability read from the
 * booking system, the day's departures judged by ./rules.ts `dayOptions`. A read: nothing is held.
 */
import { Effect, Either } from "effect"
import { BookingSystem } from "../../ports/BookingSystem.js"
import { noAnswer } from "../bookingChanges/rules.js"
import { facts, RescheduleReads } from "./RescheduleReads.js"
import { checkReschedulable, dayOptions, type RescheduleOption } from "./rules.js"

export interface RescheduleOptionsBody {
  readonly id: string
  readonly date: string
  readonly current_date: string | null
  readonly reschedulable: boolean
  readonly available: boolean
  readonly price_differs: boolean
  readonly detail: string | null
  readonly options: ReadonlyArray<RescheduleOption>
}

export class RescheduleOptions extends Effect.Service<RescheduleOptions>()("Partner/RescheduleOptions", {
  effect: Effect.gen(function*() {
    const bookingSystem = yield* BookingSystem
    const { accountOf, loadBooking, noLine, now, readLine } = yield* RescheduleReads

    const options = Effect.fn("RescheduleOptions.options")(
      function*(id: string, date: string, operatorIds: ReadonlyArray<string>) {
        const b = yield* loadBooking(id, operatorIds)
        const base = { id: b.id, date, current_date: b.experience_date }
        const no = (detail: string, reschedulable: boolean): RescheduleOptionsBody => ({
          ...base,
          reschedulable,
          available: false,
          price_differs: false,
          detail,
          options: []
        })
        const at = yield* now
        const eligible = checkReschedulable(facts(b), at)
        if (Either.isLeft(eligible)) return no(eligible.left, false)
        const account = yield* accountOf(b.account_id!)
        const line = yield* readLine(account, b.provider_reference!, b.product_id!)
        if (Either.isLeft(line)) return no(yield* noLine(b.id, line.left), false)
        const departures = yield* bookingSystem.availability(account, {
          productId: b.product_id!,
          from: date,
          to: date
        }).pipe(
          Effect.catchTag("BookingSystemUnavailable", () => Effect.fail(noAnswer("reading availability"))),
          Effect.catchTag("BookingSystemRejected", (e) => Effect.dieMessage(`availability refused: ${e.detail}`))
        )
        const day = dayOptions(line.right, date, departures, b.timezone, at)
        return { ...base, reschedulable: true, ...day } satisfies RescheduleOptionsBody
      }
    )

    return { options } as const
  }),
  dependencies: [RescheduleReads.Default]
}) {}
