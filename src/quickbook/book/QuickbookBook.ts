/**
 * POST /book: a desk sale booked after its payment (Quickbook spec §2 "Book failure", §3, §4;
 * docs/decisions.md "Quickbook: book after payment"; rules in src/quickbook/book/rules.ts).
 *
 * The payment is recorded first (`quickbook_payments`, keyed by provider + paymentId, with a
 * lease), then moved on one committed step at a time, so that a crash at any point is finished once:
 *   received  → the order is read at the provider and checked (not found: the row is removed and
 *               422 answered, so a later call verifies again; no answer: removed, 503; an answer
 *               that does not decode: removed, alerted, 500; a mismatch, also a payment found on
 *               another merchant of ours: `mismatch`, alerted once, 409, nothing booked or refunded);
 *   mismatch  → sent again for another sale, checked against it: one it pays moves there
 *               (verified) and books; the recovery job returns a mismatch no sale will use
 *               (`returnStray`: refunding → refunded, role `stray`);
 *   verified  → verified and the sale claimed in one transaction (`paid_by_payment_id` set only when
 *               empty); a second payment of a claimed sale is a `duplicate`;
 *   booking   → the re-checks passed (terminal, tour, phone, hold, live price past validUntil) and the
 *               way to book fixed (the hold, or seats); the booking system is called with the sale
 *               reference as external reference, so calling again returns the same booking;
 *   confirmed → the sale confirmed with the guest, language and booking code, and the answer stored,
 *               in one transaction;
 *   refunding → a failure (or a duplicate): the sale failed (a duplicate leaves it alone), the
 *               answer and the refund's idempotency reference recorded together, then the money
 *               returned (src/quickbook/book/QuickbookPayments.ts) → refunded.
 * A sale that needs the guest's phone is refused (422 phone_required) before any of this when the
 * call has none: nothing is recorded, the same payment books once the phone is sent.
 * Each request's work runs detached from the connection: a client that hangs up does not stop it.
 * A repeat of a payment answers the stored result, waits for one still running, or takes over one
 * whose lease ran out. The quickbook-recovery job (`recover`) does the same for every row whose
 * lease ran out, and asks again about refunds not yet confirmed.
 *
 * Crash points (CRASH_AT, src/lib/CrashPoints.ts): `quickbook.book.after_claim` (verified and
 * claimed, nothing booked), `quickbook.book.after_booked` (the booking system booked, not recorded),
 * `quickbook.book.after_failed` (failure and refund reference recorded, refund not sent).
 */
import { SqlClient } from "@effect/sql"
import { Clock, Duration, Effect, Either, Fiber, Option, Schedule } from "effect"
import { QuickbookConfig } from "../../config.js"
import {
  type BookFailureReason,
  duplicateVariant,
  failedClerkMessage,
  failureOfRejection,
  liveTotal,
  phoneRequired,
  refundReference,
  saleSettled,
  type Verification,
  verifyPayment
} from "./rules.js"
import {
  type BookFailedVariant,
  type ClerkLanguage,
  QbBadRequest,
  QbConflict,
  QbForbidden,
  QbNotFound,
  QbUnavailable,
  QbUnprocessable
} from "../errors.js"
import type { QuickbookKeyMode } from "../terminals/key.js"
import { otherModeSale } from "../terminals/testKeys.js"
import { BookingSystem, type BookingSystemError } from "../../ports/BookingSystem.js"
import { canVoid, type PaymentAccount, PaymentProvider, type PaymentProviderError } from "../../ports/PaymentProvider.js"
import { BookingSystemAccounts } from "../../operators/BookingSystemAccounts.js"
import { CrashPoints } from "../../lib/CrashPoints.js"
import type { Ticket } from "../tickets/ticket.js"
import { QuickbookSaleMail } from "../tickets/QuickbookSaleMail.js"
import { QuickbookTickets } from "../tickets/QuickbookTickets.js"
import { type QuickbookCaller, QuickbookKeys } from "../terminals/QuickbookKeys.js"
import { type PaymentKey, type PaymentRow, QuickbookPayments, type StoredAnswer, type StoredRequest } from "./QuickbookPayments.js"
import { QuickbookTours } from "../sales/QuickbookTours.js"

export interface BookRequest {
  readonly reference: string
  readonly holdRef?: string | undefined
  readonly payment: { readonly provider: "payprovider"; readonly orderId: string; readonly paymentId: string }
  readonly customer: { readonly firstName: string; readonly lastName: string; readonly email: string; readonly phone?: string | undefined }
  readonly language?: "en" | "nb" | undefined
}

export type BookAnswer =
  | { readonly status: "confirmed"; readonly ticket: Ticket }
  | { readonly status: "failed"; readonly reason: BookFailureReason; readonly moneyReturned: boolean; readonly clerkMessage: string }

export interface QuickbookRecoverySummary {
  readonly found: number
  readonly confirmed: number
  readonly refunded: number
  /** Refunds still without a definite answer (asked again later). */
  readonly refunding: number
  /** Payments the provider no longer shows as paid: nothing to do. */
  readonly dropped: number
  readonly mismatched: number
  readonly pending: number
  /** Payments that matched no sale, returned because no sale will use them (their return started). */
  readonly strays: number
}

