/**
 * What both reschedule calls read before they decide (the options of a day, the move): the booking
 * of the key's operators, its booking-system account, and its live line in the booking system (the
 * truth about its party, rate, start time and price), with why there is none.
 */
import { Clock, Effect, Either } from "effect"
import { notYours } from "../../domain/errors.js"
import { BookingSystemAccounts } from "../../operators/BookingSystemAccounts.js"
import { BookingSystem, type BookingSystemAccount } from "../../ports/BookingSystem.js"
import { BookingChangesRepo } from "../bookingChanges/BookingChangesRepo.js"
import { noAnswer } from "../bookingChanges/rules.js"
import { type RescheduleBooking, ReschedulesRepo } from "./ReschedulesRepo.js"
import { lineOf, NOT_RESCHEDULABLE } from "./rules.js"

const isLinked = (b: RescheduleBooking) =>
  b.provider_reference !== null && b.product_id !== null && b.account_id !== null

/** The booking as checkReschedulable (./rules.ts) reads it; a cancel that is done counts as cancelled. */
export const facts = (b: RescheduleBooking) => ({
  status: b.cancel_done ? "CANCELLED" : b.status,
  experienceDate: b.experience_date,
  startTime: b.start_time,
  timezone: b.timezone,
  linked: isLinked(b),
  paymentStrategy: b.payment_strategy,
  payLaterChargeAt: b.pay_later_charge_at,
  payLaterPaidAt: b.pay_later_paid_at
})

export class RescheduleReads extends Effect.Service<RescheduleReads>()("Partner/RescheduleReads", {
  effect: Effect.gen(function*() {
    const bookingSystem = yield* BookingSystem
    const accounts = yield* BookingSystemAccounts
    const repo = yield* ReschedulesRepo
    const changes = yield* BookingChangesRepo

    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    /** A booking of these operators; 404 otherwise. */
    const loadBooking = (id: string, operatorIds: ReadonlyArray<string>) =>
      Effect.flatMap(repo.findBooking(id, operatorIds), Effect.orElseFail(() => notYours("booking")))

    const accountOf = (accountId: string) => Effect.map(Effect.orDie(accounts.byId(accountId)), (a) => a.account)

    /**
     * The booking's line in the booking system; Left: why it cannot be used (not linked any more);
     * a booking system that does not answer is the 503 of a booking change.
     */
    const readLine = (account: BookingSystemAccount, reference: string, productId: string) =>
      bookingSystem.booking(account, reference).pipe(
        Effect.map((lines) =>
          Either.fromNullable(
            lineOf(lines, productId),
            () => "the booking system has no live line of this tour in the booking"
          )
        ),
        Effect.catchTag(
          "BookingSystemRejected",
          (e) => Effect.succeed(Either.left(`the booking system refused to show the booking (${e.reason})`))
        ),
        Effect.catchTag("BookingSystemUnavailable", () => Effect.fail(noAnswer("reading the booking")))
      )

    /**
     * Why the booking system has no live line of the booking: a cancel of it has begun (claimed,
     * seats released, or done) since this request read the booking (it released the line in the
     * booking system), else what the booking system said. So a request that a cancel overtook
     * answers what the booking is, not what the booking system showed of the cancel's work.
     */
    const noLine = (bookingId: string, said: string) =>
      Effect.map(changes.cancelBegun(bookingId), (begun) => (begun ? NOT_RESCHEDULABLE.cancelled : said))

    return { now, loadBooking, accountOf, readLine, noLine } as const
  }),
  dependencies: [BookingSystemAccounts.Default, ReschedulesRepo.Default, BookingChangesRepo.Default]
}) {}
