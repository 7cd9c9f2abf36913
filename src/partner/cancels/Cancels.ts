/**
 * Cancel with a full refund (POST /api/v1/bookings/{id}/cancel; spec §2 "Cancel result", §3, §4;
 * rules in src/partner/cancels/rules.ts; docs/api/cancel.md).
 *
 * A cancel records its progress so that a crash at any step is finished once and money never moves
 * twice (migration 0010):
 *   1. a `booking_changes` row (kind `cancel`, state `releasing`, with a lease) is committed before
 *      the booking system is asked to cancel, by the claim every change of a booking makes
 *      (src/partner/bookingChanges/claim.ts: 409 while another change is open or if one was made since);
 *   2. the booking system releases the seats; the booking's balance payment links are taken over
 *      (`closing`, under the per-booking lock the payment-link write takes) and closed at the
 *      provider, a link found paid being recorded as a payment (`closeLinks`); one transaction marks
 *      the row `released` and writes a `booking_refunds` row per payment (void or refund, with our
 *      idempotency reference);
 *   3. each refund row is sent to the payment provider with its reference and its answer recorded;
 *   4. one transaction sets the booking's status (spec §3), reason, voided commission and cancelled
 *      pay-later charge, marks its mirror rows cancelled, makes its links still open or `closing` (the
 *      provider did not answer in step 2) due for the payment-link watch, enqueues the guest and team emails
 *      (dedupe keys name the booking: a booking is cancelled once) and marks the change `done`.
 * A change left at `releasing` or `released` past its lease is finished by `recover` (the
 * booking-change recovery job): `releasing` re-reads the booking system and goes on only when the
 * booking is cancelled there (else it is abandoned: nothing changed); `released` repeats step 3 with
 * the same references and completes step 4. Refunds still open after step 4 (no answer, settling,
 * partly returned) are followed up by the same job until they complete; a refused one is alerted
 * and left to a person (`refunds` CLI).
 *
 * A payment that arrives after step 2 (a link paid before it could be closed, or one the provider
 * did not let us close) is given a refund row of this change when it is recorded (PaidLinks.record)
 * and sent by the cancel still running, by `refundLate` (the payment-link watch, at once) or by the
 * job: the booking is refunded in full whenever the money comes.
 *
 * Crash points (CRASH_AT, src/lib/CrashPoints.ts): `cancel.after_release` (seats released,
 * not yet recorded), `cancel.after_released` (recorded, no refund sent), `cancel.after_refund`
 * (provider answered, answer not recorded), `cancel.before_complete` (refunds recorded, booking
 * and emails not yet).
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Either, Option, Random } from "effect"
import { BookingChangeConfig } from "../../config.js"
import { apiStatusOf, type BookingStatus } from "../bookings/booking.js"
import {
  type CancelFacts,
  type CancelOutcome,
  cancelOutcome,
  isLive,
  paidMinor,
  type PaymentFacts,
  paymentsToRefund,
  type RefundFacts,
  refundMethod,
  type RefundOutcome,
  refundReference
} from "./rules.js"
import { NotPossible, notYours, Unavailable } from "../../domain/errors.js"
import { outboxKeys, retryDelayMillis, teamLocale } from "../../email/rules.js"
import type { WriteContext, WriteDone } from "../writes/rules.js"
import { BookingSystem } from "../../ports/BookingSystem.js"
import { type PaymentAccount, PaymentProvider, type PaymentProviderError } from "../../ports/PaymentProvider.js"
import { claimChange, changeRunning, seenChanges } from "../bookingChanges/claim.js"
import { toPgArray } from "../bookings/Bookings.js"
import { BookingSystemAccounts } from "../../operators/BookingSystemAccounts.js"
import { CrashPoints } from "../../lib/CrashPoints.js"
import { OperatorPaymentAccounts } from "../../payments/OperatorPaymentAccounts.js"
import { Outbox } from "../../email/Outbox.js"
import { PaidLinkRecorder as PaidLinks } from "../paymentLinks/PaidLinkRecorder.js"
import { LINK_COLUMNS, type LinkRow } from "../paymentLinks/PaymentLinksRepo.js"
import { cancelReference, linkRequest } from "../paymentLinks/rules.js"
import { type MoneyReturnUpdate, returnPayment } from "../../payments/returnPayment.js"

export interface CancelResultBody {
  readonly id: string
  readonly status: BookingStatus
  readonly already_cancelled: boolean
  readonly refund: {
    readonly outcome: RefundOutcome
    readonly amount_minor: number
    readonly currency: string
  }
}

export interface CancelRecoverySummary {
  /** Cancels left open by a crash, and what became of them. */
  readonly changes: { readonly found: number; readonly completed: number; readonly abandoned: number; readonly pending: number }
  /** Refunds followed up after their cancel completed. */
  readonly refunds: { readonly found: number; readonly completed: number; readonly open: number; readonly failed: number }
}

/** Backoff of a refund the provider did not confirm: 30 s doubling to an hour. */
const REFUND_RETRY = { baseMillis: 30_000, maxMillis: 3_600_000 }

interface BookingRow {
  readonly id: string
  readonly status: string
  readonly operator_id: string
  readonly amount_minor: number
  readonly currency: string
  readonly payment_strategy: "pay_now" | "pay_later"
  readonly pay_later_status: string | null
  readonly pay_later_amount_minor: number | null
  readonly provider_reference: string | null
  readonly account_id: string | null
  readonly experience_date: string | null
}

