/**
 * Seat holds for Quickbook sales (spec quickbook-api-v1 §3, POST/DELETE /reserve; decisions in
 * docs/decisions.md "Quickbook holds"). A hold belongs to the sale (`holdRef` = the sale reference):
 * - reserve checks the departure again (seats; a guest type without a price → price_changed; the
 *   quoted prices stand while the quote is valid), holds the seats through the BookingSystem port for
 *   `HOLD_SECONDS` and stores hold id, expiry and idempotency key on the row; the quote's
 *   `valid_until` is extended to the hold's expiry (never shortened).
 * - a held sale answers its hold again, whatever the idempotency key (one hold per sale).
 * - a quote past its validity, or a hold that lapsed, answers 410 hold_expired.
 * - the port call runs with the row locked (one hold per sale even with concurrent calls) and within
 *   a deadline; when the booking system does not answer nothing is recorded (503): the hold, if it was
 *   made, lapses by itself at the booking system within HOLD_SECONDS, and a retry with the same
 *   idempotencyKey gets that same hold back (the port's idempotency key is reference + key).
 * - release is idempotent: a sale not held (released before, never held, lapsed) answers released.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Duration, Effect, Option } from "effect"
import { TourAvailabilityConfig } from "../../catalogue/config.js"
import { BookingSystemAccounts } from "../../operators/BookingSystemAccounts.js"
import { BookingSystem, type BookingSystemError } from "../../ports/BookingSystem.js"
import { QbConflict, QbForbidden, QbGone, QbNotFound, QbUnavailable, QbUnprocessable } from "../errors.js"
import type { QuickbookCaller } from "../terminals/QuickbookKeys.js"
import { otherModeSale } from "../terminals/testKeys.js"
import { type HeldSale, QuickbookHoldsRepo } from "./QuickbookHoldsRepo.js"
import { QuickbookTours } from "./QuickbookTours.js"

/** How long a desk hold keeps its seats. */
export const HOLD_SECONDS = 10 * 60

