/**
 * Balance payment links (POST /api/v1/bookings/{id}/payment-link; docs/api/writes.md, rules in
 * src/partner/paymentLinks/rules.ts). Runs inside `Writes.run` (not transactional: it calls the payment
 * provider and the booking system).
 *
 * Steps, and what a crash between them leaves:
 * 1. Resolve the id: a service booking of the key's operators, else a manifest row of theirs (a
 *    row of a service booking stands for that booking), else 404.
 *    A booking whose cancel has begun (a `cancel` change releasing, released or done) counts as
 *    cancelled. The links of a booking-system booking are kept on its first manifest row, whichever
 *    line the request names.
 * 2. Decide kind and amount; the booking system is asked for `provider_balance` (503 when it does
 *    not answer), less what this service itself collected for the booking (its payments on record,
 *    paid links, the desk sale that made it): the booking system may not know of that money.
 * 3. An open link for the same amount is sent again (after the provider confirms it is still
 *    open). Otherwise a `payment_links` row in state `creating` with a new idempotency reference is
 *    committed BEFORE the provider is called, under a per-booking advisory lock (every instance
 *    takes it, and so does a cancel closing the booking's links): a new row only when the booking
 *    has no live link, so that concurrent requests share one link. A crash or a lost answer after
 *    that leaves the row; the next attempt (a retry with the same Idempotency-Key, or any later call
 *    for the booking) calls the provider with the same reference and the same request, and the
 *    provider answers the first link: never a second one. Links that no longer match what is owed
 *    are closed at the provider first.
 * 4. One transaction, under the link row's lock, marks the row `open` and enqueues the guest's
 *    email, whose dedupe key names the booking and this request (key id + Idempotency-Key): a retry
 *    after a crash here enqueues nothing new. A link emailed within LINK_EMAIL_WINDOW_SECONDS
 *    (`emailed_at`) is not emailed again: the request answers that email's outcome, so concurrent
 *    or repeated calls email the guest once per link and window.
 * 5. After commit the email is tried at once (`Outbox.deliverOrAwait`): by this request, or, when
 *    another request or the sender job is trying it at that moment, that attempt is waited for
 *    until its outcome is recorded (a sender that died is taken over after its lease). `emailed` is
 *    true exactly when the email went out, whichever request sent it: every call of the window
 *    answers the same.
 *
 * Crash points (CRASH_AT): `payment_link.after_create` (the provider made the link, the row not yet
 * open), `payment_link.after_open` (open and the email queued, not yet tried).
 *
 * A link the provider says is paid, whenever this write looks at one (an open link about to be sent
 * again, or a link that no longer fits and is being closed), is recorded as the guest's payment
 * (`PaidLinkRecorder.record`: a `booking_payments` row, the pay-later balance collected) before the write
 * answers 422. The `payment-link-watch` job does the same for every open link, and takes over
 * `creating` rows nobody finished (src/partner/paymentLinks/LinkStatusChecks.ts): such a row becomes `closing`,
 * which this write never reuses, and step 4 emails only a row that is still `creating` or `open`.
 */
import { Clock, Effect, Either, Option } from "effect"
import { createHash, randomUUID } from "node:crypto"
import { NotPossible, notYours, Unavailable } from "../../domain/errors.js"
import {
  cancelReference,
  CANCELLED_DETAIL,
  type Collected,
  decidePaymentLink,
  FIRST_LINK_CHECK_SECONDS,
  LINK_EMAIL_WINDOW_SECONDS,
  linkRequest,
  type Owed,
  owedAfterCollected,
  owedFromBalance,
  type PaymentLinkKind,
  reusable
} from "./rules.js"
import type { WriteContext, WriteDone } from "../writes/rules.js"
import { BookingSystem, type BookingSystemError } from "../../ports/BookingSystem.js"
import {
  type PaymentAccount,
  PaymentProvider,
  type PaymentProviderError
} from "../../ports/PaymentProvider.js"
import { BookingSystemAccounts } from "../../operators/BookingSystemAccounts.js"
import { CrashPoints } from "../../lib/CrashPoints.js"
import { OperatorPaymentAccounts } from "../../payments/OperatorPaymentAccounts.js"
import { Outbox } from "../../email/Outbox.js"
import { PaidLinkRecorder } from "./PaidLinkRecorder.js"
import { guestLinkEmail } from "./linkEmails.js"
import { LinkTargetsRepo } from "./LinkTargetsRepo.js"
import { type LinkRow, PaymentLinksRepo } from "./PaymentLinksRepo.js"
import { bookingTarget, linkDescription, rowTarget, type Target } from "./target.js"