interface SaleRow {
  readonly reference: string
  readonly terminal_id: string
  readonly key_id: string
  readonly selling_operator_id: string
  readonly tour_id: string
  readonly merchant_id: string
  readonly product_id: string
  readonly rate_id: string | null
  readonly start_date: string
  readonly start_time: string
  readonly start_time_id: string
  readonly guests: ReadonlyArray<{ type: string; count: number; categoryId: string }>
  readonly total_minor: number
  readonly currency: string
  readonly cart_line: { readonly requiresPhone: boolean }
  readonly valid_until: Date
  readonly hold_id: string | null
  readonly hold_expires_at: Date | null
}

const SALE_COLUMNS = `reference, terminal_id, key_id, selling_operator_id, tour_id, merchant_id, product_id, rate_id,
  to_char(start_date, 'YYYY-MM-DD') AS start_date, start_time, start_time_id, guests, total_minor::int AS total_minor,
  trim(currency) AS currency, cart_line, valid_until, hold_id, hold_expires_at`

/** A refusal before the payment was verified (an error answer); only a mismatch leaves a record. */
type Refusal = QbConflict | QbUnprocessable | QbUnavailable | QbForbidden

/** What the provider's order says about a payment against a sale, once it could be read. */
type Checked = Extract<Verification, { readonly _tag: "Verified" | "Mismatch" }>

/**
 * A payment recorded as a mismatch, presented again for another sale: the new sale, terminal and
 * request it is presented with (the payment moves to that sale when it pays it).
 */
interface Represented {
  readonly reference: string
  readonly terminalId: string
  readonly paymentTerminalId: string | null
  readonly orderId: string
  readonly request: StoredRequest
}

const isNotFound = (e: PaymentProviderError) => e._tag === "PaymentProviderRejected" && (e.reason === "not_found" || e.reason === "invalid")

/** An answer of the provider's that did not decode: a defect of ours (or a change of theirs), never "unavailable". */
const isUnreadable = (e: PaymentProviderError) => e._tag === "PaymentProviderUnavailable" && e.reason === "bad_response"

/** Facts of a mismatch kept for its return: only when the provider gave a currency we can store. */
const storable = (currency: string) => /^[A-Z0-9]{3}$/.test(currency)