export class QuickbookHolds extends Effect.Service<QuickbookHolds>()("Quickbook/Holds", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* QuickbookHoldsRepo
    const tours = yield* QuickbookTours
    const accounts = yield* BookingSystemAccounts
    const bookingSystem = yield* BookingSystem
    const config = yield* TourAvailabilityConfig

    const unavailable = (reference: string, detail: string) =>
      new QbUnavailable({ code: "provider_unavailable", detail, reference })

    /** A port call within the deadline; a booking system that does not answer is 503. */
    const withinDeadline = <A>(reference: string, call: Effect.Effect<A, BookingSystemError>) =>
      call.pipe(
        // Interruptible inside the request, which runs uninterruptibly (src/http/apiApp.ts), so the
        // deadline can cut a booking system that hangs.
        Effect.interruptible,
        Effect.timeoutFail({
          duration: Duration.millis(config.availabilityTimeoutMs),
          onTimeout: () => unavailable(reference, "booking system did not answer in time")
        }),
        Effect.catchTag("BookingSystemUnavailable", (e) =>
          Effect.fail(unavailable(reference, `${e.reason}: ${e.detail}`)))
      )

    const accountOf = (reference: string, accountId: string) =>
      Effect.catchAll(
        Effect.map(accounts.byId(accountId), (a) => a.account),
        (e) => Effect.fail(unavailable(reference, e.message))
      )

    /** The caller's terminal's sale (404 otherwise), when it was quoted with a key of the caller's mode (403 otherwise). */
    const saleFor = (caller: QuickbookCaller, reference: string) =>
      Effect.flatMap(
        repo.lockSale({ reference, terminalId: caller.terminal.id }),
        (found): Effect.Effect<HeldSale, QbNotFound | QbForbidden> => {
          if (Option.isNone(found)) {
            return Effect.fail(new QbNotFound({ code: "not_found", detail: `no sale ${reference}` }))
          }
          const row = found.value
          const refused = otherModeSale(caller.key.mode, { reference: row.reference, keyMode: row.key_mode })
          return refused ? Effect.fail(refused) : Effect.succeed(row)
        }
      )

    const answer = (row: HeldSale, expiresAt: Date) => ({
      holdRef: row.reference,
      expiresAt: expiresAt.toISOString(),
      cartLine: row.cart_line
    })

    const reserve = Effect.fn("QuickbookHolds.reserve")(
      function*(caller: QuickbookCaller, body: { readonly reference: string; readonly idempotencyKey: string }) {
        const ref = body.reference
        const sale = yield* saleFor(caller, ref)
        const now = new Date(yield* Clock.currentTimeMillis)
        const gone = (detail: string) => new QbGone({ code: "hold_expired", detail, reference: ref })
        if (sale.status === "held") {
          // One hold per sale: a retry (same key) or another key gets the sale's hold.
          if (sale.hold_expires_at! > now) return answer(sale, sale.hold_expires_at!)
          return yield* gone(`hold ${sale.hold_id} lapsed at ${sale.hold_expires_at!.toISOString()}`)
        }
        if (sale.status !== "quoted") return yield* gone(`sale is ${sale.status}`)
        if (sale.valid_until <= now) return yield* gone(`quote ran out at ${sale.valid_until.toISOString()}`)
        const { tour } = yield* Effect.mapError(
          tours.chargeableTour(caller, sale.tour_id),
          (e) => new QbForbidden({ code: e.code, detail: e.detail, reference: ref })
        )
        const slots = yield* tours.slotsFor(tour, sale.start_date)
        const seats = sale.guests.reduce((n, g) => n + g.count, 0)
        const slot = slots.find((s) => s.time === sale.start_time)
        if (!slot || slot.soldOut || (slot.seatsLeft !== null && slot.seatsLeft < seats)) {
          return yield* new QbConflict({
            code: "sold_out",
            detail: `${slot?.seatsLeft ?? "no"} seats for ${seats}`,
            reference: ref
          })
        }
        for (const g of sale.guests) {
          if (!slot.guests.some((p) => p.type === g.type)) {
            return yield* new QbConflict({
              code: "price_changed",
              detail: `no price for ${g.type} now`,
              reference: ref
            })
          }
        }
        const account = yield* accountOf(ref, tour.account_id)
        const hold = yield* withinDeadline(
          ref,
          bookingSystem.hold(account, {
            productId: sale.product_id,
            date: sale.start_date,
            startTimeId: sale.start_time_id,
            rateId: sale.rate_id,
            pax: sale.guests.map((g) => ({ pricingCategoryId: g.categoryId, quantity: g.count })),
            idempotencyKey: `${ref}:${body.idempotencyKey}`,
            holdSeconds: HOLD_SECONDS
          })
        ).pipe(
          Effect.catchTag("BookingSystemRejected", (e): Effect.Effect<never, QbConflict | QbGone | QbUnprocessable> => {
            switch (e.reason) {
              case "hold_not_supported":
                return Effect.fail(
                  new QbUnprocessable({ code: "hold_not_supported", detail: e.detail, reference: ref })
                )
              case "hold_expired":
                return Effect.fail(gone(e.detail))
              case "no_seats":
                return Effect.fail(new QbConflict({ code: "sold_out", detail: e.detail, reference: ref }))
              case "price_changed":
                return Effect.fail(new QbConflict({ code: "price_changed", detail: e.detail, reference: ref }))
              default:
                return Effect.fail(
                  new QbConflict({ code: "provider_refused", detail: `${e.reason}: ${e.detail}`, reference: ref })
                )
            }
          })
        )
        yield* repo.markHeld({
          reference: ref,
          holdId: hold.holdId,
          expiresAt: hold.expiresAt,
          idempotencyKey: body.idempotencyKey
        })
        return answer(sale, hold.expiresAt)
      },
      sql.withTransaction,
      Effect.catchTag("SqlError", Effect.die)
    )

    const release = Effect.fn("QuickbookHolds.release")(
      function*(caller: QuickbookCaller, holdRef: string) {
        const sale = yield* saleFor(caller, holdRef)
        if (sale.status === "held") {
          // Released even when the tour is no longer sold here, but only at an account the key may use
          // (test keys: sandboxes only); otherwise the hold lapses by itself at the booking system.
          const accountId = yield* tours.holdAccountOf(caller, sale.tour_id)
          if (Option.isSome(accountId)) {
            const account = yield* accountOf(holdRef, accountId.value)
            // A hold the booking system no longer knows (lapsed, released) is released.
            yield* withinDeadline(holdRef, bookingSystem.releaseHold(account, sale.hold_id!)).pipe(
              Effect.catchTag("BookingSystemRejected", (e) => Effect.logInfo("hold already gone", e.detail))
            )
          } else {
            yield* Effect.logWarning(
              `hold ${sale.hold_id} of ${holdRef} not released: the key may not use the tour's booking system`
            )
          }
          yield* repo.markReleased(holdRef)
        } else if (sale.status !== "quoted" && sale.status !== "expired") {
          return yield* new QbNotFound({ code: "not_found", detail: `sale is ${sale.status}`, reference: holdRef })
        }
        return { holdRef, released: true as const }
      },
      sql.withTransaction,
      Effect.catchTag("SqlError", Effect.die)
    )

    return { reserve, release } as const
  }),
  dependencies: [BookingSystemAccounts.Default, QuickbookTours.Default, QuickbookHoldsRepo.Default]
}) {}