export interface PaymentLinkResult {
  readonly id: string
  readonly kind: PaymentLinkKind
  readonly url: string
  readonly amount_minor: number
  readonly currency: string
  readonly emailed: boolean
}

const PAID_BY_LINK_DETAIL = "nothing is owed: the guest has paid this balance through the payment link"

const PAID_EARLIER_LINK_DETAIL =
  "the guest has just paid an earlier payment link of this booking; nothing was sent. Ask again to send a link for any balance still owed"

const LINK_TAKEN_DETAIL =
  "the payment link was closed while it was being sent (it was left unfinished too long); nothing was emailed. Retry with the same Idempotency-Key"

const providerDown = (e: PaymentProviderError): Effect.Effect<never, Unavailable> =>
  e._tag === "PaymentProviderUnavailable"
    ? Effect.fail(new Unavailable({
      detail: "the payment provider did not answer; no link was sent. Retry with the same Idempotency-Key"
    }))
    : Effect.die(e)

const bookingSystemDown = (e: BookingSystemError): Effect.Effect<never, Unavailable | NotPossible> =>
  e._tag === "BookingSystemUnavailable"
    ? Effect.fail(new Unavailable({
      detail: "the booking system did not answer with the balance; nothing was sent. Retry with the same Idempotency-Key"
    }))
    : e.reason === "not_found"
    ? Effect.fail(new NotPossible({ detail: "the booking system does not know this booking: nothing is owed" }))
    : Effect.die(e)

/** The email's occurrence: this request (API key and Idempotency-Key), never a secret. */
const occurrenceOf = (ctx: WriteContext) =>
  createHash("sha256").update(`${ctx.keyId}\n${ctx.idempotencyKey}`).digest("hex").slice(0, 32)

