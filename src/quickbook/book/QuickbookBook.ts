/**
 * POST /book: a desk sale booked after its payment (Quickbook spec §2 "Book failure", §3, §4;
 * docs/decisions.md "Quickbook: book after payment"; rules in src/quickbook/book/rules.ts). This
 * service takes the request in and answers it; the steps live beside it:
 *
 * The payment is recorded first (`quickbook_payments`, keyed by provider + paymentId, with a
 * lease; all SQL in QuickbookBookRepo.ts), then moved on one committed step at a time, so that a
 * crash at any point is finished once (QuickbookBooking.advance):
 *   received  → the order is read at the provider and checked (QuickbookPaymentCheck; not found: the
 *               row is removed and 422 answered, so a later call verifies again; no answer: removed,
 *               503; an answer that does not decode: removed, alerted, 500; a mismatch, also a
 *               payment found on another merchant of ours: `mismatch`, alerted once, 409, nothing
 *               booked or refunded);
 *   mismatch  → sent again for another sale, checked against it: one it pays moves there
 *               (verified) and books; the recovery job returns a mismatch no sale will use
 *               (QuickbookBookRecovery: refunding → refunded, role `stray`);
 *   verified  → verified and the sale claimed in one transaction (`paid_by_payment_id` set only when
 *               empty); a second payment of a claimed sale is a `duplicate`;
 *   booking   → the re-checks passed (terminal, tour, phone, hold, live price past validUntil) and the
 *               way to book fixed (the hold, or seats); the booking system is called with the sale
 *               reference as external reference, so calling again returns the same booking
 *               (QuickbookBooking);
 *   confirmed → the sale confirmed with the guest, language and booking code, and the answer stored,
 *               in one transaction;
 *   refunding → a failure (or a duplicate): the sale failed (a duplicate leaves it alone), the
 *               answer and the refund's idempotency reference recorded together (QuickbookBookFailure),
 *               then the money returned (QuickbookMoneyReturn) → refunded.
 * A sale that needs the guest's phone is refused (422 phone_required) before any of this when the
 * call has none: nothing is recorded, the same payment books once the phone is sent.
 * Each request's work runs detached from the connection: a client that hangs up does not stop it.
 * A repeat of a payment answers the stored result, waits for one still running, or takes over one
 * whose lease ran out. The quickbook-recovery job (QuickbookBookRecovery.recover) does the same for
 * every row whose lease ran out, and asks again about refunds not yet confirmed.
 *
 * Crash points (CRASH_AT, src/lib/CrashPoints.ts): `quickbook.book.after_claim` (verified and
 * claimed, nothing booked), `quickbook.book.after_booked` (the booking system booked, not recorded),
 * `quickbook.book.after_failed` (failure and refund reference recorded, refund not sent).
 */
import { Clock, Duration, Effect, Fiber, Option } from "effect"
import { annotateSpan } from "../../observability/spanFn.js"
import { type ClerkLanguage } from "../clerkMessages.js"
import { QuickbookConfig } from "../config.js"
import { QbBadRequest, QbConflict, QbNotFound, QbUnavailable, QbUnprocessable } from "../errors.js"
import type { QuickbookCaller } from "../terminals/QuickbookKeys.js"
import { otherModeSale } from "../terminals/testKeys.js"
import type { Ticket } from "../tickets/ticket.js"
import type { PaymentKey, PaymentRow, Represented, StoredRequest } from "./payment.js"
import { QuickbookBooking } from "./QuickbookBooking.js"
import { QuickbookBookRepo } from "./QuickbookBookRepo.js"
import { QuickbookPaymentCheck } from "./QuickbookPaymentCheck.js"
import { type BookFailureReason, duplicateVariant, failedClerkMessage, phoneRequired, saleSettled } from "./rules.js"

export interface BookRequest {
  readonly reference: string
  readonly holdRef?: string | undefined
  readonly payment: { readonly provider: "payprovider"; readonly orderId: string; readonly paymentId: string }
  readonly customer: {
    readonly firstName: string
    readonly lastName: string
    readonly email: string
    readonly phone?: string | undefined
  }
  readonly language?: "en" | "nb" | undefined
}