export class QuickbookBook extends Effect.Service<QuickbookBook>()("QuickbookBook", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const tours = yield* QuickbookTours
    const keys = yield* QuickbookKeys
    const payments = yield* QuickbookPayments
    const bookingSystem = yield* BookingSystem
    const accounts = yield* BookingSystemAccounts
    const provider = yield* PaymentProvider
    const crash = yield* CrashPoints
    const config = yield* QuickbookConfig
    const tickets = yield* QuickbookTickets
    const saleMail = yield* QuickbookSaleMail

    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
    const lease = sql`now() + make_interval(secs => ${config.bookLeaseSeconds})`
    const keyOf = (row: Pick<PaymentRow, "provider" | "payment_id">): PaymentKey => ({ provider: row.provider, paymentId: row.payment_id })
    const whereKey = (key: PaymentKey) => sql`provider = ${key.provider} AND payment_id = ${key.paymentId}`

    const saleStatus = (reference: string) =>
      sql<{ status: string }>`SELECT status FROM quickbook_sales WHERE reference = ${reference}`.pipe(
        Effect.orDie,
        Effect.map(([row]) => row?.status ?? null)
      )

    const saleByReference = (reference: string) =>
      sql<SaleRow>`SELECT ${sql.literal(SALE_COLUMNS)} FROM quickbook_sales WHERE reference = ${reference}`.pipe(
        Effect.orDie,
        Effect.flatMap(([row]) => (row ? Effect.succeed(row) : Effect.dieMessage(`sale ${reference} is gone`)))
      )

    // -------------------------------------------------------------------------------------------
    // received → verified (or mismatch, or removed); a mismatch presented for another sale

    const removeRow = (key: PaymentKey) =>
      sql`DELETE FROM quickbook_payments WHERE ${whereKey(key)} AND state = 'received'`.pipe(Effect.orDie)

    const alertMismatch = (p: { readonly reference: string; readonly paymentId: string; readonly orderId: string }, v: Extract<Checked, { _tag: "Mismatch" }>) =>
      Effect.logError("quickbook: a payment does not match its sale; nothing was booked or refunded").pipe(
        Effect.annotateLogs({
          alert: "quickbook_payment_mismatch",
          reference: p.reference,
          payment_id: p.paymentId,
          order_id: p.orderId,
          order_reference: v.taken.referenceId ?? "none",
          fields: v.fields.join(","),
          detail: v.detail
        })
      )

    /** The provider's answer about a payment did not decode: alerted as the defect it is, answered 500 (nothing recorded). */
    const unreadable = (p: { readonly reference: string; readonly paymentId: string; readonly orderId: string }, e: PaymentProviderError) =>
      Effect.zipRight(
        Effect.logError("quickbook: the payment provider's answer about a payment could not be read; nothing was booked or refused").pipe(
          Effect.annotateLogs({
            alert: "quickbook_provider_answer_unreadable",
            reference: p.reference,
            payment_id: p.paymentId,
            order_id: p.orderId,
            detail: `${e.operation}: ${e.detail}`
          })
        ),
        Effect.dieMessage(`quickbook: the payment provider's answer about order ${p.orderId} could not be read: ${e.detail}`)
      )

    /**
     * Reads the payment's order at the provider and checks it against the sale; writes nothing. The
     * order is read on the sale's merchant; one not found there is looked for on our other merchants
     * (found there, it is a payment on another merchant: a mismatch, not "not found"). Not found
     * anywhere or not paid: 422 payment_not_found; no answer: 503; an answer that does not decode: a
     * defect (alerted, 500), never "unavailable".
     */
    const check = (
      payment: { readonly orderId: string; readonly paymentId: string; readonly paymentTerminalId: string | null },
      sale: SaleRow
    ): Effect.Effect<Checked, Refusal> =>
      Effect.gen(function*() {
        const ref = sale.reference
        const named = { reference: ref, paymentId: payment.paymentId, orderId: payment.orderId }
        const account = yield* payments.accountFor(sale.selling_operator_id)
        if (Option.isNone(account)) {
          return yield* new QbForbidden({ code: "tour_not_sellable_here", detail: "the operator has no payment account", reference: ref })
        }
        const read = (on: PaymentAccount) => Effect.either(provider.orderStatus(on, payment.orderId))
        let order = yield* read(account.value)
        if (Either.isLeft(order) && isNotFound(order.left)) {
          // The merchant the sale was quoted on (when the operator's has changed since), then our other merchants.
          const quoted = sale.merchant_id !== account.value.merchantId
            ? Option.toArray(yield* payments.accountFor(sale.selling_operator_id, sale.merchant_id))
            : []
          const others = yield* payments.otherAccounts(sale.selling_operator_id, [account.value.merchantId, sale.merchant_id])
          const elsewhere = yield* Effect.forEach([...quoted, ...others], read, { concurrency: 8 })
          order = elsewhere.find((o) => Either.isRight(o)) ?? elsewhere.find((o) => Either.isLeft(o) && isUnreadable(o.left)) ?? order
        }
        if (Either.isLeft(order)) {
          const e = order.left
          if (isUnreadable(e)) return yield* unreadable(named, e)
          return yield* isNotFound(e)
            ? new QbUnprocessable({ code: "payment_not_found", detail: `order ${payment.orderId}: ${e.reason}: ${e.detail}`, reference: ref })
            : new QbUnavailable({
              code: "provider_unavailable",
              detail: `payment provider: ${e.reason}: ${e.detail}`,
              reference: ref,
              variant: "payment_provider"
            })
        }
        const verification = verifyPayment(order.right, payment.paymentId, {
          amountMinor: sale.total_minor,
          currency: sale.currency,
          merchantId: sale.merchant_id,
          reference: ref,
          terminalId: payment.paymentTerminalId
        }, yield* now)
        if (verification._tag === "NotFound") {
          return yield* new QbUnprocessable({ code: "payment_not_found", detail: verification.detail, reference: ref })
        }
        return verification
      })

    /** The new sale, terminal, order and request of a mismatch presented again (nothing when it stays where it is). */
    const representedSet = (r: Represented | null) =>
      r === null ? sql`` : sql`, sale_reference = ${r.reference}, terminal_id = ${r.terminalId},
        payment_terminal_id = ${r.paymentTerminalId}, order_id = ${r.orderId}, request = ${JSON.stringify(r.request)}::jsonb`

    /**
     * Records the payment as not matching (from `received`, or a mismatch presented for another
     * sale), with what the provider says it took: kept for a later presentation for the sale it
     * pays, or for its return (recover). True when this call recorded it (then it is alerted).
     */
    const markMismatch = (key: PaymentKey, from: "received" | "mismatch", v: Extract<Checked, { _tag: "Mismatch" }>, r: Represented | null) =>
      Effect.gen(function*() {
        const facts = storable(v.taken.currency) ? v.taken : null
        const [marked] = yield* sql<{ provider: string }>`
          UPDATE quickbook_payments SET state = 'mismatch', detail = ${v.detail.slice(0, 1000)},
            answer = ${JSON.stringify({ status: "mismatch" } satisfies StoredAnswer)}::jsonb, alerted_at = now(),
            amount_minor = ${facts?.amountMinor ?? null}, currency = ${facts?.currency ?? null},
            merchant_id = ${facts?.merchantId ?? null}, paid_at = ${facts?.paidAt ?? null},
            order_reference_id = ${v.taken.referenceId}, lease_until = NULL, updated_at = now() ${representedSet(r)}
          WHERE ${whereKey(key)} AND state = ${from} RETURNING provider`.pipe(Effect.orDie)
        return marked !== undefined
      })

    /**
     * A verified payment claims its sale (or is a duplicate of the payment that did) in one
     * transaction with its own move to `verified`. False when the payment had moved on meanwhile.
     */
    const claim = (key: PaymentKey, from: "received" | "mismatch", sale: SaleRow, v: Extract<Checked, { _tag: "Verified" }>, r: Represented | null) =>
      sql.withTransaction(Effect.gen(function*() {
        const [moved] = yield* sql<{ provider: string }>`
          UPDATE quickbook_payments SET state = 'verified', role = 'sale', amount_minor = ${v.amountMinor},
            currency = ${v.currency}, merchant_id = ${v.merchantId}, paid_at = ${v.paidAt}, order_reference_id = NULL,
            detail = NULL, answer = NULL, lease_until = ${lease}, updated_at = now() ${representedSet(r)}
          WHERE ${whereKey(key)} AND state = ${from} RETURNING provider`
        if (!moved) return false
        const [claimed] = yield* sql<{ paid_by_payment_id: string }>`
          UPDATE quickbook_sales SET paid_by_payment_id = coalesce(paid_by_payment_id, ${key.paymentId}),
            status = CASE WHEN paid_by_payment_id IS NULL THEN 'booking' ELSE status END, updated_at = now()
          WHERE reference = ${sale.reference} RETURNING paid_by_payment_id`
        if (claimed!.paid_by_payment_id !== key.paymentId) {
          yield* sql`UPDATE quickbook_payments SET role = 'duplicate' WHERE ${whereKey(key)}`
        }
        return true
      })).pipe(Effect.orDie)

    /**
     * A new payment: read at the provider and checked; a verified one claims the sale (or is a
     * duplicate). Refusals remove the row (nothing happened) except a mismatch, which is kept and
     * alerted once.
     */
    const verifyAndClaim = (row: PaymentRow): Effect.Effect<void, Refusal> =>
      Effect.gen(function*() {
        const key = keyOf(row)
        const sale = yield* saleByReference(row.sale_reference)
        const checked = yield* check({ orderId: row.order_id, paymentId: row.payment_id, paymentTerminalId: row.payment_terminal_id }, sale)
          .pipe(Effect.onError(() => removeRow(key)))
        if (checked._tag === "Mismatch") {
          if (yield* markMismatch(key, "received", checked, null)) {
            yield* alertMismatch({ reference: sale.reference, paymentId: row.payment_id, orderId: row.order_id }, checked)
          }
          return yield* new QbConflict({ code: "payment_mismatch", detail: checked.detail, reference: sale.reference })
        }
        yield* claim(key, "received", sale, checked, null)
      })

    /**
     * A payment recorded as a mismatch, presented for another sale: checked against that sale. A
     * payment it pays moves to it (verified, claimed) and is booked; one it does not pay stays a
     * mismatch, now of that sale (alerted); a refusal changes nothing (the mismatch stays traceable).
     */
    const represent = (key: PaymentKey, r: Represented): Effect.Effect<void, Refusal> =>
      Effect.gen(function*() {
        const sale = yield* saleByReference(r.reference)
        const checked = yield* check({ orderId: r.orderId, paymentId: key.paymentId, paymentTerminalId: r.paymentTerminalId }, sale)
        if (checked._tag === "Mismatch") {
          if (yield* markMismatch(key, "mismatch", checked, r)) {
            yield* alertMismatch({ reference: r.reference, paymentId: key.paymentId, orderId: r.orderId }, checked)
          }
          return yield* new QbConflict({ code: "payment_mismatch", detail: checked.detail, reference: r.reference })
        }
        if (yield* claim(key, "mismatch", sale, checked, r)) yield* drive(key)
      })

    // -------------------------------------------------------------------------------------------
    // verified → booking (re-checks) → confirmed, or → refunding

    /** What may have changed since the quote; Right: book with this hold (null: seats). */
    const recheck = (row: PaymentRow, sale: SaleRow) =>
      Effect.gen(function*() {
        const request = row.request
        const caller = yield* keys.callerOf(sale.key_id, sale.terminal_id)
        if (Option.isNone(caller)) return Either.left<BookFailureReason>("terminal_not_registered")
        const tour = yield* tours.chargeableTour(caller.value, sale.tour_id).pipe(Effect.option)
        if (Option.isNone(tour)) return Either.left<BookFailureReason>("tour_not_sellable_here")
        const [flags] = yield* sql<{ requires_phone: boolean }>`SELECT requires_phone FROM tours WHERE id = ${sale.tour_id}`.pipe(Effect.orDie)
        if (phoneRequired(sale.cart_line.requiresPhone, flags?.requires_phone ?? false) && request.customer.phone === null) {
          return Either.left<BookFailureReason>("phone_required")
        }
        const at = yield* now
        const liveHold = sale.hold_id !== null && sale.hold_expires_at !== null && sale.hold_expires_at > at
        if (request.holdRef !== null && !liveHold) return Either.left<BookFailureReason>("hold_expired")
        if (!liveHold && sale.valid_until <= at) {
          // Past validUntil: the quoted total stands only if the live price is the same.
          const live = yield* tours.slots(caller.value, sale.tour_id, sale.start_date).pipe(Effect.either)
          if (Either.isLeft(live)) {
            return Either.left<BookFailureReason>(live.left._tag === "QbUnavailable" ? "provider_unavailable" : "tour_not_sellable_here")
          }
          const seats = sale.guests.reduce((n, g) => n + g.count, 0)
          const slot = live.right.slots.find((s) => s.time === sale.start_time)
          if (!slot || slot.soldOut || (slot.seatsLeft !== null && slot.seatsLeft < seats)) return Either.left<BookFailureReason>("sold_out")
          if (liveTotal(sale.guests, slot.guests) !== sale.total_minor) return Either.left<BookFailureReason>("price_changed")
        }
        return Either.right(liveHold ? sale.hold_id : null)
      })

    const accountIdOfTour = (tourId: string) =>
      sql<{ account_id: string | null }>`
        SELECT o.booking_system_account_id AS account_id FROM tours t JOIN operators o ON o.id = t.operator_id
        WHERE t.id = ${tourId}`.pipe(Effect.orDie, Effect.map(([r]) => r?.account_id ?? null))

    /**
     * The booking system answered the booking call with something that does not decode: it may
     * have booked. Returning the money now could leave a booking paid for by nobody, so this is a
     * defect (alerted, 500): the payment stays `booking`, and the recovery job (or a repeat) asks
     * again with the same external reference once its lease runs out; never refunded blind.
     */
    const bookingUnreadable = (row: PaymentRow, sale: SaleRow, e: BookingSystemError) =>
      Effect.zipRight(
        Effect.logError("quickbook: the booking system's answer to a booking could not be read; the sale stays being booked").pipe(
          Effect.annotateLogs({
            alert: "quickbook_booking_answer_unreadable",
            reference: sale.reference,
            payment_id: row.payment_id,
            detail: `${e.operation}: ${e.detail}`
          })
        ),
        Effect.dieMessage(`quickbook: the booking system's answer to booking ${sale.reference} could not be read: ${e.detail}`)
      )

    /** The booking system books (or answers the booking it made before for the same reference). */
    const bookAtBookingSystem = (row: PaymentRow, sale: SaleRow) =>
      Effect.gen(function*() {
        const accountId = yield* accountIdOfTour(sale.tour_id)
        if (accountId === null) return Either.left<BookFailureReason>("provider_refused")
        const account = yield* accounts.byId(accountId).pipe(Effect.either)
        if (Either.isLeft(account)) return Either.left<BookFailureReason>("provider_unavailable")
        const { customer } = row.request
        const call: Effect.Effect<Either.Either<{ bookingId: string; bookingReference: string }, BookFailureReason>, BookingSystemError> =
          Effect.map(
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
              payment: { amountMinor: row.amount_minor!, currency: row.currency!, reference: row.payment_id, paidAt: row.paid_at! }
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
                Effect.logWarning(`quickbook: booking ${sale.reference} at the booking system: ${e._tag} ${e.reason}: ${e.detail}`),
                Either.left<BookFailureReason>(e._tag === "BookingSystemRejected" ? failureOfRejection(e.reason) : "provider_unavailable")
              )
          )
        )
      })

    /** One transaction: the payment and the sale confirmed, the answer (with the ticket) stored, the guest's email enqueued. */
    const confirm = (row: PaymentRow, sale: SaleRow, booked: { bookingId: string; bookingReference: string }) =>
      sql.withTransaction(Effect.gen(function*() {
        const { customer, language } = row.request
        const [claimed] = yield* sql<{ provider: string }>`
          UPDATE quickbook_payments SET state = 'confirmed', lease_until = NULL, updated_at = now()
          WHERE ${whereKey(keyOf(row))} AND state = 'booking' RETURNING provider`
        if (!claimed) return
        yield* sql`
          UPDATE quickbook_sales SET status = 'confirmed', customer = ${JSON.stringify(customer)}::jsonb, language = ${language},
            booking_id = ${booked.bookingId}, booking_code = ${booked.bookingReference}, confirmed_at = now(), updated_at = now()
          WHERE reference = ${sale.reference} AND paid_by_payment_id = ${row.payment_id}`
        const ticket = yield* tickets.ticketFor(sale.reference, language)
        yield* sql`
          UPDATE quickbook_payments SET answer = ${JSON.stringify({ status: "confirmed", ticket } satisfies StoredAnswer)}::jsonb
          WHERE ${whereKey(keyOf(row))}`
        yield* saleMail.enqueueConfirmed(sale.reference)
      })).pipe(Effect.orDie)

    /**
     * The failure and the refund's reference, together (the sale fails unless this is a duplicate);
     * then the money goes back. A hold the sale still has is released (best effort: it lapses anyway).
     */
    const fail = (row: PaymentRow, reason: BookFailureReason) =>
      Effect.gen(function*() {
        const key = keyOf(row)
        const method = canVoid(row.paid_at!, yield* now) ? "void" : "refund"
        const ownSale = row.role === "sale"
        // A second payment for a sale that failed: the clerk is told to make a new quote (not that the sale stands).
        const variant: BookFailedVariant | undefined = !ownSale && (yield* saleStatus(row.sale_reference)) === "failed"
          ? "sale_failed"
          : undefined
        const answer: StoredAnswer = { status: "failed", reason, ...(variant !== undefined ? { variant } : {}) }
        const changed = yield* sql.withTransaction(Effect.gen(function*() {
          const [updated] = yield* sql<{ provider: string }>`
            UPDATE quickbook_payments SET state = 'refunding', failure_reason = ${reason},
              answer = ${JSON.stringify(answer)}::jsonb,
              refund_method = ${method}, refund_seq = 1, refund_reference = ${refundReference(row.provider, row.payment_id, 1)},
              refund_state = 'requested', lease_until = ${lease}, updated_at = now()
            WHERE ${whereKey(key)} AND state IN ('verified', 'booking') RETURNING provider`
          if (!updated) return false
          if (ownSale) {
            yield* sql`
              UPDATE quickbook_sales SET status = 'failed', failed_at = now(), failure_reason = ${reason},
                customer = ${JSON.stringify(row.request.customer)}::jsonb, language = ${row.request.language}, updated_at = now()
              WHERE reference = ${row.sale_reference} AND paid_by_payment_id = ${row.payment_id}`
            // The guest is told the money is on its way back (a void or refund is sent right after).
            yield* saleMail.enqueueFailed(row.sale_reference, { moneyReturned: false })
          }
          return true
        })).pipe(Effect.orDie)
        if (changed && ownSale) yield* releaseHoldOf(row.sale_reference)
        yield* crash.reached("quickbook.book.after_failed")
        yield* payments.returnMoney(key)
      })

    const releaseHoldOf = (reference: string) =>
      Effect.gen(function*() {
        const sale = yield* saleByReference(reference)
        if (sale.hold_id === null) return
        const accountId = yield* accountIdOfTour(sale.tour_id)
        if (accountId === null) return
        const account = yield* Effect.orDie(accounts.byId(accountId))
        yield* bookingSystem.releaseHold(account.account, sale.hold_id)
        yield* sql`UPDATE quickbook_sales SET hold_id = NULL, hold_expires_at = NULL, hold_released_at = now() WHERE reference = ${reference}`
          .pipe(Effect.orDie)
      }).pipe(Effect.catchAll((e) => Effect.logInfo(`quickbook: hold of ${reference} not released (it lapses by itself)`, e)))

    /** Moves a verified payment on until it is final or waits for a refund answer (one money-returning attempt per run). */
    const drive = (key: PaymentKey): Effect.Effect<void> =>
      Effect.gen(function*() {
        for (let step = 0; step < 4; step++) {
          const row = yield* payments.mustLoad(key)
          switch (row.state) {
            case "verified": {
              if (row.role === "duplicate") return yield* fail(row, "duplicate_payment")
              const sale = yield* saleByReference(row.sale_reference)
              const checked = yield* recheck(row, sale)
              if (Either.isLeft(checked)) return yield* fail(row, checked.left)
              yield* sql`
                UPDATE quickbook_payments SET state = 'booking', hold_id = ${checked.right}, lease_until = ${lease}, updated_at = now()
                WHERE ${whereKey(key)} AND state = 'verified'`.pipe(Effect.orDie)
              break
            }
            case "booking": {
              const sale = yield* saleByReference(row.sale_reference)
              const booked = yield* bookAtBookingSystem(row, sale)
              if (Either.isLeft(booked)) return yield* fail(row, booked.left)
              yield* crash.reached("quickbook.book.after_booked")
              return yield* confirm(row, sale, booked.right)
            }
            case "refunding":
              yield* payments.returnMoney(key)
              return
            default:
              return
          }
        }
      })

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
            const variant = answer.reason === "duplicate_payment" ? duplicateVariant(yield* saleStatus(row.sale_reference)) : answer.variant
            return {
              status: "failed",
              reason: answer.reason,
              moneyReturned,
              clerkMessage: failedClerkMessage(answer.reason, moneyReturned, lang, variant)
            } as const
          }
          case "mismatch":
            return yield* new QbConflict({ code: "payment_mismatch", detail: "recorded as not matching its sale", reference: row.sale_reference })
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
        if (saleSettled(yield* saleStatus(row.sale_reference))) return true
        return (yield* Clock.currentTimeMillis) >= deadline
      })

    /** The whole work for a row from where it stands; runs detached from the request. */
    const work = (key: PaymentKey): Effect.Effect<void, Refusal> =>
      Effect.gen(function*() {
        const row = yield* payments.mustLoad(key)
        if (row.state === "received") {
          yield* verifyAndClaim(row)
          yield* crash.reached("quickbook.book.after_claim")
        }
        yield* drive(key)
      })

    const detached = <A, E>(effect: Effect.Effect<A, E>) =>
      Effect.flatMap(Effect.forkDaemon(effect), Fiber.join)

    /** Takes over a row whose lease ran out (a crash); false when someone else holds it. */
    const takeLease = (key: PaymentKey) =>
      sql<{ provider: string }>`
        UPDATE quickbook_payments SET lease_until = ${lease}, updated_at = now()
        WHERE ${whereKey(key)} AND state IN ('received', 'verified', 'booking', 'refunding') AND lease_until < now()
        RETURNING provider`.pipe(Effect.orDie, Effect.map((rows) => rows.length > 0))

    const stillProcessing = (reference: string) =>
      new QbUnavailable({
        code: "provider_unavailable",
        detail: "the payment is still being processed; read GET /sales/{reference}",
        reference,
        variant: "still_processing"
      })

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
          const found = yield* payments.load(key)
          if (Option.isNone(found)) return Option.none<BookAnswer>()
          const row = found.value
          if (row.sale_reference !== reference) {
            if (row.state === "mismatch" && !represented) {
              represented = true
              yield* detached(represent(key, presented))
              continue
            }
            return yield* new QbConflict({
              code: "payment_mismatch",
              detail: `payment ${key.paymentId} was presented for another sale`,
              reference
            })
          }
          if (row.answer !== null && (yield* duplicateSettled(row, deadline))) return Option.some(yield* answerOf(row, lang))
          if (row.answer === null && row.lease_expired && (yield* takeLease(key))) {
            yield* detached(work(key))
            continue
          }
          if ((yield* Clock.currentTimeMillis) >= deadline) return yield* stillProcessing(row.sale_reference)
          yield* Effect.sleep(Duration.millis(200))
        }
      })

    /** POST /book for the caller's terminal; `lang` is the clerk's language of a failed answer's message. */
    const book = (caller: QuickbookCaller, body: BookRequest, lang: ClerkLanguage) =>
      Effect.gen(function*() {
        // A hold's holdRef is its sale's reference (spec §2): any other value is a bad request, refused before anything is read or recorded.
        if (body.holdRef !== undefined && body.holdRef !== body.reference) {
          return yield* new QbBadRequest({
            code: "invalid_request",
            detail: `holdRef: must be the sale's reference ${body.reference} (a hold's holdRef is its sale's reference), not ${body.holdRef}`,
            reference: body.reference
          })
        }
        const [sale] = yield* sql<{
          reference: string
          key_mode: QuickbookKeyMode
          cart_requires_phone: boolean
          tour_requires_phone: boolean
          payment_terminal_id: string | null
        }>`
          SELECT s.reference, (SELECT k.mode FROM quickbook_keys k WHERE k.id = s.key_id) AS key_mode,
            coalesce((s.cart_line->>'requiresPhone')::boolean, false) AS cart_requires_phone,
            t.requires_phone AS tour_requires_phone,
            (SELECT payment_terminal_id FROM quickbook_terminals WHERE id = ${caller.terminal.id}) AS payment_terminal_id
          FROM quickbook_sales s JOIN tours t ON t.id = s.tour_id
          WHERE s.reference = ${body.reference} AND s.terminal_id = ${caller.terminal.id}`.pipe(Effect.orDie)
        if (!sale) return yield* new QbNotFound({ code: "not_found", detail: `no sale ${body.reference} for this terminal` })
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
        const existing = yield* payments.load(key)
        const fresh = Option.isNone(existing) || (existing.value.state === "mismatch" && existing.value.sale_reference !== body.reference)
        if (fresh && phoneRequired(sale.cart_requires_phone, sale.tour_requires_phone) && stored.customer.phone === null) {
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
          const [inserted] = yield* sql<{ provider: string }>`
            INSERT INTO quickbook_payments (provider, payment_id, order_id, sale_reference, terminal_id, payment_terminal_id, request, lease_until)
            VALUES (${key.provider}, ${key.paymentId}, ${body.payment.orderId}, ${body.reference}, ${caller.terminal.id},
              (SELECT payment_terminal_id FROM quickbook_terminals WHERE id = ${caller.terminal.id}),
              ${JSON.stringify(stored)}::jsonb, ${lease})
            ON CONFLICT (provider, payment_id) DO NOTHING RETURNING provider`.pipe(Effect.orDie)
          if (inserted) {
            yield* detached(work(key))
            const deadline = (yield* Clock.currentTimeMillis) + config.bookWaitMs
            while (!(yield* duplicateSettled(yield* payments.mustLoad(key), deadline))) yield* Effect.sleep(Duration.millis(200))
            return yield* answerOf(yield* payments.mustLoad(key), lang)
          }
          const answer = yield* repeat(key, body.reference, lang, presented)
          if (Option.isSome(answer)) return answer.value
        }
        return yield* stillProcessing(body.reference)
      }).pipe(Effect.withSpan("QuickbookBook.book", { attributes: { reference: body.reference } }))

    // -------------------------------------------------------------------------------------------
    // The job

    /**
     * A payment recorded as a mismatch whose order names one of our sales, returned once no sale
     * will use it: that sale is confirmed (by another payment) or failed, or the payment waited
     * QUICKBOOK_MISMATCH_RETURN_AFTER_SECONDS without being presented for the sale it pays. The
     * condition is checked again in the same statement that starts the return (a presentation at the
     * same moment wins or loses atomically). Alerted; the money goes back like any other return.
     */
    const returnStray = (key: PaymentKey) =>
      Effect.gen(function*() {
        const row = yield* payments.mustLoad(key)
        if (row.state !== "mismatch" || row.amount_minor === null || row.currency === null || row.paid_at === null) return false
        const method = canVoid(row.paid_at, yield* now) ? "void" : "refund"
        const answer: StoredAnswer = { status: "failed", reason: "payment_mismatch", variant: "stray" }
        const [moved] = yield* sql<{ status: string }>`
          UPDATE quickbook_payments p SET state = 'refunding', role = 'stray', failure_reason = 'payment_mismatch',
            answer = ${JSON.stringify(answer)}::jsonb, refund_method = ${method}, refund_seq = 1,
            refund_reference = ${refundReference(row.provider, row.payment_id, 1)}, refund_state = 'requested',
            lease_until = ${lease}, updated_at = now()
          FROM quickbook_sales s
          WHERE p.provider = ${key.provider} AND p.payment_id = ${key.paymentId} AND p.state = 'mismatch'
            AND s.reference = p.order_reference_id
            AND (s.status IN ('confirmed', 'failed') OR p.updated_at < now() - make_interval(secs => ${config.mismatchReturnAfterSeconds}))
          RETURNING s.status`.pipe(Effect.orDie)
        if (!moved) return false
        yield* Effect.logError("quickbook: a payment that matched no sale is returned; no sale will use it").pipe(
          Effect.annotateLogs({
            alert: "quickbook_mismatch_returned",
            reference: row.sale_reference,
            order_reference: row.order_reference_id ?? "none",
            order_reference_status: moved.status,
            payment_id: row.payment_id,
            order_id: row.order_id,
            amount_minor: row.amount_minor,
            currency: row.currency,
            method
          })
        )
        yield* payments.returnMoney(key)
        return true
      })

    /** Mismatches the job returns now (see returnStray), oldest first. */
    const straysDue = sql<{ provider: string; payment_id: string }>`
      SELECT p.provider, p.payment_id FROM quickbook_payments p JOIN quickbook_sales s ON s.reference = p.order_reference_id
      WHERE p.state = 'mismatch' AND p.amount_minor IS NOT NULL AND p.currency IS NOT NULL AND p.paid_at IS NOT NULL
        AND (s.status IN ('confirmed', 'failed') OR p.updated_at < now() - make_interval(secs => ${config.mismatchReturnAfterSeconds}))
      ORDER BY p.updated_at LIMIT 100`.pipe(Effect.orDie)

    /**
     * Payments a crash (or a refund without a definite answer) left open past their lease are
     * finished: verified again, booked (the same external reference) or refunded (the same
     * reference). Payments recorded as mismatches that no sale will use are returned (returnStray).
     * One failing payment never stops the others.
     */
    const recover = () =>
      Effect.gen(function*() {
        const due = yield* sql<{ provider: string; payment_id: string }>`
          SELECT provider, payment_id FROM quickbook_payments
          WHERE state IN ('received', 'verified', 'booking', 'refunding') AND lease_until < now()
          ORDER BY lease_until LIMIT 100`.pipe(Effect.orDie)
        const summary = { found: due.length, confirmed: 0, refunded: 0, refunding: 0, dropped: 0, mismatched: 0, pending: 0, strays: 0 }
        for (const d of due) {
          const key = keyOf(d)
          if (!(yield* takeLease(key))) continue
          yield* work(key).pipe(
            Effect.catchAllCause((cause) => Effect.logWarning(`quickbook payment ${key.paymentId} not finished this time`, cause))
          )
          const after = yield* payments.load(key)
          if (Option.isNone(after)) summary.dropped += 1
          else {
            const state = after.value.state
            if (state === "confirmed") summary.confirmed += 1
            else if (state === "refunded") summary.refunded += 1
            else if (state === "refunding") summary.refunding += 1
            else if (state === "mismatch") summary.mismatched += 1
            else summary.pending += 1
          }
        }
        for (const d of yield* straysDue) {
          const returned = yield* returnStray(keyOf(d)).pipe(
            Effect.catchAllCause((cause) => Effect.as(Effect.logWarning(`quickbook payment ${d.payment_id} not returned this time`, cause), false))
          )
          if (returned) summary.strays += 1
        }
        return summary satisfies QuickbookRecoverySummary
      }).pipe(Effect.withSpan("QuickbookBook.recover"))

    return { book, recover } as const
  }),
  dependencies: [QuickbookPayments.Default, QuickbookTours.Default, QuickbookKeys.Default, QuickbookTickets.Default, QuickbookSaleMail.Default, BookingSystemAccounts.Default, CrashPoints.Default]
}) {}