export class PaymentLinks extends Effect.Service<PaymentLinks>()("Partner/PaymentLinks", {
  effect: Effect.gen(function*() {
    const links = yield* PaymentLinksRepo
    const targets = yield* LinkTargetsRepo
    const provider = yield* PaymentProvider
    const bookingSystem = yield* BookingSystem
    const accounts = yield* BookingSystemAccounts
    const outbox = yield* Outbox
    const crash = yield* CrashPoints
    const paymentAccounts = yield* OperatorPaymentAccounts
    const recorder = yield* PaidLinkRecorder

    /** Step 1: the booking, or the manifest row (a row of a service booking is that booking). */
    const resolve = (id: string, operatorIds: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const booking = yield* targets.bookingTarget(id, operatorIds)
        if (Option.isSome(booking)) return bookingTarget(booking.value)
        const found = yield* targets.rowTarget(id, operatorIds)
        if (Option.isNone(found)) return yield* notYours("booking or manifest row")
        const row = found.value
        if (row.service_booking_id !== null) {
          const linked = yield* targets.bookingTarget(row.service_booking_id, operatorIds)
          if (Option.isSome(linked)) return bookingTarget(linked.value)
        }
        const first = yield* targets.firstRowOf(row.account_id, row.booking_id)
        return rowTarget(row, Option.getOrElse(first, () => row.id))
      })

    /**
     * Money this service itself collected for the booking, by currency: for a service booking its
     * payments on record (checkout, paid links); for a booking only in the booking system, its paid
     * links and the desk sale that made it, paid and not being returned.
     */
    const collectedByUs = (target: Target) =>
      Effect.map(
        target.bookingId !== null
          ? targets.collectedForBooking(target.bookingId)
          : targets.collectedForRow(target.key, target.manifestRowId),
        (rows) => rows.map((r): Collected => ({ currency: r.currency.trim(), amountMinor: r.amount_minor }))
      )

    /** Step 2: what is owed. */
    const owedFor = (target: Target) =>
      Effect.gen(function*() {
        const decision = decidePaymentLink(target.rule)
        if (Either.isLeft(decision)) return yield* decision.left
        if (decision.right._tag === "Owed") return decision.right.owed
        const account = yield* accounts.byId(target.accountId!).pipe(Effect.orDie)
        const balance = yield* bookingSystem.balance(account.account, target.reference!).pipe(
          Effect.catchAll(bookingSystemDown)
        )
        const owed = owedFromBalance(balance)
        if (Either.isLeft(owed)) return yield* owed.left
        // The booking system's word is not enough: money this service took for the booking is not owed again.
        const left = owedAfterCollected(owed.right, yield* collectedByUs(target))
        if (Either.isLeft(left)) return yield* left.left
        return left.right
      })

    /** The operator's merchant; 422 when the operator has none. */
    const accountFor = (operatorId: string) =>
      Effect.flatMap(paymentAccounts.forOperator(operatorId), Option.match({
        onNone: () => Effect.fail(new NotPossible({ detail: "payment links are not set up for this operator (no payment account)" })),
        onSome: Effect.succeed
      }))

    /**
     * Closes a link that no longer fits at the provider (finishing its creation first), then here.
     * The provider refusing because the guest has paid it: the payment is recorded and the request
     * answers 422 (what is owed has changed).
     */
    const retire = (row: LinkRow, account: PaymentAccount) =>
      Effect.gen(function*() {
        const at = { ...account, merchantId: row.merchant_id }
        const linkId = row.provider_link_id ??
          (yield* provider.createPaymentLink(at, linkRequest(row)).pipe(Effect.catchAll(providerDown))).linkId
        const refused = yield* provider.cancelPaymentLink(at, { linkId, idempotencyReference: cancelReference(row) }).pipe(
          Effect.as(false),
          Effect.catchTag("PaymentProviderRejected", () => Effect.succeed(true)), // paid, or closed already
          Effect.catchAll(providerDown)
        )
        if (refused) {
          const status = yield* provider.paymentLinkStatus(at, linkId).pipe(Effect.catchAll(providerDown))
          if (status.state === "paid") {
            yield* recorder.record(row, status)
            return yield* new NotPossible({ detail: PAID_EARLIER_LINK_DETAIL })
          }
        }
        yield* links.close(row.id, "superseded")
      })

    /**
     * The `creating` row to use, under the per-booking lock that the cancel's closing of links takes
     * too, so that requests on every instance agree: an existing `creating` row that fits, or a new
     * one only when the booking has no live link at all. Any other live link (one that became open
     * since this request looked, or one that does not fit and is to be retired): none, look again.
     * A booking whose cancel has begun gets no new link.
     */
    const creatingRow = (target: Target, owed: Owed, account: PaymentAccount) =>
      links.withTransaction(Effect.gen(function*() {
        yield* links.lockTarget(target.key)
        if (target.bookingId !== null && (yield* targets.cancelling(target.bookingId))) {
          return yield* new NotPossible({ detail: CANCELLED_DETAIL })
        }
        const live = yield* links.liveLinks(target.key)
        const existing = live.find((r) => r.state === "creating")
        if (existing !== undefined) {
          const fits = existing.amount_minor === owed.amountMinor && existing.currency.trim() === owed.currency &&
            existing.merchant_id === account.merchantId
          if (!fits) return Option.none()
          // Someone is finishing it now: the job's grace period starts again.
          yield* links.touch(existing.id)
          return Option.some(existing)
        }
        if (live.length > 0) return Option.none()
        const id = randomUUID()
        return Option.some(
          yield* links.insertCreating({
            id,
            target: target.key,
            bookingId: target.bookingId,
            manifestRowId: target.manifestRowId,
            operatorId: target.operatorId,
            kind: owed.kind,
            amountMinor: owed.amountMinor,
            currency: owed.currency,
            merchantId: account.merchantId,
            idempotencyReference: `payment-link:${id}`,
            providerReferenceId: target.bookingReference,
            description: linkDescription(target)
          })
        )
      }))

    /** Step 3: an open link for what is owed, or a new one made through the provider. */
    const ensureLink = (target: Target, owed: Owed, account: PaymentAccount) =>
      Effect.gen(function*() {
        // A link for this very balance that the guest paid: the balance is paid, whatever our
        // records of the booking say yet (they learn of it later).
        if (yield* links.paidFor(target.key, owed.amountMinor, owed.currency)) {
          return yield* new NotPossible({ detail: PAID_BY_LINK_DETAIL })
        }
        for (let round = 0; round < 4; round++) {
          const now = new Date(yield* Clock.currentTimeMillis)
          const rows = yield* links.liveLinks(target.key)
          const fits = (r: LinkRow) =>
            r.merchant_id === account.merchantId &&
            reusable({ state: r.state, amountMinor: r.amount_minor, currency: r.currency.trim(), expiresAt: r.expires_at }, owed, now)
          for (const stale of rows.filter((r) => !fits(r))) yield* retire(stale, account)
          const open = rows.find((r) => fits(r) && r.state === "open")
          if (open !== undefined) {
            const status = yield* provider.paymentLinkStatus(account, open.provider_link_id!).pipe(
              Effect.catchAll(providerDown)
            )
            if (status.state === "open") return { row: open, url: open.url!, created: false }
            if (status.state === "paid") {
              // Paid: recorded as the guest's payment (the job would record it later otherwise).
              yield* recorder.record(open, status)
              return yield* new NotPossible({ detail: PAID_BY_LINK_DETAIL })
            }
            yield* links.close(open.id, status.state)
            continue
          }
          const creating = yield* creatingRow(target, owed, account)
          if (Option.isNone(creating)) continue
          const link = yield* provider.createPaymentLink(account, linkRequest(creating.value)).pipe(
            Effect.catchAll(providerDown)
          )
          yield* links.setProviderLink(creating.value, link)
          return { row: creating.value, url: link.url, created: true }
        }
        return yield* Effect.dieMessage(`payment link for ${target.key}: links kept changing, gave up`)
      })

    /**
     * Step 4: the link is open and the guest's email is queued, together, under the link's row lock.
     * A row the job or a cancel has taken over meanwhile (`closing`, or closed since) is never
     * emailed; nor is a link of a booking whose cancel has begun. A link emailed within the window
     * is not emailed again: this request answers that email's outcome.
     */
    const openAndEmail = (target: Target, owed: Owed, link: { readonly row: LinkRow; readonly url: string }, ctx: WriteContext) =>
      Effect.gen(function*() {
        const now = new Date(yield* Clock.currentTimeMillis)
        return yield* links.withTransaction(Effect.gen(function*() {
          const locked = yield* links.lockForEmail(link.row.id, LINK_EMAIL_WINDOW_SECONDS)
          const live = Option.exists(locked, (r) => r.state === "creating" || r.state === "open")
          if (target.bookingId !== null && (yield* targets.cancelling(target.bookingId))) {
            // The cancel closes it at the provider (or the payment-link watch does, being due now).
            if (live) yield* links.markClosing(link.row.id)
            return { _tag: "Cancelled" as const }
          }
          if (!live || Option.isNone(locked)) return { _tag: "Taken" as const }
          yield* links.markOpen(link.row.id, FIRST_LINK_CHECK_SECONDS)
          const recentEmail = locked.value.recent_email
          if (recentEmail !== null) {
            // Read after the lock (a statement of its own): the email another request enqueued just before.
            const recent = yield* links.emailStatus(recentEmail)
            if (Option.exists(recent, (status) => status !== "failed")) return { _tag: "Email" as const, id: recentEmail }
          }
          const enqueued = yield* outbox.enqueue(guestLinkEmail(target, owed, link.url, occurrenceOf(ctx), now))
          if (enqueued.created) yield* links.setEmailed(link.row.id, enqueued.id)
          return { _tag: "Email" as const, id: enqueued.id }
        }))
      })

    const send = Effect.fn("PaymentLinks.send")(function*(id: string, ctx: WriteContext) {
      const target = yield* resolve(id, ctx.operatorIds)
      yield* ctx.target(target.operatorId)
      const owed = yield* owedFor(target)
      const account = yield* accountFor(target.operatorId)
      const link = yield* ensureLink(target, owed, account)
      yield* crash.reached("payment_link.after_create")

      const step4 = yield* openAndEmail(target, owed, link, ctx)
      if (step4._tag === "Taken") return yield* new Unavailable({ detail: LINK_TAKEN_DETAIL })
      if (step4._tag === "Cancelled") return yield* new NotPossible({ detail: CANCELLED_DETAIL })

      yield* crash.reached("payment_link.after_open")

      // Step 5: try the email now, or learn how the attempt another request (or the sender job)
      // is making at it goes: `emailed` is that attempt's outcome, whichever request made it.
      const status = yield* outbox.deliverOrAwait(step4.id)
      return {
        body: {
          id: id.toLowerCase(),
          kind: owed.kind,
          url: link.url,
          amount_minor: owed.amountMinor,
          currency: owed.currency,
          emailed: status === "sent"
        },
        noop: false
      } satisfies WriteDone<PaymentLinkResult>
    })

    return { send } as const
  }),
  dependencies: [PaymentLinksRepo.Default, LinkTargetsRepo.Default, OperatorPaymentAccounts.Default, PaidLinkRecorder.Default, CrashPoints.Default]
}) {}