export type BookAnswer =
  | { readonly status: "confirmed"; readonly ticket: Ticket }
  | {
    readonly status: "failed"
    readonly reason: BookFailureReason
    readonly moneyReturned: boolean
    readonly clerkMessage: string
  }

const stillProcessing = (reference: string) =>
  new QbUnavailable({
    code: "provider_unavailable",
    detail: "the payment is still being processed; read GET /sales/{reference}",
    reference,
    variant: "still_processing"
  })

/** Runs detached from the request's fiber: a client that hangs up does not stop it. */
const detached = <A, E>(effect: Effect.Effect<A, E>) => Effect.flatMap(Effect.forkDaemon(effect), Fiber.join)

export class QuickbookBook extends Effect.Service<QuickbookBook>()("Quickbook/Book", {
  effect: Effect.gen(function*() {
    const repo = yield* QuickbookBookRepo
    const paymentCheck = yield* QuickbookPaymentCheck
    const booking = yield* QuickbookBooking
    const config = yield* QuickbookConfig

    // -------------------------------------------------------------------------------------------
    // Answers

    /**
     * The answer for a payment as it stands now. A duplicate's lead is decided by where its sale
     * stands when it is answered (rules.duplicateVariant): it never says the sale stands before the
     * first payment has booked it.
     */
    const answerOf = (row: PaymentRow, lang: ClerkLanguage): Effect.Effect<BookAnswer, QbConflict | QbUnavailable> =>
      Effect.gen(function*() {
        const answer = row.answer
        if (answer === null) return yield* stillProcessing(row.sale_reference)
        switch (answer.status) {
          case "confirmed":
            return { status: "confirmed", ticket: answer.ticket } as const
          case "failed": {
            const moneyReturned = row.state === "refunded"
            const variant = answer.reason === "duplicate_payment"
              ? duplicateVariant(yield* repo.saleStatus(row.sale_reference))
              : answer.variant
            return {
              status: "failed",
              reason: answer.reason,
              moneyReturned,
              clerkMessage: failedClerkMessage(answer.reason, moneyReturned, lang, variant)
            } as const
          }
          case "mismatch":
            return yield* new QbConflict({
              code: "payment_mismatch",
              detail: "recorded as not matching its sale",
              reference: row.sale_reference
            })
        }
      })

    /**
     * A duplicate whose sale the first payment is still booking: whether the sale stands is not
     * known yet. Its answer waits for the first payment to settle the sale (confirmed or failed),
     * as long as a repeat waits for its own payment (`bookWaitMs`, counted from `deadline`); the
     * duplicate's money goes back meanwhile, whatever happens to the sale. True when the answer can
     * be given now (not a duplicate, or the sale settled, or the wait is over).
     */
    const duplicateSettled = (row: PaymentRow, deadline: number) =>
      Effect.gen(function*() {
        if (row.answer?.status !== "failed" || row.answer.reason !== "duplicate_payment") return true
        if (saleSettled(yield* repo.saleStatus(row.sale_reference))) return true
        return (yield* Clock.currentTimeMillis) >= deadline
      })

    // -------------------------------------------------------------------------------------------
    // The request and its repeats

    /**
     * A repeat of a recorded payment: its answer, the answer once it has one, or a takeover after a
     * crash. It must name the payment's own sale: the stored answer of another sale (of this
     * terminal, or of another operator's) is never shown; that payment does not pay this sale (409
     * payment_mismatch, nothing recorded, no alert: nothing new happened). Only a payment recorded
     * as a mismatch is checked again for the sale now named (`represent`): a clerk's slip does not
     * lock a payment out of the sale it does pay.
     */
    const repeat = (key: PaymentKey, reference: string, lang: ClerkLanguage, presented: Represented) =>
      Effect.gen(function*() {
        const deadline = (yield* Clock.currentTimeMillis) + config.bookWaitMs
        let represented = false
        while (true) {
          const found = yield* repo.load(key)
          if (Option.isNone(found)) return Option.none<BookAnswer>()
          const row = found.value
          if (row.sale_reference !== reference) {
            if (row.state === "mismatch" && !represented) {
              represented = true
              yield* detached(
                Effect.flatMap(
                  paymentCheck.represent(key, presented),
                  (claimed) => claimed ? booking.advance(key) : Effect.void
                )
              )
              continue
            }
            return yield* new QbConflict({
              code: "payment_mismatch",
              detail: `payment ${key.paymentId} was presented for another sale`,
              reference
            })
          }
          if (row.answer !== null && (yield* duplicateSettled(row, deadline))) {
            return Option.some(yield* answerOf(row, lang))
          }
          if (row.answer === null && row.lease_expired && (yield* repo.takeLease(key))) {
            yield* detached(booking.advance(key))
            continue
          }
          if ((yield* Clock.currentTimeMillis) >= deadline) return yield* stillProcessing(row.sale_reference)
          yield* Effect.sleep(Duration.millis(200))
        }
      })

    /** POST /book for the caller's terminal; `lang` is the clerk's language of a failed answer's message. */
    const book = Effect.fn("QuickbookBook.book")(
      function*(caller: QuickbookCaller, body: BookRequest, lang: ClerkLanguage) {
        yield* annotateSpan({ reference: body.reference })
        // A hold's holdRef is its sale's reference (spec §2): any other value is a bad request, refused before anything is read or recorded.
        if (body.holdRef !== undefined && body.holdRef !== body.reference) {
          return yield* new QbBadRequest({
            code: "invalid_request",
            detail:
              `holdRef: must be the sale's reference ${body.reference} (a hold's holdRef is its sale's reference), not ${body.holdRef}`,
            reference: body.reference
          })
        }
        const found = yield* repo.saleOfTerminal({ reference: body.reference, terminalId: caller.terminal.id })
        if (Option.isNone(found)) {
          return yield* new QbNotFound({ code: "not_found", detail: `no sale ${body.reference} for this terminal` })
        }
        const sale = found.value
        // Test and live never cross: a sale quoted with a key of the other mode is refused before the payment is recorded.
        const otherMode = otherModeSale(caller.key.mode, { reference: sale.reference, keyMode: sale.key_mode })
        if (otherMode) return yield* otherMode
        const key: PaymentKey = { provider: body.payment.provider, paymentId: body.payment.paymentId }
        const stored: StoredRequest = {
          reference: body.reference,
          holdRef: body.holdRef ?? null,
          customer: {
            firstName: body.customer.firstName,
            lastName: body.customer.lastName,
            email: body.customer.email,
            phone: body.customer.phone ?? null
          },
          language: body.language ?? "en"
        }
        // A tour that needs the guest's phone (the cart line says so): refused before the payment is
        // looked at, so nothing is recorded or returned; the same payment books once the phone is sent.
        // A payment already recorded for this sale answers what it answered.
        const existing = yield* repo.load(key)
        const fresh = Option.isNone(existing) ||
          (existing.value.state === "mismatch" && existing.value.sale_reference !== body.reference)
        if (
          fresh && phoneRequired(sale.cart_requires_phone, sale.tour_requires_phone) && stored.customer.phone === null
        ) {
          return yield* new QbUnprocessable({
            code: "phone_required",
            detail: `sale ${body.reference} needs the guest's phone number`,
            reference: body.reference
          })
        }
        const presented: Represented = {
          reference: body.reference,
          terminalId: caller.terminal.id,
          paymentTerminalId: sale.payment_terminal_id,
          orderId: body.payment.orderId,
          request: stored
        }
        // Twice at most: a first call that found nothing removes its row, and this one verifies again.
        for (let round = 0; round < 2; round++) {
          const inserted = yield* repo.insert({
            key,
            orderId: body.payment.orderId,
            terminalId: caller.terminal.id,
            request: stored
          })
          if (inserted) {
            yield* detached(booking.advance(key))
            const deadline = (yield* Clock.currentTimeMillis) + config.bookWaitMs
            while (!(yield* duplicateSettled(yield* repo.mustLoad(key), deadline))) {
              yield* Effect.sleep(Duration.millis(200))
            }
            return yield* answerOf(yield* repo.mustLoad(key), lang)
          }
          const answer = yield* repeat(key, body.reference, lang, presented)
          if (Option.isSome(answer)) return answer.value
        }
        return yield* stillProcessing(body.reference)
      }
    )

    return { book } as const
  }),
  dependencies: [QuickbookBookRepo.Default, QuickbookPaymentCheck.Default, QuickbookBooking.Default]
}) {}
