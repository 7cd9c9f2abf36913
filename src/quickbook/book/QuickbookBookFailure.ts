/**
 * A desk payment verified but not booked (Quickbook spec §2 "Book failure", §4 rule 5): the failure
 * and the first money return's reference are recorded together, the sale fails (a duplicate leaves
 * it alone) and its guest is told the money is on its way back (src/quickbook/tickets/QuickbookSaleMail.ts),
 * the sale's hold is released, then the money goes back (QuickbookMoneyReturn).
 *
 * Crash point `quickbook.book.after_failed`: failure and refund reference recorded, refund not sent.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect } from "effect"
import { CrashPoints } from "../../lib/CrashPoints.js"
import { BookingSystemAccounts } from "../../operators/BookingSystemAccounts.js"
import { BookingSystem } from "../../ports/BookingSystem.js"
import { canVoid } from "../../ports/PaymentProvider.js"
import type { BookFailedVariant } from "../clerkMessages.js"
import { QuickbookSaleMail } from "../tickets/QuickbookSaleMail.js"
import { keyOf, type PaymentRow, type StoredAnswer } from "./payment.js"
import { QuickbookBookRepo } from "./QuickbookBookRepo.js"
import { QuickbookMoneyReturn } from "./QuickbookMoneyReturn.js"
import { type BookFailureReason, refundReference } from "./rules.js"

export class QuickbookBookFailure extends Effect.Service<QuickbookBookFailure>()("Quickbook/BookFailure", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* QuickbookBookRepo
    const moneyReturn = yield* QuickbookMoneyReturn
    const saleMail = yield* QuickbookSaleMail
    const bookingSystem = yield* BookingSystem
    const accounts = yield* BookingSystemAccounts
    const crash = yield* CrashPoints

    /** Best effort: a hold not released lapses by itself. */
    const releaseHoldOf = (reference: string) =>
      Effect.gen(function*() {
        const sale = yield* repo.sale(reference)
        if (sale.hold_id === null) return
        const accountId = yield* repo.bookingAccountOfTour(sale.tour_id)
        if (accountId === null) return
        const account = yield* Effect.orDie(accounts.byId(accountId))
        yield* bookingSystem.releaseHold(account.account, sale.hold_id)
        yield* repo.holdReleased(reference)
      }).pipe(
        Effect.catchAll((e) => Effect.logInfo(`quickbook: hold of ${reference} not released (it lapses by itself)`, e))
      )

    /**
     * The failure and the refund's reference, together (the sale fails unless this is a duplicate);
     * then the money goes back. A hold the sale still has is released (best effort: it lapses anyway).
     */
    const fail = Effect.fn("QuickbookBookFailure.fail")(function*(row: PaymentRow, reason: BookFailureReason) {
      const key = keyOf(row)
      const paidAt = row.paid_at ??
        (yield* Effect.dieMessage(`payment ${key.provider}/${key.paymentId} failed without its facts`))
      const method = canVoid(paidAt, new Date(yield* Clock.currentTimeMillis)) ? "void" : "refund"
      const ownSale = row.role === "sale"
      // A second payment for a sale that failed: the clerk is told to make a new quote (not that the sale stands).
      const variant: BookFailedVariant | undefined =
        !ownSale && (yield* repo.saleStatus(row.sale_reference)) === "failed"
          ? "sale_failed"
          : undefined
      const answer: StoredAnswer = { status: "failed", reason, ...(variant !== undefined ? { variant } : {}) }
      // The guest's email and the sale's move commit together; the mail's and the transaction's own SqlErrors are defects.
      const changed = yield* sql.withTransaction(Effect.gen(function*() {
        const started = yield* repo.startReturn({
          key,
          reason,
          answer,
          method,
          reference: refundReference(row.provider, row.payment_id, 1)
        })
        if (!started) return false
        if (ownSale) {
          yield* repo.failSale({
            reference: row.sale_reference,
            paymentId: row.payment_id,
            reason,
            request: row.request
          })
          // The guest is told the money is on its way back (a void or refund is sent right after).
          yield* saleMail.enqueueFailed(row.sale_reference, { moneyReturned: false })
        }
        return true
      })).pipe(Effect.orDie)
      if (changed && ownSale) yield* releaseHoldOf(row.sale_reference)
      yield* crash.reached("quickbook.book.after_failed")
      yield* moneyReturn.returnMoney(key)
    })

    return { fail } as const
  }),
  dependencies: [
    QuickbookBookRepo.Default,
    QuickbookMoneyReturn.Default,
    QuickbookSaleMail.Default,
    BookingSystemAccounts.Default,
    CrashPoints.Default
  ]
}) {}
