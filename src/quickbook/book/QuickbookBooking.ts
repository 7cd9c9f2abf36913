/**
 * A recorded desk payment moved on from where it stands, one committed step at a time (Quickbook
 * spec §3, §4; the states in src/quickbook/book/QuickbookBook.ts):
 *   received  → verified at the provider and the sale claimed (QuickbookPaymentCheck);
 *   verified  → the re-checks (terminal, tour, phone, hold, live price past validUntil) and the way
 *               to book fixed (the hold, or seats): `booking`; a duplicate, or a re-check that fails,
 *               fails (QuickbookBookFailure);
 *   booking   → booked with the operator's booking system, the sale reference as external reference
 *               (calling again returns the same booking), then confirmed with the guest, language,
 *               booking code and the stored answer in one transaction with the guest's email;
 *   refunding → the money return asked again (QuickbookMoneyReturn).
 *
 * Crash points: `quickbook.book.after_claim` (verified and claimed, nothing booked),
 * `quickbook.book.after_booked` (the booking system booked, not recorded).
 */
import { SqlClient } from "@effect/sql"
import { Clock, Duration, Effect, Either, Option, Schedule } from "effect"
import { CrashPoints } from "../../lib/CrashPoints.js"
import { BookingSystemAccounts } from "../../operators/BookingSystemAccounts.js"
import { BookingSystem, type BookingSystemError } from "../../ports/BookingSystem.js"
import { QuickbookConfig } from "../config.js"
import { QuickbookTours } from "../sales/QuickbookTours.js"
import { QuickbookKeys } from "../terminals/QuickbookKeys.js"
import { QuickbookSaleMail } from "../tickets/QuickbookSaleMail.js"
import { QuickbookTickets } from "../tickets/QuickbookTickets.js"
import { keyOf, type PaymentKey, type PaymentRow, type SaleRow } from "./payment.js"
import { QuickbookBookFailure } from "./QuickbookBookFailure.js"
import { QuickbookBookRepo } from "./QuickbookBookRepo.js"
import { QuickbookMoneyReturn } from "./QuickbookMoneyReturn.js"
import { QuickbookPaymentCheck } from "./QuickbookPaymentCheck.js"
import { type BookFailureReason, failureOfRejection, liveTotal, phoneRequired } from "./rules.js"

interface Booked {
  readonly bookingId: string
  readonly bookingReference: string
}