interface ChangeRow {
  readonly id: string
  readonly booking_id: string
  readonly kind: "cancel" | "reschedule"
  readonly state: "releasing" | "released" | "done" | "abandoned" | "moving" | "moved"
  readonly key_id: string | null
  readonly account_id: string | null
  readonly booking_reference: string | null
  readonly reason: string | null
  readonly refund_outcome: RefundOutcome | null
  readonly lease_expired: boolean
}

interface RefundRow extends RefundFacts {
  readonly id: string
  readonly change_id: string
  readonly booking_id: string
  readonly payment_id: string
  readonly seq: number
  readonly idempotency_reference: string
  readonly currency: string
  readonly provider_refund_order_id: string | null
  readonly attempts: number
  readonly merchant_id: string
  readonly provider_order_id: string
  readonly provider_payment_id: string | null
  readonly operator_id: string
}

const REFUND_COLUMNS = `r.id, r.change_id, r.booking_id, r.payment_id, r.seq, r.method, r.idempotency_reference,
  r.amount_minor::int AS "amountMinor", r.refunded_minor::int AS "refundedMinor", r.currency, r.state,
  r.provider_refund_order_id, r.attempts, p.merchant_id, p.provider_order_id, p.provider_payment_id, b.operator_id`

/** What one provider answer does to a refund row. */
type RowUpdate = MoneyReturnUpdate

const unavailable = (what: string) =>
  new Unavailable({ detail: `the booking system did not answer (${what}); nothing changed; retry with the same Idempotency-Key` })

const factsOf = (b: BookingRow): CancelFacts => ({
  status: b.status,
  amountMinor: b.amount_minor,
  currency: b.currency.trim(),
  paymentStrategy: b.payment_strategy,
  payLaterStatus: b.pay_later_status,
  payLaterAmountMinor: b.pay_later_amount_minor
})

const busy = changeRunning