export class QuickbookBooking extends Effect.Service<QuickbookBooking>()("Quickbook/Booking", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* QuickbookBookRepo
    const paymentCheck = yield* QuickbookPaymentCheck
    const failure = yield* QuickbookBookFailure
    const moneyReturn = yield* QuickbookMoneyReturn
    const tours = yield* QuickbookTours
    const keys = yield* QuickbookKeys
    const tickets = yield* QuickbookTickets
    const saleMail = yield* QuickbookSaleMail
    const bookingSystem = yield* BookingSystem
    const accounts = yield* BookingSystemAccounts
    const crash = yield* CrashPoints
    const config = yield* QuickbookConfig

    /** What may have changed since the quote; Right: book with this hold (null: seats). */
    const recheck = (row: PaymentRow, sale: SaleRow) =>
      Effect.gen(function*() {
        const request = row.request
        const caller = yield* keys.callerOf(sale.key_id, sale.terminal_id)
        if (Option.isNone(caller)) return Either.left<BookFailureReason>("terminal_not_registered")
        const tour = yield* tours.chargeableTour(caller.value, sale.tour_id).pipe(Effect.option)
        if (Option.isNone(tour)) return Either.left<BookFailureReason>("tour_not_sellable_here")
        if (
          phoneRequired(sale.cart_requires_phone, yield* repo.tourRequiresPhone(sale.tour_id)) &&
          request.customer.phone === null
        ) {
          return Either.left<BookFailureReason>("phone_required")
        }
        const at = new Date(yield* Clock.currentTimeMillis)
        const liveHold = sale.hold_id !== null && sale.hold_expires_at !== null && sale.hold_expires_at > at
        if (request.holdRef !== null && !liveHold) return Either.left<BookFailureReason>("hold_expired")
        if (!liveHold && sale.valid_until <= at) {
          // Past validUntil: the quoted total stands only if the live price is the same.
          const live = yield* tours.slots(caller.value, sale.tour_id, sale.start_date).pipe(Effect.either)
          if (Either.isLeft(live)) {
            return Either.left<BookFailureReason>(
              live.left._tag === "QbUnavailable" ? "provider_unavailable" : "tour_not_sellable_here"
            )
          }
          const seats = sale.guests.reduce((n, g) => n + g.count, 0)
          const slot = live.right.slots.find((s) => s.time === sale.start_time)
          if (!slot || slot.soldOut || (slot.seatsLeft !== null && slot.seatsLeft < seats)) {
            return Either.left<BookFailureReason>("sold_out")
          }
          if (liveTotal(sale.guests, slot) !== sale.total_minor) {
            return Either.left<BookFailureReason>("price_changed")
          }
        }
        return Either.right(liveHold ? sale.hold_id : null)
      })

    /**
     * The booking system answered the booking call with something that does not decode: it may
     * have booked. Returning the money now could leave a booking paid for by nobody, so this is a
     * defect (alerted, 500): the payment stays `booking`, and the recovery job (or a repeat) asks
     * again with the same external reference once its lease runs out; never refunded blind.
     */
    const bookingUnreadable = (row: PaymentRow, sale: SaleRow, e: BookingSystemError) =>
      Effect.zipRight(
        Effect.logError(
          "quickbook: the booking system's answer to a booking could not be read; the sale stays being booked"
        ).pipe(
          Effect.annotateLogs({
            alert: "quickbook_booking_answer_unreadable",
            reference: sale.reference,
            payment_id: row.payment_id,
            detail: `${e.operation}: ${e.detail}`
          })
        ),
        Effect.dieMessage(
          `quickbook: the booking system's answer to booking ${sale.reference} could not be read: ${e.detail}`
        )
      )

    /** The booking system books (or answers the booking it made before for the same reference). */
    const bookAtBookingSystem = (row: PaymentRow, sale: SaleRow) =>
      Effect.gen(function*() {
        const accountId = yield* repo.bookingAccountOfTour(sale.tour_id)
        if (accountId === null) return Either.left<BookFailureReason>("provider_refused")
        const account = yield* accounts.byId(accountId).pipe(Effect.either)
        if (Either.isLeft(account)) return Either.left<BookFailureReason>("provider_unavailable")
        const { customer } = row.request
        // A payment being booked has its facts (migration 0017's quickbook_payments_verified_has_facts).
        if (row.amount_minor === null || row.currency === null || row.paid_at === null) {
          return yield* Effect.dieMessage(`payment ${row.provider}/${row.payment_id} is being booked without its facts`)
        }
        const call: Effect.Effect<Either.Either<Booked, BookFailureReason>, BookingSystemError> = Effect.map(
          bookingSystem.book(account.right.account, {
            holdId: row.hold_id,
            seats: row.hold_id !== null ? null : {
              productId: sale.product_id,
              date: sale.start_date,
              startTimeId: sale.start_time_id,
              rateId: sale.rate_id,
              pax: sale.guests.map((g) => ({ pricingCategoryId: g.categoryId, quantity: g.count }))
            },
            guest: { name: `${customer.firstName} ${customer.lastName}`, email: customer.email, phone: customer.phone },
            externalReference: sale.reference,
            // What the guest paid at the desk: the booking reads as paid in the booking system.
            payment: {
              amountMinor: row.amount_minor,
              currency: row.currency,
              reference: row.payment_id,
              paidAt: row.paid_at
            }
          }),
          (b) => Either.right({ bookingId: b.bookingId, bookingReference: b.bookingReference })
        )
        return yield* call.pipe(
          Effect.retry({
            schedule: Schedule.spaced(Duration.millis(500)),
            times: Math.max(config.bookAttempts - 1, 0),
            while: (e) => e._tag === "BookingSystemUnavailable" && e.reason !== "bad_response"
          }),
          Effect.catchAll((e) =>
            e._tag === "BookingSystemUnavailable" && e.reason === "bad_response"
              ? bookingUnreadable(row, sale, e)
              : Effect.as(
                Effect.logWarning(
                  `quickbook: booking ${sale.reference} at the booking system: ${e._tag} ${e.reason}: ${e.detail}`
                ),
                Either.left<BookFailureReason>(
                  e._tag === "BookingSystemRejected" ? failureOfRejection(e.reason) : "provider_unavailable"
                )
              )
          )
        )
      })

    /**
     * One transaction: the payment and the sale confirmed, the answer (with the ticket) stored, the
     * guest's email enqueued. The ticket's, the mail's and the transaction's own failures are defects.
     */
    const confirm = (row: PaymentRow, sale: SaleRow, booked: Booked) =>
      sql.withTransaction(Effect.gen(function*() {
        const key = keyOf(row)
        if (!(yield* repo.confirmPayment(key))) return
        yield* repo.confirmSale({
          reference: sale.reference,
          paymentId: row.payment_id,
          request: row.request,
          bookingId: booked.bookingId,
          bookingCode: booked.bookingReference
        })
        const ticket = yield* tickets.ticketFor(sale.reference, row.request.language)
        yield* repo.storeAnswer({ key, answer: { status: "confirmed", ticket } })
        yield* saleMail.enqueueConfirmed(sale.reference)
      })).pipe(Effect.orDie)

    /** Moves a verified payment on until it is final or waits for a refund answer (one money-returning attempt per run). */
    const drive = (key: PaymentKey): Effect.Effect<void> =>
      Effect.gen(function*() {
        for (let step = 0; step < 4; step++) {
          const row = yield* repo.mustLoad(key)
          switch (row.state) {
            case "verified": {
              if (row.role === "duplicate") return yield* failure.fail(row, "duplicate_payment")
              const sale = yield* repo.sale(row.sale_reference)
              const checked = yield* recheck(row, sale)
              if (Either.isLeft(checked)) return yield* failure.fail(row, checked.left)
              yield* repo.startBooking({ key, holdId: checked.right })
              break
            }
            case "booking": {
              const sale = yield* repo.sale(row.sale_reference)
              const booked = yield* bookAtBookingSystem(row, sale)
              if (Either.isLeft(booked)) return yield* failure.fail(row, booked.left)
              yield* crash.reached("quickbook.book.after_booked")
              return yield* confirm(row, sale, booked.right)
            }
            case "refunding":
              yield* moneyReturn.returnMoney(key)
              return
            default:
              return
          }
        }
      })

    /**
     * The whole work for a recorded payment from where it stands: a received one is verified and
     * claims its sale (a refusal is the request's error answer), then it is booked or failed.
     */
    const advance = Effect.fn("QuickbookBooking.advance")(function*(key: PaymentKey) {
      const row = yield* repo.mustLoad(key)
      if (row.state === "received") {
        yield* paymentCheck.verifyAndClaim(row)
        yield* crash.reached("quickbook.book.after_claim")
      }
      yield* drive(key)
    })

    return { advance } as const
  }),
  dependencies: [
    QuickbookBookRepo.Default,
    QuickbookPaymentCheck.Default,
    QuickbookBookFailure.Default,
    QuickbookMoneyReturn.Default,
    QuickbookTours.Default,
    QuickbookKeys.Default,
    QuickbookTickets.Default,
    QuickbookSaleMail.Default,
    BookingSystemAccounts.Default,
    CrashPoints.Default
  ]
}) {}