export class Cancels extends Effect.Service<Cancels>()("Cancels", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const bookingSystem = yield* BookingSystem
    const provider = yield* PaymentProvider
    const accounts = yield* BookingSystemAccounts
    const paymentAccounts = yield* OperatorPaymentAccounts
    const outbox = yield* Outbox
    const crash = yield* CrashPoints
    const paidLinks = yield* PaidLinks
    const { leaseSeconds } = yield* BookingChangeConfig

    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    const loadBooking = (id: string, operatorIds: ReadonlyArray<string>) =>
      sql<BookingRow>`
        SELECT b.id, b.status, b.operator_id, b.amount_minor::int AS amount_minor, b.currency, b.payment_strategy,
          b.pay_later_status, b.pay_later_amount_minor::int AS pay_later_amount_minor, b.provider_reference, b.experience_date,
          coalesce(tour_operator.booking_system_account_id, o.booking_system_account_id) AS account_id
        FROM bookings b
        JOIN operators o ON o.id = b.operator_id
        LEFT JOIN tours t ON t.id = b.tour_id
        LEFT JOIN operators tour_operator ON tour_operator.id = t.operator_id
        WHERE b.id = ${id}::uuid AND b.operator_id = ANY(${toPgArray(operatorIds)}::uuid[])
          AND b.status IN ('RESERVED', 'CONFIRMED', 'CANCELLED', 'REFUNDED')`.pipe(
        Effect.orDie,
        Effect.flatMap(([row]) => (row ? Effect.succeed(row) : Effect.fail(notYours("booking"))))
      )

    const paymentsOf = (bookingId: string) =>
      sql<PaymentFacts & { readonly merchantId: string }>`
        SELECT id, amount_minor::int AS "amountMinor", currency, paid_at AS "paidAt",
          provider_payment_id AS "providerPaymentId", merchant_id AS "merchantId"
        FROM booking_payments WHERE booking_id = ${bookingId}::uuid ORDER BY paid_at, id`.pipe(Effect.orDie)

    const loadChange = (id: string, lock: boolean) =>
      sql<ChangeRow>`
        SELECT id, booking_id, kind, state, key_id, account_id, booking_reference, reason, refund_outcome,
          lease_until < now() AS lease_expired
        FROM booking_changes WHERE id = ${id}::uuid ${lock ? sql`FOR UPDATE` : sql``}`.pipe(
        Effect.map((rows) => rows[0])
      )

    const refundsOfChange = (changeId: string) =>
      sql<RefundRow>`
        SELECT ${sql.literal(REFUND_COLUMNS)}
        FROM booking_refunds r JOIN booking_payments p ON p.id = r.payment_id JOIN bookings b ON b.id = r.booking_id
        WHERE r.change_id = ${changeId}::uuid ORDER BY r.payment_id, r.seq`

    /** The provider account a refund acts on: the operator's credentials, the payment's merchant. */
    const providerAccount = (operatorId: string, merchantId: string) =>
      Effect.flatMap(paymentAccounts.forOperator(operatorId), Option.match({
        onNone: () => Effect.dieMessage(`operator ${operatorId} has payments but no payment account`),
        onSome: (a): Effect.Effect<PaymentAccount> => Effect.succeed({ ...a, merchantId })
      }))

    // ---------------------------------------------------------------------------------------------
    // Step 3: one money-moving call (or status read) per refund row

    /** Calls the provider for one row (again with the same reference when unsure) and maps its answer. */
    const callProvider = (row: RefundRow, account: PaymentAccount): Effect.Effect<RowUpdate> =>
      returnPayment(provider, account, {
        method: row.method,
        state: row.state === "settling" ? "settling" : "requested",
        purchaseOrderId: row.provider_order_id,
        paymentId: row.provider_payment_id,
        refundOrderId: row.provider_refund_order_id,
        amountMinor: row.amountMinor,
        currency: row.currency.trim(),
        idempotencyReference: row.idempotency_reference,
        description: "Cancellation refund"
      })

    /** Records one answer; a superseded void or a partial refund gets its follow-up row in the same transaction. */
    const record = (row: RefundRow, update: RowUpdate) =>
      sql.withTransaction(Effect.gen(function*() {
        const random = yield* Random.next
        const backoff = retryDelayMillis(row.attempts + 1, REFUND_RETRY, random)
        const later = sql`now() + make_interval(secs => ${backoff / 1000})`
        switch (update._tag) {
          case "Completed":
            yield* sql`
              UPDATE booking_refunds SET state = 'completed', refunded_minor = ${update.refundedMinor},
                provider_refund_order_id = coalesce(${update.refundOrderId}, provider_refund_order_id), last_error = null,
                completed_at = now(), updated_at = now()
              WHERE id = ${row.id}::uuid AND state IN ('requested', 'settling')`
            return
          case "Settling":
            yield* sql`
              UPDATE booking_refunds SET state = 'settling', next_attempt_at = ${later},
                provider_refund_order_id = coalesce(${update.refundOrderId}, provider_refund_order_id), updated_at = now()
              WHERE id = ${row.id}::uuid AND state IN ('requested', 'settling')`
            return
          case "NoAnswer":
            yield* sql`
              UPDATE booking_refunds SET next_attempt_at = ${later}, last_error = ${update.detail.slice(0, 1000)}, updated_at = now()
              WHERE id = ${row.id}::uuid AND state IN ('requested', 'settling')`
            return
          case "Failed":
            yield* sql`
              UPDATE booking_refunds SET state = 'failed', last_error = ${update.detail.slice(0, 1000)}, updated_at = now()
              WHERE id = ${row.id}::uuid AND state IN ('requested', 'settling')`
            return
          case "Superseded":
          case "Partial": {
            const [changed] = yield* sql<{ id: string }>`
              UPDATE booking_refunds SET
                state = ${update._tag === "Superseded" ? "superseded" : "partial"},
                refunded_minor = ${update._tag === "Partial" ? update.refundedMinor : 0},
                provider_refund_order_id = ${update._tag === "Partial" ? update.refundOrderId : null},
                last_error = ${update._tag === "Superseded" ? update.detail.slice(0, 1000) : null}, updated_at = now()
              WHERE id = ${row.id}::uuid AND state IN ('requested', 'settling') RETURNING id`
            if (changed === undefined) return
            const rest = row.amountMinor - (update._tag === "Partial" ? update.refundedMinor : 0)
            if (rest <= 0) return
            const seq = row.seq + 1
            yield* sql`
              INSERT INTO booking_refunds (change_id, booking_id, payment_id, seq, method, idempotency_reference, amount_minor, currency, state)
              VALUES (${row.change_id}::uuid, ${row.booking_id}::uuid, ${row.payment_id}::uuid, ${seq}, 'refund',
                ${refundReference(row.change_id, row.payment_id, seq)}, ${rest}, ${row.currency}, 'requested')
              ON CONFLICT (change_id, payment_id, seq) DO NOTHING`
            return
          }
        }
      })).pipe(Effect.orDie)

    /** One call for one row, recorded; increments its attempts first so that a crash still counts. */
    const attempt = (row: RefundRow) =>
      Effect.gen(function*() {
        yield* sql`UPDATE booking_refunds SET attempts = attempts + 1 WHERE id = ${row.id}::uuid`.pipe(Effect.orDie)
        const account = yield* providerAccount(row.operator_id, row.merchant_id)
        const update = yield* callProvider(row, account)
        yield* crash.reached("cancel.after_refund")
        yield* record(row, update)
        return update
      }).pipe(Effect.withSpan("Cancels.refund", { attributes: { refund: row.id, method: row.method, state: row.state } }))

    /**
     * Every open row of a change, once each; rows that replace a superseded void or the rest of a
     * partial refund are tried in the same pass (a bounded number of rounds).
     */
    const attemptOpen = (changeId: string) =>
      Effect.gen(function*() {
        for (let round = 0; round < 4; round++) {
          const rows = (yield* refundsOfChange(changeId).pipe(Effect.orDie)).filter((r) => r.state === "requested")
          if (rows.length === 0) return
          let followUps = false
          for (const row of rows) {
            const update = yield* attempt(row)
            if (update._tag === "Superseded" || update._tag === "Partial") followUps = true
          }
          if (!followUps) return
        }
      })

    // ---------------------------------------------------------------------------------------------
    // Step 4, and where a booking stands afterwards

    const alertIfOpen = (bookingId: string, changeId: string, outcome: CancelOutcome) =>
      outcome.alert
        ? Effect.zipRight(
          sql`UPDATE booking_refunds SET alerted_at = coalesce(alerted_at, now())
            WHERE change_id = ${changeId}::uuid AND state IN ('requested', 'settling', 'failed')`.pipe(Effect.orDie),
          Effect.logError("cancel: seats released but the refund did not complete; the refund job keeps finishing it").pipe(
            Effect.annotateLogs({ alert: "refund_incomplete", booking_id: bookingId, change_id: changeId })
          )
        )
        : Effect.void

    const emailRefund = (outcome: RefundOutcome, amountMinor: number, currency: string) =>
      outcome === "none"
        ? { outcome: "none" as const }
        : { outcome: outcome === "refunded" ? "refunded" as const : "processing" as const, amount: { amountMinor, currency } }

    /**
     * Step 4, once: the booking, its mirror rows, the emails and `done`, in one transaction. Does
     * nothing when the change is not `released` (finished by someone else). Returns the outcome.
     */
    const complete = (changeId: string) =>
      sql.withTransaction(Effect.gen(function*() {
        const change = yield* loadChange(changeId, true)
        if (change === undefined || change.state !== "released") return undefined
        const refunds = yield* refundsOfChange(changeId)
        const [b] = yield* sql<{
          status: string
          operator_id: string
          operator_name: string
          operator_timezone: string
          confirmation_code: string
          tour_name: string | null
          experience_date: string | null
          start_time: string | null
          participants: number | null
          guest_name: string | null
          guest_email: string | null
          currency: string
          key_name: string | null
        }>`
          SELECT b.status, b.operator_id, o.name AS operator_name, o.timezone AS operator_timezone, b.confirmation_code,
            b.tour_name, b.experience_date, b.start_time, b.participants, b.guest_name, b.guest_email, b.currency,
            (SELECT name FROM api_keys WHERE id = ${change.key_id}) AS key_name
          FROM bookings b JOIN operators o ON o.id = b.operator_id WHERE b.id = ${change.booking_id}::uuid FOR UPDATE OF b`
        const live = b!.status === "RESERVED" ? "RESERVED" : "CONFIRMED"
        const outcome = cancelOutcome(live, refunds)
        const amountMinor = refunds.filter((r) => r.seq === 1).reduce((sum, r) => sum + r.amountMinor, 0)
        yield* sql`
          UPDATE bookings SET status = ${outcome.status}, cancel_reason = ${change.reason},
            commission_status = CASE WHEN commission_amount_minor IS NULL THEN commission_status ELSE 'voided' END,
            pay_later_status = CASE
              WHEN pay_later_status IN ('upcoming', 'failed') THEN 'cancelled'
              WHEN pay_later_status = 'collected' AND ${outcome.outcome === "refunded"} THEN 'cancelled'
              ELSE pay_later_status END,
            updated_at = now()
          WHERE id = ${change.booking_id}::uuid`
        yield* sql`UPDATE manifest_rows SET status = 'CANCELLED' WHERE service_booking_id = ${change.booking_id}::uuid`
        // Its open balance links are owed nothing now: the payment-link watch closes them at its next run.
        yield* sql`
          UPDATE payment_links SET next_check_at = now()
          WHERE booking_id = ${change.booking_id}::uuid AND state IN ('open', 'closing')`
        const tourName = b!.tour_name && b!.tour_name.trim() ? b!.tour_name : "your tour"
        const currency = b!.currency.trim()
        const refund = emailRefund(outcome.outcome, amountMinor, currency)
        const departure = { date: b!.experience_date!, startTime: b!.start_time }
        if (b!.guest_email) {
          yield* outbox.enqueue({
            dedupeKey: outboxKeys.cancelled(change.booking_id, "guest"),
            to: b!.guest_email,
            locale: "en",
            operatorId: b!.operator_id,
            bookingId: change.booking_id,
            template: "booking_cancelled_guest",
            data: {
              guestName: b!.guest_name,
              operatorName: b!.operator_name,
              operatorContact: null,
              tourName,
              bookingReference: b!.confirmation_code,
              departure,
              participants: b!.participants,
              refund
            }
          })
        }
        const team = yield* outbox.teamAddresses(b!.operator_id)
        if (team.length > 0) {
          yield* outbox.enqueue({
            dedupeKey: outboxKeys.cancelled(change.booking_id, "team"),
            to: team,
            locale: teamLocale(b!.operator_timezone),
            operatorId: b!.operator_id,
            bookingId: change.booking_id,
            template: "booking_cancelled_team",
            data: {
              operatorName: b!.operator_name,
              tourName,
              bookingReference: b!.confirmation_code,
              departure,
              participants: b!.participants,
              guestName: b!.guest_name,
              reason: change.reason ?? "(none given)",
              cancelledBy: b!.key_name ? `Partner API key "${b!.key_name}"` : "the Partner API",
              refund
            }
          })
        }
        yield* sql`
          UPDATE booking_changes SET state = 'done', refund_outcome = ${outcome.outcome}, finished_at = now()
          WHERE id = ${changeId}::uuid`
        yield* alertIfOpen(change.booking_id, changeId, outcome)
        return { outcome, amountMinor, currency }
      })).pipe(Effect.orDie, Effect.withSpan("Cancels.complete"))

    /**
     * After a completed cancel's refunds moved on (the job): the booking goes forward only (live to
     * CANCELLED to REFUNDED), and the change keeps the latest outcome.
     */
    const settle = (changeId: string) =>
      sql.withTransaction(Effect.gen(function*() {
        const change = yield* loadChange(changeId, true)
        if (change === undefined || change.state !== "done") return undefined
        const refunds = yield* refundsOfChange(changeId)
        const [b] = yield* sql<{ status: string }>`SELECT status FROM bookings WHERE id = ${change.booking_id}::uuid FOR UPDATE`
        const outcome = cancelOutcome(b!.status === "RESERVED" ? "RESERVED" : "CONFIRMED", refunds)
        const rank = (s: string) => (s === "REFUNDED" ? 2 : s === "CANCELLED" ? 1 : 0)
        if (rank(outcome.status) > rank(b!.status)) {
          yield* sql`
            UPDATE bookings SET status = ${outcome.status},
              pay_later_status = CASE WHEN pay_later_status = 'collected' AND ${outcome.outcome === "refunded"}
                THEN 'cancelled' ELSE pay_later_status END,
              updated_at = now()
            WHERE id = ${change.booking_id}::uuid`
        }
        if (outcome.outcome !== change.refund_outcome) {
          yield* sql`UPDATE booking_changes SET refund_outcome = ${outcome.outcome} WHERE id = ${changeId}::uuid`
        }
        return outcome
      })).pipe(Effect.orDie, Effect.withSpan("Cancels.settle"))

    // ---------------------------------------------------------------------------------------------
    // Step 2b: the booking's balance payment links, closed at the provider

    const linkGone = (row: LinkRow, reason: string, linkId: string | null) =>
      sql`
        UPDATE payment_links SET state = 'closed', closed_reason = ${reason}, provider_link_id = coalesce(provider_link_id, ${linkId}),
          last_checked_at = now(), last_error = NULL, updated_at = now()
        WHERE id = ${row.id}::uuid AND state = 'closing'`.pipe(Effect.orDie, Effect.asVoid)

    const linkLeft = (row: LinkRow, e: PaymentProviderError) =>
      sql`
        UPDATE payment_links SET last_error = ${`${e.operation}: ${e.reason}: ${e.detail}`.slice(0, 1000)}, next_check_at = now()
        WHERE id = ${row.id}::uuid AND state = 'closing'`.pipe(Effect.orDie, Effect.asVoid)

    /**
     * One link of the cancelled booking, taken over (`closing`): learnt (a `creating` one, by sending
     * its own reference and request again, as a retrying request would), then cancelled at the
     * provider and closed (`booking_cancelled`). Refused because the guest has paid it: the payment
     * is recorded (`PaidLinks.record`) and goes back with the cancel's refunds. A provider that does
     * not answer leaves it `closing` and due: the payment-link watch settles it (and a payment that
     * still arrives is refunded).
     */
    const closeLink = (row: LinkRow) =>
      Effect.gen(function*() {
        const found = yield* paymentAccounts.forOperator(row.operator_id)
        if (Option.isNone(found)) return
        const account: PaymentAccount = { ...found.value, merchantId: row.merchant_id }
        let linkId = row.provider_link_id
        if (linkId === null) {
          const created = yield* Effect.either(provider.createPaymentLink(account, linkRequest(row)))
          if (Either.isLeft(created)) {
            const e = created.left
            // A definite "no" is never stored by the provider: no link exists under this reference.
            if (e._tag === "PaymentProviderRejected" && e.reason !== "idempotency_conflict") return yield* linkGone(row, "abandoned", null)
            return yield* linkLeft(row, e)
          }
          linkId = created.right.linkId
          yield* sql`
            UPDATE payment_links SET provider_link_id = ${linkId}, url = ${created.right.url}, expires_at = ${created.right.expiresAt},
              updated_at = now()
            WHERE id = ${row.id}::uuid AND state = 'closing'`.pipe(Effect.orDie)
        }
        const cancelled = yield* Effect.either(provider.cancelPaymentLink(account, { linkId, idempotencyReference: cancelReference(row) }))
        if (Either.isRight(cancelled)) return yield* linkGone(row, "booking_cancelled", linkId)
        if (cancelled.left._tag === "PaymentProviderUnavailable") return yield* linkLeft(row, cancelled.left)
        const status = yield* Effect.either(provider.paymentLinkStatus(account, linkId))
        if (Either.isLeft(status)) return yield* linkLeft(row, status.left)
        if (status.right.state === "paid") {
          yield* paidLinks.record({ ...row, provider_link_id: linkId }, status.right)
          return
        }
        if (status.right.state !== "open") return yield* linkGone(row, status.right.state, linkId)
        return yield* linkLeft(row, cancelled.left)
      }).pipe(
        Effect.catchAllCause((cause) => Effect.logWarning(`cancel: payment link ${row.id} could not be closed now; the payment-link watch will`, cause)),
        Effect.withSpan("Cancels.closeLink", { attributes: { link: row.id, state: row.state } })
      )

    /**
     * After the seats are released and before the refunds are written (a crash in between is
     * repeated by recovery: every call here uses the link's own references): every live link of the
     * booking is taken over (`closing`) under the per-booking lock the payment-link write takes, so
     * that no request sends or makes a link from then on, and closed at the provider. A payment
     * found on the way is recorded first, so that the refund rows written next include it.
     */
    const closeLinks = (bookingId: string) =>
      Effect.gen(function*() {
        const rows = yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`SELECT pg_advisory_xact_lock(hashtext(${`payment_link:booking:${bookingId}`}))`
          return yield* sql<LinkRow>`
            UPDATE payment_links SET state = 'closing', next_check_at = now(), updated_at = now()
            WHERE booking_id = ${bookingId}::uuid AND state IN ('creating', 'open', 'closing')
            RETURNING ${sql.literal(LINK_COLUMNS)}`
        })).pipe(Effect.orDie)
        yield* Effect.forEach(rows, closeLink, { discard: true })
      }).pipe(Effect.withSpan("Cancels.closeLinks"))

    // ---------------------------------------------------------------------------------------------
    // Steps 1 and 2

    /** The release is confirmed: `released` and one refund row per payment, together. */
    const markReleased = (changeId: string, bookingId: string) =>
      sql.withTransaction(Effect.gen(function*() {
        const [updated] = yield* sql<{ id: string }>`
          UPDATE booking_changes SET state = 'released', moved_at = now()
          WHERE id = ${changeId}::uuid AND state = 'releasing' RETURNING id`
        if (updated === undefined) return
        const at = yield* now
        const [b] = yield* sql<{ currency: string }>`SELECT currency FROM bookings WHERE id = ${bookingId}::uuid`
        for (const p of yield* paymentsOf(bookingId)) {
          yield* sql`
            INSERT INTO booking_refunds (change_id, booking_id, payment_id, seq, method, idempotency_reference, amount_minor, currency, state)
            VALUES (${changeId}::uuid, ${bookingId}::uuid, ${p.id}::uuid, 1, ${refundMethod(p, at)},
              ${refundReference(changeId, p.id, 1)}, ${p.amountMinor}, ${b!.currency}, 'requested')`
        }
      })).pipe(Effect.orDie)

    const markAbandoned = (changeId: string, reason: string) =>
      sql`
        UPDATE booking_changes SET state = 'abandoned', finished_at = now(), last_error = ${reason.slice(0, 1000)}
        WHERE id = ${changeId}::uuid AND state = 'releasing'`.pipe(Effect.orDie, Effect.asVoid)

    /** Whether the booking system shows the booking cancelled (every line); Left: it did not answer. */
    const releasedInBookingSystem = (accountId: string, reference: string) =>
      Effect.gen(function*() {
        const account = (yield* Effect.orDie(accounts.byId(accountId))).account
        const lines = yield* bookingSystem.booking(account, reference).pipe(Effect.either)
        if (Either.isRight(lines)) return Either.right(lines.right.every((l) => l.status === "CANCELLED"))
        if (lines.left._tag === "BookingSystemRejected" && lines.left.reason === "not_found") return Either.right(true)
        return Either.left(lines.left.detail)
      })

    /** Steps 3 and 4 for a released change (a request, or recovery after a crash). */
    const finish = (changeId: string) =>
      Effect.gen(function*() {
        yield* attemptOpen(changeId)
        yield* crash.reached("cancel.before_complete")
        return yield* complete(changeId)
      })

    /**
     * Finishes one cancel a crash left open: `released` is finished; `releasing` goes on when the
     * booking system shows the booking cancelled, else it is abandoned; without an answer it stays.
     */
    const recoverOne = (change: ChangeRow) =>
      Effect.gen(function*() {
        yield* sql`UPDATE booking_changes SET attempts = attempts + 1 WHERE id = ${change.id}::uuid`.pipe(Effect.orDie)
        if (change.state === "releasing") {
          if (change.account_id !== null && change.booking_reference !== null) {
            const released = yield* releasedInBookingSystem(change.account_id, change.booking_reference)
            if (Either.isLeft(released)) {
              yield* sql`UPDATE booking_changes SET last_error = ${released.left.slice(0, 1000)} WHERE id = ${change.id}::uuid`
                .pipe(Effect.orDie)
              return "pending" as const
            }
            if (!released.right) {
              yield* markAbandoned(change.id, "recovery: the booking system did not cancel the booking")
              return "abandoned" as const
            }
          }
          yield* closeLinks(change.booking_id)
          yield* markReleased(change.id, change.booking_id)
        }
        return (yield* finish(change.id)) === undefined ? "pending" as const : "completed" as const
      }).pipe(Effect.withSpan("Cancels.recoverOne", { attributes: { change: change.id, state: change.state } }))

    // ---------------------------------------------------------------------------------------------
    // The job

    /**
     * Cancels left open past their lease are finished; then refunds still open after their cancel
     * completed are tried again (same reference) or read (settling), and the booking follows. One
     * failing change or refund never stops the others.
     */
    const recover = () =>
      Effect.gen(function*() {
        const stale = yield* sql<{ id: string }>`
          SELECT id FROM booking_changes WHERE kind = 'cancel' AND state IN ('releasing', 'released') AND lease_until < now()
          ORDER BY created_at LIMIT 100`.pipe(Effect.orDie)
        const changes = { found: stale.length, completed: 0, abandoned: 0, pending: 0 }
        for (const { id } of stale) {
          // The lease is taken again so that a request retrying the same booking waits (409).
          const [claimed] = yield* sql<{ id: string }>`
            UPDATE booking_changes SET lease_until = now() + make_interval(secs => ${leaseSeconds})
            WHERE id = ${id}::uuid AND state IN ('releasing', 'released') AND lease_until < now() RETURNING id`.pipe(Effect.orDie)
          if (claimed === undefined) continue
          const change = yield* loadChange(id, false).pipe(Effect.orDie)
          const outcome = yield* recoverOne(change!).pipe(
            Effect.catchAllCause((cause) =>
              Effect.as(Effect.logWarning(`cancel ${id} could not be recovered`, cause), "pending" as const))
          )
          changes[outcome] += 1
        }

        // Claim due rows of completed cancels by pushing their next attempt out (no other runner takes them).
        const due = yield* sql<{ id: string; change_id: string }>`
          UPDATE booking_refunds SET next_attempt_at = now() + interval '5 minutes'
          WHERE id IN (
            SELECT r.id FROM booking_refunds r JOIN booking_changes c ON c.id = r.change_id
            WHERE r.state IN ('requested', 'settling') AND r.next_attempt_at <= now() AND c.state = 'done'
            ORDER BY r.next_attempt_at LIMIT 100 FOR UPDATE OF r SKIP LOCKED)
          RETURNING id, change_id`.pipe(Effect.orDie)
        const refunds = { found: due.length, completed: 0, open: 0, failed: 0 }
        const touched = new Set<string>()
        for (const { id, change_id } of due) {
          const [row] = yield* sql<RefundRow>`
            SELECT ${sql.literal(REFUND_COLUMNS)}
            FROM booking_refunds r JOIN booking_payments p ON p.id = r.payment_id JOIN bookings b ON b.id = r.booking_id
            WHERE r.id = ${id}::uuid`.pipe(Effect.orDie)
          if (row === undefined || (row.state !== "requested" && row.state !== "settling")) continue
          const update = yield* attempt(row).pipe(
            Effect.catchAllCause((cause) =>
              Effect.as(Effect.logWarning(`refund ${id} could not be followed up`, cause), { _tag: "NoAnswer", detail: "" } as RowUpdate))
          )
          touched.add(change_id)
          if (update._tag === "Completed") refunds.completed += 1
          else if (update._tag === "Failed") refunds.failed += 1
          else refunds.open += 1
          if (update._tag === "Superseded" || update._tag === "Partial") yield* attemptOpen(change_id)
        }
        for (const changeId of touched) {
          const outcome = yield* settle(changeId)
          const [b] = yield* sql<{ booking_id: string }>`SELECT booking_id FROM booking_changes WHERE id = ${changeId}::uuid`
            .pipe(Effect.orDie)
          if (outcome !== undefined && outcome.alert && b !== undefined) yield* alertIfOpen(b.booking_id, changeId, outcome)
        }
        return { changes, refunds } satisfies CancelRecoverySummary
      }).pipe(Effect.withSpan("Cancels.recover"))

    /**
     * Sends now the refunds of a completed cancel that are due: rows written for a payment that
     * arrived after the cancel completed (a balance payment link paid late, PaidLinks.record), for
     * the payment-link watch that found it. Claimed as the job claims them (never sent by both at
     * once), sent with the reference recorded in the row, the booking moved on as the job does.
     */
    const refundLate = (changeId: string) =>
      Effect.gen(function*() {
        const due = yield* sql<{ id: string }>`
          UPDATE booking_refunds SET next_attempt_at = now() + interval '5 minutes'
          WHERE id IN (
            SELECT r.id FROM booking_refunds r JOIN booking_changes c ON c.id = r.change_id
            WHERE r.change_id = ${changeId}::uuid AND r.state = 'requested' AND r.next_attempt_at <= now() AND c.state = 'done'
            FOR UPDATE OF r SKIP LOCKED)
          RETURNING id`.pipe(Effect.orDie)
        if (due.length === 0) return undefined
        let followUps = false
        for (const { id } of due) {
          const [row] = yield* sql<RefundRow>`
            SELECT ${sql.literal(REFUND_COLUMNS)}
            FROM booking_refunds r JOIN booking_payments p ON p.id = r.payment_id JOIN bookings b ON b.id = r.booking_id
            WHERE r.id = ${id}::uuid`.pipe(Effect.orDie)
          if (row === undefined || row.state !== "requested") continue
          const update = yield* attempt(row).pipe(
            Effect.catchAllCause((cause) =>
              Effect.as(Effect.logWarning(`refund ${id} could not be sent now`, cause), { _tag: "NoAnswer", detail: "" } as RowUpdate))
          )
          if (update._tag === "Superseded" || update._tag === "Partial") followUps = true
        }
        if (followUps) yield* attemptOpen(changeId).pipe(Effect.orDie)
        const outcome = yield* settle(changeId)
        const [c] = yield* sql<{ booking_id: string }>`SELECT booking_id FROM booking_changes WHERE id = ${changeId}::uuid`
          .pipe(Effect.orDie)
        if (outcome !== undefined && outcome.alert && c !== undefined) yield* alertIfOpen(c.booking_id, changeId, outcome)
        return outcome
      }).pipe(Effect.withSpan("Cancels.refundLate", { attributes: { change: changeId } }))

    // ---------------------------------------------------------------------------------------------
    // The write

    const refuse = (detail: string) => new NotPossible({ detail })

    /**
     * The answer from a cancel made before: `already_cancelled` (a no-op), or, when this request has
     * just finished a cancel an earlier attempt left open, that cancel's result.
     */
    const previousCancel = (b: BookingRow, finishedNow = false) =>
      Effect.gen(function*() {
        const [last] = yield* sql<{ id: string; refund_outcome: RefundOutcome | null }>`
          SELECT id, refund_outcome FROM booking_changes
          WHERE booking_id = ${b.id}::uuid AND kind = 'cancel' AND state = 'done'
          ORDER BY finished_at DESC LIMIT 1`.pipe(Effect.orDie)
        const refunds = last === undefined ? [] : yield* refundsOfChange(last.id).pipe(Effect.orDie)
        // Cancelled elsewhere (the dashboard, before this service kept cancels): what the status says.
        const unrecorded = b.status === "REFUNDED"
          ? { outcome: "refunded" as const, amount: paidMinor(factsOf(b)) }
          : { outcome: "none" as const, amount: 0 }
        const done: WriteDone<CancelResultBody> = {
          body: {
            id: b.id,
            status: apiStatusOf(b.status),
            already_cancelled: !finishedNow,
            refund: {
              outcome: last === undefined ? unrecorded.outcome : last.refund_outcome ?? "none",
              amount_minor: last === undefined
                ? unrecorded.amount
                : refunds.filter((r) => r.seq === 1).reduce((sum, r) => sum + r.amountMinor, 0),
              currency: b.currency.trim()
            }
          },
          noop: !finishedNow
        }
        return done
      })

    const cancel = (id: string, request: { readonly reason: string }, ctx: WriteContext) =>
      Effect.gen(function*() {
        // Before the booking is read: the claim holds only if no change was made since (src/partner/bookingChanges/claim.ts).
        const seen = yield* seenChanges(sql, id)
        const b = yield* loadBooking(id, ctx.operatorIds)
        yield* ctx.target(b.operator_id)
        if (!isLive(b.status)) return yield* previousCancel(b)

        // A change of this booking still open: running (409), or a cancel left by a crash (finish it).
        const [open] = yield* sql<{ id: string }>`
          SELECT id FROM booking_changes WHERE booking_id = ${b.id}::uuid AND state IN ('moving', 'moved', 'releasing', 'released')`
          .pipe(Effect.orDie)
        if (open !== undefined) {
          const change = yield* loadChange(open.id, false).pipe(Effect.orDie)
          if (change === undefined || !change.lease_expired || change.kind !== "cancel") return yield* busy()
          yield* ctx.beforeChange
          const outcome = yield* recoverOne(change)
          if (outcome === "pending") return yield* unavailable("finishing an earlier cancel of this booking")
          if (outcome === "completed") return yield* previousCancel(yield* loadBooking(id, ctx.operatorIds), true)
        }
        // Seats released earlier, refund still being finished: that cancel stands.
        const [released] = yield* sql<{ id: string }>`
          SELECT id FROM booking_changes WHERE booking_id = ${b.id}::uuid AND kind = 'cancel' AND state = 'done' LIMIT 1`
          .pipe(Effect.orDie)
        if (released !== undefined) return yield* previousCancel(b)

        const payments = paymentsToRefund(factsOf(b), yield* paymentsOf(b.id))
        if (Either.isLeft(payments)) return yield* refuse(payments.left)
        if (payments.right.length > 0 && Option.isNone(yield* paymentAccounts.forOperator(b.operator_id))) {
          return yield* refuse("the operator has no payment account, so the refund cannot be made; cancel it in the dashboard")
        }
        if (b.experience_date === null) {
          return yield* refuse("the booking has no departure day, so the guest cannot be told what was cancelled; cancel it in the dashboard")
        }
        if (b.provider_reference !== null && b.account_id === null) {
          return yield* refuse("the booking has a booking-system reference but its operator is not linked to a booking system, so its seats cannot be released")
        }

        // Step 1: the intent, committed before the booking system is asked (and the daily slot taken).
        yield* ctx.beforeChange
        const change = yield* claimChange(sql, seen, sql<{ id: string }>`
          INSERT INTO booking_changes (booking_id, kind, state, key_id, account_id, booking_reference, reason, lease_until)
          VALUES (${b.id}::uuid, 'cancel', 'releasing', ${ctx.keyId}, ${b.account_id}, ${b.provider_reference}, ${request.reason},
            now() + make_interval(secs => ${leaseSeconds}))
          ON CONFLICT DO NOTHING
          RETURNING id`)

        // Step 2: the booking system releases the seats (a booking it never knew holds none).
        if (b.provider_reference !== null) {
          const account = (yield* Effect.orDie(accounts.byId(b.account_id!))).account
          const cancelled = yield* bookingSystem.cancel(account, b.provider_reference, request.reason).pipe(Effect.either)
          if (Either.isLeft(cancelled)) {
            const error = cancelled.left
            if (error._tag === "BookingSystemRejected" && error.reason !== "not_found") {
              yield* markAbandoned(change.id, `${error.reason}: ${error.detail}`)
              return yield* refuse(`the booking system refused to cancel the booking (${error.reason}): ${error.detail}`)
            }
            if (error._tag === "BookingSystemUnavailable") {
              // No answer: the cancel may or may not have happened. Ask once.
              const released = yield* releasedInBookingSystem(b.account_id!, b.provider_reference)
              // Unknown: the change stays `releasing`; the job (or a retry after the lease) settles it.
              if (Either.isLeft(released)) return yield* unavailable("cancelling the booking")
              if (!released.right) {
                yield* markAbandoned(change.id, `the booking system did not answer the cancel: ${error.detail}`)
                return yield* unavailable("cancelling the booking")
              }
            }
          }
        }
        yield* crash.reached("cancel.after_release")
        yield* closeLinks(b.id)
        yield* markReleased(change.id, b.id)
        yield* crash.reached("cancel.after_released")

        // Steps 3 and 4.
        const result = yield* finish(change.id)
        if (result === undefined) return yield* previousCancel(yield* loadBooking(id, ctx.operatorIds), true)
        const done: WriteDone<CancelResultBody> = {
          body: {
            id: b.id,
            status: apiStatusOf(result.outcome.status),
            already_cancelled: false,
            refund: { outcome: result.outcome.outcome, amount_minor: result.amountMinor, currency: result.currency }
          },
          noop: false
        }
        return done
      }).pipe(Effect.withSpan("Cancels.cancel"))

    return { cancel, recover, refundLate } as const
  }),
  dependencies: [BookingSystemAccounts.Default, OperatorPaymentAccounts.Default, CrashPoints.Default, PaidLinks.Default]
}) {}
